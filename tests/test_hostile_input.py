"""Hostile input never corrupts a file or stops the run: each case next to a legacy file that must
still be fixed (the rest of issue 8's list: encodings, BOM, CRLF, syntax errors and raising rules
are in tests/test_cli.py)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

LEGACY = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"
FIXED = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_shardings=None, out_shardings=None)\n"


def _fix(*paths):
    return CliRunner().invoke(main, ["fix", "-j", "1", *map(str, paths)], catch_exceptions=False)


def _tree(tmp_path: Path, name: str, data: bytes) -> Path:
    (tmp_path / "ok.py").write_text(LEGACY)
    target = tmp_path / name
    target.write_bytes(data)
    return target


def test_empty_file(tmp_path):
    empty = _tree(tmp_path, "empty.py", b"")
    result = _fix(tmp_path)
    assert result.exit_code == 0, result.output
    assert empty.read_bytes() == b"" and (tmp_path / "ok.py").read_text() == FIXED


def test_binary_garbage_is_a_file_error(tmp_path):
    garbage = bytes(range(256)) * 40 + b"in_axis_resources\x00\xff"
    bad = _tree(tmp_path, "garbage.py", garbage)
    result = _fix(tmp_path)
    assert result.exit_code == 2 and "garbage.py:1:1: JM000" in result.output
    assert bad.read_bytes() == garbage and (tmp_path / "ok.py").read_text() == FIXED


def test_python2_file_is_a_file_error(tmp_path):
    src = b'print "legacy", in_axis_resources\nexec "x = 1"\n'
    old = _tree(tmp_path, "py2.py", src)
    result = _fix(tmp_path)
    assert result.exit_code == 2 and "py2.py:1:1: JM000 could not parse" in result.output
    assert old.read_bytes() == src and (tmp_path / "ok.py").read_text() == FIXED


def test_deeply_nested_expression(tmp_path):
    deep = ("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n" + LEGACY).encode()
    nested = _tree(tmp_path, "deep.py", deep)
    result = _fix(tmp_path)
    # too deep for Python's parser: where it gave up
    assert result.exit_code == 2 and re.search(r"deep.py:1:\d+: JM000 could not parse", result.output)
    assert nested.read_bytes() == deep and (tmp_path / "ok.py").read_text() == FIXED


def test_a_file_of_several_megabytes(tmp_path):
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60000))
    big = _tree(tmp_path, "big.py", (LEGACY + body).encode())
    assert big.stat().st_size > 2_000_000
    result = _fix(tmp_path)
    assert result.exit_code == 0, result.output
    assert big.read_text() == FIXED + body


def test_unreadable_file(tmp_path, monkeypatch):
    """A file the user may not read (chmod 0 does not stop root, who runs CI here: the read is
    made to fail the way it fails for a user)."""
    locked = _tree(tmp_path, "locked.py", LEGACY.encode())
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = _fix(tmp_path)
    assert result.exit_code == 2 and "locked.py:1:1: JM000 could not read" in result.output, result.output
    assert real(locked).decode() == LEGACY and (tmp_path / "ok.py").read_text() == FIXED


def test_unreadable_file_as_root_via_a_directory_entry_that_is_not_a_file(tmp_path):
    """Root reads any file, so a path that cannot be read at all stands in: a FIFO named .py."""
    (tmp_path / "ok.py").write_text(LEGACY)
    os.mkfifo(tmp_path / "pipe.py")
    result = _fix(tmp_path)  # must neither hang on the FIFO nor stop the run
    assert result.exit_code in (0, 2), result.output
    assert (tmp_path / "ok.py").read_text() == FIXED


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse non-UTF-8 names")
def test_non_utf8_file_name(tmp_path):
    name = os.fsdecode(b"legacy_\xe9.py")  # latin-1 bytes: a surrogate escape in the str
    path = tmp_path / name
    path.write_text(LEGACY)
    result = _fix(tmp_path)
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED


def test_symlink_loop_is_not_followed_twice(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(LEGACY)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")  # pkg/again -> pkg: a loop
    result = CliRunner().invoke(main, ["check", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output.count("JM101") == 2  # a.py's two keywords, once


def test_symlinked_file_outside_the_tree_is_not_written_through(tmp_path):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    (outside / "shared.py").write_text(LEGACY)
    os.symlink(outside / "shared.py", tree / "link.py")
    (tree / "ok.py").write_text(LEGACY)
    result = _fix(tree)
    assert (outside / "shared.py").read_text() == LEGACY  # nothing outside the tree changes
    assert (tree / "link.py").is_symlink()  # and the link stays a link
    assert (tree / "ok.py").read_text() == FIXED
    assert result.exit_code == 2 and "link.py:3:15: JM101" in result.output  # reported, left for a person
    assert "link.py:1:1: JM000 not written: a symbolic link (to " in result.output  # and why (issue 16 item 10)


def test_mixed_line_endings_are_kept(tmp_path):
    mixed = (b"from jax.experimental.pjit import pjit\r\n\n"
             b"f = pjit(abs, in_axis_resources=None,\r\n         out_axis_resources=None)\n# end\r\n")
    target = _tree(tmp_path, "mixed.py", mixed)
    assert _fix(tmp_path).exit_code == 0
    assert target.read_bytes() == mixed.replace(b"in_axis_resources", b"in_shardings").replace(
        b"out_axis_resources", b"out_shardings")



def _sum(terms: int) -> str:
    return "x = " + " + ".join(f"a{i}" for i in range(terms)) + "\n"  # a left-nested BinOp `terms` deep


@pytest.mark.parametrize("body", [_sum(600), "x = " + "[" * 190 + "]" * 190 + "\n", "x = " + "-" * 2000 + "1\n",
                                  "x = a" + ".b" * 2000 + "\n", "x = f" + "()" * 2000 + "\n"],
                         ids=["sum600", "list190", "unary2000", "attribute2000", "calls2000"])
def test_long_expressions_are_processed(tmp_path, body):
    """Deep trees Python's parser takes are analysed and fixed like any other file: the per-file
    work is done again with a raised recursion limit when the default is not enough (docs/safety.md)."""
    target = tmp_path / "long.py"
    target.write_text(LEGACY + body)
    result = _fix(target)
    assert result.exit_code == 0, result.output
    assert target.read_text() == FIXED + body


def test_a_long_expression_in_a_statement_libcst_edits(tmp_path):
    body = _sum(600).replace("x = ", "    x = ")
    target = tmp_path / "fold.py"
    target.write_text("import jax\nif jax.config.jax_array:\n" + body)
    result = _fix(target)
    assert result.exit_code == 0, result.output
    assert target.read_text() == "import jax\n" + body[4:]


@pytest.mark.parametrize("terms", [3000, 30_000])
def test_long_sums(tmp_path, terms):
    """Python's own compiler stops near 2,980 terms at its default recursion limit. With the raised
    limit jaxmigrate goes on: 3,000 terms are fixed on 3.10, 3.11 and 3.13 (on 3.12 ``ast`` keeps
    its own C limit), and since the analysis binds names in one iterative walk
    (``analysis/scopes.py``) 30,000 on 3.10 and 3.11 (up to ~59,400, docs/safety.md). Elsewhere the
    file is a JM000 error, and the run goes on."""
    body = _sum(terms)
    target = _tree(tmp_path, "long.py", (LEGACY + body).encode())
    result = _fix(tmp_path)
    assert (tmp_path / "ok.py").read_text() == FIXED
    if result.exit_code == 2:
        assert sys.version_info[:2] not in ((3, 10), (3, 11)), result.output
        assert "long.py:1:1: JM000 too deeply nested" in result.output
        assert target.read_text() == LEGACY + body
    else:
        assert result.exit_code == 0, result.output
        assert target.read_text() == FIXED + body


@pytest.mark.parametrize("body", [_sum(100_000), "x = " + "-" * 100_000 + "1\n", "x = f" + "()" * 100_000 + "\n",
                                  "x = " + "lambda: " * 5000 + "1\n"],
                         ids=["sum100000", "unary100000", "calls100000", "lambda5000"])
def test_too_deep_is_a_file_error(tmp_path, body):
    """Past the limits (RecursionError in ``ast``, a rule's walk or LibCST, or the parser's own
    MemoryError) the file is that file's error."""
    deep = (LEGACY + body).encode()
    target = _tree(tmp_path, "deep.py", deep)
    result = _fix(tmp_path)
    assert result.exit_code == 2 and "deep.py:1:1: JM000 too deeply nested" in result.output, result.output
    assert target.read_bytes() == deep and (tmp_path / "ok.py").read_text() == FIXED


def _recursing_rule(monkeypatch, depth: int) -> None:
    """JM101 recurses ``depth`` calls deep on files named deep.py: a walk of a deep tree, whatever
    the rules' own walks do."""
    from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources

    real = PjitAxisResources.check

    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    def check(self, ctx):
        if ctx.path.endswith("deep.py"):
            down(depth)
        yield from real(self, ctx)

    monkeypatch.setattr(PjitAxisResources, "check", check)


def test_a_rule_recursing_5000_deep_gets_the_raised_limit(tmp_path, monkeypatch):
    _recursing_rule(monkeypatch, 5000)
    target = _tree(tmp_path, "deep.py", LEGACY.encode())
    result = _fix(tmp_path)
    assert result.exit_code == 0, result.output
    assert target.read_text() == FIXED and (tmp_path / "ok.py").read_text() == FIXED


def test_a_rule_recursing_past_the_raised_limit_is_a_file_error(tmp_path, monkeypatch):
    _recursing_rule(monkeypatch, 1_000_000)
    target = _tree(tmp_path, "deep.py", LEGACY.encode())
    result = _fix(tmp_path)
    assert result.exit_code == 2, result.output
    assert "deep.py:1:1: JM000 too deeply nested to process (internal error in rule JM101: RecursionError" in result.output
    assert target.read_text() == LEGACY and (tmp_path / "ok.py").read_text() == FIXED


def test_no_thread_for_the_retry(tmp_path, monkeypatch):
    """Where no thread with a large stack can start, a file too deep for the default limit is
    that file's error."""
    import threading

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    _recursing_rule(monkeypatch, 5000)
    target = _tree(tmp_path, "deep.py", LEGACY.encode())
    result = _fix(tmp_path)
    assert result.exit_code == 2 and "deep.py:1:1: JM000 too deeply nested" in result.output, result.output
    assert target.read_text() == LEGACY and (tmp_path / "ok.py").read_text() == FIXED


def test_every_fixture_written_with_crlf_is_fixed_with_crlf_only():
    """The lines a fix writes take the file's line ending: each fixture, its lines ending in CRLF,
    fixed with its own options, has no line that ends in a bare LF."""
    import json

    from tests.conftest import run

    root = Path(__file__).resolve().parent.parent / "fixtures"
    bare = []
    for case in sorted(root.glob("*/*/before.py")):
        options = case.parent / "options.json"
        opts = json.loads(options.read_text()) if options.exists() else {}
        target = tuple(int(p) for p in opts["target"].split(".")) if opts.get("target") else None
        source = case.read_text().replace("\r\n", "\n").replace("\n", "\r\n")
        if re.search(r"(?<!\r)\n", run(source, unsafe=opts.get("unsafe_fixes", False), target=target).text):
            bare.append(f"{case.parent.parent.name}/{case.parent.name}")
    assert bare == []
