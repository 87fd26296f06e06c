"""JM901: a ``PartitionSpec`` compared with a tuple, which is never equal since JAX 0.10.0."""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.values import InstanceFacts
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.prefilter import raw
from jaxmigrate.rules.base import Example, Rule, snippet

PARTITION_SPEC = "jax.sharding.PartitionSpec"
#: every path JAX exported PartitionSpec from
SPEC_CLASSES = (PARTITION_SPEC, "jax.experimental.PartitionSpec", "jax.experimental.pjit.PartitionSpec",
                "jax.experimental.maps.PartitionSpec", "jax.interpreters.pxla.PartitionSpec",
                "jax.experimental.sharding.PartitionSpec")
NEVER_EQUAL_FROM = "0.10.0"
#: a comparison with a tuple literal on its right, or one on its left of a spec (``() == spec``)
_TUPLE_COMPARED = re.compile(rb"[!=]=\s*\(|\)\s*[!=]=\s*(?:[\w.]*[sS]pec\b|P\()")


def _tuple_side(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.elts)


class PartitionSpecTuple(Rule):
    """
    ## What it does
    Rewrites `spec == ("data", None)` (and `!=`) where `spec` is known to be a `PartitionSpec`
    (a `P(...)` call, a name bound once to one, an annotated parameter) to
    `spec == P("data", None)`, with the name the file already uses for `PartitionSpec`. A
    tuple compared with the `.spec` of something (a `NamedSharding`'s, usually) is reported
    with the same code to write, as the source does not show that it is a `PartitionSpec`.
    Applied for targets from JAX 0.10.0 on.

    ## Why is this bad?
    `PartitionSpec` was a tuple subclass and compared equal to the tuple of its entries; since
    JAX 0.10.0 it is not, so `P("x") == ("x",)` is False: a sharding check built on it silently
    takes the other branch, an `assert` fails. Comparing with a `PartitionSpec` is what the
    code meant, and holds on every release (safe fix).
    """

    code = "JM901"
    name = "partition-spec-tuple"
    summary = "`PartitionSpec` compared with a tuple (never equal since 0.10.0) → compare with `P(...)`"
    fix_safety = "safe"
    triggers = (b"PartitionSpec", b".spec")
    requires = ((b"==", b"!="),)

    @classmethod
    def wants(cls, data) -> bool:
        """``PartitionSpec`` or ``.spec`` in the file, and a comparison with a tuple literal."""
        return super().wants(data) and _TUPLE_COMPARED.search(raw(data)) is not None
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                from jax.sharding import PartitionSpec as P

                def is_data_parallel(spec: P) -> bool:
                    return spec == ("data", None)
            """),
            snippet("""
                from jax.sharding import PartitionSpec as P

                def is_data_parallel(spec: P) -> bool:
                    return spec == P("data", None)
            """),
            title="an annotated PartitionSpec",
        ),
        Example(
            snippet("""
                import jax

                def check(arr):
                    assert arr.sharding.spec == ("x",)
            """),
            snippet("""
                import jax

                def check(arr):
                    assert arr.sharding.spec == ("x",)
            """),
            flagged=True,
            title="`.spec` of something: reported with the code to write",
        ),
        Example(
            snippet("""
                from jax.sharding import PartitionSpec as P

                same = P("x") == ("x",)
            """),
            target="0.9.2",
            title="before 0.10.0 they compare equal",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(NEVER_EQUAL_FROM):
            return
        facts: Optional[InstanceFacts] = None
        for compare in ctx.nodes(ast.Compare):
            if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Eq, ast.NotEq)):
                continue
            left, right = compare.left, compare.comparators[0]
            for spec, other in ((left, right), (right, left)):
                if not isinstance(other, ast.Tuple) or not _tuple_side(other) or _tuple_side(spec):
                    continue
                if facts is None:
                    facts = InstanceFacts(ctx, PARTITION_SPEC, SPEC_CLASSES, lambda s: s.rpartition(".")[2] == "PartitionSpec")
                known = self._known_spec(ctx, facts, spec)
                if known is None:
                    continue
                yield self._finding(ctx, compare, spec, other, certain=known)
                break

    @staticmethod
    def _known_spec(ctx: FileContext, facts: InstanceFacts, node: ast.expr) -> Optional[bool]:
        """True where ``node`` is a PartitionSpec, False where it is the ``.spec`` of something
        (reported), None where nothing says so."""
        if isinstance(node, ast.Attribute) and node.attr == "spec":
            return False
        if isinstance(node, (ast.Call, ast.Name)) and facts.receiver(node)[0] is True:
            return True
        return None

    def _finding(self, ctx: FileContext, compare: ast.Compare, spec: ast.expr, other: ast.Tuple,
                 certain: bool) -> Finding:
        name, imports = self._spec_name(ctx, spec, compare)
        code = f"{name}({', '.join(ctx.text(e) for e in other.elts)})"
        message = (f"a `PartitionSpec` never equals a tuple since JAX {NEVER_EQUAL_FROM} (it did before): "
                   f"compare with `{code}`")
        if not certain:
            return self.finding(ctx, compare, f"{message} if `{ctx.text(spec)}` is a `PartitionSpec`",
                                suggestion=f"{ctx.text(spec)} {'==' if isinstance(compare.ops[0], ast.Eq) else '!='} {code}")
        fix = Fix("safe", edits=(ctx.replace(other, code),), add_imports=imports)
        return self.finding(ctx, compare, message, fix, replacement=code)

    @staticmethod
    def _spec_name(ctx: FileContext, spec: ast.expr, at: ast.AST) -> Tuple[str, tuple]:
        if isinstance(spec, ast.Call):
            return ctx.text(spec.func), ()
        return importer(ctx).reference(PARTITION_SPEC, at=at)

