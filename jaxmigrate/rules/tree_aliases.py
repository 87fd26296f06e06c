"""JM601: `jax.tree_map` and the other `jax.tree_*` aliases → `jax.tree.*` / `jax.tree_util.*`."""

from __future__ import annotations

from jaxmigrate.catalog.moves import MOVES
from jaxmigrate.prefilter import ModuleAttributeSearch, name_triggers, raw
from jaxmigrate.rules.base import Example, snippet
from jaxmigrate.rules.moved_name_base import MovedNameRule


class TreeAliases(MovedNameRule):
    """
    ## What it does
    Rewrites the `jax.tree_*` aliases (`jax.tree_map`, `tree_flatten`, `tree_leaves`,
    `tree_structure`, `tree_unflatten`, `tree_transpose`, `treedef_is_leaf`): a dotted use
    becomes `jax.tree.map(...)` and friends when the target JAX has the `jax.tree` module
    (0.4.25 and later, the default), else `jax.tree_util.tree_map(...)`; `from jax import
    tree_map` becomes `from jax.tree_util import tree_map` (importing `map` from `jax.tree` would
    shadow the builtin). `treedef_is_leaf` has no `jax.tree` form and goes to `jax.tree_util`.

    ## Why is this bad?
    The aliases were deprecated in JAX 0.4.26 and removed in 0.6.0. The replacements take the
    same arguments.
    """

    code = "JM601"
    name = "tree-aliases"
    summary = "`jax.tree_map` and the other `jax.tree_*` aliases → `jax.tree.*` / `jax.tree_util.*`"
    fix_safety = "safe"
    triggers = name_triggers([m.old for m in MOVES if m.rule == "JM601"])[0]
    # `jax.tree_util.tree_map` is current: the prefilter wants `jax.tree_map`, `from jax import tree_map`, ...
    requires = ()
    _spelled = ModuleAttributeSearch("jax", triggers)
    deprecated_in = "0.4.26"
    removed_in = "0.6.0"
    replacement_since = "0.4.25"
    history_names = ("jax.tree_map",)

    @classmethod
    def wants(cls, data) -> bool:
        return super().wants(data) and cls._spelled(raw(data))
    examples = (
        Example(
            snippet("""
                import jax

                params = jax.tree_map(lambda x: x * 2, {"w": 1.0})
                leaves = jax.tree_leaves(params)
            """),
            snippet("""
                import jax

                params = jax.tree.map(lambda x: x * 2, {"w": 1.0})
                leaves = jax.tree.leaves(params)
            """),
        ),
        Example(
            snippet("""
                from jax import tree_map, tree_util

                doubled = tree_map(lambda x: x * 2, [1, 2])
                same = tree_util.tree_map(lambda x: x, doubled)
            """),
            snippet("""
                from jax import tree_util
                from jax.tree_util import tree_map

                doubled = tree_map(lambda x: x * 2, [1, 2])
                same = tree_util.tree_map(lambda x: x, doubled)
            """),
            title="imports keep the name; `jax.tree_util.tree_map` is already current",
        ),
    )
