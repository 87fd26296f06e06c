"""Every rule's own examples (its documentation) hold: the test runner reads them, as in Fixit."""

from __future__ import annotations

import pytest

from jaxmigrate.rules import ALL_RULES
from tests.conftest import run

CASES = [
    pytest.param(rule, i, ex, id=f"{rule.code}-{i}")
    for rule in ALL_RULES
    for i, ex in enumerate(rule.examples)
]


def test_every_rule_has_examples_and_docs():
    for rule in ALL_RULES:
        assert rule.examples, rule.code
        doc = rule.documentation()
        assert "## What it does" in doc and "## Why is this bad?" in doc, rule.code
        if rule.fix_safety is not None:
            assert any(not ex.is_valid and not ex.flagged for ex in rule.examples), rule.code


@pytest.mark.parametrize("rule,index,example", CASES)
def test_example(rule, index, example):
    target = example.target_version
    out = run(example.before, [rule.code], unsafe=example.unsafe, target=target)
    codes = {f.code for f in run(example.before, [rule.code], fix=False, target=target).findings}
    if example.is_valid:
        assert codes == set(), "a valid example must produce no finding"
        assert out.text == example.before
    elif example.flagged:
        assert rule.code in codes
        assert out.text == example.before, "a flagged example is reported, not rewritten"
        assert run(example.before, [rule.code], unsafe=True, target=target).text == example.before, "not even by an unsafe fix"
    else:
        assert rule.code in codes
        assert out.text == example.after
        # the unsafe examples really need --unsafe-fixes
        if example.unsafe:
            assert run(example.before, [rule.code], target=target).text == example.before


def test_xmap_advice_names_the_shard_map_specs():
    """JM203's suggestion for the mesh-transformer-jax pattern: named axes → mesh axes, per argument."""
    src = ('from jax.experimental import maps\n\nf = maps.xmap(g, in_axes=(["shard", ...], {1: "batch"}), '
           'out_axes=["batch", ...], axis_resources={"shard": "mp", "batch": "dp"})\n')
    suggestion = next(f.suggestion for f in run(src, ["JM203"], fix=False).findings if f.suggestion)
    assert suggestion.startswith("jax.shard_map(g, mesh=mesh, in_specs=(P('mp'), P(None, 'dp')), out_specs=P('dp'))")
    assert "'shard' → 'mp'" in suggestion
