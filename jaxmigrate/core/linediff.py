"""difflib's line diff, with the same answers in time linear in the lines of a typical fix.

``difflib.SequenceMatcher`` finds the longest matching block of a range by going through every
line of the range; each block found splits the range, and the part after it is gone through
again. When the blocks are short and many (a fix that changes two lines of every function, so
only the ``def`` lines match), that is every line once per block: 81 of 93 s of ``fix`` on a
50,000-line module, for the findings ``fix --diff`` leaves, placed on the file on disk.

``LineMatcher`` answers every range exactly as difflib does (the same blocks, so the same
opcodes and the same unified diff), but skips the lines that cannot hold a longer match than the
best found so far: one pass over the whole text first records, for each line of ``a``, the
longest match that ends on it anywhere (a match within a range is never longer), and a sparse
table of those lengths finds the next line that could beat the best in ``log`` of the lines.
"""

from __future__ import annotations

import bisect
import difflib
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple


class LineMatcher(difflib.SequenceMatcher):
    """``difflib.SequenceMatcher(None, a, b)`` (autojunk on), with a faster
    ``find_longest_match`` giving the same answers."""

    def __init__(self, a: Sequence = "", b: Sequence = "") -> None:
        self._table: Optional[List[List[int]]] = None
        self.rows_scanned = 0  # lines of ``a`` gone through, for tests that count the work
        super().__init__(None, a, b)

    def set_seq1(self, a) -> None:
        self._table = None
        super().set_seq1(a)

    def set_seq2(self, b) -> None:
        self._table = None
        super().set_seq2(b)

    def _state(self) -> Tuple[Sequence, Sequence, Dict[Any, List[int]], Set[Any]]:
        """difflib's ``a``, ``b``, ``b2j`` (where each non-junk line of ``b`` is) and ``bjunk``."""
        state = vars(self)
        return state["a"], state["b"], state["b2j"], state["bjunk"]

    def _longest_per_line(self) -> List[List[int]]:
        """The sparse table of, for each line of ``a``, the longest run of non-junk matches
        ending on it in the whole of ``b``: ``table[k][i]`` is the largest over lines i to
        i + 2**k - 1."""
        a, _, b2j, _ = self._state()
        longest: List[int] = []
        j2len: dict = {}
        nothing: List[int] = []
        for line in a:
            j2lenget = j2len.get
            new: dict = {}
            best = 0
            for j in b2j.get(line, nothing):
                k = new[j] = j2lenget(j - 1, 0) + 1
                if k > best:
                    best = k
            j2len = new
            longest.append(best)
        self.rows_scanned += len(a)
        table = [longest]
        width = 1
        while 2 * width <= len(longest):
            last = table[-1]
            table.append(list(map(max, last[: len(last) - width], last[width:])))
            width *= 2
        return table

    def _next_above(self, i: int, size: int, stop: int) -> int:
        """The first line from ``i`` before ``stop`` that may end a match longer than ``size``;
        ``stop`` if none may."""
        table = self._table
        assert table is not None
        for k in range(len(table) - 1, -1, -1):
            width = 1 << k
            if i + width <= stop and table[k][i] <= size:
                i += width
        return i

    def find_longest_match(self, alo: int = 0, ahi: Optional[int] = None, blo: int = 0,
                           bhi: Optional[int] = None):
        a, b, b2j, bjunk = self._state()
        isbjunk = bjunk.__contains__
        if ahi is None:
            ahi = len(a)
        if bhi is None:
            bhi = len(b)
        if self._table is None:
            self._table = self._longest_per_line()
        longest = self._table[0]
        besti, bestj, bestsize = alo, blo, 0
        # as difflib: j2len[j] is the length of the longest match ending with a[i-1] and b[j];
        # a line whose longest match anywhere is no longer than the best so far cannot improve
        # it, and a run of such lines is skipped up to where a match that may improve it can
        # start (j2len starts empty there, as it would have after the skipped lines' matches)
        j2len: dict = {}
        nothing: List[int] = []
        i = alo
        scanned = 0
        while i < ahi:
            if longest[i] <= bestsize:
                nxt = self._next_above(i, bestsize, ahi)
                if nxt >= ahi:
                    break
                start = nxt - longest[nxt] + 1
                if start > i:
                    i, j2len = start, {}
            j2lenget = j2len.get
            newj2len = {}
            js = b2j.get(a[i], nothing)
            for n in range(bisect.bisect_left(js, blo), len(js)):
                j = js[n]
                if j >= bhi:
                    break
                k = newj2len[j] = j2lenget(j - 1, 0) + 1
                if k > bestsize:
                    besti, bestj, bestsize = i - k + 1, j - k + 1, k
            j2len = newj2len
            scanned += 1
            i += 1
        self.rows_scanned += scanned
        # from here on as difflib: extend by equal non-junk lines, then junk ones, on each side
        while besti > alo and bestj > blo and not isbjunk(b[bestj - 1]) and a[besti - 1] == b[bestj - 1]:
            besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
        while (besti + bestsize < ahi and bestj + bestsize < bhi and not isbjunk(b[bestj + bestsize])
               and a[besti + bestsize] == b[bestj + bestsize]):
            bestsize += 1
        while besti > alo and bestj > blo and isbjunk(b[bestj - 1]) and a[besti - 1] == b[bestj - 1]:
            besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
        while (besti + bestsize < ahi and bestj + bestsize < bhi and isbjunk(b[bestj + bestsize])
               and a[besti + bestsize] == b[bestj + bestsize]):
            bestsize = bestsize + 1
        return difflib.Match(besti, bestj, bestsize)


def unified_diff(a: Sequence[str], b: Sequence[str], fromfile: str = "", tofile: str = "",
                 n: int = 3, lineterm: str = "\n") -> Iterator[str]:
    """``difflib.unified_diff(a, b, fromfile, tofile, n=n, lineterm=lineterm)`` (no dates), on
    ``LineMatcher``: the same lines."""
    started = False
    for group in LineMatcher(a, b).get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}{lineterm}"
            yield f"+++ {tofile}{lineterm}"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@{lineterm}"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in b[j1:j2]:
                    yield "+" + line


def _range(start: int, stop: int) -> str:
    """A unified diff's range, as difflib writes it: ``start,length``, or ``start`` for one line."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
