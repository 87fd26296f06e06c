"""Names and helpers shared by the GlobalDeviceArray / FROM_GDA / host-local rules (JM5xx, JM6xx).

Semantics of the removed APIs as the jax-v0.4.1 source has them (docs/verify.md, "The legacy runtime").
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.values import InstanceFacts
from jaxmigrate.catalog.gda import ATTRIBUTE_RENAMES, EVERY_ARRAY, GDA_NAME
from jaxmigrate.catalog.moves import BY_OLD
from jaxmigrate.core.findings import ImportRef

GDA_MODULE = "jax.experimental.global_device_array"
GDA = f"{GDA_MODULE}.GlobalDeviceArray"
FROM_GDA = "jax.experimental.pjit.FROM_GDA"
PJIT = "jax.experimental.pjit.pjit"
PARTIAL = "functools.partial"
PARTITION_SPEC = "jax.sharding.PartitionSpec"
NAMED_SHARDING = "jax.sharding.NamedSharding"
MULTIHOST_UTILS = "jax.experimental.multihost_utils"
MULTI_PROCESS_MARKERS = ("jax.process_index", "jax.process_count", "jax.distributed", MULTIHOST_UTILS)
TO_GLOBAL = f"{MULTIHOST_UTILS}.host_local_array_to_global_array"
TO_HOST_LOCAL = f"{MULTIHOST_UTILS}.global_array_to_host_local_array"
#: the jax.Array conversions of host-local values (``multihost_utils``), which raise with jax.Array off
CONVERSIONS = (TO_GLOBAL, TO_HOST_LOCAL)

# GlobalDeviceArray.from_callback(global_shape, global_mesh, mesh_axes, data_callback) and friends
GDA_PARAMS = ("global_shape", "global_mesh", "mesh_axes")
CONSTRUCTORS: Dict[str, Tuple[str, ...]] = {
    GDA: (*GDA_PARAMS, "device_buffers"),
    f"{GDA}.from_callback": (*GDA_PARAMS, "data_callback"),
    f"{GDA}.from_batched_callback": (*GDA_PARAMS, "data_callback"),
    f"{GDA}.from_batched_callback_with_devices": (*GDA_PARAMS, "data_callback"),
}


def bind_arguments(call: ast.Call, params: Sequence[str]) -> Optional[Dict[str, ast.expr]]:
    """Map a call's arguments to parameter names; None for ``*args``/``**kwargs`` or unknown keywords."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if len(call.args) > len(params):
        return None
    bound = dict(zip(params, call.args))
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in params or kw.arg in bound:
            return None
        bound[kw.arg] = kw.value
    return bound


def is_partition_spec(ctx: FileContext, node: ast.expr, depth: int = 0) -> bool:
    """Whether ``node`` is known to evaluate to a PartitionSpec (a constructor call, or a name
    assigned once from one)."""
    if isinstance(node, ast.Call):
        q = ctx.qualname(node.func)
        return q == PARTITION_SPEC or (q in BY_OLD and BY_OLD[q].new == PARTITION_SPEC)
    if isinstance(node, ast.Name) and depth < 3:
        stmt = ctx.single_assignment(node)
        if stmt is not None:
            return is_partition_spec(ctx, stmt.value, depth + 1)
    return False


def spec_text(ctx: FileContext, node: ast.expr, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
    """Source for the PartitionSpec that GDA ``mesh_axes`` meant: the spec itself when it is
    one, ``P('x', None)`` for a literal list/tuple, else ``P(*mesh_axes)``."""
    if is_partition_spec(ctx, node):
        return ctx.text(node), ()
    p, imports = importer(ctx).reference(PARTITION_SPEC, at=at)
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return f"{p}({', '.join(ctx.text(e) for e in node.elts)})", imports
    return f"{p}(*{ctx.text(node)})", imports


def named_sharding_text(ctx: FileContext, mesh: ast.expr, axes: ast.expr, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
    named, imports = importer(ctx).reference(NAMED_SHARDING, at=at)
    spec, more = spec_text(ctx, axes, at)
    return f"{named}({ctx.text(mesh)}, {spec})", imports + more


def is_multi_process(ctx: FileContext) -> bool:
    """Whether the module is written for several processes (uses process_index, distributed, ...).
    Once per module: rules ask it at each pjit call they convert."""
    return ctx.memo("multi-process", _multi_process)


def _multi_process(ctx: FileContext) -> bool:
    for node, q in ctx.qualified():
        if any(q == m or q.startswith(m + ".") for m in MULTI_PROCESS_MARKERS) and not _conversion(ctx, node, q):
            return True
    return False


def _conversion(ctx: FileContext, node: ast.expr, qualname: str) -> bool:
    """Whether ``node`` names (or is the module in ``multihost_utils.<name>`` of) one of the
    jax.Array conversions, which say nothing of processes: the migration guide writes them for
    code that may run on one (they change nothing there), and JM503's fix writes them for mixed
    ``FROM_GDA``. A module they alone mark is no multi-process code."""
    if qualname in CONVERSIONS:
        return True
    parent = ctx.parent(node)
    return qualname == MULTIHOST_UTILS and isinstance(parent, ast.Attribute) and parent.value is node \
        and ctx.qualname(parent) in CONVERSIONS


def outputs_are_global(ctx: FileContext) -> bool:
    """Whether the module turned on `jax_parallel_functions_output_gda` (outputs were GDAs)."""
    return ctx.memo("outputs are global", _outputs_global)


def _outputs_global(ctx: FileContext) -> bool:
    for call, _ in ctx.calls_to("jax.config.update"):
        if (len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
                and call.args[0].value == "jax_parallel_functions_output_gda"
                and isinstance(call.args[1], ast.Constant) and call.args[1].value is True):
            return True
    return False


def spec_source(ctx: FileContext, spec: ast.expr, at: ast.AST, trees: bool = False) -> Tuple[str, Tuple[ImportRef, ...]]:
    """The spec's text with literal ``None`` leaves (replicated in legacy pjit) written as ``P()``;
    with ``trees`` (for ``multihost_utils``' conversions, which reject a ``None`` spec, and for
    ``jax.jit``'s shardings, where ``None`` is unspecified), where a name in it holds a tree with
    ``None`` leaves (``param_spec = {"b": None, ...}``), the whole tree mapped so
    (``jax.tree_util.tree_map``, ``None`` and specs as its leaves)."""
    nones = [n for n in ast.walk(spec) if isinstance(n, ast.Constant) and n.value is None and not _inside_call(ctx, n, spec)]
    named = trees and _holds_none(ctx, spec, 0)
    if not nones and not named:
        return ctx.text(spec), ()
    p, imports = importer(ctx).reference(PARTITION_SPEC, at=at)
    text, base = ctx.text(spec), ctx.span(spec)[0]
    for node in sorted(nones, key=lambda n: ctx.span(n)[0], reverse=True):
        start, end = ctx.span(node)
        text = text[: start - base] + f"{p}()" + text[end - base:]
    if named:
        tree_map, more = importer(ctx).reference("jax.tree_util.tree_map", at=at)
        text = (f"{tree_map}(lambda s: {p}() if s is None else s, {text}, "
                f"is_leaf=lambda s: s is None or isinstance(s, {p}))")
        imports = (*imports, *more)
    return text, imports


def _holds_none(ctx: FileContext, spec: ast.expr, depth: int) -> bool:
    """Whether a name in ``spec`` (outside a spec constructor) is assigned a tree with a ``None`` leaf."""
    for name in (n for n in ast.walk(spec) if isinstance(n, ast.Name) and not _inside_call(ctx, n, spec)):
        stmt = ctx.single_assignment(name) if depth < 4 else None
        if stmt is None or len(stmt.targets) != 1:
            continue
        value = stmt.value
        if any(isinstance(n, ast.Constant) and n.value is None and not _inside_call(ctx, n, value) for n in ast.walk(value)):
            return True
        if _holds_none(ctx, value, depth + 1):
            return True
    return False


def _inside_call(ctx: FileContext, node: ast.AST, root: ast.AST) -> bool:
    """``P(None, 'x')``: a None inside a spec constructor is a dimension, not a spec."""
    while node is not root:
        node = ctx.parent(node)  # type: ignore[assignment]  # node is inside root: it has a parent
        if isinstance(node, ast.Call):
            return True
    return False


MAKE_FROM_CALLBACK = "jax.make_array_from_callback"
MAKE_FROM_ARRAYS = "jax.make_array_from_single_device_arrays"
GDA_VALUES = (*CONSTRUCTORS, MAKE_FROM_CALLBACK, MAKE_FROM_ARRAYS)  # what returns a GDA (or its jax.Array)


def migrated_mesh_text(ctx: FileContext, expr: ast.expr) -> str:
    """``expr``'s text as JM502 leaves it: ``x.mesh`` on a GDA becomes ``x.sharding.mesh``. For a
    fix that copies ``expr`` into new lines in the round JM502 rewrites the original (a copy
    would keep the GDA attribute, which a later round can no longer tell is one)."""
    if isinstance(expr, ast.Attribute) and expr.attr in ("mesh", "_global_mesh"):
        facts = InstanceFacts(ctx, GDA, GDA_VALUES, lambda text: names_gda(ctx, text))
        if facts.receiver(expr.value)[0]:
            return f"{ctx.text(expr.value)}.{ATTRIBUTE_RENAMES[expr.attr]}"
    return ctx.text(expr)


def construction_method(kind: str) -> str:
    """``from_callback``, ``from_batched_callback``, ... or ``GlobalDeviceArray`` (the constructor)
    for a ``CONSTRUCTORS`` key."""
    return kind[len(GDA) + 1:] or "GlobalDeviceArray"


def rewritable_construction(call: ast.Call, kind: str) -> Optional[Dict[str, ast.expr]]:
    """The arguments of a GDA construction that has a one-call jax.Array form (JM501 rewrites
    it), bound to their names; None for the batched ones or arguments it cannot bind."""
    if construction_method(kind).startswith("from_batched"):
        return None
    args = bind_arguments(call, CONSTRUCTORS[kind])
    return args if args is not None and len(args) == 4 else None


def names_gda(ctx: FileContext, text: str) -> bool:
    """Whether a string annotation names GlobalDeviceArray."""
    if "GlobalDeviceArray" not in text:
        return False
    try:
        expr = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False
    scope = ctx.resolver.module_scope
    return any(ctx.resolver.qualname(n, scope) == GDA for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def gda_string_annotations(ctx: FileContext) -> List[ast.Constant]:
    """The string annotations (``x: "GlobalDeviceArray"``) that name GlobalDeviceArray."""
    annotations: List[ast.expr] = [n.annotation for n in ctx.nodes(ast.arg) if n.annotation is not None]
    annotations += [n.annotation for n in ctx.nodes(ast.AnnAssign)]
    functions: List[ast.FunctionDef | ast.AsyncFunctionDef] = [*ctx.nodes(ast.FunctionDef), *ctx.nodes(ast.AsyncFunctionDef)]
    annotations += [n.returns for n in functions if n.returns is not None]
    return [node for ann in annotations for node in ast.walk(ann)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and names_gda(ctx, node.value)]


def named_like_gda(receiver: ast.expr) -> bool:
    """Whether a receiver is named like a GDA (``gda``, ``out_gda``, ``gda1``)."""
    name = ""
    if isinstance(receiver, ast.Name):
        name = receiver.id
    elif isinstance(receiver, ast.Attribute):
        name = receiver.attr
    return bool(GDA_NAME.search(name))


def same_answer_with_array(ctx: FileContext, node: ast.expr) -> bool:
    """Whether the check whose class is ``node`` (see ``type_position``) decides the same with
    `jax.Array`, for every program that got past it before: every array is a jax.Array now, so
    that holds only when the check's tuple also names a class every array already was an instance
    of (`jax.Array`, `jax.numpy.ndarray`), or when the check only guards a failure
    (`assert isinstance(x, GDA)`, `assertIsInstance(x, GDA)`, `if not isinstance(x, GDA): raise`),
    which then stops failing for arrays that were not GDAs and changes nothing else. Not a guard
    whose tuple names other classes (`if not isinstance(v, (np.ndarray, GDA)): raise`): it turned
    away what was not a concrete array, tracers included, and a tracer is a jax.Array now."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Tuple):
        if any(ctx.qualname(e) in EVERY_ARRAY for e in parent.elts if e is not node):
            return True
        return False  # a guard of several classes: see above
    call = parent
    assert isinstance(call, ast.Call)
    func = call.func
    if isinstance(func, ast.Attribute):  # assertIsInstance / assertNotIsInstance
        return func.attr == "assertIsInstance" and isinstance(ctx.parent(call), ast.Expr)
    if func.id != "isinstance":  # type: ignore[attr-defined]  # an isinstance test calls a Name
        return False
    holder = ctx.parent(call)
    if isinstance(holder, ast.Assert) and holder.test is call:
        return True
    if isinstance(holder, ast.UnaryOp) and isinstance(holder.op, ast.Not):
        stmt = ctx.parent(holder)
        return (isinstance(stmt, ast.If) and stmt.test is holder and not stmt.orelse
                and isinstance(stmt.body[-1], ast.Raise))
    return False
