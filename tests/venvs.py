"""Virtual environments with another JAX, built once under ~/.cache/jaxmigrate and reused.

A test that needs one calls ``cached_venv``; where no suitable Python exists or the packages cannot
be installed (no network, no wheel), the test is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable, Sequence

import pytest


def pyenv_pythons(*versions: str) -> Iterable[str]:
    """pyenv's interpreters for these minor versions ("3.12"), newest patch first."""
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    for version in versions:
        for candidate in sorted(Path(root, "versions").glob(f"{version}.*"), reverse=True):
            python = candidate / "bin" / "python"
            if python.exists():
                yield str(python)


def cached_venv(name: str, pythons: Iterable[str], requirements: Sequence[str]) -> str:
    """The python of venv ``name`` with ``requirements`` installed, built from the first of
    ``pythons`` on first use."""
    venv = Path.home() / ".cache" / "jaxmigrate" / name
    python, done = venv / "bin" / "python", venv / ".installed"
    if done.exists() and done.read_text() == "\n".join(requirements):
        return str(python)
    base = next(iter(pythons), None)
    if base is None:
        pytest.skip(f"no Python to build the {name} venv with")
    try:
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True, capture_output=True,
                       timeout=900)
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"{' '.join(requirements)} cannot be installed for {name}: {exc}")
    done.write_text("\n".join(requirements))
    return str(python)
