"""Byte prefilters: ``Presence`` (which trigger words a file's bytes hold, each searched once), the
byte scanners rules share (``name_triggers``, ``ModuleAttributeSearch``, ``has_with_statement``) and
the API history's prefilter, which needs more than trigger words.

Every part of a name the history judges is a word of any file that refers to it: the import
statement spells the module path and the attribute chain the rest (``import jax.numpy as jnp``
then ``jnp.product``). A file holds a candidate when, for some name some release removed or
deprecated, its last part and each part of its module path are words of the file. Names right
under ``jax`` (``jax.tree_multimap``) must also be spelled ``jax.name``, imported ``from jax``, or
reached through an alias of ``jax``: their only other word, ``jax``, is in every JAX file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, Mapping, Tuple

from jaxmigrate.analysis.names import CANONICAL
from jaxmigrate.catalog.api_history import DATA


class Presence(dict):
    """Which byte strings occur in one file: each is searched for once, however many rules ask
    (``word in presence``), and a string containing one known to be absent is absent unsearched
    (``anchors``: a word -> a shorter word it contains, see ``anchors_of``). ``data`` is the file's
    bytes, for the rules whose prefilter also needs a regex.

    A dict of the answers so far: a known word is looked up without running Python code."""

    __slots__ = ("data", "anchors")

    def __init__(self, data: bytes, anchors: Mapping[bytes, bytes]) -> None:
        super().__init__()
        self.data = data
        self.anchors = anchors

    def __missing__(self, word: bytes) -> bool:
        anchor = self.anchors.get(word)
        self[word] = known = (anchor is None or self[anchor]) and word in self.data
        return known

    __contains__ = dict.__getitem__  # whether the word occurs: its answer, searched for if need be


def anchors_of(words: Iterable[bytes]) -> Dict[bytes, bytes]:
    """For each of ``words``, the shortest other one it contains (``gda`` for
    ``gda_serialization``): searched first, it rules the longer one out when absent."""
    words = sorted(set(words), key=len)
    anchors = {}
    for word in words:
        anchor = next((w for w in words if len(w) < len(word) and w in word), None)
        if anchor is not None:
            anchors[word] = anchor
    return anchors


def raw(data) -> bytes:
    """The bytes behind ``Rule.wants``'s argument (bytes or a ``Presence``)."""
    return data.data if isinstance(data, Presence) else data

#: bytes that are not part of a word become spaces: ``data.translate(_WORDS).split()`` is the words
_WORDS = bytes(c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95 or c >= 128) else 32 for c in range(256))
WORD_BYTES = _WORDS  # for the rules' own byte scans

Paths = Tuple[FrozenSet[bytes], ...]


# byte scanners the rules' prefilters share ----------------------------------------------------
# Module parts too common to tell a legacy name from its modern home (``jax.sharding.Mesh``).
_COMMON_PARTS = frozenset({"jax", "_src", "sharding", "interpreters", "lib"})


def name_triggers(qualnames: Iterable[str]) -> Tuple[Tuple[bytes, ...], Tuple[bytes, ...]]:
    """The byte prefilter of a rule that matches these qualified names (or names below them).

    The resolver builds a qualified name only from words of the file (import statements,
    attribute chains, aliases), or through ``CANONICAL`` from such words, so each part of some
    spelling of a matched name occurs in the file. Returns ``(triggers, requires)``: the last
    parts, and for each spelling its most telling module part (else its last part)."""
    spellings = set()
    for qualname in qualnames:
        spellings.add(qualname)
        for raw, canon in CANONICAL.items():
            if raw != canon and (qualname == canon or qualname.startswith(canon + ".")):
                spellings.add(raw + qualname[len(canon):])
    last, module = set(), set()
    for spelling in spellings:
        parts = spelling.split(".")
        last.add(parts[-1].encode())
        telling = [p for p in parts[:-1] if p not in _COMMON_PARTS]
        module.add((telling[-1] if telling else parts[-1]).encode())
    return tuple(sorted(last)), tuple(sorted(module))


#: what ``[\s\\]`` matches in a bytes pattern
GAP = b" \t\n\r\f\v\\"


def gap_start(data: bytes, end: int, gap: bytes = GAP) -> int:
    """Where the run of ``gap`` bytes that ends at ``end`` starts (``end`` when there is none)."""
    while end and data[end - 1] in gap:
        end -= 1
    return end


class ModuleAttributeSearch:
    """Bytes that can make the resolver see ``module.<one of names>``, for a top-level ``module``.

    Such a name resolves only through ``module.name`` (spaces, backslash continuations, a closing
    parenthesis or comments around the dot allowed), ``from module import ... name`` (one
    statement), ``from module import *`` (the resolver binds the module's public names from the
    API history), or an alias of the module (``import module as m``, ``m = module``).
    ``jax.tree_util.tree_map`` and ``from jax.tree_util import tree_map`` match none.

    ``patterns`` states the forms, one regex each. Calling the object answers whether one of them
    matches, in one search from the module word instead of one per form: ``module.name`` and
    ``module as`` follow the word, and where it is not followed by a dot, what precedes it is read
    backwards for ``from`` and ``=`` (the two forms that start before it; each led by its own
    literal, ``=`` would stop the search everywhere)."""

    def __init__(self, module: str, names: Iterable[bytes]) -> None:
        mod = re.escape(module.encode())
        alternatives = b"|".join(re.escape(n) for n in names)
        attribute = rb"[\s\\)]*\.(?:[\s\\]|#[^\n]*)*(?:" + alternatives + rb")\b"
        alias_as = rb"[\s\\]+as\b"
        undotted = rb"\b(?![\s\\)]*\.)"
        self.patterns: "Tuple[re.Pattern[bytes], ...]" = (
            re.compile(mod + attribute),
            re.compile(rb"from[\s\\]+" + mod + rb"[\s\\]+import\b(?:[ \t]|\\\r?\n)*(?:\*|"
                       rb"(?:\((?:[\w\s,\\]|#[^\n]*)*?|(?:[\w \t,]|\\\r?\n)*?)\b(?:" + alternatives + rb")\b)"),
            re.compile(mod + alias_as),
            re.compile(rb"=[\s\\(]*" + mod + undotted),
        )
        # group 1: the module word not followed by a dot, as `from module import` and `= module` have it
        self._lead = re.compile(mod + rb"(?:" + attribute + rb"|" + alias_as + rb"|(" + undotted + rb"))")

    def __call__(self, data: bytes) -> bool:
        """Whether one of ``patterns`` matches ``data``."""
        match = self._lead.search(data)
        while match is not None:
            if self._found(data, match):
                return True
            match = self._lead.search(data, match.start() + 1)
        return False

    def at(self, data: bytes, start: int) -> bool:
        """Whether one of ``patterns`` matches with the module word at ``start``."""
        match = self._lead.match(data, start)
        return match is not None and self._found(data, match)

    def _found(self, data: bytes, match: "re.Match[bytes]") -> bool:
        if match.group(1) is None:  # `module.name` or `module as`
            return True
        start = match.start()
        before = gap_start(data, start, GAP + b"(")
        if before and data[before - 1] == 0x3D:  # `=`
            return True
        before = gap_start(data, start)
        return data.endswith(b"from", 0, before) and self.patterns[1].match(data, before - 4) is not None



# a `with` statement: it starts a line (no compound statement follows `;` or `:` on one line);
# searched from the literal (a pattern that starts at `^` tries every line: 4x slower)
_WITH_WORD = re.compile(rb"with\b")
_WITH_LINE_START = re.compile(rb"[ \t\f]*(?:async[ \t\f]+)?\Z")


def has_with_statement(data: bytes) -> bool:
    """Whether a line of ``data`` starts with ``with`` or ``async with``."""
    for match in _WITH_WORD.finditer(data):
        start = max(data.rfind(b"\n", 0, match.start()), data.rfind(b"\r", 0, match.start())) + 1
        if _WITH_LINE_START.match(data, start, match.start()):
            return True
    return False


@lru_cache(maxsize=None)
def _names() -> Tuple[Dict[bytes, bytes], FrozenSet[bytes]]:
    """last part -> the module paths it was judged under, as written (parsed when a file holds the
    word: ``_paths``), and the last parts as a set."""
    rows = dict(line.split(b"\t", 1) for line in (DATA / "triggers.tsv").read_bytes().splitlines())
    return rows, frozenset(rows)


@lru_cache(maxsize=None)
def _paths(last: bytes) -> Tuple[Paths, bool]:
    """The module paths of ``last`` (as sets of words, `jax` left out), and whether it is a name
    right under `jax`."""
    words, top = [], False
    for parent in _names()[0][last].split():
        if parent == b"jax":
            top = True
        else:
            words.append(frozenset(parent.split(b".")[1:]))
    return tuple(words), top


@lru_cache(maxsize=None)
def _top_search() -> ModuleAttributeSearch:
    """The search for the names right under `jax` (compiled the first time a file holds one)."""
    return ModuleAttributeSearch("jax", sorted(last for last in _names()[1] if _paths(last)[1]))


_WORDS_KEY = b"\x00words"  # where a ``Presence`` keeps its file's words (not a word)


def file_words(data) -> set:
    """The words of a file's bytes (or of a ``Presence``'s, kept there: several prefilters ask)."""
    if not isinstance(data, Presence):
        return set(data.translate(_WORDS).split())
    found = dict.get(data, _WORDS_KEY)
    if found is None:
        found = set(data.data.translate(_WORDS).split())
        dict.__setitem__(data, _WORDS_KEY, found)
    return found


def history_wants(data) -> bool:
    """Whether a file with these bytes can refer to a name some JAX release removed or deprecated:
    its last part and its module's words are words of the file, and that last part is read as one
    (``_referenced``). ``data`` may be a ``Presence``, which keeps the file's words."""
    words_of = data
    data = raw(data)
    if b"jax" not in data:
        return False  # every such name is reached through an import of `jax...`
    words = file_words(words_of)
    top = False
    imported = None
    for last in words & _names()[1]:  # a set with a set: walks the smaller (a dict would be walked whole)
        paths, under_jax = _paths(last)
        if any(parts <= words for parts in paths):
            if imported is None:
                imported = _imported(data)
            if imported is True or last in imported or _read_as_name(data, last):
                return True
        top = top or under_jax
    return top and _top_search()(data)  # the search only where a word is there


def _read_as_name(data: bytes, last: bytes) -> bool:
    """Whether the word ``last`` occurs where the resolver can read it as a name's last part: after
    a dot (an attribute chain, ``import a.b.last``; spaces and backslash continuations between),
    or quoted (an option named to ``jax.config.update``). A word that starts a line is taken when
    the line before ends with a dot or a backslash, or holds a comment (which may hide one)."""
    pos, size = data.find(last), len(last)
    while pos != -1:
        end = pos + size
        if (not pos or _WORDS[data[pos - 1]] == 32) and (end == len(data) or _WORDS[data[end]] == 32):
            start = gap_start(data, pos)
            if start and data[start - 1] in b".\"'":
                return True
            if b"\n" in data[start:pos] or b"\r" in data[start:pos]:
                line_end = start
                line_start = max(data.rfind(b"\n", 0, line_end), data.rfind(b"\r", 0, line_end)) + 1
                line = data[line_start:line_end].rstrip()
                if line.endswith((b".", b"\\")) or b"#" in line:
                    return True
        pos = data.find(last, end)
    return False


def _imported(data: bytes):
    """The names ``from ... import`` statements bind (the only other way to a name's last part),
    or True for a file with a star import (its names are not spelled)."""
    if _STAR.search(data):
        return True
    from jaxmigrate.analysis.module_graph import imported_names

    return {name.encode() for level, _, names in imported_names(data) if not level for name in names}


_STAR = re.compile(rb"\bimport[ \t]*\*")
