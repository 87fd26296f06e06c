"""The command-line contract: outputs, exit codes, writes, discovery and file handling."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

LEGACY = 'from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n'
FIXED = 'from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_shardings=None, out_shardings=None)\n'
MANUAL = "from jax.experimental.maps import xmap\n"
CLEAN = "import jax\n\nprint(jax.numpy.ones(3))\n"


def invoke(*args, cwd=None):
    runner = CliRunner()
    if cwd is not None:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        if cwd is not None:
            os.chdir(old)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "manual.py").write_text(MANUAL)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_check_reports_and_exits_1(tree):
    result = invoke("check", str(tree))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.endswith("JM101 [*] `in_axis_resources` was removed from pjit in JAX 0.4.14: use `in_shardings`")
               and ":3:15:" in line for line in lines)
    assert any("manual.py:1:35: JM203 " in line for line in lines)
    assert "Found 3 findings in 2 files." in lines[-1]
    assert (tree / "pkg" / "legacy.py").read_text() == LEGACY  # check never writes


def test_check_clean_tree_exits_0(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    result = invoke("check", str(tmp_path))
    assert result.exit_code == 0
    assert "All checks passed" in result.output


def test_json_output(tree):
    result = invoke("check", "--format", "json", str(tree / "pkg"))
    records = json.loads(result.stdout)
    assert result.exit_code == 1
    first = next(r for r in records if r["code"] == "JM101")
    assert set(first) >= {"path", "line", "column", "end_line", "end_column", "code", "message", "fixable", "fix_safety"}
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (3, 15, 3, 37)
    assert first["fixable"] is True and first["fix_safety"] == "safe"
    manual = next(r for r in records if r["code"] == "JM203")
    assert manual["fixable"] is False and manual["fix_safety"] is None


def test_fix_writes_and_reports_what_is_left(tree):
    clean_before = (tree / "pkg" / "clean.py").read_bytes()
    result = invoke("fix", str(tree))
    assert result.exit_code == 1  # the xmap finding is left for a person
    assert (tree / "pkg" / "legacy.py").read_text() == FIXED
    assert (tree / "pkg" / "clean.py").read_bytes() == clean_before
    assert "Applied 2 fixes in 1 file; 1 finding left for manual review." in result.output
    again = invoke("fix", str(tree))
    assert "Applied 0 fixes in 0 files" in again.output


def test_fix_exits_0_when_nothing_is_left(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    assert invoke("fix", str(tmp_path)).exit_code == 0
    assert (tmp_path / "a.py").read_text() == FIXED


def test_diff_writes_nothing(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("fix", "--diff", str(tmp_path))
    assert result.exit_code == 1
    assert "-f = pjit(abs, in_axis_resources=None, out_axis_resources=None)" in result.stdout
    assert "+f = pjit(abs, in_shardings=None, out_shardings=None)" in result.stdout
    assert (tmp_path / "a.py").read_text() == LEGACY


def test_select_and_ignore(tree):
    assert invoke("check", "--select", "JM2", str(tree)).output.count("JM101") == 0
    ignored = invoke("check", "--ignore", "JM101,JM203", str(tree))
    # issue 36: ignoring JM203 does not bring back JM801's finding of the same xmap import, which
    # JM801 leaves to JM203 in the full run: ignoring a rule changes no other rule's findings
    assert ignored.exit_code == 0 and "JM801" not in ignored.output
    assert invoke("check", "--ignore", "JM101,JM203,JM8", str(tree)).exit_code == 0
    bad = invoke("check", "--select", "XX9", str(tree))
    assert bad.exit_code == 2 and "unknown rule code" in bad.output


def test_unsafe_fixes_flag(tmp_path):
    src = "import jax\n\nbufs = jax.devices()[0].live_buffers()\n"
    (tmp_path / "a.py").write_text(src)
    assert invoke("fix", str(tmp_path)).exit_code == 1
    assert (tmp_path / "a.py").read_text() == src
    assert invoke("fix", "--unsafe-fixes", str(tmp_path)).exit_code == 0
    assert "jax.live_arrays()" in (tmp_path / "a.py").read_text()


def test_missing_path_and_syntax_error_exit_2_but_other_files_are_fixed(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    in_axis_resources\n")
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("fix", str(tmp_path), str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "broken.py:1:7: JM000 could not parse" in result.output  # at the syntax error
    assert "no such file or directory" in result.output
    assert (tmp_path / "a.py").read_text() == FIXED
    assert (tmp_path / "broken.py").read_text() == "def f(:\n    in_axis_resources\n"


def test_bad_target_is_a_usage_error(tmp_path):
    result = invoke("check", "--target-jax", "new", str(tmp_path))
    assert result.exit_code == 2


def test_gitignore_and_tool_folders_are_skipped(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    for rel in ["generated/a.py", "x_pb2.py", ".venv/lib/b.py", "build/c.py", "node_modules/d.py", "src/e.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LEGACY)
    result = invoke("check", "--format", "json", ".", cwd=tmp_path)
    paths = {Path(r["path"]).as_posix() for r in json.loads(result.stdout)}
    assert paths == {"src/e.py"}


def test_encoding_bom_crlf_and_mode_are_kept(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n" + LEGACY.encode() + b"s = '\xe9t\xe9'\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + LEGACY.replace("\n", "\r\n").encode())
    os.chmod(bom, 0o754)
    assert invoke("fix", str(tmp_path)).exit_code == 0
    assert latin.read_bytes() == b"# -*- coding: latin-1 -*-\n" + FIXED.encode() + b"s = '\xe9t\xe9'\n"
    assert bom.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(bom).st_mode) == 0o754
    assert not [p for p in tmp_path.iterdir() if "jaxmigrate-tmp" in p.name]


def test_rule_that_raises_becomes_a_file_error(tmp_path, monkeypatch):
    from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources

    def boom(self, ctx):
        raise RuntimeError("kaput")

    monkeypatch.setattr(PjitAxisResources, "check", boom)
    (tmp_path / "a.py").write_text(LEGACY)
    (tmp_path / "b.py").write_text("from jax.experimental import PartitionSpec\n")
    result = invoke("fix", "-j", "1", str(tmp_path))
    assert result.exit_code == 2
    assert "internal error in rule JM101: RuntimeError: kaput" in result.output
    assert (tmp_path / "a.py").read_text() == LEGACY
    assert (tmp_path / "b.py").read_text() == "from jax.sharding import PartitionSpec\n"


def test_parallel_run_matches_serial(tmp_path):
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(LEGACY if i % 2 else MANUAL)
    serial = invoke("check", "--format", "json", "-j", "1", str(tmp_path)).stdout
    parallel = invoke("check", "--format", "json", "-j", "2", str(tmp_path)).stdout
    assert json.loads(serial) == json.loads(parallel)


def test_rules_and_explain():
    listing = invoke("rules").output
    assert "JM101" in listing and "JM401" in listing
    doc = invoke("explain", "jm101").output
    assert "## What it does" in doc and "Use instead" in doc
    assert invoke("explain", "JM999").exit_code == 2


def test_module_entry_point_and_no_jax_import(tmp_path):
    """`python -m jaxmigrate check` works and never imports JAX (a plain install has none)."""
    (tmp_path / "a.py").write_text(LEGACY)
    code = (
        "import sys, runpy\n"
        "sys.argv = ['jaxmigrate', 'check', sys.argv[1]]\n"
        "try:\n    runpy.run_module('jaxmigrate', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "assert 'jax' not in sys.modules, 'jaxmigrate imported jax'\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "JM101" in proc.stdout


def test_a_fix_that_breaks_the_code_is_never_written(tmp_path, monkeypatch):
    """The engine compiles every fixed module before writing it; a rule bug becomes a file error."""
    from jaxmigrate.core.findings import Edit, Fix
    from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources

    def bad(self, ctx):
        yield self.finding(ctx, ctx.tree.body[-1], "bad", Fix("safe", edits=(Edit(0, 0, "f(a=1, a=2)\n"),)))

    monkeypatch.setattr(PjitAxisResources, "check", bad)
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("fix", str(tmp_path))
    assert result.exit_code == 2
    assert "fix produced invalid Python" in result.output
    assert (tmp_path / "a.py").read_text() == LEGACY


def test_nested_gitignores_checkouts_and_configurations_apply_below_them(tmp_path):
    """The walk gives a folder its parent's .gitignore chain and exclusions from what its listing
    shows: a .gitignore adds to the chain, a .git (a nested checkout) starts it afresh, and a
    pyproject.toml with [tool.jaxmigrate] sets the exclusions of every folder below it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*_gen.py\n")
    files = ["a/b/c/x_gen.py", "a/b/c/kept.py", "a/skipped/d.py", "a/b/local.py", "vendor/x_gen.py",
             "vendor/deep/e.py", "vendor/deep/drop/f.py", "cfg/in/g.py", "cfg/in/deeper/h.py", "cfg/out/i.py"]
    for rel in files:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LEGACY)
    (tmp_path / "a" / ".gitignore").write_text("skipped/\n")
    (tmp_path / "a" / "b" / ".gitignore").write_text("local.py\n")
    (tmp_path / "vendor" / ".git").write_text("gitdir: elsewhere\n")  # a checkout of its own: the top's rules stop
    (tmp_path / "vendor" / ".gitignore").write_text("drop/\n")
    (tmp_path / "cfg" / "pyproject.toml").write_text('[tool.jaxmigrate]\nextend-exclude = ["out"]\n')
    result = invoke("check", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    paths = {Path(r["path"]).as_posix() for r in json.loads(result.stdout)}
    assert paths == {"a/b/c/kept.py", "vendor/x_gen.py", "vendor/deep/e.py", "cfg/in/g.py", "cfg/in/deeper/h.py"}
