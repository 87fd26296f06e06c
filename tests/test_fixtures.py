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


# Multi-module fixtures: ``before/`` holds a small project (its script ``main.py`` and the modules
# it imports), fixed as one tree; the snapshots are the folder ``after/`` and ``findings.txt``
# (each finding under its file's name).
PROJECTS = sorted(p.parent.parent for p in ROOT.glob("*/*/before/main.py"))


def _project_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def run_project(folder: Path, *, fix: bool, unsafe: bool, target=None):
    """{file name: text after} and {file name: findings} of the tree at ``folder`` (nothing written)."""
    from jaxmigrate.engine.discovery import discover
    from jaxmigrate.engine.pipeline import Settings
    from jaxmigrate.engine.runner import run as run_tree

    files, _ = discover([str(folder)])
    settings = Settings(tuple(BY_CODE), fix=fix, write=False, unsafe_fixes=unsafe, target=target)
    texts, findings = {}, {}
    for file, result in zip(files, run_tree(files, settings, jobs=1)):
        assert result.error is None, f"{file.display}: {result.error}"
        name = file.path.resolve().relative_to(folder.resolve()).as_posix()
        texts[name] = result.new_bytes.decode() if result.new_bytes is not None else file.path.read_text()
        findings[name] = result.fixed_findings if result.fixed_findings is not None else result.findings
    return texts, findings


def _project_listing(title: str, findings: dict) -> str:
    return "".join(_listing(f"{title}: {name}", found) for name, found in sorted(findings.items()) if found)


def _as_folder(texts: dict, before: Path) -> dict:
    """The texts by file name as the folders they make (what ``assert_match_dir`` compares), with
    the project's other files (its ``pyproject.toml``: where a project starts) as they are."""
    files = dict(texts)
    for path in before.rglob("*"):
        name = path.relative_to(before).as_posix()
        if path.is_file() and name not in files and "__pycache__" not in name:
            files[name] = path.read_text()
    folder: dict = {}
    for name, text in files.items():
        *parents, base = name.split("/")
        node = folder
        for part in parents:
            node = node.setdefault(part, {})
        node[base] = text
    return folder


@pytest.mark.parametrize("case", PROJECTS, ids=_project_id)
def test_project_fixture(case: Path, snapshot, monkeypatch):
    opts = _options(case / "before.py")
    monkeypatch.chdir(case / "before")  # paths in messages as a user in the project sees them
    _, checked = run_project(Path("."), fix=False, unsafe=opts["unsafe"], target=opts["target"])
    fixed, left = run_project(Path("."), fix=True, unsafe=opts["unsafe"], target=opts["target"])
    snapshot.snapshot_dir = case
    snapshot.assert_match_dir(_as_folder(fixed, case / "before"), "after")
    snapshot.assert_match(_project_listing("check", checked) + _project_listing("left after fix", left),
                          "findings.txt")


@pytest.mark.parametrize("case", PROJECTS, ids=_project_id)
def test_project_fix_is_idempotent(case: Path, tmp_path, monkeypatch):
    opts = _options(case / "before.py")
    monkeypatch.chdir(case / "after")
    fixed, left = run_project(Path("."), fix=True, unsafe=opts["unsafe"], target=opts["target"])
    for name, text in fixed.items():
        assert_parses(text)
        assert text == (case / "after" / name).read_text(), f"{name}: a second fix changes it"
