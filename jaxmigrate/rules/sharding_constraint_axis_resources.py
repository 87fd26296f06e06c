"""JM102: ``with_sharding_constraint(x, axis_resources=...)`` → ``jax.lax.with_sharding_constraint(x, ...)``."""

from __future__ import annotations

from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules.base import Example, Rule, snippet

LEGACY = "jax.experimental.pjit.with_sharding_constraint"
MODERN = "jax.lax.with_sharding_constraint"


class ShardingConstraintAxisResources(Rule):
    """
    ## What it does
    Passes the spec of `with_sharding_constraint(x, axis_resources=spec)` positionally, as
    `with_sharding_constraint(x, spec)`; when `x` is itself passed by keyword, the keyword
    becomes `shardings=`. Together with JM201, which moves
    `jax.experimental.pjit.with_sharding_constraint` to `jax.lax.with_sharding_constraint`,
    this gives `jax.lax.with_sharding_constraint(x, spec)`. A leftover `axis_resources=` on
    `jax.lax.with_sharding_constraint` (half-migrated code) is fixed the same way.

    ## Why is this bad?
    The `axis_resources` argument was removed in JAX 0.4.11 and
    `jax.experimental.pjit.with_sharding_constraint` is deprecated in favour of
    `jax.lax.with_sharding_constraint`, whose second parameter means the same thing.

    With a target before 0.4.4 the rule stays quiet: there `axis_resources` is the parameter's only
    name, and not deprecated.
    """

    code = "JM102"
    name = "sharding-constraint-axis-resources"
    summary = "`with_sharding_constraint(axis_resources=)` → `jax.lax.with_sharding_constraint(x, shardings)`"
    fix_safety = "safe"
    triggers = (b"axis_resources",)
    requires = (name_triggers([LEGACY, MODERN])[0],)
    deprecated_in = "0.4.4"
    removed_in = "0.4.11"
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import with_sharding_constraint
                from jax.sharding import PartitionSpec as P

                def f(x):
                    return with_sharding_constraint(x * 2, axis_resources=P("x"))
            """),
            snippet("""
                import jax
                from jax.experimental.pjit import with_sharding_constraint
                from jax.sharding import PartitionSpec as P

                def f(x):
                    return with_sharding_constraint(x * 2, P("x"))
            """),
        ),
        Example(
            snippet("""
                import jax

                f = jax.experimental.maps.xmap(lambda x: x, in_axes=["i"], out_axes=["i"], axis_resources={"i": "x"})
            """),
            title="xmap's `axis_resources=` is a different argument and is left alone",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return  # `axis_resources` is not deprecated there (before 0.4.4 it is the only name: no `shardings`)
        for call, _callee in ctx.calls_to(LEGACY, MODERN):
            kws = [k for k in call.keywords if k.arg == "axis_resources"]
            if not kws:
                continue
            kw = kws[0]
            if any(k.arg == "shardings" for k in call.keywords):  # both given: a TypeError either way
                yield self.finding(ctx, kw, "`axis_resources=` next to `shardings=`: drop one of them by hand")
                continue
            start = ctx.offset(kw.lineno, kw.col_offset)
            value_start = ctx.span(kw.value)[0]
            positional = len(call.args) == 1 and len(call.keywords) == 1
            edit = Edit(start, value_start, "") if positional else Edit(start, start + len(kw.arg), "shardings")  # type: ignore[arg-type]  # the axis_resources keyword: arg is set
            fix = Fix("safe", edits=(edit,))
            yield self.finding(
                ctx, call, "`axis_resources=` was removed from with_sharding_constraint in JAX 0.4.11: use "
                "`jax.lax.with_sharding_constraint(x, shardings)`", fix,
                replacement="jax.lax.with_sharding_constraint(x, shardings)",
            )

