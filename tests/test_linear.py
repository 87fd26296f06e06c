"""One file's size and findings: the work of ``check`` and ``fix`` grows linearly with them.

The work is counted, not timed: the Python function calls (and generator resumptions) the
pipeline makes on a generated legacy module (``bench/generate.py:one_file``) of n and of 4n
lines. A helper that goes through the whole module, or all its names, for each finding makes
that count grow with the square of the size (each of these modules did: 6x to 17x for 4x the
lines before). Timings are the benchmark's (``bench/one_file.py``), never a test's.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Finding
from jaxmigrate.engine.pipeline import Settings, transform
from jaxmigrate.engine.suppression import _NOQA_TEXT, _lines_of, unsuppressed
from jaxmigrate.rules import ALL_RULES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from generate import one_file  # noqa: E402

SMALL, GROWTH = 600, 4
SETTINGS = Settings(tuple(r.code for r in ALL_RULES))


def _calls(text: str, settings: Settings) -> int:
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call":
            count += 1

    FileContext.forget()  # no reuse of an earlier parse
    sys.setprofile(profile)
    try:
        transform(text.encode(), "one.py", settings)
    finally:
        sys.setprofile(None)
        FileContext.forget()
    return count


@pytest.mark.parametrize("kind", ["pjit", "mixed", "multihost"])
@pytest.mark.parametrize("mode", ["check", "fix", "unsafe"])
def test_work_grows_linearly_with_the_file(kind, mode):
    settings = {"check": SETTINGS, "fix": replace(SETTINGS, fix=True, write=False),
                "unsafe": replace(SETTINGS, fix=True, write=False, unsafe_fixes=True)}[mode]
    small = _calls(one_file(SMALL, kind), settings)
    large = _calls(one_file(SMALL * GROWTH, kind), settings)
    assert large <= GROWTH * 1.15 * small, (small, large, large / small)


def test_a_long_line_is_read_once_for_all_its_positions():
    """``offset``: the UTF-8 column on an ASCII line, else what decoding the UTF-8 bytes before
    the column gives, for every column of random lines (inside a character and past the line's
    end too), as it was computed before it kept each line's characters."""
    rng = random.Random(0)
    alphabet = ["a", " ", "é", "€", "𝔘", "\n", "中", "\r\n", "\t"]
    for _ in range(500):
        text = "x = 1\n" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        ctx = FileContext.__new__(FileContext)  # positions need no parse
        ctx.source = text
        ctx._line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        ctx._ascii, ctx._wide_chars = text.isascii(), {}
        for line in range(1, len(ctx._line_starts) + 1):
            raw = ctx.line_text(line).encode()
            for col in range(len(raw) + 3):
                expected = ctx.line_start(line) + (col if raw.isascii() else len(raw[:col].decode("utf-8", "replace")))
                assert ctx.offset(line, col) == expected, (text, line, col)


def test_noqa_lines_counted_once():
    rng = random.Random(1)
    for _ in range(200):
        text = "".join(rng.choice(["x = 1", "  # noqa", "# NOQA: JM1", "\n", "\r\n", "noqa"]) for _ in range(30))
        expected = {text.count("\n", 0, m.start()) + 1 for m in _NOQA_TEXT.finditer(text)}
        assert _lines_of(_NOQA_TEXT.finditer(text), text) == expected


def test_noqa_on_every_line_silences_each():
    text = "".join(f"x{i} = 1  # noqa: JM601\n" for i in range(50))
    findings = [Finding("JM601", "m", i, 1, i, 2) for i in range(1, 52)]
    assert [f.line for f in unsuppressed(findings, text)] == [51]


def test_twins_share_the_scopes_their_answers_are_keyed_by():
    """A twin of ``FileContext.of`` (same text, other path or target) made before the walk
    shares it: answers kept by scope (``names_bound_by``, ``reference``) mean the same scopes."""
    FileContext.forget()
    text = "import jax\n\ndef f(step):\n    return step(jax.tree_map(g, step))\n"
    first = FileContext.of(text, "a.py", None)
    twin = FileContext.of(text, "b.py", (0, 4, 20))
    assert twin.resolver is first.resolver and twin._walk is first._walk
    scope = first.resolver.scope_of(first.names("step")[0])
    assert len(twin.names_bound_by("step", scope)) == len(first.names("step")) == 2  # the parameter is an ast.arg
    FileContext.forget()
