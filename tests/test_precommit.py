"""Real `pre-commit run --all-files` with this checkout's hooks, in a throwaway git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent
LEGACY = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"
FIXED = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_shardings=None, out_shardings=None)\n"


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    if shutil.which("pre-commit") is None or shutil.which("git") is None:
        pytest.skip("needs git and pre-commit (the test extra installs pre-commit)")
    head = _git(ROOT, "rev-parse", "HEAD").stdout.strip()
    if _git(ROOT, "status", "--porcelain", ".pre-commit-hooks.yaml").stdout.strip():
        pytest.skip(".pre-commit-hooks.yaml has uncommitted changes: pre-commit installs the committed hooks")
    work = tmp_path / "project"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "train.py").write_text(LEGACY)
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {ROOT}\n  rev: {head}\n  hooks:\n  - id: jaxmigrate\n  - id: jaxmigrate-fix\n"
    )
    _git(work, "add", ".")
    return work


def _pre_commit(work, hook, home):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    exe = shutil.which("pre-commit") or "pre-commit"
    return subprocess.run([exe, "run", hook, "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)


def test_check_hook_fails_on_legacy_code_and_fix_hook_rewrites_it(repo, tmp_path):
    home = tmp_path / "pre-commit-home"
    check = _pre_commit(repo, "jaxmigrate", home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:3:15: JM101" in check.stdout
    fix = _pre_commit(repo, "jaxmigrate-fix", home)
    assert fix.returncode == 1  # pre-commit fails a hook that modified files
    assert (repo / "train.py").read_text() == FIXED
    _git(repo, "add", ".")
    assert _pre_commit(repo, "jaxmigrate", home).returncode == 0
