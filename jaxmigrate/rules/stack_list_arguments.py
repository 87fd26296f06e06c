"""JM903: lists and tuples given as arrays to ``jnp.hstack`` and friends, rejected since JAX 0.10.0."""

from __future__ import annotations

import ast
from typing import Iterator, List, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.rules.base import Example, Rule, snippet

REJECTED_FROM = "0.10.0"
#: functions of a sequence of arrays: each element was turned into an array
SEQUENCE_OF_ARRAYS = ("hstack", "vstack", "dstack", "column_stack")
#: functions of arrays given one by one
EACH_AN_ARRAY = ("atleast_1d", "atleast_2d", "atleast_3d")
ASARRAY = "jax.numpy.asarray"


def _literal(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Tuple))


class StackListArguments(Rule):
    """
    ## What it does
    Wraps in `jnp.asarray(...)` each list or tuple literal given as an array to
    `jnp.hstack`/`vstack`/`dstack`/`column_stack` (the elements of the sequence they take, also
    of a list comprehension) and to `jnp.atleast_1d`/`atleast_2d`/`atleast_3d`, for targets from
    JAX 0.10.0 on. `jnp.hstack([[1, 2], [3, 4]])` becomes
    `jnp.hstack([jnp.asarray([1, 2]), jnp.asarray([3, 4])])`.

    ## Why is this bad?
    Until JAX 0.10.0 these functions turned each element into an array themselves
    (`atleast_1d` called `asarray`); since, they raise `TypeError: hstack requires ndarray or
    scalar arguments`. `jnp.asarray` is what they did, so the result and its dtype are the same
    (safe fix). A variable that holds a list cannot be seen in the source and is not reported.
    """

    code = "JM903"
    name = "stack-list-arguments"
    summary = "lists given as arrays to `jnp.hstack`/`vstack`/`atleast_*d` (rejected since 0.10.0) → `jnp.asarray`"
    fix_safety = "safe"
    triggers = tuple(name.encode() for name in (*SEQUENCE_OF_ARRAYS, *EACH_AN_ARRAY))
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                import jax.numpy as jnp

                grid = jnp.vstack([[0, 1], [2, 3]])
            """),
            snippet("""
                import jax.numpy as jnp

                grid = jnp.vstack([jnp.asarray([0, 1]), jnp.asarray([2, 3])])
            """),
            title="lists as the rows",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                def as_row(values):
                    return jnp.atleast_2d(values), jnp.atleast_2d([0.0, 1.0])
            """),
            snippet("""
                import jax.numpy as jnp

                def as_row(values):
                    return jnp.atleast_2d(values), jnp.atleast_2d(jnp.asarray([0.0, 1.0]))
            """),
            title="a literal is wrapped; a variable cannot be seen",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                grid = jnp.vstack([[0, 1], [2, 3]])
            """),
            target="0.9.2",
            title="before 0.10.0 the lists are taken",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(REJECTED_FROM):
            return
        for call, qualname in ctx.calls_to(*(f"jax.numpy.{name}" for name in (*SEQUENCE_OF_ARRAYS, *EACH_AN_ARRAY))):
            name = qualname.rpartition(".")[2]
            literals = self._literals(call, name)
            if literals:
                yield self._finding(ctx, call, name, literals)

    @staticmethod
    def _literals(call: ast.Call, name: str) -> List[ast.expr]:
        if name in EACH_AN_ARRAY:
            return [a for a in call.args if _literal(a)]
        seq = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "tup"), None)
        if isinstance(seq, (ast.List, ast.Tuple)):
            return [e for e in seq.elts if _literal(e)]
        if isinstance(seq, (ast.ListComp, ast.GeneratorExp)) and _literal(seq.elt):
            return [seq.elt]
        return []

    def _finding(self, ctx: FileContext, call: ast.Call, name: str, literals: List[ast.expr]) -> Finding:
        imports: Tuple[ImportRef, ...] = ()
        if isinstance(call.func, ast.Attribute):  # `jnp.vstack`: `jnp.asarray`, from the same module
            asarray = f"{ctx.text(call.func.value)}.asarray"
        else:
            asarray, imports = importer(ctx).reference(ASARRAY, at=call)
        edits = []
        for node in literals:
            start, end = ctx.span(node)
            edits += [Edit(start, start, f"{asarray}("), Edit(end, end, ")")]
        what = "a list or tuple" if len(literals) == 1 else f"{len(literals)} lists or tuples"
        fix = Fix("safe", edits=tuple(edits), add_imports=imports)
        return self.finding(ctx, call.func, f"`jnp.{name}` rejects {what} given as an array since JAX "
                            f"{REJECTED_FROM} (it called `asarray` on them before): wrap them in `{asarray}(...)`",
                            fix, replacement=f"{asarray}(...)")
