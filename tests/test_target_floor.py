"""With an older target, no rule emits a name that target lacks.

Every fixture and every rule example is fixed (unsafe fixes on) for a range of targets; each JAX
name the fix introduces (resolved through the module's imports) must exist in that target, by
the table below. The table is written from JAX's changelog and source at the tags (see
docs/api-history.md for the history), independently of the rules' own version fields, so a rule that forgets its
gate fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional, Set

import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.rules import ALL_RULES
from tests.conftest import run

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
TARGETS = ((0, 4, 1), (0, 4, 14), (0, 4, 24), (0, 4, 25), (0, 5, 0), (0, 6, 0), (0, 7, 0), (0, 7, 1), (0, 8, 0),
           (0, 8, 1), (0, 10, 2))

# name, or module ending in "." (itself and everything in it) -> (first version with it, first without it or None)
AVAILABLE = {
    "jax.sharding.Mesh": ("0.4.1", None),
    "jax.sharding.PartitionSpec": ("0.4.1", None),
    "jax.sharding.NamedSharding": ("0.4.1", None),
    "jax.sharding.GSPMDSharding": ("0.4.5", "0.10.0"),
    "jax.sharding.GSPMDSharding.get_replicated": ("0.4.5", "0.10.0"),  # a classmethod from its first release
    "jax.sharding.PartitionSpec.UNCONSTRAINED": ("0.4.1", None),  # a class attribute at jax-v0.4.1 and since
    "jax.sharding.AxisType.Auto": ("0.5.3", None),  # jax/_src/mesh.py at jax-v0.5.3 (AxisTypes before)
    "jax.lax.with_sharding_constraint": ("0.4.1", None),
    "jax.experimental.array_serialization.": ("0.4.9", None),
    "jax.experimental.multihost_utils.": ("0.4.1", None),
    "jax.make_array_from_callback": ("0.4.1", None),
    "jax.make_array_from_single_device_arrays": ("0.4.1", None),
    "jax.live_arrays": ("0.4.1", None),
    "jax.Array": ("0.4.1", None),
    "jax.Shard": ("0.4.5", None),
    "jax.tree_util.": ("0.1.0", None),
    "jax.tree.": ("0.4.25", None),
    "jax.shard_map": ("0.6.1", None),
    "jax.jit": ("0.1.0", None),
    "jax.devices": ("0.1.0", None),
    "jax.process_count": ("0.2.13", None),  # jax/__init__.py at jax-v0.2.13
    "jax.set_mesh": ("0.7.1", None),
    "jax.device_put": ("0.1.0", None),
    "jax.numpy.": ("0.1.0", None),
    # the API-history rules' replacements (JM801-JM803), read from the tags
    "jax.random.permutation": ("0.2.26", None),  # with `independent=`
    "jax.eval_shape": ("0.4.1", None),  # the API history, from the tags
    "jax.pmap": ("0.4.1", None),
    "jax.interpreters.ad.": ("0.4.1", None),  # the module of jax.ad until 0.4.14 (deflinear, primitive_transposes)
    "jax.random.key": ("0.4.11", None),
    "jax.random.PRNGKey": ("0.1.0", None),  # with the keyword `impl` from 0.4.14 (jax/_src/random.py at jax-v0.4.14)
    "jax.random.key_data": ("0.4.1", None),
    "jax.core.ShapedArray": ("0.1.60", None),
    "jax.core.Tracer": ("0.1.55", None),  # jax/core.py at jax-v0.1.55; re-exported from jax._src.core since
    "jax.nn.standardize": ("0.3.5", None),
    "jax.extend.linear_util.": ("0.4.16", None),
    "jax.extend.backend.get_backend": ("0.4.32", None),
    "jax.extend.core.": ("0.4.27", None),
    "jax.scipy.integrate.trapezoid": ("0.4.15", None),
    "jax.enable_x64": ("0.8.0", None),  # the option's own context manager
    "jax.effects_barrier": ("0.3.14", None),  # jax/__init__.py at jax-v0.3.14
    "jax.extend.random.define_prng_impl": ("0.4.20", None),  # the API history, from the tags
    "jax.dtypes.issubdtype": ("0.2.0", None),  # the API history, from the tags
    "jax.dtypes.prng_key": ("0.4.14", None),  # the API history, from the tags
}


def _version(text: str):
    return tuple(int(p) for p in text.split("."))


def _availability(name: str):
    if name in AVAILABLE:
        return AVAILABLE[name]
    prefixes = [p for p in AVAILABLE if p.endswith(".") and (name.startswith(p) or name == p[:-1])]
    return AVAILABLE[max(prefixes, key=len)] if prefixes else None


def _jax_names(text: str) -> Set[str]:
    ctx = FileContext(text)
    names = set()
    for node in [*ctx.nodes(ast.Name), *ctx.nodes(ast.Attribute)]:
        if isinstance(node, ast.Attribute) and isinstance(ctx.parent(node), ast.Attribute):
            continue  # the longest chain only
        q: Optional[str] = ctx.qualname(node)
        if q and q.startswith("jax."):
            names.add(q)
    return names


SOURCES = [pytest.param(p.read_text(), id=f"{p.parent.parent.name}/{p.parent.name}") for p in sorted(ROOT.glob("*/*/before.py"))]
SOURCES += [pytest.param(ex.before, id=f"{rule.code}-example-{i}") for rule in ALL_RULES for i, ex in enumerate(rule.examples)]


@pytest.mark.parametrize("source", SOURCES)
def test_no_name_the_target_lacks(source):
    before = _jax_names(source)
    problems = []
    for target in TARGETS:
        added = _jax_names(run(source, unsafe=True, target=target).text) - before
        for name in sorted(added):
            known = _availability(name)
            if known is None:
                problems.append(f"{'.'.join(map(str, target))}: {name} is not in the availability table")
                continue
            since, until = known
            if target < _version(since) or (until and target >= _version(until)):
                problems.append(f"{'.'.join(map(str, target))}: {name} exists from {since}"
                                + (f" until {until}" if until else ""))
    assert not problems, "\n".join(problems)


def test_the_table_is_consulted():
    """A name the fix introduces is found: jax.tree.map appears for 0.4.25, not for 0.4.24."""
    src = "import jax\n\nx = jax.tree_map(abs, [1])\n"
    assert "jax.tree.map" in _jax_names(run(src, target=(0, 4, 25)).text)
    assert "jax.tree.map" not in _jax_names(run(src, target=(0, 4, 24)).text)


# keywords ------------------------------------------------------------------------------------------
# (callee, keyword) -> first JAX version whose callee takes the keyword, read from the tags' source
KEYWORDS = {
    ("jax.experimental.pjit.pjit", "in_shardings"): "0.4.4",  # jax/_src/pjit.py at jax-v0.4.4
    ("jax.experimental.pjit.pjit", "out_shardings"): "0.4.4",
    ("jax.experimental.pjit.with_sharding_constraint", "shardings"): "0.4.4",
    ("jax.lax.with_sharding_constraint", "shardings"): "0.4.4",
    ("jax.experimental.pjit.with_sharding_constraint", "x"): "0.4.1",
    ("jax.lax.with_sharding_constraint", "x"): "0.4.1",
    ("jax.lax.with_sharding_constraint", "axis_resources"): "0.4.1",  # jax.lax re-exports pjit's at jax-v0.4.1
    ("jax.experimental.pjit.pjit", "out_axis_resources"): "0.1.0",  # gone from 0.4.14: the rules' gates see to that
    ("jax.jit", "in_shardings"): "0.4.7",  # jax/_src/api.py at jax-v0.4.7
    ("jax.jit", "out_shardings"): "0.4.7",
    **{("jax.jit", k): "0.4.1" for k in ("static_argnums", "static_argnames", "device", "backend", "donate_argnums",
                                         "inline", "keep_unused", "abstracted_axes")},  # jit's signature at jax-v0.4.1
    ("jax.jit", "donate_argnames"): "0.4.14",
    ("jax.shard_map", "check_vma"): "0.6.1",  # jax.shard_map's first release has both
    ("jax.shard_map", "axis_names"): "0.6.1",
    ("jax.shard_map", "in_specs"): "0.6.1",
    ("jax.shard_map", "out_specs"): "0.6.1",
    ("jax.shard_map", "mesh"): "0.6.1",
    ("jax.random.permutation", "independent"): "0.2.26",
    ("jax.random.permutation", "axis"): "0.2.26",
}
KEYWORD_CALLEES = {callee for callee, _ in KEYWORDS}


def _keywords(text: str):
    """Each (callee, keyword) of a call, or of a `functools.partial(callee, ...)`, to a callee in KEYWORDS."""
    from collections import Counter

    ctx = FileContext(text)
    found: Counter = Counter()
    for call in ctx.nodes(ast.Call):
        callee = ctx.qualname(call.func)
        if callee == "functools.partial" and call.args:
            callee = ctx.qualname(call.args[0])
        if callee in KEYWORD_CALLEES:
            found.update((callee, kw.arg) for kw in call.keywords if kw.arg)
    return found


def _problems(before: str, after: str, target) -> list:
    shown = ".".join(map(str, target))
    problems = []
    for name in sorted(_jax_names(after) - _jax_names(before)):
        known = _availability(name)
        if known is None:
            problems.append(f"{shown}: {name} is not in the availability table")
        elif target < _version(known[0]) or (known[1] and target >= _version(known[1])):
            problems.append(f"{shown}: {name} exists from {known[0]}" + (f" until {known[1]}" if known[1] else ""))
    for (callee, keyword) in sorted(_keywords(after) - _keywords(before)):
        since = KEYWORDS.get((callee, keyword))
        if since is None:
            problems.append(f"{shown}: {callee}({keyword}=) is not in the keyword table")
        elif target < _version(since):
            problems.append(f"{shown}: {callee} takes `{keyword}=` from {since}")
    return problems


def _rule_targets(rule) -> list:
    """TARGETS, and for each version the rule or its module names (replacement, deprecation, removal,
    its own gates such as SINCE = "0.8.0"), that release and the one before it, from 0.4.1 (the
    oldest target TARGETS tries: before it there is no jax.Array to migrate GDA code to)."""
    import sys

    from jaxmigrate.catalog.api_history import table

    releases = sorted({_version(v) for v in table(False).versions})
    module = vars(sys.modules[rule.__module__])
    named = [rule.replacement_since, rule.deprecated_in, rule.removed_in]
    named += [v for k, v in module.items() if "SINCE" in k and isinstance(v, str)]
    targets = set(TARGETS)
    for text in filter(None, named):
        version = _version(text)
        targets.add(version)
        earlier = [r for r in releases if TARGETS[0] <= r < version]
        if earlier:
            targets.add(earlier[-1])
    return sorted(targets)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_each_rule_alone_honours_older_targets(rule):
    """The rule alone, unsafe fixes on, on each of its examples, for every target in TARGETS and
    around each of its version gates: nothing it writes is a name or a keyword the target lacks."""
    problems = []
    for i, example in enumerate(rule.examples):
        for target in _rule_targets(rule):
            after = run(example.before, [rule.code], unsafe=True, target=target).text
            problems += [f"example {i}: {p}" for p in _problems(example.before, after, target)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", SOURCES)
def test_no_keyword_the_target_lacks(source):
    """Every fixture and example, every rule: no call gains a keyword the target's callee does not take."""
    problems = []
    for target in TARGETS:
        after = run(source, unsafe=True, target=target).text
        problems += [p for p in _problems(source, after, target) if "takes" in p or "keyword table" in p]
    assert not problems, "\n".join(problems)


def test_the_keyword_table_is_consulted():
    """in_shardings= written for 0.4.1 would be caught (the rule's gate aside)."""
    before = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None)\n"
    after = before.replace("in_axis_resources", "in_shardings")
    assert _problems(before, after, (0, 4, 1)) == ["0.4.1: jax.experimental.pjit.pjit takes `in_shardings=` from 0.4.4"]
    assert _problems(before, after, (0, 4, 4)) == []
