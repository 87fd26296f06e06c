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
