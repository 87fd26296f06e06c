"""The parameters of JAX's functions and classes at every release: the signature history.

Generated with the API history by ``scripts/api_history.py`` from JAX's own source at every
release tag (each name followed to its ``def``, a ``name = lambda``, or a class's own
``__init__``) and shipped as ``data/signatures.tsv``;
read when a rule first asks, a row parsed when its name is asked for. A row is a function's
runs of releases with the same parameters, each ``start,end:params`` (release indexes, ``end``
exclusive, -1: the newest has them); ``params`` as ``signature`` in the script writes them.
Private names (``jax._src...``) are in ``data/signatures_private.tsv``, read when one is asked for.
Lines starting with ``#`` after the first list the words of the breaking changes (keywords some
release stopped taking, functions that came to take fewer positional arguments): the rule's byte
prefilter.

Methods are not recorded (a call of a method cannot be told from the source alone), nor classes
whose construction is more than their own ``__init__`` (a ``__new__``, a class decorator such
as ``dataclass``, a metaclass, an inherited ``__init__``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Dict, FrozenSet, List, Optional, Tuple

from jaxmigrate.catalog.api_history import DATA, Version, is_private, parse_version


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "positional" (positional-only), "either", "varargs", "keyword" (keyword-only), "varkw"
    default: bool
    deprecated: bool  # the release deprecates passing it


@dataclass(frozen=True)
class Signature:
    params: Tuple[Param, ...]

    @classmethod
    def parse(cls, text: str) -> "Signature":
        params: List[Param] = []
        kind = "either"
        for part in text.split(",") if text else ():
            if part == "/":
                params = [Param(p.name, "positional", p.default, p.deprecated) for p in params]
            elif part == "*":
                kind = "keyword"
            elif part.startswith("**"):
                params.append(Param(part[2:], "varkw", False, False))
            elif part.startswith("*"):
                params.append(Param(part[1:], "varargs", False, False))
                kind = "keyword"
            else:
                name = part.rstrip("=!")
                params.append(Param(name, kind, "=" in part, part.endswith("!")))
        return cls(tuple(params))

    def keyword(self, name: str) -> Optional[Param]:
        """The parameter a keyword argument ``name`` binds, if any (not ``**kwargs``)."""
        return self._keywords.get(name)

    @cached_property
    def _keywords(self) -> Dict[str, Param]:
        return {p.name: p for p in self.params if p.kind in ("either", "keyword")}

    @cached_property
    def plain_keywords(self) -> FrozenSet[str]:
        """The keywords it takes without deprecating them."""
        return frozenset(name for name, p in self._keywords.items() if not p.deprecated)

    @cached_property
    def var_keywords(self) -> bool:
        return any(p.kind == "varkw" for p in self.params)

    @cached_property
    def fewest_positional(self) -> int:
        """How many leading positional parameters have no default (a call that passes at least
        that many positional arguments and every keyword-only one without a default binds them)."""
        count = 0
        for p in self.params:
            if p.kind not in ("positional", "either") or p.default:
                break
            count += 1
        return count

    @cached_property
    def required_keywords(self) -> FrozenSet[str]:
        return frozenset(p.name for p in self.params if p.kind == "keyword" and not p.default)

    def missing(self, positional: int, keywords: FrozenSet[str]) -> List[str]:
        """The parameters without a default that a call with ``positional`` positional arguments
        and these keywords leaves unbound."""
        out = []
        placed = [p for p in self.params if p.kind in ("positional", "either")]
        for i, p in enumerate(placed):
            if i >= positional and not p.default and p.name not in keywords:
                out.append(p.name)
        out += sorted(self.required_keywords - keywords)
        return out

    @cached_property
    def most_positional(self) -> Optional[int]:
        """How many positional arguments it takes at most (None: any number)."""
        if any(p.kind == "varargs" for p in self.params):
            return None
        return sum(1 for p in self.params if p.kind in ("positional", "either"))


Spelling = Tuple[bytes, FrozenSet[bytes]]  # a name's last part, and the parts of its module


def _spelling(qualname: str) -> Spelling:
    """What a file that calls ``qualname`` spells: its last part, and each part of its module
    (the import statement names the module; ``jax`` is in every such file anyway)."""
    module, _, last = qualname.rpartition(".")
    return last.encode(), _module_words(module)


@lru_cache(maxsize=None)
def _module_words(module: str) -> FrozenSet[bytes]:
    return frozenset(p.encode() for p in module.split(".") if p)


@dataclass(frozen=True)
class Run:
    start: int
    end: int  # exclusive; the number of releases for a run the newest release has
    signature: Signature


class SignatureHistory:
    def __init__(self, lines: List[str]) -> None:
        self.versions = lines[0].split("\t")
        self._keys = [parse_version(v) for v in self.versions]
        heads = {}
        rows = 1
        while rows < len(lines) and lines[rows].startswith("#"):
            label, _, words = lines[rows].partition("\t")
            heads[label[1:]] = frozenset(words.split())
            rows += 1
        self._lines = lines[rows:]
        #: the keywords some release stopped taking or deprecated, each with the functions that
        #: did; the functions that came to take fewer positional arguments (``scripts/api_history.py``)
        dropped: Dict[str, List[str]] = {}
        for pair in heads.get("keywords", frozenset()):
            qualname, _, keyword = pair.partition(":")
            dropped.setdefault(keyword, []).append(qualname)
        self.dropped: Dict[str, FrozenSet[str]] = {k: frozenset(qs) for k, qs in dropped.items()}
        self.keywords: FrozenSet[str] = frozenset(self.dropped)
        #: function -> (the fewest positional arguments it came down to, the positional
        #: arguments a call needs since a parameter without a default came), either None
        self.shrunk: Dict[str, Tuple[Optional[int], Optional[int]]] = {}
        for entry in heads.get("functions", ()):
            q, fewest_text, needed_text = entry.split(":")
            self.shrunk[q] = (int(fewest_text) if fewest_text else None, int(needed_text) if needed_text else None)
        self.functions: FrozenSet[str] = frozenset(q.rpartition(".")[2] for q in self.shrunk)
        #: the functions that stopped taking ``**kwargs``: their last part -> the parts of their modules
        self.any_keyword: Dict[bytes, Tuple[FrozenSet[bytes], ...]] = {}
        for q in sorted(heads.get("anykeyword", ())):
            last, parts = _spelling(q)
            self.any_keyword[last] = (*self.any_keyword.get(last, ()), parts)
        # for the byte prefilter, worked out per word when a file holds it (``dropped_by``, ``shrunk_by``)
        self.keyword_bytes: FrozenSet[bytes] = frozenset(k.encode() for k in self.dropped)
        self._shrunk_by_last: Dict[str, List[str]] = {}
        for q in self.shrunk:
            self._shrunk_by_last.setdefault(q.rpartition(".")[2], []).append(q)
        self.function_bytes: FrozenSet[bytes] = frozenset(last.encode() for last in self._shrunk_by_last)
        self._dropped_by: Dict[bytes, Dict[bytes, Tuple[FrozenSet[bytes], ...]]] = {}
        self._shrunk_by: Dict[bytes, Tuple[Tuple[FrozenSet[bytes], Optional[int], Optional[int], bytes], ...]] = {}
        self._runs: Dict[str, Tuple[Run, ...]] = {}

    def dropped_by(self, keyword: bytes) -> Dict[bytes, Tuple[FrozenSet[bytes], ...]]:
        """The last part of each function that dropped ``keyword`` -> the parts of their modules."""
        found = self._dropped_by.get(keyword)
        if found is None:
            by_last: Dict[bytes, List[FrozenSet[bytes]]] = {}
            for q in self.dropped.get(keyword.decode(), ()):
                last, parts = _spelling(q)
                by_last.setdefault(last, []).append(parts)
            found = self._dropped_by[keyword] = {last: tuple(ps) for last, ps in by_last.items()}
        return found

    def shrunk_by(self, last: bytes) -> Tuple[Tuple[FrozenSet[bytes], Optional[int], Optional[int], bytes], ...]:
        """For each function with this last part that broke its positional calls: (its module's
        parts, the fewest positional arguments it came down to, those a call needs since a
        parameter without a default came, its module's last part)."""
        found = self._shrunk_by.get(last)
        if found is None:
            out = []
            for q in self._shrunk_by_last.get(last.decode(), ()):
                fewest, needed = self.shrunk[q]
                module = q.rpartition(".")[0]
                out.append((_module_words(module), fewest, needed, module.rpartition(".")[2].encode()))
            found = self._shrunk_by[last] = tuple(out)
        return found

    def index(self, target: Optional[Version]) -> int:
        """The newest release at or before ``target`` (None: the newest)."""
        if target is None:
            return len(self.versions) - 1
        padded = tuple(target) + (0,) * (3 - len(target))
        return max(0, bisect.bisect_right(self._keys, padded) - 1)

    def has(self, qualname: str) -> bool:
        """Whether the table has a row for ``qualname`` (found by bisection, not parsed)."""
        if qualname in self._runs:
            return bool(self._runs[qualname])
        key = qualname + "\t"
        i = bisect.bisect_left(self._lines, key)
        return i < len(self._lines) and self._lines[i].startswith(key)

    def runs(self, qualname: str) -> Tuple[Run, ...]:
        found = self._runs.get(qualname)
        if found is None:
            key = qualname + "\t"
            i = bisect.bisect_left(self._lines, key)
            found = ()
            if i < len(self._lines) and self._lines[i].startswith(key):
                cells = self._lines[i][len(key):].split("\t")
                out = []
                for cell in cells:
                    span, _, params = cell.partition(":")
                    start, end = (int(b) for b in span.split(","))
                    out.append(Run(start, len(self.versions) if end == -1 else end, Signature.parse(params)))
                found = tuple(out)
            self._runs[qualname] = found
        return found

    def at(self, qualname: str, index: int) -> Optional[Signature]:
        for run in self.runs(qualname):
            if run.start <= index < run.end:
                return run.signature
        return None

    def last_known(self, qualname: str, index: int) -> Optional[Tuple[Signature, str]]:
        """The newest signature recorded at or before release ``index`` when none is recorded at
        it (the name's definition took a form the history cannot read, a ``__new__`` or a
        decorator), with the last release it was recorded at."""
        found = None
        for run in self.runs(qualname):
            if run.start <= index:
                found = run
        if found is None or found.end > index:
            return None
        return found.signature, self.versions[found.end - 1]

    def keyword_since(self, qualname: str, name: str) -> Optional[str]:
        """The first release of the newest stretch in which ``qualname`` takes keyword ``name``."""
        start = None
        for run in self.runs(qualname):
            p = run.signature.keyword(name)
            if p is not None and not p.deprecated:
                if start is None:
                    start = run.start
            else:
                start = None
        return self.versions[start] if start is not None else None

    def positional_since(self, qualname: str) -> Optional[str]:
        """The first release of the newest stretch in which the first parameter is
        positional-only (so passing it positionally is the spelling that lasts)."""
        start = None
        for run in self.runs(qualname):
            first = run.signature.params[0] if run.signature.params else None
            if first is not None and first.kind == "positional":
                start = run.start if start is None else start
            else:
                start = None
        return self.versions[start] if start is not None else None

    def any_keyword_until(self, qualname: str, upto: int) -> Optional[str]:
        """The release from which ``qualname`` no longer takes ``**kwargs``, if a release before
        ``upto`` took it and ``upto`` does not (then any keyword it does not name is rejected)."""
        took = None
        for run in self.runs(qualname):
            if run.start > upto:
                break
            if run.signature.var_keywords:
                took = None if run.end > upto else run.end
        return self.versions[took] if took is not None and took <= upto else None

    def keyword_change(self, qualname: str, name: str, upto: int) -> Optional[Tuple[Optional[str], Optional[str]]]:
        """(release that deprecated it, release that removed it) for a keyword ``qualname`` took
        in some release: None for either that did not happen by release ``upto`` (inclusive);
        None as a whole if it never took the keyword."""
        took = deprecated = removed = None
        for run in self.runs(qualname):
            if run.start > upto:
                break
            p = run.signature.keyword(name)
            if p is not None:
                took = took if took is not None else run.start
                if p.deprecated and deprecated is None:
                    deprecated = run.start
                removed = None
            elif took is not None and removed is None:
                removed = run.start
        if took is None:
            return None
        return (self.versions[deprecated] if deprecated is not None else None,
                self.versions[removed] if removed is not None else None)

    def required_since(self, qualname: str, upto: int, positional: int,
                       keywords: FrozenSet[str]) -> Optional[Tuple[List[str], str]]:
        """(the parameters without a default that came since a release that took the call, the
        release from which the call leaves one unbound), when an earlier release bound
        everything the call passes and ``upto`` does not; None otherwise."""
        fitted: Optional[Signature] = None
        since = None
        for run in self.runs(qualname):
            if run.start > upto:
                break
            sig = run.signature
            if not sig.missing(positional, keywords):
                fitted, since = sig, None
            elif since is None:
                since = run.start
        now = self.at(qualname, upto)
        if fitted is None or since is None or now is None or not now.missing(positional, keywords):
            return None
        before = {p.name for p in fitted.params}
        added = [p.name for p in now.params if p.kind not in ("varargs", "varkw") and not p.default and p.name not in before]
        return (added or now.missing(positional, keywords), self.versions[since])

    def most_positional_before(self, qualname: str, upto: int, now: Optional[int] = None) -> Optional[Tuple[int, str]]:
        """(most positional arguments it took, -1 for any number; the release from which it took
        fewer) over the releases before ``upto``, if it took more than it does at ``upto`` (or
        than ``now``, for a function renamed since: the new name's count)."""
        if now is None:
            current = self.at(qualname, upto)
            if current is None or current.most_positional is None:
                return None
            now = current.most_positional
        best: Optional[Tuple[int, str]] = None
        for run in self.runs(qualname):
            if run.start > upto:
                break
            took = run.signature.most_positional
            if run.start < upto and (took is None or took > now):
                end = min(run.end, upto)
                best = (took if took is not None else -1, self.versions[end] if end < len(self.versions) else "?")
        return best


class Signatures:
    """The public table, and the private one (``jax._src...``, names with a ``_`` part) read
    the first time a private name is asked for: most projects call no private function."""

    def __init__(self) -> None:
        self.public = SignatureHistory((DATA / "signatures.tsv").read_text().splitlines())
        self._private: Optional[SignatureHistory] = None
        self.versions = self.public.versions
        self.keywords, self.functions, self.dropped = self.public.keywords, self.public.functions, self.public.dropped
        self.keyword_bytes, self.function_bytes = self.public.keyword_bytes, self.public.function_bytes
        self.dropped_by, self.shrunk_by = self.public.dropped_by, self.public.shrunk_by
        self.any_keyword = self.public.any_keyword

    def table(self, qualname: str) -> SignatureHistory:
        if not is_private(qualname):
            return self.public
        if self._private is None:
            self._private = SignatureHistory((DATA / "signatures_private.tsv").read_text().splitlines())
        return self._private

    def index(self, target: Optional[Version]) -> int:
        return self.public.index(target)

    def has(self, qualname: str) -> bool:
        return self.table(qualname).has(qualname)

    def runs(self, qualname: str) -> Tuple[Run, ...]:
        return self.table(qualname).runs(qualname)

    def at(self, qualname: str, index: int) -> Optional[Signature]:
        return self.table(qualname).at(qualname, index)

    def keyword_since(self, qualname: str, name: str) -> Optional[str]:
        return self.table(qualname).keyword_since(qualname, name)

    def last_known(self, qualname: str, index: int) -> Optional[Tuple[Signature, str]]:
        return self.table(qualname).last_known(qualname, index)

    def positional_since(self, qualname: str) -> Optional[str]:
        return self.table(qualname).positional_since(qualname)

    def any_keyword_until(self, qualname: str, upto: int) -> Optional[str]:
        return self.table(qualname).any_keyword_until(qualname, upto)

    def keyword_change(self, qualname: str, name: str, upto: int) -> Optional[Tuple[Optional[str], Optional[str]]]:
        return self.table(qualname).keyword_change(qualname, name, upto)

    def most_positional_before(self, qualname: str, upto: int, now: Optional[int] = None) -> Optional[Tuple[int, str]]:
        return self.table(qualname).most_positional_before(qualname, upto, now)

    def required_since(self, qualname: str, upto: int, positional: int,
                       keywords: FrozenSet[str]) -> Optional[Tuple[List[str], str]]:
        return self.table(qualname).required_since(qualname, upto, positional, keywords)


@lru_cache(maxsize=None)
def history() -> Signatures:
    return Signatures()
