"""Byte prefilters: ``Presence`` (which trigger words a file's bytes hold, each searched once) and
the API history's, which needs more than trigger words.

Every part of a name the history judges is a word of any file that refers to it: the import
statement spells the module path and the attribute chain the rest (``import jax.numpy as jnp``
then ``jnp.product``). A file holds a candidate when, for some name some release removed or
deprecated, its last part and each part of its module path are words of the file. Names right
under ``jax`` (``jax.tree_multimap``) must also be spelled ``jax.name``, imported ``from jax``, or
reached through an alias of ``jax``: their only other word, ``jax``, is in every JAX file.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, Mapping, Tuple

from jaxmigrate.catalog.api_history import DATA

if TYPE_CHECKING:  # pragma: no cover
    from jaxmigrate.analysis.names import ModuleAttributeSearch


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

Paths = Tuple[FrozenSet[bytes], ...]


@lru_cache(maxsize=None)
def _names() -> Tuple[Dict[bytes, Paths], FrozenSet[bytes], FrozenSet[bytes], "ModuleAttributeSearch"]:
    """last part -> the module paths (as sets of words, `jax` left out) it was judged under, the
    last parts as a set; the names right under `jax`, and the search for them."""
    from jaxmigrate.analysis.names import ModuleAttributeSearch  # imported late: only a JAX file needs it

    paths: Dict[bytes, Paths] = {}
    top = []
    for line in (DATA / "triggers.tsv").read_text().splitlines():
        last, _, parents = line.partition("\t")
        words = []
        for parent in parents.split():
            if parent == "jax":
                top.append(last.encode())
            else:
                words.append(frozenset(p.encode() for p in parent.split(".")[1:]))
        if words:
            paths[last.encode()] = tuple(words)
    return paths, frozenset(paths), frozenset(top), ModuleAttributeSearch("jax", sorted(top))


def history_wants(data: bytes) -> bool:
    """Whether a file with these bytes can refer to a name some JAX release removed or deprecated."""
    if b"jax" not in data:
        return False  # every such name is reached through an import of `jax...`
    paths, lasts, top_words, top = _names()
    words = set(data.translate(_WORDS).split())
    for last in words & lasts:  # a set with a set: walks the smaller (a dict would be walked whole)
        for parts in paths[last]:
            if parts <= words:
                return True
    return not words.isdisjoint(top_words) and top(data)  # the search only where a word is there
