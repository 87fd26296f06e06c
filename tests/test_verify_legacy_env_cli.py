"""`python -m jaxmigrate.verify.legacy_env` (issue 40, item 7, in part): `--help` says what it
does and exits 0 (it crashed: `--help` was read as a version), a word that is no version is a
usage error (exit 2, no traceback); and pytest is in the `verify` extra (`verify --pytest` in a
venv made as the README says was undecidable: "No module named pytest")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxmigrate.verify.legacy_env", *args], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


def test_help_works():
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    assert "usage: python -m jaxmigrate.verify.legacy_env" in done.stdout and "--legacy-jax VERSION" in done.stdout


def test_a_word_that_is_no_version_is_a_usage_error():
    done = _run("latest")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not a JAX version (X.Y.Z): 'latest'" in done.stderr


def test_pytest_is_in_the_verify_extra():
    extra = re.search(r"^verify = \[(.*)\]", (ROOT / "pyproject.toml").read_text(), re.M)
    assert extra is not None and '"pytest"' in extra.group(1)
