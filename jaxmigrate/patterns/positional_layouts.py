"""PositionalSharding layouts as plain data: what a chain of ``PositionalSharding(devices)``,
``.reshape``, ``.replicate`` and ``.transpose`` computes (the device grid and, per sharding dim, its
mesh axis), and ``LayoutParser``, which reads them from a module for JM703: through names, each
read to the assignment it sees (``sharding = sharding.reshape(4, 2)`` included), and through the
parameters of the module's functions that every call gives a whole grid of one rank."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import reaching_binding, why_not_followed

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
LEGACY = ("jax.sharding.PositionalSharding", "jax.experimental.sharding.PositionalSharding",
          "jax._src.sharding_impls.PositionalSharding")
OPS = ("reshape", "replicate", "transpose")
ONE_DIM = ("jax.devices", "jax.local_devices")
NDARRAY = ("numpy.array", "numpy.asarray")
CREATE_DEVICE_MESH = "jax.experimental.mesh_utils.create_device_mesh"


def axis_names(rank: int) -> Tuple[str, ...]:
    return tuple(("x", "y", "z")[i] if i < 3 else f"a{i}" for i in range(rank))


@dataclass
class Layout:
    """What a chain computes: the device grid's source and, per sharding dim, its mesh axis."""

    devices: ast.expr  # the argument of PositionalSharding(...)
    ndarray: bool  # whether ``devices`` is already a numpy array
    reshapes: List[List[ast.expr]] = field(default_factory=list)
    rank: int = 0  # of the device grid (the mesh)
    dims: List[Optional[int]] = field(default_factory=list)  # mesh axis per sharding dim, None: replicated
    inherited: List[ast.expr] = field(default_factory=list)  # source pieces that come from an assignment
    assignments: List[ast.Assign] = field(default_factory=list)  # the `name = chain` statements read
    base: Optional[ast.expr] = None  # the PositionalSharding reference
    # a parameter's layout (``devices`` is its name): ``function``'s callers pass it a whole grid
    # of ``rank`` dims, which they give as a NamedSharding once rewritten (its mesh: ``devices.mesh``)
    function: Optional[Function] = None


@dataclass
class Failure:
    why: str
    node: ast.AST  # where to report it


Parsed = Union[Layout, Failure, None]


def anchor_name(expr: ast.AST) -> ast.AST:
    """A name inside ``expr``: the resolver knows the scope of names only."""
    return next((n for n in ast.walk(expr) if isinstance(n, ast.Name)), expr)


def copy_layout(layout: Layout, **changes) -> Layout:
    values = {f: getattr(layout, f) for f in layout.__dataclass_fields__}
    values.update(changes)
    return Layout(**values)


def constant_or(node: Optional[ast.expr], default):
    if isinstance(node, ast.Constant):
        return node.value
    return default


def int_literals(node: ast.expr) -> Optional[List[int]]:
    """``1``, ``-1`` or a tuple/list of those, as a list of ints; None for anything else."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out = []
    for item in items:
        sign = 1
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            sign, item = -1, item.operand
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        out.append(sign * item.value)
    return out


def literal_length(node: Optional[ast.expr]) -> Optional[int]:
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    return None


def shape_length(call: ast.Call) -> Optional[int]:
    """The number of dims a ``.reshape(...)`` call asks for, where it is visible."""
    if any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
        return None
    if len(call.args) > 1:
        return len(call.args)
    return shape_rank(call.args[0])


def shape_rank(shape: Optional[ast.expr]) -> Optional[int]:
    """The number of dims a shape argument gives (``8``: 1, ``(4, 2)``: 2), where it is visible."""
    if shape is None:
        return None
    if int_literals(shape) is not None and not isinstance(shape, (ast.Tuple, ast.List)):
        return 1
    return literal_length(shape)


class LayoutParser:
    """Parses the positional-sharding chains of one module (each expression once)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._parsed: Dict[int, Parsed] = {}
        self._rebound_of: Dict[int, Optional[str]] = {}  # id(statement) -> ``rebound``'s answer
        self._callers: Dict[Tuple[int, str, bool], Optional[List[ast.expr]]] = {}  # see ``arguments_for``
        #: id(argument of a call) -> the function and parameter it is passed to (where ``arguments_for`` knows them all)
        self.passed_to: Dict[int, Tuple[Function, str]] = {}

    def rebound(self, stmt: ast.Assign) -> Optional[str]:
        """Why the name ``stmt`` assigns may hold something else at a use that is not followed to
        it (its uses are then not followed, and ``stmt`` is not rewritten in place), or None.
        Once per statement: every use of a module-level ``mesh`` in every function asks it."""
        key = id(stmt)
        if key not in self._rebound_of:
            self._rebound_of[key] = why_not_followed(self.ctx, stmt)
        return self._rebound_of[key]

    def assignment(self, name: ast.Name) -> Optional[ast.Assign]:
        """The ``name = value`` statement a read sees, where it is known."""
        stmt = reaching_binding(self.ctx, name.id, name)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return stmt
        return None

    def parameter_of(self, call: ast.Call, arg: ast.expr) -> Optional[Tuple[Function, str]]:
        """The function of this module (a plain ``def`` the call names) and its parameter that
        ``arg`` binds, where the call says which, else None."""
        if not isinstance(call.func, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        fn = reaching_binding(self.ctx, call.func.id, call.func)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != call.func.id:
            return None
        positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if arg in call.args:
            index = next(i for i, a in enumerate(call.args) if a is arg)
            return (fn, positional[index]) if index < len(positional) else None
        keyword = next((k for k in call.keywords if k.value is arg), None)
        names = positional[len(fn.args.posonlyargs):] + [a.arg for a in fn.args.kwonlyargs]
        return (fn, keyword.arg) if keyword is not None and keyword.arg in names else None

    def arguments_for(self, fn: Function, param: str, jitted: bool = False) -> Optional[List[ast.expr]]:
        """What each call of ``fn`` passes to ``param``, where those calls are all of its uses:
        ``fn`` is a plain ``def`` of this module, bound once and not decorated (``jitted``: or
        decorated with ``jax.jit`` alone, which passes the arguments on), ``param`` has no
        default and the module only calls ``fn`` (no ``*args``, no ``**kwargs``), each call
        giving ``param``. Else None."""
        key = (id(fn), param, jitted)
        if key in self._callers:
            return self._callers[key]
        self._callers[key] = None
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        with_default = {a.arg for a in positional[len(positional) - len(args.defaults):]}
        with_default |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        resolver = self.ctx.resolver
        inner = next((s for s in resolver.scopes if s.node is fn), None)
        defining = inner.parent if inner is not None else None
        decorated = fn.decorator_list and not (jitted and len(fn.decorator_list) == 1 and self._is_jit(fn.decorator_list[0]))
        if (decorated or param in with_default or defining is None or defining.kind == "class"
                or len(defining.bindings.get(fn.name, [])) != 1):
            return None
        found = []
        for name in self.ctx.names_bound_by(fn.name, defining):
            call = self.ctx.parent(name)
            if not (isinstance(call, ast.Call) and call.func is name and not any(k.arg is None for k in call.keywords)):
                return None
            arg = next((a for a in call.args if self.parameter_of(call, a) == (fn, param)), None)
            arg = arg or next((k.value for k in call.keywords if k.arg == param and self.parameter_of(call, k.value)), None)
            if arg is None:
                return None
            found.append(arg)
        self._callers[key] = found or None
        return self._callers[key]

    def _is_jit(self, decorator: ast.expr) -> bool:
        """``@jax.jit``, ``@jax.jit(...)`` or ``@partial(jax.jit, ...)``."""
        if isinstance(decorator, ast.Call):
            if self.ctx.qualname(decorator.func) == "functools.partial" and decorator.args:
                return self.ctx.qualname(decorator.args[0]) == "jax.jit"
            decorator = decorator.func
        return self.ctx.qualname(decorator) == "jax.jit"

    def parse(self, expr: ast.expr, depth: int = 0) -> Parsed:
        """The layout a positional-sharding chain computes, why it cannot be known, or None if
        ``expr`` is no such chain."""
        key = id(expr)
        if key not in self._parsed:
            self._parsed[key] = None  # a cycle is no chain
            self._parsed[key] = self._parse(expr, depth)
        return self._parsed[key]

    def _parse(self, expr: ast.expr, depth: int) -> Parsed:
        ctx = self.ctx
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            inner = self.parse(expr.value, depth)
            return self._transpose(inner, [], expr) if inner is not None else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in OPS:
            inner = self.parse(expr.func.value, depth)
            if inner is None or isinstance(inner, Failure):
                return inner
            return self._apply(inner, expr)
        if isinstance(expr, ast.Call) and ctx.qualname(expr.func) in LEGACY:
            return self._base(expr)
        if isinstance(expr, ast.Name) and isinstance(expr.ctx, ast.Load) and depth < 8:
            bound = reaching_binding(ctx, expr.id, expr)
            if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)) and bound is ctx.resolver.lookup(
                    expr.id, ctx.resolver.scope_of(expr)).node:  # type: ignore[union-attr]  # a name with a binding
                return self._parameter(expr, bound, depth)
            stmt = self.assignment(expr)
            if stmt is None or self.rebound(stmt) is not None:
                return None
            inner = self.parse(stmt.value, depth + 1)
            if not isinstance(inner, Layout):
                return inner
            return copy_layout(inner, inherited=[*inner.inherited, inner.devices, *[a for r in inner.reshapes for a in r]],
                         assignments=[stmt, *inner.assignments])
        return None

    def _parameter(self, name: ast.Name, fn: Function, depth: int) -> Optional[Layout]:
        """A parameter every call of its function gives a whole grid (no ``replicate`` or
        transpose) of one rank, as the grid of that rank; else None."""
        passed = self.arguments_for(fn, name.id)
        if passed is None:
            return None
        ranks = set()
        for arg in passed:
            layout = self.parse(arg, depth + 1)
            if not isinstance(layout, Layout) or not layout.rank or layout.dims != list(range(layout.rank)):
                return None
            ranks.add(layout.rank)
        if len(ranks) != 1:
            return None
        for arg in passed:
            self.passed_to[id(arg)] = (fn, name.id)
        rank = ranks.pop()
        return Layout(name, True, rank=rank, dims=list(range(rank)), function=fn)

    def _base(self, call: ast.Call) -> Union[Layout, Failure]:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return Failure("`PositionalSharding` takes the device grid alone here: write the `NamedSharding` by hand", call)
        devices = call.args[0]
        rank, ndarray = self._grid_rank(devices, 0)
        return Layout(devices, ndarray, rank=rank or 0, dims=list(range(rank or 0)), base=call.func)

    def grid_sizes(self, node: ast.expr, depth: int = 0) -> Optional[List[int]]:
        """The sizes of a device grid's dims where the source gives them as literals:
        ``create_device_mesh((1, 8))``, ``np.array(...).reshape(1, 8)``, a name assigned one."""
        if isinstance(node, ast.Call):
            if self.ctx.qualname(node.func) == CREATE_DEVICE_MESH:
                shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mesh_shape"), None)
                return int_literals(shape) if isinstance(shape, (ast.Tuple, ast.List)) else None
            if isinstance(node.func, ast.Attribute) and node.func.attr == "reshape" and node.args and not node.keywords:
                shape = node.args[0] if len(node.args) == 1 else ast.Tuple(elts=node.args, ctx=ast.Load())
                return int_literals(shape) if isinstance(shape, (ast.Tuple, ast.List)) else None
        if isinstance(node, ast.Name) and depth < 8:
            stmt = self.assignment(node)
            if stmt is not None:
                return self.grid_sizes(stmt.value, depth + 1)
        return None

    def _grid_rank(self, node: ast.expr, depth: int) -> Tuple[Optional[int], bool]:
        """The rank of a device grid expression where it is visible, and whether it is an ndarray."""
        ctx = self.ctx
        if isinstance(node, (ast.List, ast.Tuple)):  # of devices (rank 0) or of rows of equal rank
            inner = {self._grid_rank(e, depth)[0] for e in node.elts}
            # (the rank is an int: None is not in inner)
            return (1 + inner.pop(), False) if len(inner) == 1 and None not in inner else (None, False)  # type: ignore[operator]
        if isinstance(node, ast.Subscript):  # devices[0] is a device, devices[:4] a row
            rank = self._grid_rank(node.value, depth)[0]
            if rank is None or isinstance(node.slice, ast.Tuple):
                return None, False
            return (rank if isinstance(node.slice, ast.Slice) else rank - 1 if rank else None), False
        if isinstance(node, ast.Call):
            callee = ctx.qualname(node.func)
            if callee in ONE_DIM:
                return 1, False
            if callee in NDARRAY and len(node.args) == 1:
                return self._grid_rank(node.args[0], depth)[0], True
            if callee == CREATE_DEVICE_MESH:
                shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mesh_shape"), None)
                count = literal_length(shape)
                return count, True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "reshape":
                return shape_length(node), self._grid_rank(node.func.value, depth)[1]
        if isinstance(node, ast.Name) and depth < 8:
            stmt = self.assignment(node)
            if stmt is not None:
                return self._grid_rank(stmt.value, depth + 1)
        return None, False

    def _apply(self, layout: Layout, call: ast.Call) -> Parsed:
        op = call.func.attr  # type: ignore[attr-defined]  # a method call: x.op(...)
        if op == "transpose":
            return self._transpose(layout, call.args, call)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return Failure(f"`.{op}(...)` with unpacked arguments", call)
        if op == "reshape" and layout.function is not None:
            return Failure("`.reshape(...)` of a parameter: a `NamedSharding` cannot be reshaped, build the mesh by hand", call)
        if op == "reshape":
            count = shape_length(call)
            if count is None or call.keywords:
                return Failure("`.reshape(...)` whose number of dims is not visible (a shape held in a variable?)", call)
            if layout.dims != list(range(layout.rank)):
                return Failure("`.reshape(...)` after `.replicate(...)` or a transpose has no `NamedSharding` "
                               "spelling here: build the mesh by hand", call)
            return copy_layout(layout, reshapes=[*layout.reshapes, list(call.args)], rank=count, dims=list(range(count)))
        if not layout.rank:
            return Failure("the rank of the device grid is not visible: reshape it, or write the `NamedSharding` by hand", call)
        args = dict(zip(("axis", "keepdims"), call.args))
        args.update({k.arg: k.value for k in call.keywords})  # type: ignore[misc]  # no k.arg is None: checked above
        if set(args) - {"axis", "keepdims"}:
            return Failure("`.replicate(...)` with unknown arguments", call)
        axis = args.get("axis")
        keepdims = args.get("keepdims")
        keep = constant_or(keepdims, True) if keepdims is not None else True
        if not isinstance(keep, bool):
            return Failure("`.replicate(keepdims=...)` with a value that is not a literal", call)
        ndim = len(layout.dims)
        if axis is None or constant_or(axis, "none") is None:
            merged = set(range(ndim))
            if not keep:
                return Failure("`.replicate(keepdims=False)` over every axis has no positional grid left", call)
        else:
            axes = int_literals(axis)
            if axes is None or any(not -ndim <= a < ndim for a in axes):
                return Failure("`.replicate(axis)` with an axis that is not an integer literal within the grid", call)
            merged = {a % ndim for a in axes}
        dims = [None if i in merged else d for i, d in enumerate(layout.dims) if keep or i not in merged]
        return copy_layout(layout, dims=dims)

    def _transpose(self, layout: Parsed, args: List[ast.expr], node: ast.AST) -> Parsed:
        if not isinstance(layout, Layout):
            return layout
        ndim = len(layout.dims)
        if not layout.rank:
            return Failure("the rank of the device grid is not visible: reshape it, or write the `NamedSharding` by hand", node)
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        if not args:
            order: Optional[List[int]] = list(range(ndim))[::-1]
        else:
            order = int_literals(ast.Tuple(elts=args, ctx=ast.Load()))
        if order is None or sorted(a % ndim for a in order) != list(range(ndim)) or any(not -ndim <= a < ndim for a in order):
            return Failure("`.transpose(...)` with axes that are not integer literals", node)
        return copy_layout(layout, dims=[layout.dims[a % ndim] for a in order])
