"""JM703: ``jax.sharding.PositionalSharding`` → ``NamedSharding`` where the device layout is statically known."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.analysis.values import binding_scope
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.gda import NAMED_SHARDING, PARTITION_SPEC
from jaxmigrate.patterns.positional_layouts import (
    CREATE_DEVICE_MESH,
    LEGACY,
    NDARRAY,
    ONE_DIM,
    OPS,
    Failure,
    Layout,
    LayoutParser,
    anchor_name,
    axis_names,
)
from jaxmigrate.rules.base import Example, Rule, snippet

MESH = "jax.sharding.Mesh"
# JAX functions that take a sharding (in any argument, also inside a tuple, list or dict literal)
SINKS = frozenset((
    "jax.device_put", "jax.jit", "jax.experimental.pjit.pjit", "jax.lax.with_sharding_constraint",
    "jax.experimental.pjit.with_sharding_constraint", "jax.make_array_from_callback",
    "jax.make_array_from_single_device_arrays", "jax.make_array_from_process_local_data", "jax.ShapeDtypeStruct",
))
PARTIAL = "functools.partial"
MESSAGE = "`PositionalSharding` is deprecated since JAX 0.6.0 and removed in 0.7.0: use `NamedSharding`"
GENERIC = 'NamedSharding(Mesh(np.array(devices).reshape(a, b), ("x", "y")), P("x", None))'
PURE = frozenset((*ONE_DIM, *NDARRAY, CREATE_DEVICE_MESH, "len", "tuple", "list", "range"))  # safe to run again
STABLE_BINDERS = (ast.Assign, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class PositionalSharding(Rule):
    """
    ## What it does
    Rewrites `jax.sharding.PositionalSharding` (also `jax.experimental.sharding` and
    `jax._src.sharding_impls`) to the equivalent `NamedSharding` where the device layout is
    known from the code: `PositionalSharding(devices).reshape(a, b).replicate(1)` becomes
    `NamedSharding(Mesh(np.array(devices).reshape(a, b), ("x", "y")), P("x", None))`. The device
    grid becomes the mesh (axes `"x"`, `"y"`, `"z"`, then `"a3"`, ...), each dim merged by
    `replicate(axis)` gets `None` (`replicate()` gives `P()`, `keepdims=False` drops the dim),
    and `.T`/`.transpose(...)` permute the spec. Without a `reshape`, the grid's rank must be
    visible: 1 for `jax.devices()`, `jax.local_devices()`, a list literal or `np.array` of one,
    the length of the shape in `mesh_utils.create_device_mesh((4, 2))`.

    A chain is rewritten where it is passed to a JAX function that takes a sharding
    (`jax.device_put`, `jax.jit`'s `in_shardings`/`out_shardings`, `with_sharding_constraint`,
    `jax.make_array_from_callback`, ...). A name assigned a chain (`sharding =
    PositionalSharding(...)`) is inlined into every use, and its assignment is deleted once
    nothing else reads it; the device expression then runs at each use, so it may only call
    `jax.devices()` and the like, and its names must mean the same there. Imports of
    `PositionalSharding` left unused are dropped. Applied for targets that deprecate it (0.6.0
    and later).

    Reported, with the `NamedSharding` to write where it is known: a positional sharding passed
    to any other function or used as a value (`.shape`, `isinstance`), a grid of unknown rank,
    a `reshape` after `replicate` or `transpose`, arguments that are not literals. A name is
    followed only where `name = PositionalSharding(...)` is its one binding: a name bound
    again in its scope (`s = s.reshape(...)`, a binding in each branch of an `if`), declared
    `global` or `nonlocal`, deleted with `del` or set in a class body is reported at that
    assignment, which is left as it is.

    The fix is safe: the `NamedSharding` places every shard on the same devices, and its mesh
    lists the devices in the order the positional sharding did, so shardings of one
    computation still agree.

    ## Why is this bad?
    `jax.sharding.PositionalSharding` is deprecated since JAX 0.6.0 ("Use jax.NamedSharding
    instead") and is gone from JAX 0.7.0.
    """

    code = "JM703"
    name = "positional-sharding"
    summary = "`jax.sharding.PositionalSharding` → `NamedSharding` where the device layout is statically known"
    fix_safety = "safe"
    triggers = (b"PositionalSharding",)
    deprecated_in = "0.6.0"
    removed_in = "0.7.0"
    replacement_since = "0.4.1"
    history_names = ("jax.sharding.PositionalSharding",)
    examples = (
        Example(
            snippet("""
                import jax
                from jax.experimental import mesh_utils
                from jax.sharding import PositionalSharding

                sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))
                x = jax.numpy.zeros((8, 8))
                y = jax.device_put(x, sharding.reshape(4, 2))
                z = jax.device_put(x, sharding.reshape(4, 2).replicate(1))
            """),
            snippet("""
                import jax
                from jax.experimental import mesh_utils

                x = jax.numpy.zeros((8, 8))
                y = jax.device_put(x, jax.sharding.NamedSharding(jax.sharding.Mesh(mesh_utils.create_device_mesh((8,)).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec("x", "y")))
                z = jax.device_put(x, jax.sharding.NamedSharding(jax.sharding.Mesh(mesh_utils.create_device_mesh((8,)).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec("x", None)))
            """),  # noqa: E501 - the fixer's output, verbatim
            title="the tutorial's chains: the assignment is inlined and deleted",
        ),
        Example(
            snippet("""
                import jax
                import numpy as np

                s = jax.sharding.PositionalSharding(jax.devices()).reshape(4, 2)
                f = jax.jit(lambda a: a * 2, in_shardings=s.replicate(0), out_shardings=s.replicate())
            """),  # noqa: E501 - the fixer's output, verbatim
            snippet("""
                import jax
                import numpy as np

                f = jax.jit(lambda a: a * 2, in_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec(None, "y")), out_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec()))
            """),  # noqa: E501 - the fixer's output, verbatim
            title="`replicate(0)` and `replicate()` in `jax.jit`",
        ),
        Example(
            snippet("""
                import jax
                from jax.sharding import PositionalSharding

                def place(x, devices):
                    return jax.device_put(x, PositionalSharding(devices))
            """),
            snippet("""
                import jax
                from jax.sharding import PositionalSharding

                def place(x, devices):
                    return jax.device_put(x, PositionalSharding(devices))
            """),
            flagged=True,
            title="a device grid of unknown rank is reported",
        ),
        Example(
            snippet("""
                import jax

                def shard(x):
                    s = jax.sharding.PositionalSharding(jax.devices())
                    s = s.reshape(4, 2).replicate(1)
                    return jax.device_put(x, s)
            """),
            snippet("""
                import jax

                def shard(x):
                    s = jax.sharding.PositionalSharding(jax.devices())
                    s = s.reshape(4, 2).replicate(1)
                    return jax.device_put(x, s)
            """),
            flagged=True,
            title="a name bound more than once is reported where it is assigned a `PositionalSharding`",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        yield from _Plan(self, ctx).findings()


class _Plan:
    """Every use of PositionalSharding in one module: what is rewritten, deleted or reported."""

    def __init__(self, rule: Rule, ctx: FileContext) -> None:
        self.rule, self.ctx = rule, ctx
        self.parser = LayoutParser(ctx)
        self.parse = self.parser.parse
        self._status: Dict[int, str] = {}  # id(occurrence) -> "rewrite" | "delete" | "keep"
        self._loads_of: Dict[int, List[ast.Name]] = {}  # id(statement) -> ``_loads``'s answer
        self.occurrences = [e for e in ctx.nodes(ast.Call) + ctx.nodes(ast.Name) + ctx.nodes(ast.Attribute)
                            if self._is_maximal(e) and self.parse(e) is not None]
        self.occurrences.sort(key=lambda e: ctx.span(e))

    # where an occurrence stands ---------------------------------------------------------------
    def _is_maximal(self, expr: ast.expr) -> bool:
        parent = self.ctx.parent(expr)
        if isinstance(parent, ast.Attribute) and parent.attr == "T":
            return False
        if isinstance(parent, ast.Attribute) and parent.attr in OPS:
            grand = self.ctx.parent(parent)
            return not (isinstance(grand, ast.Call) and grand.func is parent)
        return True

    def _definition(self, expr: ast.expr) -> Optional[ast.Assign]:
        parent = self.ctx.parent(expr)
        if (isinstance(parent, ast.Assign) and parent.value is expr and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return parent
        return None

    def _sink(self, expr: ast.expr) -> Optional[str]:
        """None where a JAX function takes the value as a sharding, else what uses it."""
        ctx = self.ctx
        node: ast.AST = expr
        parent = ctx.parent(node)
        while isinstance(parent, (ast.Tuple, ast.List)) or (isinstance(parent, ast.Dict) and node in parent.values):
            node, parent = parent, ctx.parent(parent)
        if isinstance(parent, ast.keyword):
            node, parent = parent, ctx.parent(parent)
        if isinstance(parent, ast.Call) and node is not parent.func:
            callee = ctx.qualname(parent.func)
            if callee == PARTIAL and parent.args and node is not parent.args[0]:
                callee = ctx.qualname(parent.args[0])
            if callee in SINKS:
                return None
            name = callee or ctx.text(parent.func)
            return f"passed to `{name}`, which may rely on a `PositionalSharding` (check that a `NamedSharding` fits)"
        if isinstance(parent, ast.Attribute):
            return f"its `.{parent.attr}` is read: a `NamedSharding` has other attributes"
        return "used as a value where a `NamedSharding` may not fit"

    def _loads(self, stmt: ast.Assign) -> List[ast.Name]:
        found = self._loads_of.get(id(stmt))
        if found is None:
            target: ast.Name = stmt.targets[0]  # type: ignore[assignment]  # the definition of a Name
            found = self._loads_of[id(stmt)] = [n for n in self.ctx.names_bound_by(target.id, binding_scope(self.ctx, target))
                                                if isinstance(n.ctx, ast.Load) and self.ctx.single_assignment(n) is stmt]
        return found

    def _occurrence_of(self, load: ast.expr) -> ast.expr:
        node = load
        while not self._is_maximal(node):
            parent = self.ctx.parent(node)
            # an occurrence that is not maximal is inside an expression: each parent here is one
            node = parent if isinstance(parent, ast.Attribute) and parent.attr == "T" else self.ctx.parent(parent)  # type: ignore[assignment, arg-type]
        return node

    def _unstable(self, layout: Layout, at: ast.AST) -> Optional[str]:
        """A name in the inlined source that means something else (or may have changed) at ``at``."""
        resolver = self.ctx.resolver
        scope = resolver.scope_of(anchor_name(at))
        for piece in layout.inherited:
            for call in (n for n in ast.walk(piece) if isinstance(n, ast.Call)):
                callee = self.ctx.qualname(call.func)
                if callee not in PURE and not (isinstance(call.func, ast.Attribute) and call.func.attr == "reshape"):
                    return f"`{self.ctx.text(call.func)}(...)` would run at each use: name the device grid first"
            for name in (n for n in ast.walk(piece) if isinstance(n, ast.Name)):
                here = self.ctx.bindings(name)
                there = resolver.bindings_of(name.id, scope)
                if [id(b.node) for b in here] != [id(b.node) for b in there]:
                    return f"`{name.id}` means something else here"
                if not (all(b.kind == "import" for b in here) or len(here) == 1 and isinstance(here[0].node, STABLE_BINDERS)):
                    return f"`{name.id}` is assigned more than once"
        return None

    def status(self, expr: ast.expr) -> str:
        """"rewrite" (replaced by its NamedSharding), "delete" (an assignment nothing else reads) or "keep"."""
        key = id(expr)
        if key not in self._status:
            self._status[key] = "keep"
            self._status[key] = self._decide(expr)
        return self._status[key]

    def _decide(self, expr: ast.expr) -> str:
        layout = self.parse(expr)
        if not isinstance(layout, Layout):
            return "keep"
        stmt = self._definition(expr)
        if stmt is not None and self.parser.rebound(stmt) is not None:
            return "keep"  # a use may read another binding: none is followed, so none may change
        if stmt is not None and self._loads(stmt):  # its uses may know the rank (a reshape)
            return "delete" if all(self.status(self._occurrence_of(n)) != "keep" for n in self._loads(stmt)) else "keep"
        if not layout.rank:
            return "keep"
        if stmt is not None:
            return "rewrite"  # read nowhere in this module: it becomes the NamedSharding itself
        if self._sink(expr) is None and self._unstable(layout, expr) is None:
            return "rewrite"
        return "keep"

    # output -----------------------------------------------------------------------------------
    def sharding_text(self, layout: Layout, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
        ctx, at = self.ctx, anchor_name(at)
        named, imports = importer(ctx).reference(NAMED_SHARDING, at=at)
        mesh, more = importer(ctx).reference(MESH, at=at)
        spec, most = importer(ctx).reference(PARTITION_SPEC, at=at)
        imports += more + most
        devices = ctx.text(layout.devices)
        if not layout.ndarray:
            np_name, np_import = importer(ctx).module_reference("numpy", "np", at)
            devices, imports = f"{np_name}.array({devices})", imports + np_import
        for args in layout.reshapes:
            devices += f".reshape({', '.join(ctx.text(a) for a in args)})"
        names = axis_names(layout.rank)
        quoted = ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "")
        entries = [None if d is None else f'"{names[d]}"' for d in layout.dims]
        spec_args = ", ".join(e or "None" for e in entries) if any(entries) else ""
        return f"{named}({mesh}({devices}, ({quoted})), {spec}({spec_args}))", imports

    def _group_fix(self, root: ast.expr) -> Fix:
        """The edits of ``root`` and of every occurrence that reads the assignments it deletes."""
        edits: List[Edit] = []
        imports: Tuple[ImportRef, ...] = ()
        drops: Tuple[ImportRef, ...] = ()
        todo = [root]
        while todo:
            expr = todo.pop()
            layout = self.parse(expr)
            assert isinstance(layout, Layout)
            drops += importer(self.ctx).root_import(layout.base) if layout.base is not None else ()
            if self.status(expr) == "delete":
                stmt = self._definition(expr)
                edits.append(delete_statement(self.ctx, stmt))  # type: ignore[arg-type]  # a "delete" status has a definition
                todo.extend(self._occurrence_of(n) for n in self._loads(stmt))  # type: ignore[arg-type]  # a "delete" status has a definition
            else:
                text, more = self.sharding_text(layout, expr)
                edits.append(self.ctx.replace(expr, text))
                imports += more
        return Fix("safe", edits=tuple(sorted(set(edits), key=lambda e: e.start)), add_imports=tuple(dict.fromkeys(imports)),
                   drop_unused_imports=tuple(dict.fromkeys(drops)))

    def _group_root(self, expr: ast.expr) -> ast.expr:
        """The outermost deleted assignment's value this occurrence's rewrite belongs to."""
        layout = self.parse(expr)
        root = expr
        for stmt in getattr(layout, "assignments", []):
            if self.status(stmt.value) == "delete":
                root = stmt.value
        return root

    def findings(self) -> Iterator[Finding]:
        rule, ctx = self.rule, self.ctx
        reported = set()
        fixes: Dict[int, Fix] = {}
        class_uses = self._class_uses()
        checked = class_uses[0] if class_uses else None  # `isinstance(s, PositionalSharding)`: no rewrite is safe
        for expr in self.occurrences:
            layout = self.parse(expr)
            status = self.status(expr)
            if isinstance(layout, Failure):
                if id(layout.node) not in reported:
                    reported.add(id(layout.node))
                    yield rule.finding(ctx, layout.node, f"{MESSAGE}; {layout.why}", suggestion=GENERIC)
                continue
            assert layout is not None
            if status == "delete":
                continue  # its uses carry the fix
            if status == "rewrite" and checked is not None:
                suggestion = self.sharding_text(layout, expr)[0] if layout.rank else GENERIC
                yield rule.finding(ctx, expr, f"{MESSAGE}; the class itself is used on line {checked.lineno} (a type "
                                   "check sees what this makes): rewrite both by hand", suggestion=suggestion)
                continue
            if status == "rewrite":
                root = self._group_root(expr)
                if id(root) not in fixes:
                    fixes[id(root)] = self._group_fix(root)
                yield rule.finding(ctx, expr, MESSAGE, fixes[id(root)], replacement="jax.sharding.NamedSharding")
                continue
            stmt = self._definition(expr)
            rebound = self.parser.rebound(stmt) if stmt is not None else None
            if rebound is not None:
                suggestion = self.sharding_text(layout, expr)[0] if layout.rank else GENERIC
                yield rule.finding(ctx, expr, f"{MESSAGE}; {rebound}: its uses are not followed, rewrite them "
                                   "with this assignment by hand", suggestion=suggestion)
                continue
            if stmt is not None and self._loads(stmt):
                continue  # kept for a use that is reported
            if not layout.rank:
                yield rule.finding(ctx, expr, f"{MESSAGE}; the rank of the device grid is not visible: reshape it, "
                                   "or write the `NamedSharding` by hand", suggestion=GENERIC)
                continue
            why = self._unstable(layout, expr) if self._sink(expr) is None else self._sink(expr)
            yield rule.finding(ctx, expr, f"{MESSAGE}; {why}", suggestion=self.sharding_text(layout, expr)[0])
        for ref in class_uses:
            yield rule.finding(ctx, ref, f"{MESSAGE}; the class itself is used here", suggestion="jax.sharding.NamedSharding")

    def _class_uses(self) -> List[ast.expr]:
        """References to the class that do not call it (``isinstance(s, PositionalSharding)``)."""
        found = []
        for ref, qual in self.ctx.qualified():
            if qual in LEGACY and not isinstance(self.ctx.parent(ref), ast.Attribute):
                parent = self.ctx.parent(ref)
                if not (isinstance(parent, ast.Call) and parent.func is ref):
                    found.append(ref)
        return found
