"""Before/after fixtures per rule (fixtures/<CODE>/<case>/), checked as snapshots.

Each case holds ``before.py``; the snapshots beside it are ``after.py`` (what ``fix`` makes of
it with every rule on) and ``findings.txt`` (what ``check`` reports before, and what is left
after the fix; a suggestion of several lines under its finding). An optional ``options.json``
sets ``target`` and ``unsafe_fixes``.
Regenerate with ``pytest tests/test_fixtures.py --snapshot-update`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxmigrate.rules import BY_CODE
from tests.conftest import assert_parses, run

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(ROOT.glob("*/*/before.py"))


def _options(case: Path) -> dict:
    path = case.parent / "options.json"
    opts = json.loads(path.read_text()) if path.exists() else {}
    target = opts.get("target")
    return {"unsafe": opts.get("unsafe_fixes", False), "target": tuple(int(p) for p in target.split(".")) if target else None}


def _listing(title: str, findings) -> str:
    lines = [f"# {title}"]
    for f in findings:
        mark = {"safe": " [*]", "unsafe": " [~]"}.get(f.fix_safety or "", "")
        lines.append(f"{f.line}:{f.column}-{f.end_line}:{f.end_column} {f.code}{mark} {f.message}")
        if f.suggestion and "\n" in f.suggestion:  # the message points elsewhere: the code, under it
            lines += [f"    | {line}" for line in f.suggestion.splitlines()]
    return "\n".join(lines) + "\n"


def _id(case: Path) -> str:
    return f"{case.parent.parent.name}/{case.parent.name}"


def test_every_rule_has_fixtures():
    codes = {c.parent.parent.name for c in CASES}
    assert codes == set(BY_CODE), f"rules without fixtures: {set(BY_CODE) - codes}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fixture(case: Path, snapshot):
    opts = _options(case)
    before = case.read_text()
    checked = run(before, fix=False, target=opts["target"])
    fixed = run(before, unsafe=opts["unsafe"], target=opts["target"])
    snapshot.snapshot_dir = case.parent
    snapshot.assert_match(fixed.text, "after.py")
    snapshot.assert_match(
        _listing("check", checked.findings) + _listing("left after fix", fixed.findings), "findings.txt"
    )


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fixture_fix_is_idempotent_and_parses(case: Path):
    opts = _options(case)
    fixed = run(case.read_text(), unsafe=opts["unsafe"], target=opts["target"])
    assert_parses(fixed.text)
    again = run(fixed.text, unsafe=opts["unsafe"], target=opts["target"])
    assert again.text == fixed.text
    assert again.fixes_applied == 0
