"""`--target-jax auto`: the installed JAX, else the jax version the project pins, else the newest."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Tuple

PIN = re.compile(r"""^\s*["']?jax(?:\[[^\]]*\])?\s*==\s*(\d+(?:\.\d+){0,2})""", re.MULTILINE)


def installed() -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


def pinned(root: Path) -> Optional[str]:
    """`jax==X` in the project's pyproject.toml or requirements*.txt (the first found)."""
    for path in [root / "pyproject.toml", *sorted(root.glob("requirements*.txt"))]:
        if path.is_file():
            match = PIN.search(path.read_text(errors="replace"))
            if match:
                return match.group(1)
    return None


def auto(root: Optional[Path]) -> Tuple[Optional[str], str]:
    """(version or None for the newest, where it came from)."""
    version = installed()
    if version:
        return re.match(r"\d+(?:\.\d+){0,2}", version).group(0), "the installed jax"  # type: ignore[union-attr]
    version = pinned(root or Path.cwd())
    if version:
        return version, "the jax pinned by the project"
    return None, "no installed or pinned jax: the newest"
