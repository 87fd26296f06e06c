"""The result cache: what ``check`` found in a file, keyed by everything that decides it.

``.jaxmigrate_cache/`` in the project root (the folder of the configuration, else the working
directory; ``JAXMIGRATE_CACHE_DIR`` names another folder) holds one file per tool fingerprint:
the version plus the size and modification time of every module of jaxmigrate itself, so an
edited checkout never reads old results. Inside, each file path maps to an entry: a digest of
the file's bytes, a digest of the settings that decide its findings (rule codes after
per-file-ignores, target JAX, notebook or module), the file's ``stat`` when it was read, and the
findings. A lookup needs the same settings and either the same bytes, or (without reading the
file) the same size, inode and modification time, trusted only when that time lies well before
the moment the file was read, as git does against "racy" edits in the same clock tick. Fix safety
and ``--unsafe-fixes`` do not change what a file contains, so ``fix`` reuses the entries ``check``
wrote to skip files with nothing to report. Beside the entries, what the project facts need
(engine/project.py: a file's import statements and byte tests, and its parts of the facts the
rules declare) is kept under the same stat rule, so a run over untouched files reads none of
them. A damaged
cache file is ignored. Writes are atomic, and the folder carries a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from jaxmigrate import __version__
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.engine.writer import write_atomic

FOLDER = ".jaxmigrate_cache"
_MAGIC = b"JMC3"
_DIGEST = 16
# A modification time this close to the moment of reading may hide a later edit in the same tick.
RACY_NS = 2_000_000_000


Stat = Tuple[int, int, int, int]  # (st_mtime_ns, st_size, st_ino, st_ctime_ns)


class Key(NamedTuple):
    """What a result depends on: the bytes, the settings, and the file's stat when it was read."""

    content: bytes
    settings: bytes
    stat: Stat  # (st_mtime_ns, st_size, st_ino, st_ctime_ns)
    read_ns: int


def _fingerprint() -> str:
    """The tool version and a digest of jaxmigrate's own modules and data (names, sizes,
    modification times): a regenerated API history changes findings as a code change does."""
    h = hashlib.blake2b(__version__.encode(), digest_size=8)
    package = Path(__file__).resolve().parent.parent
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(n for n in names if n.endswith((".py", ".tsv"))):
            st = os.stat(os.path.join(folder, name))
            h.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return f"{__version__}-{h.hexdigest()}"


@lru_cache(maxsize=None)
def settings_digest(rule_codes: Tuple[str, ...], target, notebook: bool, project: object = None) -> bytes:
    """The settings a file's findings depend on; ``project``: what the plans that span modules say
    of the file (its mesh hold, the GDA helpers it imports)."""
    return hashlib.blake2b(repr((rule_codes, target, notebook, project)).encode(), digest_size=_DIGEST).digest()


def content_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def stat_of(st: os.stat_result) -> Stat:
    """What says a file was not touched: its modification time, size and inode, and the time its
    inode last changed, which a copy that sets the old modification time back (``cp -p``,
    ``rsync -t``, a restored backup) cannot set back (git's index compares it too)."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _pack(findings: List[Finding]) -> list:
    return [(f.code, f.message, f.line, f.column, f.end_line, f.end_column, f.fix_safety, f.suggestion) for f in findings]


def _unpack(rows: list) -> List[Finding]:
    # a cached finding keeps what is reported (fixable, fix safety); its edits are recomputed by `fix`
    return [Finding(code, message, line, col, end_line, end_col, Fix(safety) if safety else None, suggestion)
            for code, message, line, col, end_line, end_col, safety, suggestion in rows]


class Cache:
    """Entries of one project for this tool fingerprint; ``save`` writes them back if they changed."""

    def __init__(self, root: Path) -> None:
        self.folder = Path(os.environ.get("JAXMIGRATE_CACHE_DIR") or root) / FOLDER
        self.path = self.folder / f"{_fingerprint()}.cache"
        self.entries, self.facts = self._load()
        self.dirty = False

    def _load(self) -> Tuple[Dict[str, tuple], Dict[str, tuple]]:
        try:
            blob = self.path.read_bytes()
        except OSError:
            return {}, {}
        head, checksum, payload = blob[:4], blob[4:4 + _DIGEST], blob[4 + _DIGEST:]
        if head != _MAGIC or hashlib.blake2b(payload, digest_size=_DIGEST).digest() != checksum:
            return {}, {}  # damaged or from another format: start afresh
        try:
            entries, facts = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return {}, {}
        return (entries, facts) if isinstance(entries, dict) and isinstance(facts, dict) else ({}, {})

    def _findings(self, entry) -> Optional[List[Finding]]:
        try:
            return _unpack(entry[4])
        except (TypeError, ValueError, IndexError):
            return None

    def unchanged(self, path: Path, settings: bytes, stat: Stat) -> Optional[List[Finding]]:
        """The findings for ``path`` if its stat says it was not touched since it was read, else None."""
        entry = self.entries.get(os.path.abspath(path))
        try:
            trusted = entry is not None and entry[1] == settings and tuple(entry[2]) == stat \
                and stat[0] < entry[3] - RACY_NS
        except (TypeError, IndexError):
            return None
        return self._findings(entry) if trusted else None

    def get(self, path: Path, content: bytes, settings: bytes) -> Optional[List[Finding]]:
        """The findings stored for ``path`` with exactly these bytes and settings, else None."""
        entry = self.entries.get(os.path.abspath(path))
        if entry is None or entry[0] != content or entry[1] != settings:
            return None
        return self._findings(entry)

    def put(self, path: Path, key: Key, findings: List[Finding]) -> None:
        self.entries[os.path.abspath(path)] = (key.content, key.settings, key.stat, key.read_ns, _pack(findings))
        self.dirty = True

    def fact(self, kind: str, path: Path, stat: Stat, settings: bytes = b""):
        """What was stored of ``kind`` for ``path`` (the mesh plan's import list, its verdict on the
        file) if the file was not touched since it was read; else None (``None`` is never stored).
        A string ``path`` is taken as absolute and normalised (a project's walk finds thousands)."""
        entry = self.facts.get(f"{kind}:{path if isinstance(path, str) else os.path.abspath(path)}")
        try:
            if entry is None or tuple(entry[0]) != stat or not stat[0] < entry[1] - RACY_NS or entry[2] != settings:
                return None
        except (TypeError, IndexError):
            return None
        return entry[3]

    def put_fact(self, kind: str, path: Path, stat: Stat, read_ns: int, value,
                 settings: bytes = b"") -> None:
        self.facts[f"{kind}:{os.path.abspath(path)}"] = (stat, read_ns, settings, value)
        self.dirty = True

    def save(self) -> None:
        """Write the entries atomically (never fails the run: a cache that cannot be written is
        skipped). Only in a folder of its own: one it made (marked with a ``CACHEDIR.TAG`` and a
        ``.gitignore`` of ``*``), where it deletes only its own files of other versions; in a folder
        of that name it did not make, it writes its file and touches nothing else."""
        if not self.dirty:
            return
        try:
            made = not self.folder.exists()
            self.folder.mkdir(parents=True, exist_ok=True)
            ours = made or _marked(self.folder)
            if made:
                (self.folder / TAG).write_text(TAG_TEXT)
                (self.folder / ".gitignore").write_text("# written by jaxmigrate\n*\n")
            if ours:
                for old in self.folder.glob("*.cache"):  # results of other jaxmigrate versions
                    if old != self.path and _written_by_us(old):
                        old.unlink(missing_ok=True)
            payload = marshal.dumps((self.entries, self.facts))
            checksum = hashlib.blake2b(payload, digest_size=_DIGEST).digest()
            write_atomic(self.path, _MAGIC + checksum + payload, durable=False)
        except OSError:
            pass
        self.dirty = False


TAG = "CACHEDIR.TAG"  # https://bford.info/cachedir/: backup tools skip the folder
TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache written by jaxmigrate.\n"


def _marked(folder: Path) -> bool:
    """Whether jaxmigrate made this folder: its tag, or the .gitignore earlier versions wrote."""
    try:
        if (folder / TAG).read_text().startswith(TAG_TEXT):
            return True
    except OSError:
        pass
    try:
        return (folder / ".gitignore").read_text() == "# written by jaxmigrate\n*\n"
    except OSError:
        return False


def _written_by_us(path: Path) -> bool:
    """A cache file of some jaxmigrate version: its name and its first bytes say so."""
    if not path.name[:1].isdigit():  # <version>-<digest>.cache
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(3) == _MAGIC[:3]
    except OSError:
        return False
