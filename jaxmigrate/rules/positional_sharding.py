"""JM703: ``jax.sharding.PositionalSharding`` → ``NamedSharding`` where the device layout is statically known."""

from __future__ import annotations

import ast
from functools import partial
from typing import Dict, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.analysis.values import binding_scope, passed_for, reaching_binding
from jaxmigrate.core.findings import Edit, Finding, Fix, FixSafety, ImportRef
from jaxmigrate.patterns.array_ranks import ValueRanks
from jaxmigrate.patterns.gda import NAMED_SHARDING, PARTITION_SPEC
from jaxmigrate.patterns.positional_layouts import (
    CREATE_DEVICE_MESH,
    LEGACY,
    NDARRAY,
    ONE_DIM,
    OPS,
    Failure,
    Function,
    Layout,
    LayoutParser,
    anchor_name,
    axis_names,
    int_literals,
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
# JAX functions that place their first argument with the sharding they take second (or by this keyword)
PLACERS = {"jax.device_put": "device", "jax.lax.with_sharding_constraint": "shardings"}
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
    `jax.devices()` and the like, and its names must mean the same there. A name rebound as a
    notebook does, cell after cell (`sharding = sharding.reshape(4, 2)`), is followed where
    each read sees one binding: the latest before it on every path to it, in the code of the
    scope that binds it, or in a function that code alone calls (undecorated, or `@jax.jit`),
    every call seeing the same binding. A reshape of a reshape is written as the last one, and
    a grid with every dim replicated or of size 1 (`reshape(8, 1).replicate(0)`) gives `P()`,
    which places a value of any rank, as 0.4.x's replicated sharding did. A sharding whose
    leading dims have size 1 (`reshape(4, 2).replicate(0)` is `(1, 2)`) placed values of that
    much lower rank too, aligned to its trailing dims (an MLP's bias): its spec is written for
    the rank of the values it places, `P("y")` for a vector, where the code shows that rank (a
    creator with a literal shape, `arange`, `reshape`, slices, through names, tuple unpacking,
    `jax.device_put` of a tree, list comprehensions and the returns of the module's functions;
    what every call of a jitted function passes for `in_shardings`); else it is reported with
    the spec of each rank. Imports of
    `PositionalSharding` left unused, or never used, are dropped. Applied for targets that
    deprecate it (0.6.0 and later).

    A sharding passed to a parameter of a function of this module (a plain `def`, bound once,
    that the module only calls, each call giving that parameter a whole grid of one rank, as
    in `distributed_mul(a, b, sharding)`) is rewritten with the function: the calls pass the
    `NamedSharding`, the function passes it on as it is and writes `sharding.replicate(1)` as
    `NamedSharding(sharding.mesh, P("x", None))`. That fix is unsafe, as are the rewrites that
    go with it: the function then wants a `NamedSharding`, also from callers in other modules.

    Reported, with the `NamedSharding` to write where it is known: a positional sharding passed
    to any other function or used as a value (`.shape`, `isinstance`), a grid of unknown rank,
    a `reshape` after `replicate` or `transpose`, arguments that are not literals. Passed to a
    function of the module that calls `.replicate` (or `.reshape`, `.T`) on it, it says to pass
    the `NamedSharding` and to make the others there from its `.mesh`. A name whose reads do
    not each see one known binding (rebound in an `if` or a loop and read after it, rebound
    and read from a function that may run at any time), declared `global` or `nonlocal`,
    deleted with `del` or set in a class body is reported at that assignment, which is left as
    it is; where its uses reshape or replicate it, the suggestion is the `Mesh` to assign it.

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
    unsafe_note = ("a function of the module that replicates a sharding it is given is rewritten to take a "
                   "NamedSharding, with every call of it here: a caller elsewhere that passes a PositionalSharding "
                   "breaks")
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
                out = f(np.ones((8, 8)))
            """),  # noqa: E501 - the fixer's output, verbatim
            snippet("""
                import jax
                import numpy as np

                f = jax.jit(lambda a: a * 2, in_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec(None, "y")), out_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec()))
                out = f(np.ones((8, 8)))
            """),  # noqa: E501 - the fixer's output, verbatim
            title="`replicate(0)` and `replicate()` in `jax.jit`, called with a matrix",
        ),
        Example(
            snippet("""
                import jax
                import numpy as np

                s = jax.sharding.PositionalSharding(jax.devices()).reshape(4, 2)
                w = jax.device_put(np.ones((8, 8)), s.replicate(0))
                b = jax.device_put(np.zeros(8), s.replicate(0))
            """),
            snippet("""
                import jax
                import numpy as np

                w = jax.device_put(np.ones((8, 8)), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec(None, "y")))
                b = jax.device_put(np.zeros(8), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec("y")))
            """),  # noqa: E501 - the fixer's output, verbatim
            title="a leading dim of size 1 placed a vector too (0.4.x aligned the trailing dims)",
        ),
        Example(
            snippet("""
                import jax

                s = jax.sharding.PositionalSharding(jax.devices()).reshape(4, 2)

                def place(bias):
                    return jax.device_put(bias, s.replicate(0))
            """),
            flagged=True,
            title="a leading dim of size 1, and a value of unknown rank, is reported",
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
                from jax.experimental import mesh_utils
                from jax.sharding import PositionalSharding

                sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))
                sharding = sharding.reshape(4, 2)
                x = jax.numpy.zeros((8, 8))
                w = jax.device_put(x, sharding.replicate(0).T)
            """),
            snippet("""
                import jax
                from jax.experimental import mesh_utils

                x = jax.numpy.zeros((8, 8))
                w = jax.device_put(x, jax.sharding.NamedSharding(jax.sharding.Mesh(mesh_utils.create_device_mesh((8,)).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec("y", None)))
            """),  # noqa: E501 - the fixer's output, verbatim
            title="a name rebound cell after cell is followed",
        ),
        Example(
            snippet("""
                import jax
                from jax.sharding import PositionalSharding

                def distributed_mul(a, b, sharding):
                    return jax.device_put(a, sharding.replicate(1)) @ jax.device_put(b, sharding.replicate(0))

                x = jax.numpy.ones((8, 8))
                y = distributed_mul(x, x, PositionalSharding(jax.devices()).reshape(4, 2))
            """),
            snippet("""
                import jax
                import numpy as np

                def distributed_mul(a, b, sharding):
                    return jax.device_put(a, jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec("x", None))) @ jax.device_put(b, jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec(None, "y")))

                x = jax.numpy.ones((8, 8))
                y = distributed_mul(x, x, jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), jax.sharding.PartitionSpec("x", "y")))
            """),  # noqa: E501 - the fixer's output, verbatim
            unsafe=True,
            title="a function of the module that replicates the sharding it is given",
        ),
        Example(
            snippet("""
                import jax

                def shard(x):
                    s = jax.sharding.PositionalSharding(jax.devices())
                    if x.ndim == 2:
                        s = s.reshape(4, 2).replicate(1)
                    return jax.device_put(x, s)
            """),
            snippet("""
                import jax

                def shard(x):
                    s = jax.sharding.PositionalSharding(jax.devices())
                    if x.ndim == 2:
                        s = s.reshape(4, 2).replicate(1)
                    return jax.device_put(x, s)
            """),
            flagged=True,
            title="a name rebound in a branch is reported where it is assigned a `PositionalSharding`",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        yield from _Plan(self, ctx).findings()


def _grid_sizes(layout: Layout, parser: LayoutParser) -> Optional[List[int]]:
    """The sizes of the device grid's dims, where its last reshape gives them as literals, or, with
    none, the grid itself (``create_device_mesh((1, 8))``)."""
    if not layout.reshapes:
        return None if layout.function is not None else parser.grid_sizes(layout.devices)
    last = layout.reshapes[-1]
    if len(last) == 1 and isinstance(last[0], (ast.Tuple, ast.List)):  # reshape((8, 1))
        return int_literals(last[0])
    return int_literals(ast.Tuple(elts=last, ctx=ast.Load()))


class _Plan:
    """Every use of PositionalSharding in one module: what is rewritten, deleted or reported."""

    def __init__(self, rule: Rule, ctx: FileContext) -> None:
        self.rule, self.ctx = rule, ctx
        self.parser = LayoutParser(ctx)
        self.parse = self.parser.parse
        self.ranks = ValueRanks(ctx, partial(self.parser.arguments_for, jitted=True))  # no cycle through self
        self._status: Dict[int, str] = {}  # id(occurrence) -> "rewrite" | "delete" | "keep"
        self._loads_of: Dict[int, List[ast.Name]] = {}  # id(statement) -> ``_loads``'s answer
        self._blockers: Dict[Tuple[int, str], Optional[ast.expr]] = {}  # see ``_parameter_blocker``
        self._functions: Dict[int, Function] = {}  # id(def) -> def, of the parameters ``_parameter_key`` names
        self.occurrences: List[ast.expr] = [e for e in ctx.nodes(ast.Call) + ctx.nodes(ast.Name) + ctx.nodes(ast.Attribute)
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
        if node is expr and id(expr) in self.parser.passed_to:
            return None  # to a parameter of this module's function, which is rewritten with it
        arg = node
        if isinstance(parent, ast.keyword):
            node, parent = parent, ctx.parent(parent)
        if isinstance(parent, ast.Call) and node is not parent.func:
            callee = ctx.qualname(parent.func)
            if callee == PARTIAL and parent.args and node is not parent.args[0]:
                callee = ctx.qualname(parent.args[0])
            if callee in SINKS:
                return None
            name = callee or ctx.text(parent.func)
            param = self.parser.parameter_of(parent, arg) if isinstance(arg, ast.expr) else None
            used = self._used_as_positional(*param) if param is not None else None
            if param is not None and used is not None:
                return (f"passed to `{name}`, which calls `{used}` on its parameter `{param[1]}` (a `NamedSharding` "
                        f"has none): pass this `NamedSharding`, and there write each sharding made from `{param[1]}` "
                        f"as `NamedSharding({param[1]}.mesh, P(...))`")
            return f"passed to `{name}`, which may rely on a `PositionalSharding` (check that a `NamedSharding` fits)"
        if isinstance(parent, ast.Attribute):
            return f"its `.{parent.attr}` is read: a `NamedSharding` has other attributes"
        return "used as a value where a `NamedSharding` may not fit"

    def _used_as_positional(self, fn: ast.AST, param: str) -> Optional[str]:
        """The first ``param.replicate``-like method ``fn`` calls on its parameter, if any."""
        for node in ast.walk(fn):
            if (isinstance(node, ast.Attribute) and node.attr in (*OPS, "T") and isinstance(node.value, ast.Name)
                    and node.value.id == param and reaching_binding(self.ctx, param, node.value) is fn):
                return f".{node.attr}" + ("" if node.attr == "T" else "(...)")
        return None

    # a function's parameter, rewritten with the arguments its calls pass ---------------------
    def _parameter_keys(self, expr: ast.expr) -> List[Tuple[int, str]]:
        """The (function, parameter) pairs whose rewrite ``expr`` takes part in: the one it is made
        from, the one it is passed to (a parameter passed on to another function: both)."""
        keys = []
        layout = self.parse(expr)
        if isinstance(layout, Layout) and layout.function is not None:
            self._functions[id(layout.function)] = layout.function
            keys.append((id(layout.function), layout.devices.id))  # type: ignore[attr-defined]  # a parameter's layout has its name
        passed = self.parser.passed_to.get(id(expr))
        if passed is not None:
            self._functions[id(passed[0])] = passed[0]
            keys.append((id(passed[0]), passed[1]))
        return keys

    def _parameter_blocker(self, key: Tuple[int, str]) -> Optional[ast.expr]:
        """An argument of the calls, or a use of the parameter, that cannot be rewritten (then
        none is), else None. Assignments of the function that read the parameter follow their
        reads, as any assignment does. An occurrence that goes with two parameters (passed on
        from one to the other) is rewritten with both or neither."""
        if key not in self._blockers:
            self._blockers[key] = None
            members = [e for e in self.occurrences if key in self._parameter_keys(e) and self._definition(e) is None]
            blocker: Optional[ast.expr] = next((e for e in members if self._decide(e) == "keep"), None)
            for other in {k for e in members for k in self._parameter_keys(e)} - {key}:
                blocker = blocker or self._parameter_blocker(other)
            self._blockers[key] = blocker
        return self._blockers[key]

    def _unchanged(self, expr: ast.expr, layout: Layout) -> bool:
        """A parameter passed on as it is: its callers pass it a ``NamedSharding`` of the whole grid."""
        return layout.function is not None and expr is layout.devices

    def _loads(self, stmt: ast.Assign) -> List[ast.Name]:
        found = self._loads_of.get(id(stmt))
        if found is None:
            target: ast.Name = stmt.targets[0]  # type: ignore[assignment]  # the definition of a Name
            found = self._loads_of[id(stmt)] = [n for n in self.ctx.names_bound_by(target.id, binding_scope(self.ctx, target))
                                                if isinstance(n.ctx, ast.Load) and self.parser.assignment(n) is stmt]
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
                if not (all(b.kind == "import" for b in here) or len(here) == 1 and isinstance(here[0].node, STABLE_BINDERS)
                        or self._same_binding(name, at)):
                    return f"`{name.id}` is assigned more than once"
        return None

    def _same_binding(self, name: ast.Name, at: ast.AST) -> bool:
        """Whether a name bound more than once is read at ``at`` from the binding it sees where it stands."""
        seen = reaching_binding(self.ctx, name.id, name)
        return isinstance(seen, STABLE_BINDERS) and seen is reaching_binding(self.ctx, name.id, at)

    def status(self, expr: ast.expr) -> str:
        """"rewrite" (replaced by its NamedSharding), "delete" (an assignment nothing else reads) or "keep"."""
        key = id(expr)
        if key not in self._status:
            self._status[key] = "keep"
            decided = self._decide(expr)
            if decided != "keep" and any(self._parameter_blocker(k) is not None for k in self._parameter_keys(expr)):
                decided = "keep"
            self._status[key] = decided
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
        if not layout.rank or self._rank_gap(expr, layout) is not None:
            return "keep"
        if stmt is not None:
            return "rewrite"  # read nowhere in this module: it becomes the NamedSharding itself
        if self._sink(expr) is None and self._unstable(layout, expr) is None:
            return "rewrite"
        return "keep"

    # the rank of the value placed -----------------------------------------------------------
    def _leading_ones(self, layout: Layout) -> int:
        """How many leading sharding dims have size 1 (0.4.x also placed a value of that much
        lower rank with it, aligning the trailing dims)."""
        sizes = _grid_sizes(layout, self.parser)
        count = 0
        for d in layout.dims:
            if not (d is None or sizes is not None and d < len(sizes) and sizes[d] == 1):
                break
            count += 1
        return count

    def _placed_values(self, expr: ast.expr, depth: int = 0) -> Optional[List[ast.expr]]:
        """The values ``expr`` places, where the code shows them all: the first argument of
        ``jax.device_put(value, expr)`` or ``with_sharding_constraint``; for ``in_shardings`` of a
        ``jax.jit`` (its ``i``-th entry, or a single sharding for every argument), what each call
        of the jitted function passes; passed to a function of this module, what it places with
        its parameter (its own parameters read as this call's arguments). Else None."""
        ctx = self.ctx
        parent, index = ctx.parent(expr), None
        call = parent.value if isinstance(parent, ast.keyword) else parent
        helper = self.parser.parameter_of(call, expr) if isinstance(call, ast.Call) and depth < 3 else None
        if helper is not None:
            return self._placed_through(call, *helper, depth)  # type: ignore[arg-type]  # a call: helper found it
        if isinstance(parent, (ast.Tuple, ast.List)):
            index = next(i for i, e in enumerate(parent.elts) if e is expr)
            expr, parent = parent, ctx.parent(parent)
        keyword = None
        if isinstance(parent, ast.keyword):
            keyword, parent = parent.arg, ctx.parent(parent)
        if not isinstance(parent, ast.Call):
            return None
        callee = ctx.qualname(parent.func)
        if callee == PARTIAL and parent.args:
            callee = ctx.qualname(parent.args[0])
        elif callee in PLACERS and index is None and parent.args and not isinstance(parent.args[0], ast.Starred):
            second = len(parent.args) > 1 and parent.args[1] is expr
            return [parent.args[0]] if (keyword == PLACERS[callee] if keyword is not None else second) else None
        if callee != "jax.jit" or keyword != "in_shardings":
            return None
        values = []
        for call in self._calls_of_jitted(parent) or ():
            if any(isinstance(a, ast.Starred) for a in call.args) or call.keywords:
                return None
            if index is not None and index >= len(call.args):
                return None
            values += call.args if index is None else [call.args[index]]
        return values or None

    def _placed_through(self, call: ast.Call, fn: Function, param: str, depth: int) -> Optional[List[ast.expr]]:
        """What ``fn`` places with its parameter ``param`` (every read of it placing), its
        parameters read as the arguments ``call`` passes."""
        ctx = self.ctx
        reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load)
                 and reaching_binding(ctx, param, n) is fn]
        values: List[ast.expr] = []
        for read in reads:
            placed = self._placed_values(read, depth + 1)
            if placed is None:
                return None
            for value in placed:
                if isinstance(value, ast.Name) and reaching_binding(ctx, value.id, value) is fn:
                    mapped = passed_for(fn, call, value.id)
                    if mapped is None:
                        return None  # a *args, **kwargs or keyword-only parameter, or not shown
                    value = mapped
                values.append(value)
        return values or None

    def _calls_of_jitted(self, jit: ast.Call) -> Optional[List[ast.Call]]:
        """The calls of what ``g = jax.jit(f, ...)`` or ``@partial(jax.jit, ...)`` makes, where
        the module only calls it."""
        ctx = self.ctx
        holder = ctx.parent(jit)
        if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
            identifier, scope = holder.targets[0].id, binding_scope(ctx, holder.targets[0])
        elif isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)) and holder.decorator_list == [jit]:
            inner = next((s for s in ctx.resolver.scopes if s.node is holder), None)
            identifier, scope = holder.name, inner.parent if inner is not None else None
        else:
            return None
        if scope is None or len(scope.bindings.get(identifier, [])) != 1:
            return None
        calls = []
        for name in ctx.names_bound_by(identifier, scope):
            if isinstance(name.ctx, ast.Store):
                continue
            call = ctx.parent(name)
            if not (isinstance(call, ast.Call) and call.func is name):
                return None
            calls.append(call)
        return calls

    def _value_rank(self, layout: Layout, at: ast.AST, rank: int) -> int:
        """The rank of the value ``at`` places where it is lower than the sharding's and 0.4.x
        took it (leading dims of size 1), else the sharding's own ``rank``."""
        lead = self._leading_ones(layout) if rank == len(layout.dims) else 0
        seen = self._placed_rank(at) if lead and isinstance(at, ast.expr) else None
        return seen if seen is not None and rank - lead <= seen < rank else rank

    def _placed_rank(self, expr: ast.expr) -> Optional[int]:
        """The one rank of every value ``expr`` places, where it is visible."""
        values = self._placed_values(expr)
        ranks = {self.ranks.rank(v) for v in values or ()}
        return ranks.pop() if len(ranks) == 1 and None not in ranks else None

    def _rank_gap(self, expr: ast.expr, layout: Layout) -> Optional[str]:
        """Why the spec cannot be written: its leading dims have size 1, so 0.4.x placed values of
        lower rank with it too, and the rank of the value is not visible. Else None."""
        rank = len(layout.dims)
        lead = self._leading_ones(layout)
        if not lead or lead == rank:
            return None
        if self._placed_rank(expr) is not None:
            return None
        names = axis_names(layout.rank)
        entries = [None if d is None else f'"{names[d]}"' for d in layout.dims]
        specs = [f"`P({', '.join(e or 'None' for e in entries[k:])})` for a value of rank {rank - k}" for k in range(lead + 1)]
        placed = "the rank of the values it places is not visible"
        return (f"its leading dim{'s have' if lead > 1 else ' has'} size 1, so 0.4.x also placed values of lower rank "
                f"with it, and {placed}: write {', '.join(specs[:-1])} or {specs[-1]}")

    # output -----------------------------------------------------------------------------------
    def _reshaped_or_replicated(self, stmt: ast.Assign) -> bool:
        """Whether a read of the name ``stmt`` assigns calls ``.reshape``, ``.replicate``, ``.transpose`` or ``.T``."""
        target: ast.Name = stmt.targets[0]  # type: ignore[assignment]  # a definition assigns a Name
        return any(isinstance(n.ctx, ast.Load) and isinstance(self.ctx.parent(n), ast.Attribute)
                   and self.ctx.parent(n).attr in (*OPS, "T")  # type: ignore[union-attr]  # an Attribute
                   for n in self.ctx.names_bound_by(target.id, binding_scope(self.ctx, target)))

    def mesh_text(self, layout: Layout, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
        """The ``Mesh`` of the device grid, with one axis name per dim."""
        ctx, at = self.ctx, anchor_name(at)
        mesh, imports = importer(ctx).reference(MESH, at=at)
        devices = ctx.text(layout.devices)
        if not layout.ndarray:
            np_name, np_import = importer(ctx).module_reference("numpy", "np", at)
            devices, imports = f"{np_name}.array({devices})", imports + np_import
        for args in layout.reshapes[-1:]:  # a reshape of a reshape is the last one (numpy keeps the order)
            devices += f".reshape({', '.join(ctx.text(a) for a in args)})"
        names = axis_names(layout.rank)
        quoted = ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "")
        return f"{mesh}({devices}, ({quoted}))", imports

    def sharding_text(self, layout: Layout, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
        ctx, occurrence, at = self.ctx, at, anchor_name(at)
        named, imports = importer(ctx).reference(NAMED_SHARDING, at=at)
        spec, more = importer(ctx).reference(PARTITION_SPEC, at=at)
        imports += more
        names = axis_names(layout.rank)
        entries = [None if d is None else f'"{names[d]}"' for d in layout.dims]
        sizes = _grid_sizes(layout, self.parser)
        if sizes is not None and all(d is None or sizes[d] == 1 for d in layout.dims):
            entries = []  # every dim on one device: replicated, as 0.4.x took it (whatever the value's rank)
        entries = entries[len(entries) - self._value_rank(layout, occurrence, len(entries)):]
        spec_args = ", ".join(e or "None" for e in entries) if any(entries) else ""
        if layout.function is not None:
            return f"{named}({ctx.text(layout.devices)}.mesh, {spec}({spec_args}))", imports
        mesh, most = self.mesh_text(layout, at)
        return f"{named}({mesh}, {spec}({spec_args}))", imports + most

    def _groups(self) -> Dict[int, Tuple[Fix, str]]:
        """The fix of each rewritten occurrence: one for all the occurrences that must change
        together (those that read an assignment it deletes, those passed to a function's parameter
        and those made from that parameter in the function)."""
        leader: Dict[object, object] = {}

        def find(key: object) -> object:
            while leader.setdefault(key, key) != key:
                key = leader[key]
            return key

        members = [e for e in self.occurrences if self.status(e) != "keep"]
        for expr in members:
            layout = self.parse(expr)
            assert isinstance(layout, Layout)
            for stmt in layout.assignments:
                if self.status(stmt.value) == "delete":
                    leader[find(id(expr))] = find(id(stmt.value))
            for parameter in self._parameter_keys(expr):
                leader[find(id(expr))] = find(parameter)
        grouped: Dict[object, List[ast.expr]] = {}
        for expr in members:
            grouped.setdefault(find(id(expr)), []).append(expr)
        fixes: Dict[int, Tuple[Fix, str]] = {}
        for group in grouped.values():
            fixed = self._group_fix(group)
            fixes.update((id(expr), fixed) for expr in group)
        return fixes

    def _group_fix(self, group: List[ast.expr]) -> Tuple[Fix, str]:
        """The group's fix, and what the message says of it."""
        edits: List[Edit] = []
        imports: Tuple[ImportRef, ...] = ()
        drops: Tuple[ImportRef, ...] = ()
        safety: FixSafety = "safe"
        functions: Dict[Tuple[str, str], None] = {}
        for expr in group:
            layout = self.parse(expr)
            assert isinstance(layout, Layout)
            drops += importer(self.ctx).root_import(layout.base) if layout.base is not None else ()
            if self.status(expr) == "delete":
                edits.append(delete_statement(self.ctx, self._definition(expr)))  # type: ignore[arg-type]  # a "delete" status has a definition
            elif not self._unchanged(expr, layout):
                text, more = self.sharding_text(layout, expr)
                edits.append(self.ctx.replace(expr, text))
                imports += more
                if layout.function is not None:  # the function takes a NamedSharding now, from callers elsewhere too
                    safety = "unsafe"
                    functions[(layout.function.name, self.ctx.text(layout.devices))] = None
        fix = Fix(safety, edits=tuple(sorted(set(edits), key=lambda e: e.start)),
                  add_imports=tuple(dict.fromkeys(imports)), drop_unused_imports=tuple(dict.fromkeys(drops)))
        if not functions:
            return fix, ""
        names = " and ".join(f"`{name}` (as `{param}`)" for name, param in functions)
        verbs = ("take", "make") if len(functions) > 1 else ("takes", "makes")
        return fix, (f"; {names} then {verbs[0]} a `NamedSharding` and {verbs[1]} the others from its mesh, from "
                     "callers in other modules too")

    def findings(self) -> Iterator[Finding]:
        rule, ctx = self.rule, self.ctx
        reported = set()
        fixes = self._groups()
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
            if status == "delete" or status == "rewrite" and self._unchanged(expr, layout):
                continue  # its uses carry the fix; a parameter passed on needs none
            if status == "rewrite" and checked is not None:
                suggestion = self.sharding_text(layout, expr)[0] if layout.rank else GENERIC
                yield rule.finding(ctx, expr, f"{MESSAGE}; the class itself is used on line {checked.lineno} (a type "
                                   "check sees what this makes): rewrite both by hand", suggestion=suggestion)
                continue
            if status == "rewrite":
                fix, note = fixes[id(expr)]
                yield rule.finding(ctx, expr, MESSAGE + note, fix, replacement="jax.sharding.NamedSharding")
                continue
            stmt = self._definition(expr)
            rebound = self.parser.rebound(stmt) if stmt is not None else None
            if rebound is not None:
                assert stmt is not None
                target = ctx.text(stmt.targets[0])
                if layout.rank and layout.dims == list(range(layout.rank)) and self._reshaped_or_replicated(stmt):
                    yield rule.finding(ctx, expr, f"{MESSAGE}; {rebound}: its uses are not followed, and some reshape or "
                                       f"replicate it (a `NamedSharding` cannot): assign `{target}` the mesh and write each "
                                       f"use as `NamedSharding({target}, P(...))` by hand",
                                       suggestion=self.mesh_text(layout, expr)[0])
                    continue
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
            why = why or self._rank_gap(expr, layout)
            blocked = [k for k in self._parameter_keys(expr) if self._parameter_blocker(k) is not None]
            if why is None and blocked:
                why = self._parameter_why(expr, blocked[0])
            yield rule.finding(ctx, expr, f"{MESSAGE}; {why}", suggestion=self.sharding_text(layout, expr)[0])
        for ref in class_uses:
            yield rule.finding(ctx, ref, f"{MESSAGE}; the class itself is used here", suggestion="jax.sharding.NamedSharding")
        yield from self._unused_imports()

    def _unused_imports(self) -> Iterator[Finding]:
        """``from jax.sharding import PositionalSharding`` where the module never names it: dropped
        (it fails from JAX 0.7.0 on). Not where the module may export it (``__all__``, ``__init__.py``)."""
        ctx = self.ctx
        if ctx.path.endswith("__init__.py") or "__all__" in ctx.resolver.module_scope.bindings:
            return
        for stmt in ctx.resolver.imports:
            if not isinstance(stmt, ast.ImportFrom) or stmt.level or not stmt.module:
                continue
            for alias in stmt.names:
                if f"{stmt.module}.{alias.name}" in LEGACY and not ctx.names(alias.asname or alias.name):
                    edit = importer(ctx).drop(stmt, [alias])
                    if edit is not None:
                        yield self.rule.finding(ctx, alias, "`PositionalSharding` is deprecated since JAX 0.6.0 and removed "
                                                "in 0.7.0, where importing it fails; nothing here uses it: the import goes",
                                                Fix("safe", edits=(edit,)))

    def _parameter_why(self, expr: ast.expr, key: Tuple[int, str]) -> str:
        """Why an occurrence that could be rewritten is not: it goes with a function's parameter that cannot."""
        blocker = self._parameter_blocker(key)
        assert blocker is not None
        layout = self.parse(blocker)
        assert isinstance(layout, Layout)
        why = self._sink(blocker) or self._unstable(layout, blocker) or self._rank_gap(blocker, layout) \
            or "the rank of the values it places is not visible"
        function = self._functions[key[0]].name
        own = self.parse(expr)
        made = isinstance(own, Layout) and own.function is not None
        return (f"{'made from' if made else 'passed to'} the parameter `{key[1]}` of `{function}`, which is rewritten only "
                f"with its other uses and what every call passes, and line {blocker.lineno} cannot be: {why}")

    def _class_uses(self) -> List[ast.expr]:
        """References to the class that do not call it (``isinstance(s, PositionalSharding)``)."""
        found = []
        for ref, qual in self.ctx.qualified():
            if qual in LEGACY and not isinstance(self.ctx.parent(ref), ast.Attribute):
                parent = self.ctx.parent(ref)
                if not (isinstance(parent, ast.Call) and parent.func is ref):
                    found.append(ref)
        return found
