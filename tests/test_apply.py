"""Statement edits parse only their statement with LibCST, and come out as a whole-module edit would."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from jaxmigrate.engine import apply
from tests.conftest import run

FOLDS = {
    "nested_removal": """\
import jax


def f(x):
    y = 1
    # only without jax.Array
    if not jax.config.jax_array:
        y = 2
    return y
""",
    "keep_body_with_strings": '''\
import jax


class Model:
    def setup(self):
        if jax.config.jax_array:
            doc = """
a string at column 0
            """
            self.doc = doc  # keep this comment


    def other(self):
        pass
''',
    "nested_folds": """\
import jax

if jax.config.jax_array:
    def f():
        if not jax.config.jax_array:
            return 1
        else:
            return 2
""",
    "crlf_tabs_no_final_newline": "import jax\r\ndef f():\r\n\tif jax.config.jax_array:\r\n\t\treturn 1\r\n\treturn 2",
    "module_level_only_statement": "import jax\nif not jax.config.jax_array:\n    print('legacy')\n",
    "elif_chain": """\
import jax


def kind(x):
    if not jax.config.jax_array:
        return "DeviceArray"
    elif x.ndim:
        return "Array"
    return "scalar"
""",
}


def _whole_module(monkeypatch):
    """The reference: every statement edit applied on the LibCST tree of the whole module."""
    monkeypatch.setattr(apply, "_edit_region", lambda ctx, node, edits, first: None)


@pytest.mark.parametrize("name", sorted(FOLDS))
def test_region_edit_equals_whole_module_edit(name, monkeypatch):
    text = FOLDS[name]
    region = run(text)
    assert region.fixes_applied
    _whole_module(monkeypatch)
    assert region.text == run(text).text


def test_only_the_statement_is_parsed(monkeypatch):
    parsed = []
    real = apply._edit_module

    def spy(source, by_position):
        parsed.append(source)
        return real(source, by_position)

    monkeypatch.setattr(apply, "_edit_module", spy)
    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    text = "import jax\n\n" + filler + "def g():\n    if jax.config.jax_array:\n        x = 1\n    return 2\n"
    out = run(text)
    assert "if jax" not in out.text and "    x = 1\n    return 2\n" in out.text
    assert parsed and all(len(p) < 100 for p in parsed)


def test_a_text_parsed_recently_is_not_parsed_again():
    from jaxmigrate.analysis.context import FileContext

    text = "import jax\nx = jax.tree_map(f, y)\n"
    first = FileContext.of(text, "a.py", None)
    assert FileContext.of(text, "a.py", None) is first
    twin = FileContext.of(text, "b.py", (0, 4, 20))
    assert (twin.path, twin.target) == ("b.py", (0, 4, 20)) and (first.path, first.target) == ("a.py", None)
    assert twin.tree is first.tree
    assert FileContext.of(text + "\n").tree is not first.tree


ROUNDS = {
    "text edits": "import jax\n\nx = jax.tree_map(f, y)\n",
    "a statement edit": "import jax\n\n\ndef f(x):\n    if jax.config.jax_array:\n        x = 1\n    return x\n",
    "imports edited": "from jax.experimental.pjit import pjit\n\n\ndef f(x):\n    return pjit(g)(x)\n",
}


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_a_round_lets_the_parse_of_the_text_before_go_before_it_parses_the_new_one(monkeypatch, name):
    """The text before a round is parsed by the analysis; once the round's edits are made only
    its summary for the compile check is kept, so that a large module's two trees are never
    held at once (by reference counting: the workers run with the cyclic collector paused); nor
    is the import editing's parse of the text before it."""
    import gc
    import weakref

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.engine.pipeline import analyse
    from jaxmigrate.rules import ALL_RULES

    text = ROUNDS[name]
    FileContext.forget()
    gc.disable()
    try:
        fixes = [f.fix for f in analyse(text, "a.py", list(ALL_RULES)) if f.fix is not None]
        assert fixes and any(bool(f.statement_edits) for f in fixes) == (name == "a statement edit")
        assert any(f.add_imports or f.drop_unused_imports for f in fixes) == (name == "imports edited")
        before = weakref.ref(FileContext.of(text, "a.py"))
        alive = []
        check = apply.check_compiles

        def checking(baseline, after):
            alive.append(before() is not None or any(c.source != after for c in FileContext._local.recent))
            return check(baseline, after)

        monkeypatch.setattr(apply, "check_compiles", checking)
        fixed, applied = apply.apply_round(text, fixes)
    finally:
        gc.enable()
        FileContext.forget()
    assert applied and fixed != text
    assert alive == [False]


def _old_non_overlapping(fixes):
    """The check every fix against every chosen span that apply._non_overlapping replaced."""
    taken, chosen = [], []
    for fix in sorted(fixes, key=lambda f: f.span):
        spans = [(e.start, e.end) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts) for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        chosen.append(fix)
    return chosen


def _old_apply(source, edits):
    out = source
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    return out


_SOURCE = "abcdefghijklmnopqrstuvwxyz" * 2


@st.composite
def _fixes(draw):
    from jaxmigrate.core.findings import Edit, Fix

    fixes, used = [], set()
    for k in range(draw(st.integers(0, 12))):
        edits = []
        for _ in range(draw(st.integers(1, 3))):
            start = draw(st.integers(0, len(_SOURCE)))
            end = draw(st.integers(start, min(len(_SOURCE), start + draw(st.sampled_from([0, 1, 3, 20])))))
            if (start, end) in used:  # the old order of two edits of one span was the set's (random)
                continue
            used.add((start, end))
            edits.append(Edit(start, end, f"<{k}>"))
        if edits:
            fixes.append(Fix("safe", edits=tuple(edits)))
    return fixes


@settings(max_examples=400, deadline=None)
@given(_fixes())
def test_choosing_and_splicing_edits_agree_with_one_at_a_time(fixes):
    """The bisected overlap check chooses what checking every chosen span chose, and the
    one-pass splice gives what applying edit by edit gave."""
    chosen = apply._non_overlapping(fixes)
    assert chosen == _old_non_overlapping(fixes)
    edits = [e for f in chosen for e in f.edits]
    assert apply._apply_text_edits(_SOURCE, edits) == _old_apply(_SOURCE, edits)


def test_twelve_thousand_fixes_in_one_file():
    """12,000 pjit calls with legacy keywords in one 780 KB file: every line fixed (the time it
    takes is in docs/performance.md, not tested)."""
    header = "from jax.experimental.pjit import pjit\n\n"
    lines = [f"f{i} = pjit(g, in_axis_resources=None, out_axis_resources=None)\n" for i in range(12_000)]
    out = run(header + "".join(lines), ["JM101"])
    assert out.fixes_applied == 24_000 and not out.findings
    assert out.text == header + "".join(
        line.replace("in_axis_resources", "in_shardings").replace("out_axis_resources", "out_shardings") for line in lines)
    compile(out.text, "<fixed>", "exec")


FOLD = "import jax\n\nif jax.config.jax_array:\n    x = 1\n"
PJIT = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"


def _fix_tree(tmp_path, bad_name: str, bad_text: str):
    from click.testing import CliRunner

    from jaxmigrate.cli import main

    (tmp_path / bad_name).write_text(bad_text)
    (tmp_path / "ok.py").write_text(PJIT)
    return CliRunner().invoke(main, ["fix", "-j", "1", "--no-cache", str(tmp_path)], catch_exceptions=False)


def _raises(node):
    raise RuntimeError("kaput")


@pytest.mark.parametrize("transform, message", [(_raises, "RuntimeError: kaput"), (lambda node: "x = 1", "")],
                         ids=["raises", "returns-a-string"])
def test_a_statement_edit_that_fails_is_a_file_error(tmp_path, monkeypatch, pinned_target, transform, message):
    """LibCST statement edits run rule code (the transform) at fix time: its failure is that
    file's JM000, like a rule's in `check`."""
    from jaxmigrate.analysis import folding

    monkeypatch.setattr(folding, "keep_body", transform)
    result = _fix_tree(tmp_path, "fold.py", FOLD)
    assert result.exit_code == 2, result.output
    assert f"fold.py:1:1: JM000 internal error in a statement edit: {message}" in result.output, result.output
    assert (tmp_path / "fold.py").read_text() == FOLD
    assert "in_shardings" in (tmp_path / "ok.py").read_text()


@pytest.mark.parametrize("error", [ZeroDivisionError("surprise"), KeyError("surprise"), IndexError("surprise")])
def test_any_other_failure_while_fixing_is_a_file_error(tmp_path, monkeypatch, pinned_target, error):
    """The last resort: an exception nobody foresaw (here in the import editing) is that file's
    error, an internal one: a KeyError is a LookupError, as an unknown encoding is, but not a
    file that "could not read"."""
    def broken(*args):
        raise error

    monkeypatch.setattr(apply, "fix_imports", broken)
    text = "from jax.experimental import maps\n\nm = maps.Mesh(d, (\"x\",))\n"  # JM201: imports edited
    result = _fix_tree(tmp_path, "tree.py", text)
    assert result.exit_code == 2, result.output
    assert f"tree.py:1:1: JM000 internal error: {type(error).__name__}: {error}" in result.output, result.output
    assert (tmp_path / "tree.py").read_text() == text
    assert "in_shardings" in (tmp_path / "ok.py").read_text()


_OUTSIDE = {"insert-past-end": (len(PJIT) + 5, len(PJIT) + 5), "replace-past-end": (len(PJIT) - 1, len(PJIT) + 10),
            "negative-start": (-1, 3), "end-before-start": (10, 4)}


@pytest.mark.parametrize("where", sorted(_OUTSIDE))
def test_an_edit_outside_the_text_is_a_file_error(tmp_path, monkeypatch, pinned_target, where):
    """An edit whose span does not lie in the text is a rule bug: never applied (an insertion past
    the end used to be appended), the file's JM000."""
    from jaxmigrate.core.findings import Edit, Fix
    from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources

    start, end = _OUTSIDE[where]
    real = PjitAxisResources.check

    def bad(self, ctx):
        if ctx.path.endswith("bad.py") and ctx.source == PJIT:  # once: the first round
            yield self.finding(ctx, ctx.tree.body[-1], "bad", Fix("safe", edits=(Edit(start, end, "\nx = 1\n"),)))
        else:
            yield from real(self, ctx)

    monkeypatch.setattr(PjitAxisResources, "check", bad)
    result = _fix_tree(tmp_path, "bad.py", PJIT)
    assert result.exit_code == 2, result.output
    assert "bad.py:1:1: JM000 internal error: an edit's span" in result.output, result.output
    assert (tmp_path / "bad.py").read_text() == PJIT
    assert "in_shardings" in (tmp_path / "ok.py").read_text()


def test_a_fix_that_breaks_the_code_before_the_import_editing_is_not_blamed_on_the_input(tmp_path, monkeypatch,
                                                                                         pinned_target):
    """A round whose edits leave text that does not parse, found by the import editing's parse
    before the round's own check, is that fix's error: the input parsed, and "could not parse"
    would blame it (a fold that emptied a block, with a moved import dropped in the same round)."""
    import libcst as cst

    from jaxmigrate.analysis import folding

    monkeypatch.setattr(folding, "keep_body", lambda node: cst.RemovalSentinel.REMOVE)
    text = "from jax.config import config\n\n\ndef f():\n    if config.jax_array:\n        x = 1\n"
    result = _fix_tree(tmp_path, "fold.py", text)
    assert result.exit_code == 2, result.output
    assert "fold.py:1:1: JM000 fix produced invalid Python: expected an indented block" in result.output, result.output
    assert "could not parse" not in result.output
    assert (tmp_path / "fold.py").read_text() == text
    assert "in_shardings" in (tmp_path / "ok.py").read_text()


@pytest.mark.parametrize("after, removed", [
    ("    return 2\n", True),
    ("    # the legacy path\n    print('legacy')\n    return 2\n", True),
    ("    x = 2\n    return x\n", False),  # a binding: `x` is local to the function either way, but keep it
    ("    yield 2\n", False),  # `yield` makes the function a generator
])
def test_statements_a_fold_makes_unreachable_go_when_nothing_depends_on_them(after, removed):
    text = "import jax\n\n\ndef g():\n    if jax.config.jax_array:\n        return 1\n" + after
    out = run(text).text
    assert "if jax" not in out and "    return 1\n" in out
    assert (out == "import jax\n\n\ndef g():\n    return 1\n") is removed
    if not removed:
        assert out.endswith(after)
