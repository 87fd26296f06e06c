"""PositionalSharding layouts as plain data: what a chain of ``PositionalSharding(devices)``,
``.reshape``, ``.replicate`` and ``.transpose`` computes (the device grid and, per sharding dim, its
mesh axis), and the literal readers JM703 parses them with."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union


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
