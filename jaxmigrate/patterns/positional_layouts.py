"""PositionalSharding layouts as plain data: what a chain of ``PositionalSharding(devices)``,
``.reshape``, ``.replicate`` and ``.transpose`` computes (the device grid and, per sharding dim, its
mesh axis), and ``LayoutParser``, which reads them from a module for JM703."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import why_rebound

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
    (arg,) = call.args
    if int_literals(arg) is not None and not isinstance(arg, (ast.Tuple, ast.List)):
        return 1
    return literal_length(arg)


class LayoutParser:
    """Parses the positional-sharding chains of one module (each expression once)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._parsed: Dict[int, Parsed] = {}
        self._rebound_of: Dict[int, Optional[str]] = {}  # id(statement) -> ``rebound``'s answer

    def rebound(self, stmt: ast.Assign) -> Optional[str]:
        """Why the name ``stmt`` assigns may hold something else at a use (its uses are then not
        followed, and ``stmt`` is not rewritten in place), or None if ``stmt`` is its one binding.
        Once per statement: every use of a module-level ``mesh`` in every function asks it."""
        key = id(stmt)
        if key not in self._rebound_of:
            self._rebound_of[key] = why_rebound(self.ctx, stmt)
        return self._rebound_of[key]

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
            stmt = ctx.single_assignment(expr)
            if (stmt is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name)
                    or self.rebound(stmt) is not None):
                return None
            inner = self.parse(stmt.value, depth + 1)
            if not isinstance(inner, Layout):
                return inner
            return copy_layout(inner, inherited=[*inner.inherited, inner.devices, *[a for r in inner.reshapes for a in r]],
                         assignments=[stmt, *inner.assignments])
        return None

    def _base(self, call: ast.Call) -> Union[Layout, Failure]:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return Failure("`PositionalSharding` takes the device grid alone here: write the `NamedSharding` by hand", call)
        devices = call.args[0]
        rank, ndarray = self._grid_rank(devices, 0)
        return Layout(devices, ndarray, rank=rank or 0, dims=list(range(rank or 0)), base=call.func)

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
            stmt = ctx.single_assignment(node)
            if stmt is not None and len(stmt.targets) == 1:
                return self._grid_rank(stmt.value, depth + 1)
        return None, False

    def _apply(self, layout: Layout, call: ast.Call) -> Parsed:
        op = call.func.attr  # type: ignore[attr-defined]  # a method call: x.op(...)
        if op == "transpose":
            return self._transpose(layout, call.args, call)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return Failure(f"`.{op}(...)` with unpacked arguments", call)
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
