"""analysis.values.reaching_binding: which binding a read of a name sees, where the code alone
says. A name bound once: that binding. A name bound more than once: the latest binding before
the read on every path to it, read in the code of the scope that binds it or in a function it
defines that its code alone calls, each call seeing the same binding; else None (a branch or a
loop may have bound it otherwise, or a function may run at any time)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import reaching_binding

# source (the read is the first load of `s` on the line marked `# read`) -> the line of the
# statement whose binding it sees, or None
CASES = {
    "straight_line": ("""
        s = 1
        s = 2
        print(s)  # read
    """, 2),
    "its_own_value": ("""
        s = 1
        s = f(s)  # read
        print(s)
    """, 1),
    "after_the_rebinding": ("""
        s = 1
        s = f(s)
        print(s)  # read
    """, 2),
    "bound_in_a_branch_read_after": ("""
        s = 1
        if c:
            s = 2
        print(s)  # read
    """, None),
    "bound_and_read_in_a_branch": ("""
        s = 1
        if c:
            s = 2
            print(s)  # read
    """, 3),
    "read_in_a_loop_bound_after_it": ("""
        s = 1
        for i in r:
            print(s)  # read
            s = 2
    """, None),
    "bound_in_the_loop_before_the_read": ("""
        s = 1
        for i in r:
            s = 2
            print(s)  # read
            s = 3
    """, 3),
    "bound_in_the_loop_read_after_it": ("""
        s = 1
        while c:
            s = 2
        print(s)  # read
    """, None),
    "read_in_a_while_test": ("""
        s = 1
        while g(s):  # read
            s = 2
    """, None),
    "for_target_then_read": ("""
        s = 1
        for s in r:
            pass
        print(s)  # read
    """, None),
    "with_target_then_read": ("""
        s = 1
        with g() as s:
            pass
        print(s)  # read
    """, None),
    "walrus_before_the_read": ("""
        s = 1
        if (s := g()):
            print(s)  # read
    """, None),
    "bound_in_try_read_in_handler": ("""
        s = 1
        try:
            s = 2
        except ValueError:
            print(s)  # read
    """, None),
    "deleted_then_bound_again": ("""
        s = 1
        del s
        s = 2
        print(s)  # read
    """, 3),
    "deleted_after_the_binding": ("""
        s = 1
        s = 2
        del s
        print(s)  # read
    """, None),
    "read_in_a_function": ("""
        s = 1
        s = 2
        def f():
            return s  # read
    """, None),
    "read_in_a_function_every_call_sees_one": ("""
        s = 1
        def f():
            return s  # read
        s = 2
        a = f()
        b = f()
    """, 4),
    "read_in_a_function_calls_see_two": ("""
        s = 1
        def f():
            return s  # read
        a = f()
        s = 2
        b = f()
    """, None),
    "read_in_a_jitted_function": ("""
        import jax
        s = 1
        @jax.jit
        def f(x):
            return x + s  # read
        s = 2
        a = f(1.0)
    """, 6),
    "read_in_a_function_another_decorator_wraps": ("""
        s = 1
        @register
        def f():
            return s  # read
        s = 2
        a = f()
    """, None),
    "read_in_a_function_passed_on": ("""
        s = 1
        def f():
            return s  # read
        s = 2
        a = f()
        g(f)
    """, None),
    "read_in_a_function_called_from_a_function": ("""
        s = 1
        def f():
            return s  # read
        def g():
            return f()
        s = 2
        a = g()
    """, 6),
    "bound_once_read_in_a_function": ("""
        def f():
            return s  # read
        s = 1
    """, 3),
    "declared_global": ("""
        s = 1
        def reset():
            global s
            s = 2
        print(s)  # read
    """, None),
    "parameter_then_rebound": ("""
        def f(s):
            a = g(s)  # read
            s = s.T
            return s
    """, 1),
    "rebound_parameter": ("""
        def f(s):
            s = s.T
            return s  # read
    """, 2),
    "class_attribute": ("""
        class A:
            s = 1
            s = 2
            t = s  # read
    """, None),
    "in_a_comprehension": ("""
        s = 1
        s = 2
        out = [s for _ in r]  # read
    """, 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reaching_binding(case):
    source, expected = CASES[case]
    source = textwrap.dedent(source).lstrip("\n")
    ctx = FileContext.of(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.endswith("# read"))
    read = next(n for n in ctx.names("s") if isinstance(n.ctx, ast.Load) and n.lineno == line)
    bound = reaching_binding(ctx, "s", read)
    assert (bound.lineno if bound is not None else None) == expected  # type: ignore[attr-defined]
