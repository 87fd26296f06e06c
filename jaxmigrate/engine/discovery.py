"""Find the ``*.py`` and ``*.ipynb`` files under the given paths, honouring ``.gitignore`` and skipping tool folders."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pathspec

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "build", "dist", "node_modules", "site-packages",
     "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxmigrate_cache", ".eggs"}
)


@dataclass(frozen=True)
class SourceFile:
    path: Path  # as opened
    display: str  # as reported: relative to the working directory where possible


def _display(path: Path) -> str:
    """Relative to the working directory when the file is below it, else as found."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith(os.pardir) else rel


class _Ignores:
    """The ``.gitignore`` files that apply to a folder: its own and every parent's up to the repo root."""

    def __init__(self) -> None:
        self._cache: Dict[Path, Optional[pathspec.GitIgnoreSpec]] = {}

    def _spec(self, folder: Path) -> Optional[pathspec.GitIgnoreSpec]:
        if folder not in self._cache:
            gi = folder / ".gitignore"
            spec = None
            if gi.is_file():
                try:
                    spec = pathspec.GitIgnoreSpec.from_lines(gi.read_text(errors="replace").splitlines())
                except (OSError, ValueError):
                    spec = None
            self._cache[folder] = spec
        return self._cache[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for folder in path.parents:
            spec = self._spec(folder)
            if spec is not None:
                rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
            if (folder / ".git").exists():
                break
        return False


class _Excludes:
    """Folder names skipped by default, or configured gitignore-style patterns relative to a root."""

    def __init__(self, root: Optional[Path], exclude: Optional[Sequence[str]], extend: Sequence[str]) -> None:
        self.root = root
        self.default = exclude is None
        patterns = [*(exclude or []), *extend]
        self.spec = pathspec.GitIgnoreSpec.from_lines(patterns) if patterns and root is not None else None

    def excluded(self, path: Path, is_dir: bool) -> bool:
        if self.default and is_dir and (path.name in SKIP_DIRS or path.name.endswith(".egg-info")):
            return True
        if self.spec is None:
            return False
        try:
            rel = path.resolve().relative_to(self.root.resolve()).as_posix()  # type: ignore[union-attr]
        except ValueError:
            return False
        return self.spec.match_file(rel + ("/" if is_dir else ""))


def discover(paths: Sequence[str], *, root: Optional[Path] = None, exclude: Optional[Sequence[str]] = None,
             extend_exclude: Sequence[str] = ()) -> Tuple[List[SourceFile], List[str]]:
    """Returns the files to process (sorted, no duplicates) and the paths that do not exist.

    ``exclude`` replaces the default skipped folders, ``extend_exclude`` adds to them (patterns
    relative to ``root``, the folder of the configuration)."""
    missing: List[str] = []
    found: Dict[Path, SourceFile] = {}
    ignores = _Ignores()
    excludes = _Excludes(root, exclude, extend_exclude)
    for raw in paths:
        top = Path(raw)
        if not top.exists():
            missing.append(raw)
            continue
        if top.is_file():  # named explicitly: always taken, like ruff
            found.setdefault(top.resolve(), SourceFile(top, _display(top)))
            continue
        for file in _walk(top.absolute(), ignores, excludes):
            found.setdefault(file.resolve(), SourceFile(file, _display(file)))
    return sorted(found.values(), key=lambda f: f.display), missing


def _walk(root: Path, ignores: _Ignores, excludes: _Excludes) -> Iterator[Path]:
    seen_dirs = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        here = Path(dirpath)
        real = os.path.realpath(dirpath)
        if real in seen_dirs:  # a symlink loop or a second way to the same folder
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        dirnames[:] = sorted(
            d for d in dirnames if not excludes.excluded(here / d, True) and not ignores.ignored(here / d, True)
        )
        for name in sorted(filenames):
            if name.endswith((".py", ".ipynb")):
                path = here / name
                if path.is_file() and not excludes.excluded(path, False) and not ignores.ignored(path, False):
                    yield path
