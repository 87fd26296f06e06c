"""The engine around the analysis: discovery's listing and what the runner hands back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmigrate.engine import runner
from jaxmigrate.engine.discovery import SourceFile, discover
from jaxmigrate.engine.pipeline import Settings
from jaxmigrate.rules import ALL_RULES
from tests.test_cli import CLEAN, LEGACY, MANUAL

pytestmark = pytest.mark.usefixtures("pinned_target")
ALL = tuple(r.code for r in ALL_RULES)
PINNED = (0, 7, 0)


def _run(files, jobs, **options):
    return runner.run([SourceFile(f, f.name) for f in files], Settings(ALL, target=PINNED, **options), jobs=jobs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_check_findings_keep_fix_safety_not_edits(tmp_path, jobs):
    files = []
    for i in range(runner.MIN_PARALLEL):  # enough files for the pool with two jobs
        files.append(tmp_path / f"legacy{i}.py")
        files[-1].write_text(LEGACY)
    results = _run(files, jobs)
    findings = [f for r in results for f in r.findings]
    assert len(findings) == 2 * len(files)
    assert {f.fix_safety for f in findings} == {"safe"} and all(f.fixable for f in findings)
    assert all(not f.fix.edits and not f.fix.statement_edits and not f.fix.add_imports for f in findings)


def test_fix_keeps_the_edits(tmp_path):
    (tmp_path / "legacy.py").write_text(LEGACY)
    result = _run([tmp_path / "legacy.py"], 1, fix=True, write=False)[0]
    assert result.changed and result.fixes_applied == 2 and result.new_bytes


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text(LEGACY)
    (tmp_path / "pkg" / "sub" / "b.py").write_text(MANUAL)
    (tmp_path / "pkg" / "notes.txt").write_text("")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "alias")  # a second way to sub/
    os.symlink(tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "z_link.py")  # a second way to a.py
    (tmp_path / "egg.egg-info").mkdir()
    (tmp_path / "egg.egg-info" / "c.py").write_text(CLEAN)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "d.py").write_text(CLEAN)
    return tmp_path


def test_discovery_lists_each_real_file_once_sorted(linked, monkeypatch):
    monkeypatch.chdir(linked)
    files, missing = discover(["pkg", "pkg/sub/b.py", "nowhere", "."])
    assert missing == ["nowhere"]
    # the first way found wins: alias/ is walked before sub/, a.py before z_link.py
    assert [f.display.replace(os.sep, "/") for f in files] == ["pkg/a.py", "pkg/alias/b.py"]
    assert all(isinstance(f.path, Path) and f.path.is_file() for f in files)


def test_discovery_of_a_file_named_first(linked, monkeypatch):
    monkeypatch.chdir(linked)
    files, _ = discover(["pkg/z_link.py", "pkg"])
    assert [f.display.replace(os.sep, "/") for f in files] == ["pkg/alias/b.py", "pkg/z_link.py"]


def test_discovery_exclude_patterns_see_paths_relative_to_the_root(linked):
    files, _ = discover([str(linked)], root=linked, extend_exclude=["pkg/sub/"])
    assert [f.path.name for f in files] == ["a.py"]  # sub/ excluded, and alias/, which resolves to it
    files, _ = discover([str(linked)], root=linked, exclude=[])  # no default skips: tool folders are walked
    assert sorted(f.path.name for f in files) == ["a.py", "b.py", "c.py", "d.py"]


def _checks_in_a_fresh_python(tmp_path, before: str, after: str, runs: int = 1, option: str = "--statistics") -> list:
    """The lines a new interpreter prints running ``before``, ``runs`` one-process checks of a
    legacy file (each printing ``exit CODE``) and ``after``."""
    (tmp_path / "a.py").write_text(LEGACY)
    code = "\n".join([
        "import gc, sys", before, "from jaxmigrate.cli import main",
        f"for _ in range({runs}):",
        "    try:",
        f"        main(['check', '--no-cache', '-j', '1', {option!r}, sys.argv[1]])",
        "    except SystemExit as e:",
        "        print('exit', e.code)",
        after,
    ])
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("option", ["--format=text", "--statistics"])
def test_a_check_imports_only_what_it_uses(tmp_path, option):
    """Start-up is part of every run: a one-process text check of a tree without .gitignore or
    exclude patterns does not import what only other paths need."""
    unneeded = ["pathspec", "json", "tempfile", "libcst", "rich", "concurrent.futures", "pygls", "lsprotocol",
                "jaxmigrate.server", "jaxmigrate.api"]
    lines = _checks_in_a_fresh_python(tmp_path, "", f"print(sorted(m for m in {unneeded!r} if m in sys.modules))",
                                      option=option)
    assert lines[-2:] == ["exit 1", "[]"]  # a finding, and none of those modules


@pytest.mark.parametrize("count", [0, 1, 7, 8, 100, 1973, 5000])
@pytest.mark.parametrize("jobs", [1, 2, 8])
def test_spans_cover_the_pending_files_once_in_order(count, jobs):
    spans = runner._spans(count, jobs)
    assert [i for start, stop in spans for i in range(start, stop)] == list(range(count))
    assert all(0 < stop - start <= 32 for start, stop in spans)


class _RecordingGc:
    def __init__(self, enabled: bool) -> None:
        self.enabled, self.calls = enabled, []

    def isenabled(self) -> bool:
        return self.enabled

    def enable(self) -> None:
        self.enabled = True
        self.calls.append("enable")

    def disable(self) -> None:
        self.enabled = False
        self.calls.append("disable")


@pytest.mark.parametrize("enabled", [True, False])
def test_cyclic_collection_resumes_every_few_chunks_and_after_the_run(tmp_path, monkeypatch, enabled):
    recording = _RecordingGc(enabled)
    monkeypatch.setattr(runner, "gc", recording)
    files = []
    for i in range(68):  # chunks of 4 files for one job: 17 chunks
        files.append(tmp_path / f"m{i:02}.py")
        files[-1].write_text(LEGACY if i % 10 == 0 else CLEAN)
    results = _run(files, 1)
    assert sum(len(r.findings) for r in results) == 2 * 7
    assert recording.enabled is enabled  # as it was found
    expected = ["disable", "enable"] * 2 + ["disable", "enable"] if enabled else []  # after chunks 8, 16 and the run
    assert recording.calls == expected


def test_the_command_line_freezes_the_heap_once_at_exit(tmp_path):
    """The interpreter's last collection has nothing to go through (see cli._prepare_exit)."""
    lines = _checks_in_a_fresh_python(tmp_path, "gc.freeze = lambda: print('frozen')", "print('ran')", runs=2)
    assert lines.count("exit 1") == 2 and lines[-2:] == ["ran", "frozen"]  # once, at exit
