"""Find the ``*.py`` and ``*.ipynb`` files under the given paths, honouring ``.gitignore`` and skipping tool folders."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    import pathspec

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "build", "dist", "node_modules", "site-packages",
     "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxmigrate_cache", ".eggs"}
)


Inode = Tuple[int, int]  # (device, inode): a file, whichever of its hard links names it


@dataclass(frozen=True)
class SourceFile:
    path: Path  # as opened
    display: str  # as reported: relative to the working directory where possible
    real: str = ""  # the real path, as the walk found it without a system call per file ("": unknown)


def _display(path: Path) -> str:
    """Relative to the working directory when the file is below it, else as found."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith(os.pardir) else rel


def _relative(path: str, cwd: str) -> str:
    """``_display`` for an absolute, normalised path, without a system call per file."""
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    return path[len(prefix):] if path.startswith(prefix) else path


def _gitignore(lines: Sequence[str]) -> "pathspec.GitIgnoreSpec":
    """A compiled ``.gitignore``; pathspec is imported only by a tree that has one, or exclude
    patterns (it costs start-up 9 ms)."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


class _Ignores:
    """The ``.gitignore`` files that apply to a folder: its own and every parent's up to the repo root.

    Works on absolute path strings; the chain of specs is computed once per folder."""

    def __init__(self, seen: Optional["Seen"] = None) -> None:
        self._chains: Dict[str, List[Tuple[str, pathspec.GitIgnoreSpec]]] = {}
        self.seen = seen

    def _spec(self, folder: str) -> Optional[pathspec.GitIgnoreSpec]:
        gi = os.path.join(folder, ".gitignore")
        if self.seen is not None:
            self.seen.note(gi)
        if not os.path.isfile(gi):
            return None
        try:
            with open(gi, encoding="utf-8", errors="replace") as handle:
                return _gitignore(handle.read().splitlines())
        except (OSError, ValueError):
            return None

    def chain(self, folder: str) -> List[Tuple[str, pathspec.GitIgnoreSpec]]:
        """(folder, spec) for the folder and its parents, nearest first, up to the one holding ``.git``."""
        chain = self._chains.get(folder)
        if chain is None:
            spec = self._spec(folder)
            chain = [(folder, spec)] if spec is not None else []
            parent = os.path.dirname(folder)
            if self.seen is not None:  # whether the chain goes on above (its .gitignore is noted by _spec)
                self.seen.note(os.path.join(folder, ".git"))
            if parent != folder and not os.path.exists(os.path.join(folder, ".git")):
                chain = chain + self.chain(parent)
            self._chains[folder] = chain
        return chain

    def below(self, folder: str, parent: str, gitignore: bool, git: bool) -> List[Tuple[str, pathspec.GitIgnoreSpec]]:
        """``chain`` of ``folder``, a folder of ``parent`` whose chain is known, from what its listing
        shows: whether it holds a ``.gitignore`` file and a ``.git`` (no system call when neither)."""
        chain = self._chains.get(folder)
        if chain is None:
            spec = self._spec(folder) if gitignore else None
            chain = [(folder, spec)] if spec is not None else []
            if not git:
                chain = chain + self.chain(parent)
            self._chains[folder] = chain
        return chain

    def ignored(self, path: str, is_dir: bool) -> bool:
        for folder, spec in self.chain(os.path.dirname(path)):
            rel = os.path.relpath(path, folder).replace(os.sep, "/") + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False


class _Excludes:
    """Folder names skipped by default, or configured gitignore-style patterns relative to a root."""

    def __init__(self, root: Optional[Path], exclude: Optional[Sequence[str]], extend: Sequence[str]) -> None:
        self.root = root
        self.default = exclude is None
        patterns = [*(exclude or []), *extend]
        self.spec = _gitignore(patterns) if patterns and root is not None else None

    def excluded(self, path: str, is_dir: bool) -> bool:
        """``path``: as found by the walk (a string: most files need no ``Path``)."""
        if self.default and is_dir:
            name = os.path.basename(path)
            if name in SKIP_DIRS or name.endswith(".egg-info"):
                return True
        if self.spec is None:
            return False
        try:
            rel = Path(path).resolve().relative_to(self.root.resolve()).as_posix()  # type: ignore[union-attr]  # self.spec is set: so is self.root
        except ValueError:
            return False
        return self.spec.match_file(rel + ("/" if is_dir else ""))

    def may_exclude_files(self, folder: str, real: str = "") -> bool:
        """Whether a file of ``folder`` (``real``: its real path, where known) may be excluded (else
        the walk asks for none of them)."""
        return self.spec is not None

    def below(self, folder: str, parent: str) -> None:
        """``folder``, a real folder of ``parent`` with no ``pyproject.toml``, has its parent's
        exclusions (the same for every folder here)."""


class _PerFolder:
    """Exclusions like ruff's: each folder's come from its nearest configuration (``Configs``);
    ``--exclude`` replaces them (and the default skips), ``--extend-exclude`` adds to them, both
    relative to the working directory."""

    def __init__(self, configs, exclude: Optional[Sequence[str]], extend_exclude: Sequence[str]) -> None:
        cwd = Path.cwd()
        self.configs = configs
        self.replaced = _Excludes(cwd, exclude, ()) if exclude is not None else None
        self.extra = _Excludes(cwd, [], extend_exclude) if extend_exclude else None
        self._by_folder: Dict[str, _Excludes] = {}
        self._by_root: Dict[Optional[Path], _Excludes] = {}

    def excluded(self, path: str, is_dir: bool) -> bool:
        if self.extra is not None and self.extra.excluded(path, is_dir):
            return True
        if self.replaced is not None:
            return self.replaced.excluded(path, is_dir)
        return self._of(os.path.dirname(path)).excluded(path, is_dir)

    def may_exclude_files(self, folder: str, real: str = "") -> bool:
        if self.extra is not None and self.extra.may_exclude_files(folder):
            return True
        return (self.replaced or self._of(folder, real)).may_exclude_files(folder)

    def below(self, folder: str, parent: str) -> None:
        """``folder``, a real folder of ``parent`` with no ``pyproject.toml``, has the nearest
        configuration its parent has: no look-up (``Configs.nearest`` would find the parent's)."""
        if folder not in self._by_folder and parent in self._by_folder:
            self._by_folder[folder] = self._by_folder[parent]

    def _of(self, folder: str, real: str = "") -> _Excludes:
        excludes = self._by_folder.get(folder)
        if excludes is None:
            config = self.configs.for_folder(Path(real) if real else Path(folder).resolve())
            excludes = self._by_root.get(config.root)
            if excludes is None:
                excludes = self._by_root[config.root] = _Excludes(config.root, config.exclude, config.extend_exclude)
            self._by_folder[folder] = excludes
        return excludes


def discover(paths: Sequence[str], *, root: Optional[Path] = None, exclude: Optional[Sequence[str]] = None,
             extend_exclude: Sequence[str] = (), configs=None) -> Tuple[List[SourceFile], List[str]]:
    """Returns the files to process (sorted, no duplicates) and the paths that do not exist.

    ``exclude`` replaces the default skipped folders, ``extend_exclude`` adds to them (patterns
    relative to ``root``, the folder of the configuration). With ``configs`` (an
    ``engine.config.Configs``) each folder's configuration decides instead, and ``exclude`` and
    ``extend_exclude`` are the command line's, relative to the working directory."""
    found, missing = _found(paths, root, exclude, extend_exclude, configs)
    files = [SourceFile(path if isinstance(path, Path) else Path(path), display, real) for path, display, real in found]
    return sorted(files, key=lambda f: f.display), missing


def walk_files(folders: Sequence[str], *, exclude: Optional[Sequence[str]] = None, extend_exclude: Sequence[str] = (),
               configs=None, seen: Optional["Seen"] = None) -> List[Tuple[str, str]]:
    """(path, display) of the files ``discover`` finds under ``folders`` (the same files, in its
    order), without making a ``Path`` of each: the other files of a project, which the plan that
    spans modules (engine/project.py) mostly only names. ``seen`` records what the walk looked at
    (engine/listing.py keeps the answer for as long as none of it changes)."""
    found, _ = _found(folders, None, exclude, extend_exclude, configs, seen)
    return sorted(((str(path), display) for path, display, _ in found), key=lambda f: f[1])


class Seen:
    """What a walk looked at, each path with its stat when looked at (None: there was nothing):
    each folder it listed (a file added, removed or renamed there changes the folder's modification
    time), the ``.gitignore`` and ``pyproject.toml`` files that decide its exclusions, and the
    folders above it whose ``.gitignore``, ``.git`` and configuration apply."""

    def __init__(self) -> None:
        self.stats: Dict[str, Optional[Tuple[int, int, int, int]]] = {}

    def note(self, path: str, st: Optional[os.stat_result] = None) -> None:
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                self.stats[path] = None
                return
        self.stats[path] = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _found(paths: Sequence[str], root: Optional[Path], exclude: Optional[Sequence[str]], extend_exclude: Sequence[str],
           configs, seen: Optional[Seen] = None) -> Tuple[List[Tuple[Union[str, Path], str, str]], List[str]]:
    """(path as opened, display, real path) of each file to process, and the paths that do not exist."""
    missing: List[str] = []
    found: Dict[str, Tuple[Union[str, Path], str, str]] = {}  # by real path (normcase: how Windows compares paths)
    names: Dict[Inode, str] = {}  # (device, inode) -> the real path of its first name
    ignores = _Ignores(seen)
    excludes = _PerFolder(configs, exclude, extend_exclude) if configs is not None else _Excludes(root, exclude, extend_exclude)
    for raw in paths:
        top = Path(raw)
        dangling = top.is_symlink() and not top.exists()
        if not top.exists() and not dangling:
            missing.append(raw)
            continue
        if top.is_file() or dangling:  # named explicitly: always taken, like ruff
            st = None if dangling else os.stat(top)
            resolved = str(top.resolve())
            real = _first_name(names, os.path.normcase(resolved), st and (st.st_dev, st.st_ino))
            found.setdefault(real, (top, _display(top), resolved))
            continue
        cwd = os.getcwd()
        if seen is not None:  # the configurations above the walk, which decide its exclusions
            up = os.path.realpath(raw)
            while os.path.dirname(up) != up:
                up = os.path.dirname(up)
                seen.note(os.path.join(up, "pyproject.toml"))
        linked: Set[str] = set()  # real paths found through a symbolic link to the file, so far
        for path, resolved, link, inode in _walk(os.path.abspath(raw), ignores, excludes, seen):
            real = _first_name(names, os.path.normcase(resolved), inode)
            if real not in found or real in linked and not link:  # the file itself over a link to it
                found[real] = (path, _relative(path, cwd), resolved)
                (linked.add if link else linked.discard)(real)
    return list(found.values()), missing


def _first_name(names: Dict[Inode, str], real: str, inode: Optional[Inode]) -> str:
    """The real path that stands for a file: that of the first of its hard links found (``inode``:
    its (device, inode), None if unknown), so that each file is processed once (two ways to one
    file at once would race: a hard-linked file is written in place, engine/writer.py)."""
    return names.setdefault(inode, real) if inode and inode[1] else real


def _walk(root: str, ignores: _Ignores, excludes,
          seen: Optional[Seen] = None) -> Iterator[Tuple[str, str, bool, Optional[Inode]]]:
    """(path, real path, whether it is a symbolic link, (device, inode) or None for a link) of each
    source file below ``root``, folders and files in sorted order (a folder's files, then its
    folders, depth first). A dangling link named like a source file is one too: reading it is that
    file's error, not silence (`fix` never writes a link: engine/writer.py). What a folder's listing
    shows (a ``.gitignore``, a ``.git``, a ``pyproject.toml``) decides whether its parent's
    ``.gitignore`` chain and exclusions are its own, with no system call to ask."""
    seen_dirs = set()
    todo: List[Tuple[str, str, str]] = [(root, os.path.realpath(root), "")]  # (folder, real path, parent if a real child)
    while todo:
        folder, real, parent = todo.pop()
        if real in seen_dirs:  # a symlink loop or a second way to the same folder
            continue
        seen_dirs.add(real)
        try:
            stat: Optional[os.stat_result] = os.stat(folder)  # before the listing: a change after it shows
        except OSError:
            stat = None
        try:
            with os.scandir(folder) as it:
                entries = {entry.name: entry for entry in it}
        except OSError:
            if seen is not None:
                seen.note(folder, stat)
            continue
        if seen is not None:
            seen.note(folder, stat)
            if "pyproject.toml" in entries:  # its exclusions (a .gitignore is noted where it is read)
                seen.note(entries["pyproject.toml"].path)
        if parent:
            git = entries.get(".git")
            chain = ignores.below(folder, parent, ".gitignore" in entries and _is_file(entries[".gitignore"]),
                                  git is not None and (not git.is_symlink() or os.path.exists(git.path)))
            if "pyproject.toml" not in entries:
                excludes.below(folder, parent)
        else:
            chain = ignores.chain(folder)  # the .gitignore files that apply here (mostly none)
        device = stat.st_dev if stat is not None else None  # a system call per folder: inode() costs none
        dirs = []
        some_excluded = excludes.may_exclude_files(folder, real)  # mostly none: no question per file
        prefix = real if real.endswith(os.sep) else real + os.sep
        for name in sorted(entries):
            entry = entries[name]
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if not excludes.excluded(entry.path, True) and not (chain and ignores.ignored(entry.path, True)):
                    link = entry.is_symlink()
                    dirs.append((entry.path, os.path.realpath(entry.path) if link else prefix + name,
                                 "" if link else folder))
            elif name.endswith((".py", ".ipynb")) and (entry.is_file() or _dangling(entry)):
                if not (some_excluded and excludes.excluded(entry.path, False)) \
                        and not (chain and ignores.ignored(entry.path, False)):
                    link = entry.is_symlink()
                    yield (entry.path, os.path.realpath(entry.path) if link else prefix + name, link,
                           None if link or device is None else (device, entry.inode()))
        todo.extend(reversed(dirs))


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _dangling(entry: os.DirEntry) -> bool:
    """A symbolic link to nothing (not to a FIFO or a folder, which are skipped)."""
    return entry.is_symlink() and not os.path.exists(entry.path)
