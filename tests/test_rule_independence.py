"""Issue 36: selecting, ignoring or silencing a rule changes no other rule's findings or fixes, and
no finding cites a rule that the run does not show.

Every fixture of the rules that once waited for one another (JM101, JM503, JM504, JM701, JM702)
is checked with every rule, then with each of these rules left out, with prefix selections
(`--select JM1`, `--select JM1,JM201`, ...) and with `# noqa` on JM504's lines: each rule still
selected must report the same findings, at the same places, with the same messages and the same
fixes (edits, imports, safety) as in the full run. The one exception is the pair JM701/JM702,
which is one migration (`jax.jit` with bare specs needs `jax.set_mesh`, a pjit needs `with
mesh:`): with one of the two left out, the module keeps both (docs/current-jax.md).
"""

from __future__ import annotations

import bisect
import re
import shutil
from pathlib import Path

import pytest

from jaxmigrate.rules import BY_CODE
from tests.conftest import run
from tests.test_fixtures import _options

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p for code in ("JM101", "JM503", "JM504", "JM701", "JM702") for p in (ROOT / code).glob("*/before.py"))
EVERY = sorted(BY_CODE)
PAIR = {"JM701", "JM702"}
LEFT_OUT = ["JM101", "JM201", "JM301", "JM503", "JM504", "JM701", "JM702"]
PREFIXES = [("JM1",), ("JM1", "JM201"), ("JM5",), ("JM7",), ("JM1", "JM5"), ("JM5", "JM7")]
CODE = re.compile(r"\bJM\d{3}\b")


def _selections():
    for code in LEFT_OUT:
        yield f"ignore {code}", [c for c in EVERY if c != code]
    for prefixes in PREFIXES:
        yield f"select {','.join(prefixes)}", [c for c in EVERY if c.startswith(prefixes)]


SELECTIONS = list(_selections())


def _id(case: Path) -> str:
    return f"{case.parent.parent.name}/{case.parent.name}"


def _key(finding, text):
    fix = finding.fix
    if fix is not None:  # edits by line and column: a noqa comment added at the end of a line moves no column
        starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
        where = [(e.text, _place(starts, e.start), _place(starts, e.end)) for e in fix.edits]
        fix = (fix.safety, where, fix.statement_edits, fix.add_imports, fix.drop_unused_imports)
    return (finding.code, finding.line, finding.column, finding.end_line, finding.end_column, finding.message,
            finding.suggestion, fix)


def _place(starts, offset):
    line = bisect.bisect_right(starts, offset) - 1
    return line, offset - starts[line]


def _compared(findings, codes, text):
    # the pair is one migration: with one of them left out, the other keeps the module as it is
    pair_split = len(PAIR & set(codes)) == 1
    return sorted(_key(f, text) for f in findings if f.code in codes and not (pair_split and f.code in PAIR))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_a_selection_changes_no_other_rules_findings(case: Path):
    text, target = case.read_text(), _options(case)["target"]
    full = run(text, EVERY, fix=False, target=target).findings
    for name, codes in SELECTIONS:
        some = run(text, codes, fix=False, target=target).findings
        assert _compared(some, codes, text) == _compared(full, codes, text), f"{name} changed other rules' findings"
        cited = {c for f in some for c in CODE.findall(f.message)} - set(codes)
        assert not cited, f"{name}: a message cites {sorted(cited)}, which the run does not show"


@pytest.mark.parametrize("case", [c for c in CASES if "JM504" in c.parent.parent.name], ids=_id)
def test_silencing_jm504_changes_no_other_rules_findings(case: Path):
    text, target = case.read_text(), _options(case)["target"]
    full = run(text, EVERY, fix=False, target=target).findings
    lines = text.splitlines(keepends=True)
    for f in full:
        if f.code == "JM504" and "#" not in lines[f.end_line - 1]:
            lines[f.end_line - 1] = lines[f.end_line - 1].rstrip("\r\n") + "  # noqa: JM504\n"
    silenced = "".join(lines)
    if silenced == text:
        pytest.skip("no JM504 finding to silence on a line without a comment")
    some = run(silenced, EVERY, fix=False, target=target).findings
    others = [c for c in EVERY if c != "JM504"]
    assert _compared(some, others, silenced) == _compared(full, others, text)


PROJECTS = sorted(p.parent for code in ("JM701", "JM702") for p in (ROOT / code).glob("project_*/before/main.py"))


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
@pytest.mark.parametrize("option", ["--ignore=JM504", "--ignore=JM101", "--ignore=JM201", "--select=JM1,JM5,JM7"])
def test_the_command_line_over_a_project(project: Path, option: str, tmp_path):
    """`check --format json` over a project fixture (the mesh plan spans its modules): the rules the
    option keeps report what the full run reports, in the same words."""
    import json

    from tests.test_cli import invoke

    tree = tmp_path / "tree"
    shutil.copytree(project, tree)

    def check(*extra):
        out = invoke("check", "--no-cache", "--format", "json", "--exit-zero", "--target-jax", "latest", *extra, ".", cwd=tree)
        return json.loads(out.stdout)

    some = check(option)
    shown = {f["code"] for f in some}
    full = [f for f in check() if f["code"] in shown or _kept(f["code"], option)]
    assert sorted(map(json.dumps, some)) == sorted(map(json.dumps, full))


def _kept(code: str, option: str) -> bool:
    name, _, value = option.partition("=")
    codes = value.split(",")
    return code not in codes if name == "--ignore" else code.startswith(tuple(codes))
