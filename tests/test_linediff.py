"""``core/linediff.py``: difflib's line diff with the same answers, in work linear in the lines
of a fix's diff (counted: the lines of the first text gone through, never a time)."""

from __future__ import annotations

import difflib
import random
import sys
from dataclasses import replace
from pathlib import Path

from jaxmigrate.core.linediff import LineMatcher, unified_diff
from jaxmigrate.engine.pipeline import Settings, transform
from jaxmigrate.rules import ALL_RULES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from generate import one_file  # noqa: E402


def _edited(rng: random.Random, a, alphabet: int):
    b = list(a)
    for _ in range(rng.randrange(0, len(b) // 2 + 2)):
        at = rng.randrange(len(b) + 1)
        op = rng.randrange(3)
        if op == 0:
            b.insert(at, str(rng.randrange(alphabet)))
        elif b:
            at = min(at, len(b) - 1)
            if op == 1:
                del b[at]
            else:
                b[at] = str(rng.randrange(2 * alphabet))
    return b


def test_the_same_blocks_opcodes_and_unified_diff_as_difflib():
    """Random texts and edits of them, short and long (from 200 lines, difflib treats lines in
    more than 1% of the second text as junk), few and many distinct lines."""
    rng = random.Random(0)
    for _ in range(800):
        n, alphabet = rng.choice([3, 20, 120, 250, 500]), rng.choice([2, 4, 10, 60, 1000])
        a = [str(rng.randrange(alphabet)) for _ in range(n)]
        b = _edited(rng, a, alphabet)
        if rng.random() < 0.3:
            a, b = b, a
        ours, theirs = LineMatcher(a, b), difflib.SequenceMatcher(None, a, b)
        assert ours.get_matching_blocks() == theirs.get_matching_blocks(), (a, b)
        assert ours.get_opcodes() == theirs.get_opcodes()
        lines_a, lines_b = [x + "\n" for x in a], [x + "\n" for x in b]
        assert list(unified_diff(lines_a, lines_b, "a/x.py", "b/x.py")) == list(
            difflib.unified_diff(lines_a, lines_b, "a/x.py", "b/x.py"))


def test_a_matcher_given_other_texts_starts_again():
    matcher = LineMatcher(list("abcabc"), list("abxabc"))
    assert matcher.get_opcodes() == difflib.SequenceMatcher(None, list("abcabc"), list("abxabc")).get_opcodes()
    matcher.set_seqs(list("xyzxyz"), list("xyqxyz"))
    assert matcher.get_opcodes() == difflib.SequenceMatcher(None, list("xyzxyz"), list("xyqxyz")).get_opcodes()


def test_a_fix_of_every_function_is_diffed_in_linear_work():
    """A generated module whose fix changes two lines of every function (only the ``def`` lines
    match): difflib goes through the rest of the module once for each function (36,180 lines
    for 602, 10 million for 10,002); here each line is gone through about once (728 and 12,008)."""
    settings = replace(Settings(tuple(r.code for r in ALL_RULES)), fix=True, write=False)
    for lines in (600, 2400):
        text = one_file(lines, "pjit")
        fixed = transform(text.encode(), "one.py", settings).text
        a, b = text.splitlines(), fixed.splitlines()
        matcher = LineMatcher(a, b)
        assert matcher.get_opcodes() == difflib.SequenceMatcher(None, a, b).get_opcodes()
        assert len(matcher.get_matching_blocks()) >= lines // 6  # many short blocks: the case at hand
        assert matcher.rows_scanned <= 3 * len(a), (lines, matcher.rows_scanned)
