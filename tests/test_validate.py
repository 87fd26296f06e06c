"""The compile check of a fix round: what a round changed must compile in its context; the rest
was there before. Each case is a change a rule bug could make, checked against compiling the
whole module."""

from __future__ import annotations

import textwrap

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.engine.validate import check_compiles

BEFORE = textwrap.dedent('''\
    """Module docstring."""
    from __future__ import annotations

    import jax


    class Trainer:
        """Trains."""

        rate: float = 0.1

        @staticmethod
        def step(x):
            return jax.jit(f)(x)

        def run(self, xs):
            total = 0
            for x in xs:
                total += self.step(x)
            return total


    def helper(a, b=1):
        def inner():
            nonlocal a
            a += 1
            return a
        return inner()


    class One: pass
    ''')


def _compiles_whole(text: str) -> bool:
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True)
        return True
    except SyntaxError:
        return False


def _passes(before: str, after: str) -> bool:
    try:
        check_compiles(FileContext.of(before), after)
        return True
    except (SyntaxError, ValueError):
        return False


# name: (text of BEFORE, what a round made of it, whether the module still compiles)
CASES = {
    "repeated keyword in a method": ("return jax.jit(f)(x)", "return jax.jit(f, a=1, a=2)(x)", False),
    "repeated keyword at top level": ("import jax\n", "import jax\nf(a=1, a=2)\n", False),
    "return outside a function": ("import jax\n", "import jax\nreturn 1\n", False),
    "break outside a loop, in a method": ("total += self.step(x)", "total += self.step(x)\n        break", False),
    "nonlocal with no binding, in a nested function": ("nonlocal a", "nonlocal zz", False),
    "duplicate parameter": ("def helper(a, b=1):", "def helper(a, a=1):", False),
    "a repeated class keyword": ("class Trainer:", "class Trainer(metaclass=type, metaclass=type):", False),
    "a future import after other code": ("import jax\n", "import jax\nfrom __future__ import division\n", False),
    "a future feature that does not exist": ("from __future__ import annotations", "from __future__ import braces", False),
    "a one-line class": ("class One: pass", "class One(x=1, x=2): pass", False),
    "a decorator": ("@staticmethod", "@staticmethod(a=1, a=2)", False),
    "await outside async, in a method": ("return total", "return await total", False),
    "does not parse": ("return total", "return total)", False),
    "fine: a method rewritten": ("return jax.jit(f)(x)", "return jax.jit(f, in_shardings=None)(x)", True),
    "fine: an import added": ("import jax\n", "import jax\nimport numpy as np\n", True),
    "fine: a class attribute": ("rate: float = 0.1", "rate: float = 0.2", True),
    "fine: a nested function keeps its nonlocal": ("a += 1", "a += 2", True),
    "fine: a docstring": ('"""Trains."""', '"""Trains well."""', True),
    "fine: a one-line class": ("class One: pass", "class One(object): pass", True),
    "fine: the annotations future": ("rate: float = 0.1", "rate: undefined_name[1:2] = 0.1", True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_what_a_round_changed_compiles_as_in_the_whole_module(name):
    old, new, compiles = CASES[name]
    assert old in BEFORE
    after = BEFORE.replace(old, new, 1)
    assert _compiles_whole(after) == compiles  # the case is what it says
    assert _passes(BEFORE, after) == compiles


def test_an_error_the_round_did_not_make_is_not_blamed_on_it():
    before = BEFORE + "\ndef broken():\n    f(a=1, a=2)\n"
    after = before.replace("return jax.jit(f)(x)", "return jax.jit(f, in_shardings=None)(x)")
    assert not _compiles_whole(after)
    assert _passes(before, after)
    assert not _passes(BEFORE, after)  # the same text is caught when the round wrote that function


def test_a_changed_future_flag_compiles_the_whole_module():
    before = "x: undefined[1:2] = 1\n"
    after = "from __future__ import annotations\nx: undefined[1:2] = 1\n"
    assert _passes(before, after)
    assert not _passes("import os\n", "import os\nfrom __future__ import annotations\n")


def _compiled_text(monkeypatch, before: str, after: str) -> list:
    """The texts ``check_compiles`` compiles for a round from ``before`` to ``after``."""
    from jaxmigrate.engine import validate

    texts: list = []

    def counting(text, *args, **kwargs):
        texts.append(text)
        return compile(text, *args, **kwargs)

    monkeypatch.setattr(validate, "compile", counting, raising=False)
    try:
        check_compiles(FileContext.of(before), after)
    finally:
        monkeypatch.undo()
    return texts


def test_statements_on_one_line_are_compiled_once(monkeypatch):
    """N changed statements on one line (``a; b; c``): their line is compiled once, not once
    for each of them (N times a line N statements long: 2,500 took minutes)."""
    work = {}
    for n in (100, 400):
        before = "import jax\n\n" + "; ".join(f"x{i} = jax.tree_map(f, y{i})" for i in range(n)) + "\n"
        after = before.replace("jax.tree_map", "jax.tree.map")
        texts = _compiled_text(monkeypatch, before, after)
        assert texts == [after.split("\n\n")[1]]
        work[n] = sum(map(len, texts))
    assert work[400] <= 4.5 * work[100]


def test_a_fix_of_statements_on_one_line_compiles_linear_text(monkeypatch):
    """The same through ``fix``: what the compile check compiles grows with the statements on the
    line, not with their square."""
    from dataclasses import replace

    from jaxmigrate.engine import validate
    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    settings = replace(Settings(tuple(r.code for r in ALL_RULES)), fix=True, write=False)
    compiled = []

    def counting(text, *args, **kwargs):
        compiled.append(len(text))
        return compile(text, *args, **kwargs)

    monkeypatch.setattr(validate, "compile", counting, raising=False)
    work = {}
    for n in (100, 400):
        compiled.clear()
        source = "import jax\n\n" + "; ".join(f"x{i} = jax.tree_map(f, y{i})" for i in range(n)) + "\n"
        outcome = transform(source.encode(), "one.py", settings)
        assert outcome.text == source.replace("jax.tree_map", "jax.tree.map")
        work[n] = sum(compiled)
        assert work[n] <= 2 * len(outcome.text)
    assert work[400] <= 4.5 * work[100]


def test_statements_sharing_lines_are_checked_together():
    """A changed statement that shares a line with others is compiled with all of them, whole
    lines: an error in it is caught, and a statement that starts on another statement's last
    line is not compiled as that line alone (``2); y = 4`` does not parse)."""
    before = "import jax\n\nx = (1,\n     2); y = 3; z = 4\nw = 5\n"
    assert _passes(before, before.replace("y = 3", "y = 4"))
    assert _passes(before, before.replace("(1,", "(0,"))
    assert not _passes(before, before.replace("y = 3", "y = f(a=1, a=2)"))
    assert not _passes(before, before.replace("z = 4", "return 4"))
    assert _passes("a = 1; b = 2\nc = 3\n", "a = 1; b = 2\nc = 4\n")
