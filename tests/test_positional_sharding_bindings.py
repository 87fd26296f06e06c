"""JM703 rewrites `name = PositionalSharding(...)` only where it knows which assignment each read
of the name sees: its one binding, or, for a name bound again (q2, q5: found on jax v0.4.20's
tests/array_test.py and memories_test.py; the tutorial's `sharding = sharding.reshape(4, 2)`),
the binding before the read on every path to it. A name bound in a branch or a loop and read
after it, read from a nested function, declared `global`, deleted with `del` or set in a class
body may be read where the rule does not follow it, so the assignment is reported, not rewritten
in place or deleted."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import run

REBOUND = "is bound more than once in its scope"

CASES = {
    # the v0.4.20 array_test pattern: rebinding with a reshape (q2); the rewrite broke `.reshape`.
    # Followed now: the reshape's shape is a parameter, and that is what is reported
    "rebound_then_reshaped": ("""
        import jax
        import numpy as np
        from jax.sharding import PartitionSpec as P

        def shard(x, shape, axes):
            devices = jax.local_devices()[:8]
            s = jax.sharding.PositionalSharding(devices)
            s = s.reshape(shape).replicate(axes)
            return s.shard_shape(x.shape)
    """, [(8, "`.reshape(...)` whose number of dims is not visible")]),
    # bound in both branches, then compared (q5): each read sees its branch's binding, and the
    # comparison is reported as a value, as the one-binding form is
    "bound_in_both_branches": ("""
        import jax
        from jax.sharding import PositionalSharding

        def same(name, other):
            if name == "a":
                s1 = other
                assert s1 == other
            else:
                s1 = PositionalSharding(jax.devices())
                assert s1 == other
    """, [(10, "used as a value")]),
    # rebound in a branch: the read after the `if` may see either binding
    "rebound_in_a_branch": ("""
        import jax
        from jax.sharding import PositionalSharding

        s = PositionalSharding(jax.devices())
        if jax.process_count() > 1:
            s = s.reshape(4, 2)
        y = jax.device_put(1, s)
    """, [(4, f"`s` {REBOUND}, and which of its values line 7 reads is not known")]),
    # rebound in a loop after the read: its next turn reads the transpose
    "rebound_in_a_loop": ("""
        import jax
        from jax.sharding import PositionalSharding

        s = PositionalSharding(jax.devices()).reshape(4, 2)
        for _ in range(2):
            y = jax.device_put(1, s)
            s = s.T
    """, [(4, f"`s` {REBOUND}, and which of its values line 6 reads is not known")]),
    # rebound at module level, read in a function: it may run after either binding
    "rebound_read_in_a_function": ("""
        import jax
        from jax.sharding import PositionalSharding

        s = PositionalSharding(jax.devices())
        s = s.reshape(4, 2)

        def place(x):
            return jax.device_put(x, s)
    """, [(4, f"`s` {REBOUND}, and which of its values line 8 reads is not known")]),
    "global_elsewhere": ("""
        import jax
        from jax.sharding import PositionalSharding

        t = PositionalSharding(jax.devices())

        def reset():
            global t
            t = None

        y = jax.device_put(1, t)
    """, [(4, "`t` is declared `global` in this module")]),
    "deleted": ("""
        import jax
        from jax.sharding import PositionalSharding

        u = PositionalSharding(jax.devices())
        y = jax.device_put(1, u)
        del u
    """, [(4, "`u` is deleted with `del`")]),
    "class_attribute": ("""
        import jax
        from jax.sharding import PositionalSharding

        class A:
            s = PositionalSharding(jax.devices())

        def f(x):
            return jax.device_put(x, A.s.reshape(4, 2))
    """, [(5, "`s` is a class attribute")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_assignment_read_elsewhere_is_reported_not_rewritten(case):
    source, expected = CASES[case]
    source = textwrap.dedent(source).lstrip("\n")
    assert run(source, ["JM703"]).text == source
    findings = run(source, ["JM703"], fix=False).findings
    assert [(f.line, f.fix) for f in findings] == [(line, None) for line, _ in expected]
    for finding, (_, why) in zip(findings, expected):
        assert why in finding.message


def test_repro_sweep_cases_stay_reported():
    """q1, q3 and q4 of the sweep were already reported; q1's `s` is followed through its
    rebinding to the reshape whose shape is not visible."""
    q1 = textwrap.dedent("""
        import jax
        import numpy as np

        def shard(x, devices, shape, axes):
            s = jax.sharding.PositionalSharding(devices)
            s = s.reshape(shape).replicate(axes)
            return jax.device_put(x, s)

        def same():
            s1 = jax.sharding.PositionalSharding(jax.devices())
            return s1 == other()
    """).lstrip("\n")
    q3 = textwrap.dedent("""
        import jax
        from jax.sharding import PositionalSharding

        def same():
            s1 = PositionalSharding(jax.devices())
            s2 = PositionalSharding(jax.devices(), memory_kind="tpu_hbm")
            assert s1 == s2
    """).lstrip("\n")
    for source in (q1, q3):
        assert run(source, ["JM703"]).text == source
        assert all(f.fix is None for f in run(source, ["JM703"], fix=False).findings)
    assert [(f.line, REBOUND in f.message) for f in run(q1, ["JM703"], fix=False).findings] == [(6, False), (11, False)]
    assert [f.line for f in run(q3, ["JM703"], fix=False).findings] == [6, 7]


def test_one_binding_is_still_inlined():
    source = textwrap.dedent("""
        import jax
        from jax.sharding import PositionalSharding

        s = PositionalSharding(jax.devices())
        y = jax.device_put(1, s.reshape(4, 2))
    """).lstrip("\n")
    out = run(source, ["JM703"]).text
    assert "PositionalSharding" not in out and "s = " not in out
    assert 'NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))' in out


def test_rebinding_is_followed_where_each_read_sees_one_binding():
    """The tutorial's `sharding = sharding.reshape(4, 2)`: each read is rewritten from the binding
    it sees, and both assignments go with the import."""
    source = textwrap.dedent("""
        import jax
        from jax.sharding import PositionalSharding

        s = PositionalSharding(jax.devices())
        a = jax.device_put(1, s)
        s = s.reshape(4, 2)
        b = jax.device_put(1, s.replicate(0))
    """).lstrip("\n")
    out = run(source, ["JM703"]).text
    assert "PositionalSharding" not in out and "s = " not in out
    assert 'a = jax.device_put(1, jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()), ("x",)), ' in out
    assert ('b = jax.device_put(1, jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), '
            '("x", "y")), jax.sharding.PartitionSpec(None, "y")))') in out
