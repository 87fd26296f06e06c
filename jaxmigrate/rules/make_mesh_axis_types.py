"""JM705: ``jax.make_mesh`` without ``axis_types``, whose default became Explicit in JAX 0.9.0."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.values import argument
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

MAKE_MESH = "jax.make_mesh"
AXIS_TYPE = "jax.sharding.AxisType"
#: names only code written for explicit sharding uses: a file that has one chose its axis types
EXPLICIT_ERA = ("jax.sharding.AxisType", "jax.sharding.reshard", "jax.sharding.auto_axes",
                "jax.sharding.explicit_axes", "jax.typeof")
WARNS_FROM = "0.8.1"  # make_mesh without axis_types warns
EXPLICIT_FROM = "0.9.0"  # and makes Explicit axes


def _axis_count(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """How many axes the mesh has, as source text: the length of a literal shape or names, else
    ``len(name)`` of a plain name (naming it twice is harmless); None where neither is plain."""
    shapes, names = argument(call, 0, "axis_shapes"), argument(call, 1, "axis_names")
    for arg in (shapes, names):
        if isinstance(arg, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in arg.elts):
            return str(len(arg.elts))
    for arg in (names, shapes):
        if isinstance(arg, ast.Name):
            return f"len({arg.id})"
    return None


class MakeMeshAxisTypes(Rule):
    """
    ## What it does
    Adds `axis_types=(AxisType.Auto,) * n` to a `jax.make_mesh(shape, names)` call that does not
    choose its axis types, for targets from JAX 0.8.1 on: `n` is the length of a literal shape or
    names tuple, or `len(names)` of a plain name. A file that already speaks the language of
    explicit sharding (`AxisType`, `jax.sharding.reshard`, `auto_axes`, `explicit_axes`,
    `jax.typeof`) is left alone: its meshes are Explicit by choice. A call whose axis count is not
    plain (`make_mesh(shape_of(cfg), names_of(cfg))`) is reported with the code to write.
    `jax.sharding.Mesh(...)` keeps Auto axes by default and is not concerned.

    ## Why is this bad?
    `jax.make_mesh` made Auto axes until JAX 0.9.0 and makes Explicit axes since (announced with
    a warning in 0.8.1). Code written for Auto axes breaks on such a mesh: the
    `with_sharding_constraint(x, NamedSharding(mesh, P("x")))` of JAX's own sharding tutorials
    raises "can only refer to Auto axes of the mesh", and shardings of jitted results follow
    the explicit rules. Passing the Auto axes keeps the behaviour the code was written for
    (safe fix: it is what `make_mesh` did by default before 0.9.0).
    """

    code = "JM705"
    name = "make-mesh-axis-types"
    summary = "`jax.make_mesh` without `axis_types` (Explicit by default since 0.9.0) → `axis_types=(AxisType.Auto,) * n`"
    fix_safety = "safe"
    triggers = (b"make_mesh",)
    deprecated_in = WARNS_FROM
    replacement_since = "0.5.3"  # jax.sharding.AxisType
    examples = (
        Example(
            snippet("""
                import jax
                from jax.sharding import NamedSharding, PartitionSpec as P

                mesh = jax.make_mesh((4, 2), ("x", "y"))

                @jax.jit
                def step(x):
                    return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x")))
            """),
            snippet("""
                import jax
                from jax.sharding import NamedSharding, PartitionSpec as P

                mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

                @jax.jit
                def step(x):
                    return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x")))
            """),
            title="the Auto axes the code was written for",
        ),
        Example(
            snippet("""
                import jax

                def mesh_for(names):
                    return jax.make_mesh((jax.device_count() // 2, 2), names)
            """),
            snippet("""
                import jax

                def mesh_for(names):
                    return jax.make_mesh((jax.device_count() // 2, 2), names, axis_types=(jax.sharding.AxisType.Auto,) * 2)
            """),
            title="the axis count from the literal shape",
        ),
        Example(
            snippet("""
                import jax
                from jax.sharding import AxisType

                mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
                grid = jax.make_mesh((4, 2), ("x", "y"))
            """),
            title="a file that chooses axis types is left alone",
        ),
        Example(
            snippet("""
                import jax

                mesh = jax.make_mesh((4, 2), ("x", "y"))
            """),
            target="0.8.0",
            title="before 0.8.1 the default is Auto, without a warning",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(WARNS_FROM):
            return
        calls = [call for call, _ in ctx.calls_to(MAKE_MESH)]
        if not calls or any(ctx.references(name) for name in EXPLICIT_ERA):
            return
        explicit = ctx.target_at_least(EXPLICIT_FROM)
        for call in calls:
            if len(call.args) > 2 or any(k.arg in ("axis_types", None) for k in call.keywords) or any(
                    isinstance(a, ast.Starred) for a in call.args):
                continue  # chosen, or a splat that may choose them
            why = ("makes Explicit axes by default since JAX 0.9.0 (Auto before): `with_sharding_constraint` and "
                   "other uses of Auto axes fail or shard differently on this mesh" if explicit else
                   "warns without `axis_types` since JAX 0.8.1: its default becomes Explicit axes in 0.9.0")
            count = _axis_count(ctx, call)
            axis_type, imports = importer(ctx).reference(AXIS_TYPE, at=call)
            if count is None:  # the code to write: the length of what the call passes
                given = argument(call, 1, "axis_names") or argument(call, 0, "axis_shapes")
                count = f"len({ctx.text(given)})" if given is not None else "len(axis_names)"
                auto = f"({axis_type}.Auto,) * {count}"
                yield self.finding(ctx, call.func, f"`jax.make_mesh` {why}; pass the axis types the code was "
                                   "written for", suggestion=f"axis_types={auto}")
                continue
            auto = f"({axis_type}.Auto,)" + ("" if count == "1" else f" * {count}")
            last = max((*call.args, *(k.value for k in call.keywords)), key=lambda n: (n.end_lineno, n.end_col_offset))
            end = ctx.span(last)[1]
            fix = Fix("safe", edits=(Edit(end, end, f", axis_types={auto}"),), add_imports=imports)
            yield self.finding(ctx, call.func, f"`jax.make_mesh` {why}: keep the Auto axes the code was written for",
                               fix, replacement=f"axis_types={auto}")
