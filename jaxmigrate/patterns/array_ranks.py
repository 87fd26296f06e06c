"""The rank of an array value where the source shows it: a creator with a literal shape
(``jnp.zeros((a, b))``, ``jax.random.normal(key, (n,))``), ``arange``, a ``.reshape(a, b)``, an
elementwise function or operator of values of known rank, ``.T``, a slice, a name read to the
assignment it sees (also through tuple unpacking, ``jax.device_put`` of a tree, a list
comprehension, ``list(map(f, ...))``, a loop over a literal tuple of values of one rank, and what a function of the
module returns, its parameters as the call passes them), and a parameter of this module's
function that every call gives a value of one rank."""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import argument, binding_scope, own_nodes, passed_for, reaching_binding
from jaxmigrate.patterns.positional_layouts import shape_length, shape_rank

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
Path = Tuple[int, ...]
Callers = Callable[[Function, str], Optional[List[ast.expr]]]

_NUMPYS = ("jax.numpy", "numpy")
#: functions whose first argument (or ``shape=``) is the shape of what they make
SHAPE_FIRST = frozenset(f"{m}.{f}" for m in _NUMPYS for f in ("zeros", "ones", "empty", "full"))
#: ``jax.random`` samplers whose second argument (or ``shape=``) is the shape
SHAPE_SECOND = frozenset(f"jax.random.{f}" for f in ("normal", "uniform", "bernoulli", "truncated_normal", "randint"))
ONE_DIM = frozenset(f"{m}.{f}" for m in _NUMPYS for f in ("arange", "linspace"))
ELEMENTWISE = frozenset(f"{m}.{f}" for m in _NUMPYS for f in (
    "sin", "cos", "tan", "tanh", "exp", "log", "abs", "sqrt", "square", "negative", "maximum", "minimum",
    "asarray", "array")) | frozenset(("jax.nn.relu", "jax.nn.gelu", "jax.nn.sigmoid"))
#: functions that return their first argument's tree, placed or constrained
PLACING = frozenset(("jax.device_put", "jax.lax.with_sharding_constraint", "jax.block_until_ready"))
MAX_DEPTH = 16
GRAD = "jax.grad"
EVERY = -1  # a path step: every item of a sequence (what a loop over it binds)


class ValueRanks:
    """Ranks of the values of one module, each (expression, place in its structure) worked out
    once. A place is a path of indices into nested tuples and lists: ``(w1, b1), (w2, b2) =
    params`` reads ``b1`` at ``(0, 1)`` of ``params``, which a list comprehension of
    ``init_layer(...)`` calls, returning ``w, b``, makes."""

    def __init__(self, ctx: FileContext, callers: Callers) -> None:
        self.ctx, self.callers = ctx, callers
        self._known: Dict[Tuple[int, Path], Optional[int]] = {}
        self._assuming: Set[Tuple[str, int]] = set()  # (name, id(scope)) whose self-reading bindings are worked out

    def rank(self, expr: ast.expr, path: Path = (), depth: int = 0) -> Optional[int]:
        key = (id(expr), path)
        if key not in self._known:
            self._known[key] = None  # a cycle has no rank
            self._known[key] = self._at(expr, path, depth) if depth < MAX_DEPTH else None
        return self._known[key]

    def _at(self, expr: ast.expr, path: Path, depth: int) -> Optional[int]:
        """The rank of what sits at ``path`` inside the value of ``expr``."""
        if isinstance(expr, ast.Name) and isinstance(expr.ctx, ast.Load):
            return self._name(expr, path, depth)
        if (isinstance(expr, ast.Call) and self.ctx.qualname(expr.func) in PLACING and expr.args
                and not isinstance(expr.args[0], ast.Starred)):
            return self.rank(expr.args[0], path, depth + 1)  # the same tree, placed
        if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Call) and self.ctx.qualname(expr.func.func) == GRAD
                and len(expr.func.args) == 1 and not expr.func.keywords and expr.args
                and not isinstance(expr.args[0], ast.Starred)):
            return self.rank(expr.args[0], path, depth + 1)  # `jax.grad(f)(params, ...)`: the gradient's tree is params'
        if not path:
            return self._rank(expr, depth)
        if isinstance(expr, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in expr.elts) or path[0] >= len(expr.elts) or not expr.elts:
                return None
            if path[0] == EVERY:  # an item of a loop over it: every item must agree
                ranks = {self.rank(e, path[1:], depth + 1) for e in expr.elts}
                return ranks.pop() if len(ranks) == 1 else None
            return self.rank(expr.elts[path[0]], path[1:], depth + 1)
        if isinstance(expr, ast.ListComp):
            return self.rank(expr.elt, path[1:], depth + 1)  # every element is the same expression
        if not isinstance(expr, ast.Call):
            return None
        builtin = expr.func.id if isinstance(expr.func, ast.Name) and not self.ctx.bindings(expr.func) else None
        if builtin in ("list", "tuple") and len(expr.args) == 1 and not expr.keywords:
            return self.rank(expr.args[0], path, depth + 1)  # the same items
        if builtin == "map" and len(expr.args) >= 2 and isinstance(expr.args[0], ast.Name):
            return self._returns_of(expr.args[0], path[1:], depth)  # every item is what the function returns
        return self._returned(expr, path, depth)

    def _returns_of(self, func: ast.Name, path: Path, depth: int) -> Optional[int]:
        """What every ``return`` of the module's plain function ``func`` names gives at ``path``,
        whatever its arguments (a function mapped over iterables)."""
        found = self._returns(func)
        ranks = {self.rank(r, path, depth + 1) for r in found[1]} if found is not None else set()
        return ranks.pop() if len(ranks) == 1 else None

    def _returns(self, func: ast.expr) -> Optional[Tuple[Function, List[ast.expr]]]:
        """The module's plain function a name calls (undecorated) and the value of each of its
        ``return``s, where every one returns a value; None otherwise."""
        if not isinstance(func, ast.Name):
            return None
        fn = reaching_binding(self.ctx, func.id, func)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list:
            return None
        values = [n.value for n in own_nodes(fn) if isinstance(n, ast.Return)]
        if not values or any(v is None for v in values):
            return None
        return fn, values  # type: ignore[return-value]  # none is None

    def _returned(self, call: ast.Call, path: Path, depth: int) -> Optional[int]:
        """What every ``return`` of the module's plain function ``call`` names gives at ``path``."""
        found = self._returns(call.func)
        if found is None:
            return None
        fn, returns = found
        ranks = {self.rank(r, path, depth + 1) for r in returns}
        if ranks == {None} and not path and len(returns) == 1:  # of its parameters, as this call passes them
            return self._in_call(returns[0], fn, call, depth + 1)
        return ranks.pop() if len(ranks) == 1 else None

    def _in_call(self, expr: ast.expr, fn: Function, call: ast.Call, depth: int) -> Optional[int]:
        """The rank of ``expr`` in ``fn`` when ``call`` runs it, where it is a parameter as the call
        passes it, placed (``jax.device_put(x, ...)``) or combined elementwise."""
        if depth >= MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name) and reaching_binding(self.ctx, expr.id, expr) is fn:
            passed = passed_for(fn, call, expr.id)
            return self.rank(passed, (), depth + 1) if passed is not None else None
        if isinstance(expr, ast.Call) and expr.args and not any(isinstance(a, ast.Starred) for a in expr.args):
            callee = self.ctx.qualname(expr.func)
            if callee in PLACING:
                return self._in_call(expr.args[0], fn, call, depth + 1)
            if callee in ELEMENTWISE:
                return self._most(expr.args, fn, call, depth)
        if isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.MatMult):
            return self._most([expr.left, expr.right], fn, call, depth)
        return self.rank(expr, (), depth + 1)

    def _most(self, operands: List[ast.expr], fn: Function, call: ast.Call, depth: int) -> Optional[int]:
        return _highest([self._in_call(o, fn, call, depth + 1) for o in operands])

    def _rank(self, expr: ast.expr, depth: int) -> Optional[int]:
        ctx = self.ctx
        if isinstance(expr, ast.Constant):
            return 0 if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) else None
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self.rank(expr.value, (), depth + 1)
        if isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.MatMult):
            return self._broadcast([expr.left, expr.right], depth)
        if isinstance(expr, ast.UnaryOp):
            return self.rank(expr.operand, (), depth + 1)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, depth)
        if not isinstance(expr, ast.Call):
            return None
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "reshape" and ctx.qualname(expr.func) is None:
            return shape_length(expr)
        callee = ctx.qualname(expr.func)
        if callee in SHAPE_FIRST:
            return shape_rank(argument(expr, 0, "shape"))
        if callee in SHAPE_SECOND:
            return shape_rank(argument(expr, 1, "shape"))
        if callee in ONE_DIM:
            return 1
        if callee in ELEMENTWISE and expr.args and not any(isinstance(a, ast.Starred) for a in expr.args):
            return self._broadcast(expr.args, depth)
        return self._returned(expr, (), depth)

    def _subscript(self, expr: ast.Subscript, depth: int) -> Optional[int]:
        """``x[:8, :8]``, ``x[0]``: the rank of ``x`` less one per integer index (slices keep a dim)."""
        index = expr.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(not isinstance(i, ast.Slice) and not (isinstance(i, ast.Constant) and type(i.value) is int) for i in items):
            return None
        base = self.rank(expr.value, (), depth + 1)
        dropped = sum(1 for i in items if not isinstance(i, ast.Slice))
        return base - dropped if base is not None and base >= len(items) else None

    def _broadcast(self, operands: List[ast.expr], depth: int) -> Optional[int]:
        return _highest([self.rank(o, (), depth + 1) for o in operands])

    def _name(self, name: ast.Name, path: Path, depth: int) -> Optional[int]:
        bound = reaching_binding(self.ctx, name.id, name)
        if bound is None or self._assuming and (name.id, id(binding_scope(self.ctx, name))) in self._assuming:
            return self._every_binding(name, path, depth)
        if isinstance(bound, ast.Assign) and len(bound.targets) == 1:
            place = _place(bound.targets[0], name.id)
            return self.rank(bound.value, place + path, depth + 1) if place is not None else None
        if isinstance(bound, (ast.For, ast.comprehension)) and not path and self._counter(bound, name.id):
            return 0
        if isinstance(bound, (ast.For, ast.comprehension)):  # an item of what the loop goes over
            place = _place(bound.target, name.id)
            items = bound.iter
            if place is not None and isinstance(items, ast.Call) and isinstance(items.func, ast.Name) \
                    and not self.ctx.bindings(items.func) and not items.keywords:
                if items.func.id == "zip" and place and place[0] < len(items.args):
                    return self.rank(items.args[place[0]], (EVERY, *place[1:], *path), depth + 1)
                if items.func.id == "enumerate" and place and place[0] == 1 and len(items.args) == 1:
                    return self.rank(items.args[0], (EVERY, *place[1:], *path), depth + 1)
            if place is not None and not isinstance(items, ast.Call):
                return self.rank(items, (EVERY, *place, *path), depth + 1)
        if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                a.arg == name.id for a in (*bound.args.posonlyargs, *bound.args.args, *bound.args.kwonlyargs)):
            passed = self.callers(bound, name.id)
            ranks = {self.rank(arg, path, depth + 1) for arg in passed or ()}
            if len(ranks) == 1 and None not in ranks:
                return ranks.pop()
        if not path and bound is not None and self._dimension(name, bound):
            return 0
        return None

    def _every_binding(self, name: ast.Name, path: Path, depth: int) -> Optional[int]:
        """A name bound several times, where the read may see any of them (a training loop's
        ``params = [... for ... in zip(params, grads)]``): the rank every binding gives, those that
        read the name itself worked out assuming it has the others' (kept only if they agree)."""
        scope = binding_scope(self.ctx, name)
        found = scope.bindings.get(name.id, []) if scope is not None else []
        key = (name.id, id(scope))
        plain: List[Tuple[ast.Assign, Path]] = []
        itself: List[Tuple[ast.Assign, Path]] = []
        for binding in found:
            stmt = binding.node
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                return None
            place = _place(stmt.targets[0], name.id)
            if place is None:
                return None
            reads = any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Load)
                        for n in ast.walk(stmt.value))
            (itself if reads else plain).append((stmt, place))
        if not plain or len(found) > 4:
            return None
        ranks = {self.rank(stmt.value, place + path, depth + 1) for stmt, place in plain}
        if len(ranks) != 1 or None in ranks:
            return None
        rank = ranks.pop()
        if itself and key not in self._assuming:
            known = set(self._known)
            self._assuming.add(key)
            try:
                others = {self.rank(stmt.value, place + path, depth + 1) for stmt, place in itself}
            finally:
                self._assuming.discard(key)
            if others != {rank}:
                for added in set(self._known) - known:  # worked out on an assumption that failed
                    del self._known[added]
                return None
        return rank

    def _counter(self, loop: Union[ast.For, ast.comprehension], identifier: str) -> bool:
        """``i`` of ``for i in range(...)`` or of ``for i, x in enumerate(...)``: an integer."""
        func = loop.iter.func if isinstance(loop.iter, ast.Call) else None
        if not isinstance(func, ast.Name) or self.ctx.bindings(func):
            return False  # not a call of the builtin
        callee = func.id
        place = _place(loop.target, identifier)
        return callee == "range" and place == () or callee == "enumerate" and place == (0,)

    def _dimension(self, name: ast.Name, bound: ast.AST) -> bool:
        """Whether a read of the same binding is a dim of a shape (``reshape(n_in, n_out)``,
        ``jnp.zeros((n, d))``): then the name holds an integer."""
        ctx = self.ctx
        for other in ctx.names_bound_by(name.id, binding_scope(ctx, name)):
            if not isinstance(other.ctx, ast.Load):
                continue
            shape = ctx.parent(other)
            call = ctx.parent(shape) if isinstance(shape, ast.Tuple) else shape
            if isinstance(call, ast.keyword):
                call = ctx.parent(call)
            if not isinstance(call, ast.Call) or call.func is other:
                continue
            callee = ctx.qualname(call.func)
            method = isinstance(call.func, ast.Attribute) and call.func.attr == "reshape" and callee is None
            if (method or callee in SHAPE_FIRST or callee in SHAPE_SECOND) and reaching_binding(ctx, name.id, other) is bound:
                return True
        return False


def _highest(ranks: List[Optional[int]]) -> Optional[int]:
    """The rank operands of these ranks broadcast to, where each is known."""
    return None if any(r is None for r in ranks) else max(ranks)  # type: ignore[type-var]  # none is None


def _place(target: ast.expr, identifier: str) -> Optional[Path]:
    """Where ``identifier`` sits in an assignment's target: ``()`` for the target itself,
    ``(0, 1)`` for ``b1`` in ``(w1, b1), (w2, b2) = ...``; None where it is not there plainly."""
    if isinstance(target, ast.Name):
        return () if target.id == identifier else None
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        for i, elt in enumerate(target.elts):
            inner = _place(elt, identifier)
            if inner is not None:
                return (i, *inner)
    return None
