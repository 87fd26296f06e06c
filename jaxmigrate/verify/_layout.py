"""Where and how a file runs: the way its project runs it.

- A module inside a package (its folder has ``__init__.py``) runs as ``python -m pkg.mod`` does:
  ``sys.path[0]`` is the package root (the folder above the topmost package), the module is
  ``__main__`` with ``__package__`` set, so relative imports work, and the package's own folder
  is not on ``sys.path`` (a ``pkg/logging.py`` does not shadow the standard ``logging``).
- A plain script runs as ``python script.py`` does: its folder is ``sys.path[0]``.
- Both get the project root (nearest ``pyproject.toml`` / ``setup.py`` / ``setup.cfg`` above)
  on ``sys.path`` too, as an editable install of the project would.
- Each process works in a scratch folder of its own (``mirror``): links to every entry of the
  base folder (the project root when there is one above, else the package root or the script's
  folder), so relative reads work as from the project root, while the files the program writes
  there are new, the side's own, and observed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
_NOT_COPIED = (".git", ".hg", ".venv", "venv", "env", "__pycache__", "node_modules", "build", "dist",
               ".jaxmigrate_cache", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", "site-packages")


@dataclass
class Layout:
    base: str  # the folder the program runs from (mirrored as its working directory)
    module: Optional[str]  # dotted name when the file is a package module
    path: List[str]  # sys.path entries in front, in order


def project_root(start: str) -> Optional[str]:
    """The nearest folder at or above ``start`` holding a project marker."""
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).is_file() for marker in PROJECT_MARKERS):
            return str(candidate)
    return None


def locate(filename: str) -> Layout:
    """How ``filename`` runs (see the module docstring)."""
    path = Path(filename).resolve()
    folder = path.parent
    top = folder
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    project = project_root(str(folder))
    first = str(folder if top == folder else top)
    inside = project is not None and (first == project or first.startswith(project.rstrip(os.sep) + os.sep))
    entries = [first] + ([project] if project is not None and inside and project != first else [])
    base = project if project is not None and inside else first
    if top == folder:  # a plain script
        return Layout(base, None, entries)
    parts = list(path.relative_to(top).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return Layout(base, ".".join(parts), entries)


def mirror(base: str, scratch: Path) -> str:
    """A fresh working folder holding a link to every entry of ``base``; returns its path."""
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        names = os.listdir(base)
    except OSError:
        names = []
    for name in names:
        if name in _NOT_COPIED:
            continue
        try:
            os.symlink(os.path.join(base, name), scratch / name)
        except OSError:
            pass
    return str(scratch)


MAX_COPIED = 20_000  # entries: a larger base is not copied (fix --verify falls back to one file at a time)


def copy_project(base: str, target: Path) -> Optional[Path]:
    """A copy of the project folder ``base`` at ``target``: Python files copied, other files
    linked, tool and VCS folders left out. None when ``base`` holds more than MAX_COPIED entries."""
    plan = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d not in _NOT_COPIED]
        plan.append((folder, files))
        if sum(len(f) + 1 for _, f in plan) > MAX_COPIED:
            return None
    for folder, files in plan:
        out = target / os.path.relpath(folder, base)
        out.mkdir(parents=True, exist_ok=True)
        for name in files:
            source = os.path.join(folder, name)
            if name.endswith(".py"):
                shutil.copy2(source, out / name)
            else:
                os.symlink(os.path.abspath(source), out / name)
    return target
