"""Custom pytrees are compared by value (issue 30): a registered dataclass returned by a jit or
kept in a global is observed through its leaves at their key paths and its static fields, and
only calls compared by value count in "N compiled call value(s)". Mini project:
tests/verify_projects/pytree_leaf."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

jax = pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.compare import diff  # noqa: E402
from jaxmigrate.verify.observe import by_value, is_observable, observe  # noqa: E402
from jaxmigrate.verify.report import render_text, summarize  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECT = Path(__file__).parent / "verify_projects" / "pytree_leaf"


@jax.tree_util.register_pytree_node_class
@dataclasses.dataclass
class Boxed:
    value: object
    name: str = "w"  # static: the aux data

    def tree_flatten(self):
        return (self.value,), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(children[0], name)


def test_a_changed_leaf_is_a_difference_at_its_path():
    import numpy as np

    zeros, ones = observe(Boxed(np.zeros(3))), observe(Boxed(np.ones(3)))
    assert zeros["kind"] == "pytree" and zeros["type"] == "Boxed"
    assert diff(zeros, ones) == "[<flat index 0>] values"
    assert diff(zeros, observe(Boxed(np.zeros(3)))) is None
    assert diff(zeros, observe(Boxed(np.zeros(3), "b"))).startswith("static fields")
    assert summarize(zeros).startswith("Boxed([<flat index 0>]=float64[3]")
    assert is_observable(Boxed(np.zeros(3))) and not is_observable(Boxed(object()))


def test_only_values_count_as_compared():
    assert by_value(observe(Boxed(1.0)))
    assert not by_value(observe(None)) and not by_value(observe(Boxed(object())))
    assert not by_value(observe((None, object())))


def test_a_jit_returning_a_pytree_of_zeros_vs_ones_is_divergent():
    """It was EQUIVALENT: the dataclass was compared by its type name only."""
    verdict = verify_files(str(PROJECT / "before.py"), str(PROJECT / "after.py"))
    shown = render_text(verdict)
    assert verdict.status == "divergent", shown
    assert [(d.where, d.what) for d in verdict.differences] == [
        ("call #1", "[<flat index 0>] values differs"), ("global `state`", "[<flat index 0>] values differs")], shown
    assert "State([<flat index 0>]=float32[4]" in shown


def test_a_call_returning_nothing_is_not_counted():
    """`log(state)` returns None: two compiled calls, one value compared."""
    verdict = verify_files(str(PROJECT / "before.py"), str(PROJECT / "after_right.py"))
    assert verdict.status == "equivalent", render_text(verdict)
    assert verdict.compared == "1 compiled call value(s), 1 global(s), 0 file(s)"


def test_dict_keys_are_compared_through_the_renamed_keywords():
    """A dict passed as `**kwargs` has its keys renamed with the keywords (JM804, JM101): the
    same values under the new names agree; another key, or another value, differs."""
    from jax.sharding import PartitionSpec as P

    assert diff(observe({"a_min": -1.0, "a_max": 1.0}), observe({"min": -1.0, "max": 1.0})) is None
    assert diff(observe({"a_min": -1.0}), observe({"min": 2.0})) == "['min'] value"
    assert diff(observe({"a_min": -1.0}), observe({"lower": -1.0})) == "keys"
    assert diff(observe({"a_min": -1.0, "min": 0.0}), observe({"min": -1.0})) == "keys"
    # pjit's None (replicated) is jax.jit's P() under the renamed keyword, and None is still None
    assert diff(observe({"out_axis_resources": None}), observe({"out_shardings": P()})) is None
    assert diff(observe({"out_axis_resources": None}), observe({"out_shardings": None})) is None
    assert diff(observe({"out_axis_resources": None}), observe({"out_shardings": P("x")})) is not None
    assert diff(observe({"other": None}), observe({"other": P()})) is not None
    # inside a spec tree too (found by bench/generate_programs.py: `in_axis_resources=(P(), None)`)
    assert diff(observe({"in_axis_resources": (P(), None)}), observe({"in_shardings": (P(), P())})) is None
    assert diff(observe({"in_axis_resources": (P(), None)}), observe({"in_shardings": (P(), P("x"))})) is not None
