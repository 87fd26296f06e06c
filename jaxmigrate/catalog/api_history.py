"""JAX's API history: the names each release had, when each was deprecated and removed, and what
replaced it. Generated from JAX's own source at every release tag by ``scripts/api_history.py``
and shipped as ``data/public.tsv`` and ``data/private.tsv``; read lazily (a row is parsed when a
rule asks for its name), so a check that needs no history pays nothing for it.
"""

from __future__ import annotations

import bisect
import builtins
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

DATA = Path(__file__).resolve().parent / "data"
Version = Tuple[int, ...]


def parse_version(text: str) -> Version:
    return tuple(int(p) for p in text.split("."))


def is_private(qualname: str) -> bool:
    """``jax._src.*`` and any name with a part starting with ``_``."""
    return "._" in qualname or qualname.startswith("_")


@dataclass(frozen=True)
class Entry:
    """One name's row: the releases that had it, as index intervals ``[start, end)``."""

    qualname: str
    intervals: Tuple[Tuple[int, int], ...]  # end -1: still in the newest release
    module: bool
    deprecated: int  # index of the release that deprecated it, -1: none
    replacement: str  # qualified name JAX pointed to, "" if none
    alias: bool  # the replacement was the very same object: a pure rename
    option: bool = False  # an option (or attribute) of the `jax.config` object, not a module's name


class History:
    """The rows of one table (public or private names), sorted by name, each parsed on demand: a
    name is found by bisection in the table's lines (no dict of every row is built at start-up)."""

    def __init__(self, versions: List[str], lines: List[str]) -> None:
        self.versions = versions
        self._keys = [parse_version(v) for v in versions]
        self._lines = lines  # "qualname\tspans\tkind\tdeprecated\treplacement", in name order
        self._entries: Dict[str, Optional[Entry]] = {}

    @classmethod
    def load(cls, path: Path) -> "History":
        lines = path.read_text().splitlines()
        return cls(lines[0].split("\t"), lines[1:])

    def names(self) -> List[str]:
        return [line.partition("\t")[0] for line in self._lines]

    def children(self, module: str) -> List[Tuple[str, str]]:
        """``(name, kind)`` of each name listed directly under ``module`` (``pjit`` for
        ``jax.experimental.pjit``), in name order: the rows that start with ``module.``, found by
        bisection, with no further dot."""
        prefix = module + "."
        out: List[Tuple[str, str]] = []
        i = bisect.bisect_left(self._lines, prefix)
        while i < len(self._lines) and self._lines[i].startswith(prefix):
            name, _, row = self._lines[i][len(prefix):].partition("\t")
            if "." not in name:
                out.append((name, row.split("\t", 2)[1]))
            i += 1
        return out

    def _row(self, qualname: str) -> Optional[str]:
        # a tab sorts before every character of a name, so a name's line sorts as the name does
        key = qualname + "\t"
        i = bisect.bisect_left(self._lines, key)
        if i < len(self._lines) and self._lines[i].startswith(key):
            return self._lines[i][len(key):]
        return None

    def entry(self, qualname: str) -> Optional[Entry]:
        if qualname not in self._entries:
            row = self._row(qualname)
            if row is None:
                self._entries[qualname] = None
            else:
                spans, kind, deprecated, replacement = row.split("\t")
                bounds = [int(b) for b in spans.split(",")]
                self._entries[qualname] = Entry(
                    qualname, tuple(zip(bounds[::2], bounds[1::2])), kind.startswith("m"), int(deprecated),
                    replacement, kind.endswith("="), kind.startswith("o"))
        return self._entries[qualname]

    # releases -------------------------------------------------------------------------------
    def index(self, target: Optional[Version]) -> int:
        """The newest release at or before ``target`` (None: the newest); 0 before the first."""
        if target is None:
            return len(self.versions) - 1
        padded = tuple(target) + (0,) * (3 - len(target))
        found = 0
        for i, key in enumerate(self._keys):
            if key <= padded:
                found = i
        return found

    def _start_of_span(self, entry: Entry, at: int) -> Optional[int]:
        """Where the stretch of releases that had the name and includes ``at`` starts, if any."""
        for start, end in entry.intervals:
            if start <= at < (end if end != -1 else len(self.versions)):
                return start
        return None

    def present(self, entry: Entry, at: int) -> bool:
        return self._start_of_span(entry, at) is not None

    def removed_before(self, entry: Entry, at: int) -> Optional[str]:
        """The release that removed the name, if it existed before ``at`` and not at ``at``."""
        if self.present(entry, at):
            return None
        ends = [end for start, end in entry.intervals if end != -1 and end <= at]
        return self.versions[max(ends)] if ends else None

    def deprecated_at(self, entry: Entry, at: int) -> Optional[str]:
        """The release that deprecated the name, if it did so in the stretch of releases that
        includes ``at`` (a name removed and added back anew is not deprecated by the old one)."""
        start = self._start_of_span(entry, at)
        if start is not None and start <= entry.deprecated <= at:
            return self.versions[entry.deprecated]
        return None

    def since(self, entry: Entry) -> str:
        return self.versions[entry.intervals[0][0]]


@lru_cache(maxsize=None)
def newest_release() -> str:
    """The newest JAX release the history knows (read from its table's first line alone)."""
    with open(DATA / "public.tsv", encoding="utf-8") as handle:
        return handle.readline().rstrip("\n").split("\t")[-1]


@lru_cache(maxsize=None)
def table(private: bool) -> History:
    return History.load(DATA / ("private.tsv" if private else "public.tsv"))


def entry(qualname: str) -> Optional[Entry]:
    return table(is_private(qualname)).entry(qualname)


def exists(qualname: str, target: Optional[Version]) -> bool:
    """Whether the release ``target`` (None: the newest) has ``qualname``, as far as the history knows."""
    history = table(is_private(qualname))
    found = history.entry(qualname)
    return found is not None and history.present(found, history.index(target))


@lru_cache(maxsize=None)
def star_names(module: str) -> Tuple[str, ...]:
    """The names ``from module import *`` binds, as far as the history knows without the
    module's ``__all__``: every public name it lists directly under ``module`` in any release
    (a star import binds the names that do not start with ``_``), but not the helpers the module
    imported for its own use (kind ``i``: ``jax.experimental.pjit.core``), the options of the
    ``jax.config`` object, nor Python's builtins (``jax.experimental.maps`` had its own ``zip``
    and ``map``; a bare ``zip`` is read as the builtin, never reported as a removed JAX name).
    Read once per module, and only for a file that star-imports it."""
    history = table(is_private(module + ".x"))
    return tuple(name for name, kind in history.children(module)
                 if not name.startswith("_") and not kind.startswith(("i", "o")) and name not in _BUILTINS)


_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Status:
    """What the target release says of a name a file refers to."""

    qualname: str  # the name reported: the reference itself, or the removed name it goes through
    state: str  # "removed" or "deprecated"
    version: str  # the release that removed (or deprecated) it
    replacement: Optional[str]  # a name the target has, where JAX named one
    replacement_since: Optional[str]  # the release that added the replacement (it may postdate the target)
    rename: bool  # the replacement is the same object under another name (a safe rename)
    private: bool


@lru_cache(maxsize=1 << 16)
def status(qualname: str, target: Optional[Version]) -> Optional[Status]:
    """The finding a reference to ``qualname`` deserves at ``target`` (None: the newest), if any.

    The longest prefix of ``qualname`` that the history knows decides: an attribute beyond what
    the history records (a method of a class) is judged by its owner. A name absent from the
    target that no earlier release had is newer than the target, not legacy: no finding. An
    attribute of an object (not a module) that the target has is not judged either."""
    parts = qualname.split(".")
    for size in range(len(parts), 1, -1):
        name = ".".join(parts[:size])
        history = table(is_private(name))
        found = history.entry(name)
        if found is None:
            continue
        at = history.index(target)
        if history.present(found, at):
            readded = _through_readded(name, found, history, at, parts[size:], target)
            if readded is not None:
                return readded
            since = history.deprecated_at(found, at)
            if since is None:
                return None
            return _status(name, "deprecated", since, found, target)
        removed = history.removed_before(found, at)
        if removed is None:
            return None
        owner = ".".join(parts[: size - 1])
        owner_entry = entry(owner)
        if owner_entry is not None and not owner_entry.module and not found.option and exists(owner, target):
            return None  # `jax.memory.Space`: an attribute of an object the target has
        return _status(name, "removed", removed, found, target)
    return None


def _through_readded(name: str, found: Entry, history: History, at: int, rest: List[str],
                     target: Optional[Version]) -> Optional[Status]:
    """A member reached through a name that was removed and later added back as something else
    (``jax.ad``: the module ``jax.interpreters.ad`` until 0.4.14, a namespace of new names from
    0.10.0): judged as the old name when the module it stood for has the member at the target
    (``jax.ad.deflinear`` is ``jax.interpreters.ad.deflinear``), else as the new name (no finding)."""
    start = history._start_of_span(found, at)
    ends = [end for _, end in found.intervals if end != -1 and start is not None and end <= start]
    if not rest or not ends or not found.replacement:
        return None
    module = entry(found.replacement)
    if module is None or not module.module or not exists(".".join([found.replacement, *rest]), target):
        return None
    return _status(name, "removed", history.versions[max(ends)], found, target)


def _status(name: str, state: str, version: str, found: Entry, target: Optional[Version]) -> Status:
    replacement, since, rename = _replacement(found, target)
    return Status(name, state, version, replacement, since, rename, is_private(name))


def _replacement(found: Entry, target: Optional[Version]) -> Tuple[Optional[str], Optional[str], bool]:
    """The replacement JAX named, followed while it was itself replaced: (name, since, rename).
    ``rename`` only holds if every step was the same object and the target has the last one."""
    rename, current, seen = found.alias, found, {found.qualname}
    for _ in range(5):
        new = current.replacement
        if not new or new in seen:
            return None, None, False
        seen.add(new)
        history = table(is_private(new))
        step = history.entry(new)
        if step is None:
            return None, None, False
        at = history.index(target)
        if history.present(step, at) or history.removed_before(step, at) is None:
            return new, history.since(step), rename and history.present(step, at)
        rename, current = rename and step.alias, step
    return None, None, False


@lru_cache(maxsize=None)
def _predecessors() -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, List[str]] = {}
    for private in (False, True):
        for line in table(private)._lines:
            qualname, _, rest = line.partition("\t")
            replacement = rest.rsplit("\t", 1)[-1]
            if replacement:
                out.setdefault(replacement, []).append(qualname)
    return {name: tuple(olds) for name, olds in out.items()}


def predecessors(qualname: str) -> Tuple[str, ...]:
    """The names whose replacement the history records as ``qualname`` (read once, on first use:
    a whole pass over both tables)."""
    return _predecessors().get(qualname, ())
