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
UNSAFE = "import jax\n\nn = len(jax.devices()[0].live_buffers())\n"


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
