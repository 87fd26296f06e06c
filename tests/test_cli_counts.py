"""What `check` and `fix` say and exit with on the way (issue 16, items 3-6 and 11): output folders,
missing paths, where findings left by a fix that was not written are, counts, and Ctrl-C."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

# JM301 deletes line 2, which moves the JM203 finding of line 3 (no fix) to line 2 of the fixed text
SHIFTING = 'import jax\njax.config.update("jax_array", True)\nfrom jax.experimental.maps import xmap\n'
LEGACY = 'from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n'
# JM401 on a device: an unsafe fix
UNSAFE = "import jax\n\nbufs = jax.devices()[0].live_buffers()\n"  # a device's list: unsafe (a count is safe)


def invoke(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


# item 3: -o into a folder that does not exist yet

def test_output_file_in_a_missing_folder_is_created(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("check", "--format", "sarif", "-o", "reports/x.sarif", "--exit-zero", "a.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert '"version": "2.1.0"' in (tmp_path / "reports" / "x.sarif").read_text()


def test_report_in_a_missing_folder_is_created(tmp_path):
    (tmp_path / "a.py").write_text(SHIFTING)
    result = invoke("fix", "--diff", "--report", "out/review.md", "a.py", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "JM203" in (tmp_path / "out" / "review.md").read_text()


def test_output_file_that_cannot_be_written_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    (tmp_path / "blocker").write_text("a file, not a folder")
    result = invoke("check", "-o", "blocker/x.txt", "--exit-zero", "a.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "error: cannot write blocker/x.txt" in result.output


# item 4: a named path that does not exist

@pytest.mark.parametrize("args", [("check",), ("check", "--exit-zero"), ("fix",), ("fix", "--diff")])
def test_a_missing_path_never_passes(tmp_path, args):
    (tmp_path / "clean.py").write_text("import jax\n")
    result = invoke(*args, "typo.py", "clean.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "error: typo.py: no such file or directory" in result.output
    assert "All checks passed" not in result.output
    assert "1 named path does not exist" in result.output


def test_only_a_missing_path(tmp_path):
    result = invoke("check", "typo.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "All checks passed" not in result.output
    assert "1 named path does not exist" in result.output


# item 5: findings left by a fix that is not written are located in the file on disk

def _locations(output: str, code: str):
    return [line.split(": ")[0] for line in output.splitlines() if f": {code}" in line]


def test_diff_reports_findings_left_at_their_lines_on_disk(tmp_path):
    (tmp_path / "a.py").write_text(SHIFTING)
    check = invoke("check", "a.py", cwd=tmp_path)
    assert _locations(check.output, "JM203") == ["a.py:3:35"]
    diff = invoke("fix", "--diff", "a.py", cwd=tmp_path)
    assert _locations(diff.output, "JM203") == ["a.py:3:35"]  # the fixed text has it on line 2
    assert _locations(diff.output, "JM301") == []  # the diff fixes it
    assert "1 finding left" in diff.output
    assert (tmp_path / "a.py").read_text() == SHIFTING


def test_diff_json_lines_are_those_of_check(tmp_path):
    import json

    (tmp_path / "a.py").write_text(SHIFTING + UNSAFE.replace("import jax\n", ""))
    invoke("check", "--format", "json", "-o", "check.json", "a.py", cwd=tmp_path)
    invoke("fix", "--diff", "--format", "json", "-o", "diff.json", "a.py", cwd=tmp_path)
    check, diff = (json.loads((tmp_path / name).read_text()) for name in ("check.json", "diff.json"))
    left = [(r["code"], r["line"], r["column"], r["end_line"], r["end_column"]) for r in diff]
    expected = [(r["code"], r["line"], r["column"], r["end_line"], r["end_column"]) for r in check
                if r["fix_safety"] != "safe"]
    assert left == expected and {c for c, *_ in left} == {"JM203", "JM401"}


def test_diff_left_count_matches_what_fix_leaves(tmp_path):
    (tmp_path / "a.py").write_text(SHIFTING)
    (tmp_path / "b.py").write_text(UNSAFE)
    diff = invoke("fix", "--diff", "a.py", "b.py", cwd=tmp_path)
    written = invoke("fix", "a.py", "b.py", cwd=tmp_path)
    assert "2 findings left" in diff.output and "2 findings left" in written.output


# item 6: counts

def test_check_summary_counts_unsafe_fixes(tmp_path):
    (tmp_path / "b.py").write_text(UNSAFE)
    result = invoke("check", "b.py", cwd=tmp_path)
    assert "[~] 1 fixable with `jaxmigrate fix --unsafe-fixes`" in result.output
    assert "need manual changes" not in result.output


def test_report_does_not_call_an_unsafe_fix_manual(tmp_path):
    (tmp_path / "b.py").write_text(UNSAFE)
    invoke("fix", "--report", "r.md", "b.py", cwd=tmp_path)
    report = (tmp_path / "r.md").read_text()
    assert "--unsafe-fixes" in report and "needs a person" not in report


def test_diff_report_says_would_apply(tmp_path):
    (tmp_path / "a.py").write_text(SHIFTING)
    invoke("fix", "--diff", "--report", "r.md", "a.py", cwd=tmp_path)
    report = (tmp_path / "r.md").read_text()
    assert "1 fix would be applied in 1 file (nothing written); 1 item left." in report
    assert "`a.py:3:35`" in report
    invoke("fix", "--report", "r.md", "a.py", cwd=tmp_path)
    assert "1 fix applied in 1 file; 1 item left." in (tmp_path / "r.md").read_text()


def test_verify_counts_the_findings_of_files_it_refused(tmp_path, monkeypatch):
    from jaxmigrate.verify import gate
    from jaxmigrate.verify.runner import Verdict

    def divergent(before, after, **_):
        return Verdict("divergent", "a value differs", before, after, 8, 1, 0.0)

    monkeypatch.setattr(gate, "verify_files", divergent)
    (tmp_path / "a.py").write_text(SHIFTING)
    result = invoke("fix", "--verify", "a.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert (tmp_path / "a.py").read_text() == SHIFTING
    assert "Applied 0 fixes in 0 files; 2 findings left" in result.output
    assert _locations(result.output, "JM301") == ["a.py:2:1"]
    assert _locations(result.output, "JM203") == ["a.py:3:35"]


# item 11: Ctrl-C during fix

# Ctrl-C arrives after the first write: the driver wraps the engine's write (write_fixed) with a SIGINT
# to the command's process (from a worker, too), in a child process so that pytest is not interrupted.
DRIVER = """
import os, signal, sys
from jaxmigrate.engine import pipeline
from jaxmigrate.cli import main
real, parent = pipeline.write_fixed, os.getpid()
def write_then_interrupt(path, data, *args, **kw):
    real(path, data, *args, **kw)
    os.kill(parent, signal.SIGINT)
    if os.getpid() != parent:  # a worker: on until the command has seen it (a minute at most)
        from jaxmigrate.engine import runner
        import time
        deadline = time.monotonic() + 60
        while not runner._stopping() and time.monotonic() < deadline:
            time.sleep(0.001)
pipeline.write_fixed = write_then_interrupt
main(sys.argv[1:], prog_name="jaxmigrate")
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_fix_exits_130_and_counts_what_was_written(tmp_path, jobs):
    import subprocess
    import sys

    names = [f"m{i:02d}.py" for i in range(40)]
    for name in names:
        (tmp_path / name).write_text(LEGACY)
    proc = subprocess.run([sys.executable, "-c", DRIVER, "fix", "--no-cache", "-j", jobs, *names], cwd=tmp_path,
                          capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 130, output
    written = sum((tmp_path / n).read_text() != LEGACY for n in names)
    assert 1 <= written <= int(jobs)  # no file started after the command saw Ctrl-C
    assert f"Interrupted: {written} file{'s' * (written != 1)} written" in output
    assert f"the other {len(names) - written} are untouched" in output
    assert "Aborted!" not in output and "Traceback" not in output
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # no temporary file left


def test_diff_of_a_notebook_reports_findings_left_at_their_cell_lines_on_disk(tmp_path):
    import json

    cell = {"cell_type": "code", "execution_count": 1, "id": "x", "metadata": {}, "outputs": []}
    nb = {"cells": [dict(cell, source=SHIFTING.splitlines(keepends=True))], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    check = invoke("check", "n.ipynb", cwd=tmp_path)
    diff = invoke("fix", "--diff", "n.ipynb", cwd=tmp_path)
    assert _locations(check.output, "JM203") == _locations(diff.output, "JM203") == ["n.ipynb:3:35"]


# issue 28, item 11: an unsafe fix never changes behaviour without a word ---------------------------------------
GDA_BRANCH = '''\
import jax
from jax.experimental.global_device_array import GlobalDeviceArray


def describe(x):
    if isinstance(x, GlobalDeviceArray):
        return ("sharded", x.shape)
    elif isinstance(x, jax.Array):
        return ("device", x.shape)
    return ("host", x.shape)
'''


@pytest.mark.parametrize("diff", [False, True])
def test_the_summary_lists_each_unsafe_fix_applied_and_what_it_may_change(tmp_path, diff):
    """Deleting the GDA-only branch changes what a sharded array gets: the summary says so, beside
    `0 findings left`, with the rule's note; --show-fixes and --report name it too."""
    from jaxmigrate.rules import BY_CODE

    (tmp_path / "a.py").write_text(GDA_BRANCH)
    args = ["fix", "--unsafe-fixes", "--show-fixes", "--report", "r.md", *(["--diff"] if diff else []), "a.py"]
    result = invoke(*args, cwd=tmp_path)
    assert ("Would apply" if diff else "Applied") + " 2 fixes in 1 file; 0 findings left for manual review." in result.output
    lines = result.output.splitlines()
    at = lines.index(next(line for line in lines if "of the fixes" in line))
    assert lines[at] == f"[~] 1 of the fixes {'would be' if diff else 'were'} unsafe fixes, which may change what the " \
                        "code does; review it:"
    assert lines[at + 1] == f"  JM502 (gda-attributes): may change: {BY_CODE['JM502'].unsafe_note}"
    assert lines[at + 2].startswith("    a.py:6:22: `GlobalDeviceArray` was removed in JAX 0.4.7: this branch only ran")
    assert "     2 x JM502 (gda-attributes) [~] unsafe at 6:22" in lines  # the other one drops the import
    report = (tmp_path / "r.md").read_text()
    assert "- [ ] `a.py:6:22` **JM502**" in report and f"  - may change: {BY_CODE['JM502'].unsafe_note}" in report
    assert (tmp_path / "a.py").read_text() == GDA_BRANCH if diff else "GlobalDeviceArray" not in (tmp_path / "a.py").read_text()


def test_no_word_of_unsafe_fixes_when_none_applied(tmp_path):
    (tmp_path / "a.py").write_text(GDA_BRANCH)
    result = invoke("fix", "--diff", "a.py", cwd=tmp_path)
    assert "of the fixes" not in result.output and "[~] 1 of them fixable with --unsafe-fixes." in result.output


def test_every_rule_with_an_unsafe_fix_says_what_it_may_change():
    from jaxmigrate.rules import ALL_RULES

    unsafe = [r for r in ALL_RULES if r.fix_safety == "unsafe" or any(e.unsafe for e in r.examples)]
    assert unsafe and [r.code for r in unsafe if not r.unsafe_note] == []


# issue 28: the counts agree across check, --statistics, fix --diff, --show-fixes and fix ---------------------------
def _counts(tree: Path, *options: str) -> dict:
    """What each command says of ``tree`` (a copy: `fix` writes it last): the findings `check`
    counts fixable, the fixes `--statistics`, `fix --diff`, `--show-fixes` and `fix` apply, and
    what they leave."""
    import re

    unsafe = "--unsafe-fixes" in options
    check = invoke("check", "--no-cache", ".", cwd=tree).output
    found = int(re.search(r"Found (\d+) finding", check).group(1))
    fixable = sum(int(n) for n in re.findall(r"\[\*\] (\d+) fixable", check))
    fixable += sum(int(n) for n in re.findall(r"\[~\] (\d+) fixable", check)) if unsafe else 0
    stats = invoke("check", "--no-cache", "--statistics", ".", cwd=tree).output
    stat_fixable = sum(int(n) for n in re.findall(r"\((\d+) fixable", stats))
    stat_fixable += sum(int(n) for n in re.findall(r"(\d+) with --unsafe-fixes", stats)) if unsafe else 0
    diff = invoke("fix", "--no-cache", "--diff", "--show-fixes", *options, ".", cwd=tree).output
    fix = invoke("fix", "--no-cache", *options, ".", cwd=tree).output
    return {
        "check": (fixable, found - fixable),
        "--statistics": (stat_fixable, found - stat_fixable),
        "fix --diff": tuple(int(n) for n in re.search(r"Would apply (\d+) fix\w* in \d+ files?; (\d+) finding", diff).groups()),
        "--show-fixes": (int(re.search(r"Would fix (\d+) finding", diff).group(1)), found - fixable),
        "fix": tuple(int(n) for n in re.search(r"Applied (\d+) fix\w* in \d+ files?; (\d+) finding", fix).groups()),
    }


@pytest.mark.parametrize("options", [(), ("--unsafe-fixes",)])
def test_the_counts_agree_on_the_readme_example(tmp_path, options, monkeypatch):
    monkeypatch.delenv("JAXMIGRATE_TARGET_JAX")  # the example as the README runs it: the newest target
    import shutil

    shutil.copytree(Path(__file__).resolve().parent.parent / "examples", tmp_path / "examples")
    counts = _counts(tmp_path / "examples", *options)
    assert len(set(counts.values())) == 1, counts  # was: check 12 fixable, fix --diff 13, --show-fixes 14
    assert counts["check"] == ((14, 0) if options else (12, 2))


def _easylm(tmp_path: Path) -> Path:
    """EasyLM (the benchmark's commit, bench/trees.py) from its local mirror, or skip."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import trees  # noqa: E402 - the benchmark's module

    tree = trees.TREES["easylm"]
    gitdir = trees.default_mirror_root() / tree.mirror_name / "repo"
    if not gitdir.is_dir():
        pytest.skip(f"no mirror of {tree.repo} at {gitdir}")
    trees.materialise(gitdir, tree.sha, tmp_path / "easylm")
    return tmp_path / "easylm"


@pytest.mark.parametrize("options", [(), ("--unsafe-fixes",)])
def test_the_counts_agree_on_easylm(tmp_path, options, monkeypatch):
    monkeypatch.delenv("JAXMIGRATE_TARGET_JAX")
    counts = _counts(_easylm(tmp_path), *options)
    assert len(set(counts.values())) == 1, counts


def test_fix_on_an_isort_clean_tree_adds_no_ruff_i001(tmp_path, monkeypatch):
    """EasyLM with its imports put in order by ruff: `fix` keeps them so (it left 7 files unsorted)."""
    import json
    import subprocess
    import sys

    pytest.importorskip("ruff")
    monkeypatch.delenv("JAXMIGRATE_TARGET_JAX")
    tree = _easylm(tmp_path)

    def unsorted(*fix: str) -> list:
        out = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I", "--output-format",
                              "json", "--exit-zero", *fix, "."], cwd=tree, capture_output=True, text=True, check=True).stdout
        return [r["filename"] for r in json.loads(out)]

    unsorted("--fix")
    assert unsorted() == []
    result = invoke("fix", "--no-cache", "--unsafe-fixes", ".", cwd=tree)
    assert "Applied 77 fixes in 12 files" in result.output  # the 44 JM101 renames included (issue 36)
    assert unsorted() == []


SCAN_DRIVER = """
import os, signal, sys
from jaxmigrate.engine import project
from jaxmigrate.cli import main
real = project.scan
def interrupted_scan(*args, **kw):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the project's imports are read, before any file is fixed
    return real(*args, **kw)
project.scan = interrupted_scan
main(sys.argv[1:], prog_name="jaxmigrate")
"""


def test_ctrl_c_before_the_first_file_says_nothing_was_written(tmp_path):
    """Outside the files' processing Ctrl-C was Python's: `Aborted!`, exit 1. The whole run is
    one window: it stops before the next file and says what it wrote."""
    import subprocess
    import sys

    names = [f"m{i:02d}.py" for i in range(3)]
    for name in names:
        (tmp_path / name).write_text(LEGACY)
    before = {n: (tmp_path / n).read_text() for n in names}
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))  # this checkout's jaxmigrate
    proc = subprocess.run([sys.executable, "-c", SCAN_DRIVER, "fix", "--no-cache", "-j", "1", *names], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 130, output
    assert "Interrupted: 0 files written; the other 3 are untouched (3 not reached)." in output
    assert "Aborted!" not in output and {n: (tmp_path / n).read_text() for n in names} == before
