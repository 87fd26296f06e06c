"""Where a pjit argument's value comes from, as far as the module shows: JM504 converts host data
only. A GDA, a ``jax.Array`` made by ``device_put`` or ``make_array_from_*``, or the output of a
pjit whose outputs were GDAs is global already; a Python number cannot go through
``host_local_array_to_global_array`` at all (it raises "device_put expects an array with exactly
one shard" on two processes); anything else unseen is unknown, and reported rather than converted.
"""

from __future__ import annotations

import ast
from typing import Callable, List, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import own_nodes
from jaxmigrate.patterns.gda import CONSTRUCTORS, GDA, MULTIHOST_UTILS

HOST, GLOBAL, SCALAR, UNKNOWN = "host", "global", "scalar", "unknown"
GLOBAL_MAKERS = frozenset((
    "jax.device_put", "jax.make_array_from_callback", "jax.make_array_from_single_device_arrays",
    "jax.make_array_from_process_local_data", f"{MULTIHOST_UTILS}.host_local_array_to_global_array", *CONSTRUCTORS,
))
HOST_MAKERS = frozenset((f"{MULTIHOST_UTILS}.global_array_to_host_local_array", f"{MULTIHOST_UTILS}.process_allgather"))
SCALAR_MAKERS = frozenset(("float", "int", "bool", "complex", "len"))  # builtins
#: keys from a seed: ``jax.random.PRNGKey(0)`` is the same value on every process
KEY_MAKERS = frozenset(("jax.random.PRNGKey", "jax.random.key"))
PROCESS_INDEX = ("jax.process_index", "jax.host_id")
COUNTS = frozenset((*PROCESS_INDEX, "jax.process_count", "jax.host_count", "jax.device_count", "jax.local_device_count"))


def provenance(ctx: FileContext, expr: ast.expr, pjit_output: Callable[[ast.Call], Optional[str]],
               depth: int = 0) -> str:
    """HOST, GLOBAL, SCALAR or UNKNOWN for ``expr``. ``pjit_output(call)`` answers for a call of a
    pjitted function (None: it is not one)."""
    if depth > 10:
        return UNKNOWN
    if isinstance(expr, ast.Constant):
        return SCALAR if isinstance(expr.value, (int, float, complex)) else UNKNOWN
    if isinstance(expr, ast.UnaryOp):
        return provenance(ctx, expr.operand, pjit_output, depth + 1)
    if isinstance(expr, ast.Subscript):
        if any(ctx.qualname(n.func) in PROCESS_INDEX for n in ast.walk(expr.slice) if isinstance(n, ast.Call)):
            return HOST  # this process's slice
        inner = provenance(ctx, expr.value, pjit_output, depth + 1)
        return inner if inner == HOST else UNKNOWN
    if isinstance(expr, ast.Call):
        return _call(ctx, expr, pjit_output, depth)
    if isinstance(expr, ast.BinOp):
        kinds = {provenance(ctx, side, pjit_output, depth + 1) for side in (expr.left, expr.right)}
        return HOST if kinds <= {HOST, SCALAR} and HOST in kinds else SCALAR if kinds == {SCALAR} else UNKNOWN
    if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts:
        kinds = {provenance(ctx, e, pjit_output, depth + 1) for e in expr.elts}
        return HOST if kinds == {HOST} else UNKNOWN
    if isinstance(expr, ast.Dict) and expr.values and all(k is not None for k in expr.keys):  # a dict of batches
        kinds = {provenance(ctx, v, pjit_output, depth + 1) for v in expr.values}
        return HOST if kinds == {HOST} else UNKNOWN
    if isinstance(expr, ast.Name):
        return _name(ctx, expr, pjit_output, depth)
    return UNKNOWN


def _call(ctx: FileContext, call: ast.Call, pjit_output: Callable[[ast.Call], Optional[str]], depth: int) -> str:
    callee = ctx.qualname(call.func) or ""
    if callee.startswith("numpy."):
        return HOST
    if callee in GLOBAL_MAKERS:
        return GLOBAL
    if callee in HOST_MAKERS:
        return HOST
    if callee in COUNTS:
        return SCALAR
    if callee in KEY_MAKERS and all(isinstance(a, ast.Constant) for a in call.args):
        return HOST  # a key made alike on every process (a DeviceArray of its own in the GDA era)
    if isinstance(call.func, ast.Name) and call.func.id in SCALAR_MAKERS and ctx.qualname(call.func) is None:
        return SCALAR
    if _builtin(ctx, call, "next"):  # `next(batches)`: an item drawn from an iterator
        return _item(ctx, call.args[0], pjit_output, depth + 1)
    if isinstance(call.func, ast.Attribute) and ctx.qualname(call.func) is None:  # `x.reshape(...)`, `x.astype(...)`
        return HOST if provenance(ctx, call.func.value, pjit_output, depth + 1) == HOST else UNKNOWN
    returned = _returned(ctx, call, pjit_output, depth)
    if returned is not None:
        return returned
    return pjit_output(call) or UNKNOWN


def _returned(ctx: FileContext, call: ast.Call, pjit_output: Callable[[ast.Call], Optional[str]], depth: int) -> Optional[str]:
    """HOST or GLOBAL for a call of a function of this module (undecorated, bound once) whose every
    ``return`` gives that (a data loader ending in ``np.stack(...)``); None for other calls."""
    own = _module_function(ctx, call)
    if own is None or any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in own):
        return None  # not one, or a generator
    returns = [node.value for node in own if isinstance(node, ast.Return)]
    kinds = {provenance(ctx, value, pjit_output, depth + 1) if value is not None else UNKNOWN for value in returns}
    return kinds.pop() if len(kinds) == 1 and kinds <= {HOST, GLOBAL} else None


GLOBAL_ANNOTATIONS = frozenset((GDA, "jax.Array"))


def _annotated_global(ctx: FileContext, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    args = function.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.arg == name:
            return arg.annotation is not None and ctx.qualname(arg.annotation) in GLOBAL_ANNOTATIONS
    return False


def _name(ctx: FileContext, name: ast.Name, pjit_output: Callable[[ast.Call], Optional[str]], depth: int) -> str:
    """What every binding of ``name`` that may reach it gives (all the same kind, else UNKNOWN)."""
    bindings = ctx.bindings(name)
    kinds = set()
    for b in bindings:
        stmt = b.node
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _annotated_global(ctx, stmt, name.id):
            kinds.add(GLOBAL)  # a parameter annotated as a GDA (or the jax.Array a fix made of it)
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and _loop_target(stmt.target, name.id):
            kinds.add(_item(ctx, _loop_items(stmt, name.id), pjit_output, depth + 1))  # `for batch in loader():`
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return UNKNOWN  # a parameter, another loop's variable, an import...
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            kinds.add(provenance(ctx, stmt.value, pjit_output, depth + 1))
        else:  # `w, out = step(w, batch)`: a pjit's outputs (or a conversion's) are alike
            unpacked = isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Call)
            output = _call(ctx, stmt.value, pjit_output, depth + 1) if unpacked else UNKNOWN  # type: ignore[arg-type]  # a Call: unpacked
            if output in (UNKNOWN, SCALAR):
                return UNKNOWN
            kinds.add(output)
    return kinds.pop() if len(kinds) == 1 else UNKNOWN


def _builtin(ctx: FileContext, call: ast.Call, name: str) -> bool:
    """A call of the builtin ``name`` (not a binding of the module's) with one argument."""
    return (isinstance(call.func, ast.Name) and call.func.id == name and ctx.qualname(call.func) is None
            and not ctx.bindings(call.func) and len(call.args) == 1 and not call.keywords)


def _loop_target(target: ast.expr, name: str) -> bool:
    """``for name in ...`` or ``for i, name in enumerate(...)``."""
    if isinstance(target, ast.Name):
        return target.id == name
    return (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)
            and target.elts[1].id == name)


def _loop_items(loop: ast.For | ast.AsyncFor, name: str) -> ast.expr:
    """What the loop draws ``name`` from: the iterable, or the one ``enumerate`` counts."""
    if isinstance(loop.target, ast.Name):
        return loop.iter
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and len(it.args) == 1:
        return it.args[0]
    return ast.Constant(value=None)  # a pair from something else: not known


def _item(ctx: FileContext, items: ast.expr, pjit_output: Callable[[ast.Call], Optional[str]], depth: int) -> str:
    """What each item drawn from ``items`` is: HOST for a generator of this module that yields host
    data only (a loader of NumPy batches), ``iter(...)`` of one, a name bound once to one, or a
    list of host data; UNKNOWN otherwise."""
    if depth > 10:
        return UNKNOWN
    if isinstance(items, ast.Name):
        bindings = ctx.bindings(items)
        stmt = bindings[0].node if len(bindings) == 1 else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return _item(ctx, stmt.value, pjit_output, depth + 1)
        return UNKNOWN
    if isinstance(items, (ast.List, ast.Tuple)) and items.elts:
        kinds = {provenance(ctx, e, pjit_output, depth + 1) for e in items.elts}
        return HOST if kinds == {HOST} else UNKNOWN
    if not isinstance(items, ast.Call):
        return UNKNOWN
    if _builtin(ctx, items, "iter"):
        return _item(ctx, items.args[0], pjit_output, depth + 1)
    if isinstance(items.func, ast.Name) and items.func.id == "range" and ctx.qualname(items.func) is None \
            and not ctx.bindings(items.func):
        return SCALAR  # `for step in range(n)`: Python ints
    own = _module_function(ctx, items)
    yielded = [node.value for node in own or () if isinstance(node, ast.Yield)]
    if not yielded or any(isinstance(node, ast.YieldFrom) for node in own or ()):
        return UNKNOWN
    kinds = {provenance(ctx, value, pjit_output, depth + 1) if value is not None else UNKNOWN for value in yielded}
    return HOST if kinds == {HOST} else UNKNOWN


def _module_function(ctx: FileContext, call: ast.Call) -> Optional[List[ast.AST]]:
    """The nodes of the function of this module ``call`` calls by name (undecorated, bound once),
    not those of the functions defined in it; None for any other call."""
    if not isinstance(call.func, ast.Name):
        return None
    bindings = ctx.bindings(call.func)
    function = bindings[0].node if len(bindings) == 1 else None
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return None
    return list(own_nodes(function))
