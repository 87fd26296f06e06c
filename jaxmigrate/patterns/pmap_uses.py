"""The uses of ``jax.pmap`` in a module, as plain data: the form (a call, a decorator, a
``functools.partial`` decorator, anything else), the mapped function, and what each option says
(the axis name, which arguments are mapped, static and donated arguments, the devices), or why
an option cannot be kept by a ``jax.jit`` of ``jax.shard_map``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple, Union

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.patterns.positional_layouts import int_literals

PMAP = ("jax.pmap", "jax.api.pmap", "jax._src.api.pmap")
PARTIAL = "functools.partial"
#: the decorators that may stand above a pmap decorator and stay there: a rewrite in place of the
#: pmap decorator hands them what pmap handed them. Any decorator of another library or of the
#: module's own does; of these libraries' only ``jax.named_scope``: their transformations trace the
#: pmap (a pmap under ``jax.jit`` maps this process's devices only), and they stay reported
TRANSFORMING = ("jax", "flax", "haiku", "equinox", "optax")
OUTER_KEPT = ("jax.named_scope",)
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: options that only pmap had, and what to do instead
NOT_KEPT = {
    "axis_size": "`axis_size=` (a mapped axis of a size no argument shows) has no `shard_map` counterpart: map an argument",
    "backend": "`backend=` is deprecated with pmap: place the inputs with `jax.device_put` on the devices of that backend "
               "and build the mesh from them",
    "global_arg_shapes": "`global_arg_shapes=` (pmap's multi-process shapes) has no counterpart: pass global arrays",
}


@dataclass
class PmapUse:
    """One use of pmap. ``kind``: "call" (``jax.pmap(f, ...)``), "decorator" (``@jax.pmap`` or
    ``@partial(jax.pmap, ...)`` on ``function``) or "other"; ``node``: the expression to
    replace (the call, or the decorator); ``why``: why it is not rewritten (None: it may be)."""

    kind: str
    node: ast.expr
    reference: ast.expr
    function: Optional[ast.expr] = None  # the mapped function of a call
    definition: Optional[Function] = None  # the decorated def
    options: Dict[str, ast.expr] = field(default_factory=dict)
    why: Optional[str] = None
    wrapped: bool = False  # a decorated def with decorators above the pmap (``OUTER_KEPT``), which wrap it


@dataclass
class Mapping:
    """What the options say: the mesh axis name (source text), the axis each position is mapped
    at (None: unmapped; ``axes`` None: every argument at ``every``, the arity unknown), the axis of
    the outputs (None: ``out_axes=None``, one replica), the static and donated positions (source
    text)."""

    axis: str
    axes: Optional[List[Optional[int]]]
    every: int = 0
    out_axis: Optional[int] = 0
    out_tuple: Optional[List[Optional[int]]] = None  # `out_axes` a tuple: one axis per output (out_axis unused)
    static: Tuple[int, ...] = ()
    static_text: Optional[str] = None
    donate_text: Optional[str] = None
    devices_text: Optional[str] = None

    def axis_of(self, position: Optional[int]) -> Optional[int]:
        """The mapped axis of the argument at ``position`` (None: every argument's)."""
        return self.every if self.axes is None or position is None else self.axes[position]


def pmap_uses(ctx: FileContext) -> Iterator[PmapUse]:
    for qualname in PMAP:
        for ref in ctx.references(qualname):
            if not isinstance(getattr(ref, "ctx", None), ast.Store):  # `mapper = jax.pmap` names it where it is read
                yield _use(ctx, ref)


def _use(ctx: FileContext, ref: ast.expr) -> PmapUse:
    parent = ctx.parent(ref)
    if isinstance(parent, ast.Call) and parent.func is ref:
        holder = ctx.parent(parent)
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent in holder.decorator_list:
            return PmapUse("other", parent, ref, why="`@jax.pmap(...)` with options and no function raises: "
                                                     "write `@functools.partial(jax.pmap, ...)`")
        use = PmapUse("call", parent, ref)
        fun = parent.args[0] if parent.args else next((k.value for k in parent.keywords if k.arg == "fun"), None)
        use.function = fun
        rest = list(parent.args[1:])
        _options(use, rest, [k for k in parent.keywords if k.arg != "fun"])
        if fun is None or isinstance(fun, ast.Starred):
            use.why = use.why or "the mapped function is not visible"
        return use
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and ref in parent.decorator_list:
        return _decorator(PmapUse("decorator", ref, ref, definition=parent), parent, ctx)
    if (isinstance(parent, ast.Call) and ref in parent.args[:1] and ctx.qualname(parent.func) == PARTIAL):
        holder = ctx.parent(parent)
        use = PmapUse("decorator", parent, ref)
        _options(use, list(parent.args[1:]), parent.keywords)
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent in holder.decorator_list:
            use.definition = holder
            return _decorator(use, holder, ctx)
        use.kind, use.why = "other", use.why or "a `functools.partial` of pmap used as a value"
        return use
    return PmapUse("other", ref, ref, why="`jax.pmap` used as a value (not called on a function here): where it is "
                                          "applied, write `jax.jit(jax.shard_map(f, mesh=..., in_specs=P(axis), "
                                          "out_specs=P(axis)))` on this process's data")


def _options(use: PmapUse, positional: List[ast.expr], keywords: List[ast.keyword]) -> None:
    if any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in keywords):
        use.why = "its options are given with `*` or `**`"
        return
    if len(positional) > 1:
        use.why = "more positional arguments than the function and the axis name"
        return
    if positional:
        use.options["axis_name"] = positional[0]
    for keyword in keywords:
        use.options[keyword.arg] = keyword.value  # type: ignore[index]  # not a ``**``: checked above


def _decorator(use: PmapUse, fn: Function, ctx: FileContext) -> PmapUse:
    others = [d for d in fn.decorator_list if d is not use.node]
    if any(_names_pmap(ctx, d) for d in others):
        use.why = use.why or ("pmap stacked on pmap: nested pmap no longer runs (write one `jax.shard_map` over a mesh "
                              "of two axes)")
    elif others:
        above = fn.decorator_list[:fn.decorator_list.index(use.node)]
        if len(above) < len(others) or any(_transforms(ctx, d) for d in above):
            use.why = use.why or ("the function has other decorators: their order with the rewrite is for a person "
                                  "to choose (a pmap under `jax.jit` maps this process's devices only)")
        use.wrapped = True
    elif isinstance(fn, ast.AsyncFunctionDef):
        use.why = use.why or "an `async def`"
    return use


def _transforms(ctx: FileContext, decorator: ast.expr) -> bool:
    """Whether a decorator above a pmap is one of ``TRANSFORMING``'s libraries' (a transformation
    of the function pmap returns), other than ``OUTER_KEPT``'s."""
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(decorator, ast.Call) and ctx.qualname(called) == PARTIAL and decorator.args:
        called = decorator.args[0]
    qualname = ctx.qualname(called) or ""
    return qualname not in OUTER_KEPT and qualname.split(".")[0] in TRANSFORMING


def _names_pmap(ctx: FileContext, decorator: ast.expr) -> bool:
    """``@jax.pmap`` or ``@partial(jax.pmap, ...)``."""
    if isinstance(decorator, ast.Call) and ctx.qualname(decorator.func) == PARTIAL and decorator.args:
        decorator = decorator.args[0]
    return ctx.qualname(decorator) in PMAP


def int_tuple(node: ast.expr) -> Optional[Tuple[int, ...]]:
    """``1`` or ``(0, 2)``: non-negative int literals."""
    found = int_literals(node)
    return tuple(found) if found is not None and all(v >= 0 for v in found) else None


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _axis(node: ast.expr) -> Optional[int]:
    """A non-negative int literal (not a bool)."""
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def mapping(ctx: FileContext, use: PmapUse, arity: Optional[int]) -> Union[Mapping, str]:
    """What the options of ``use`` say, for a function of ``arity`` positional parameters
    (None: not known), or why a ``jax.jit`` of ``jax.shard_map`` cannot say the same."""
    options = use.options
    for name, why in NOT_KEPT.items():
        if name in options:
            return why
    unknown = sorted(set(options) - {"axis_name", "in_axes", "out_axes", "static_broadcasted_argnums",
                                     "donate_argnums", "devices"})
    if unknown:
        return f"`{unknown[0]}=` is not an option this rewrite knows"
    axis = options.get("axis_name")
    if axis is not None and not (isinstance(axis, ast.Constant) and isinstance(axis.value, str) or isinstance(axis, ast.Name)):
        return "the axis name is not a string or a name"
    out_axes = options.get("out_axes")
    out_axis: Optional[int] = 0
    out_tuple: Optional[List[Optional[int]]] = None
    if out_axes is not None:
        if _none(out_axes):
            out_axis = None
        elif isinstance(out_axes, ast.Tuple) and out_axes.elts and all(_none(e) or _axis(e) is not None for e in out_axes.elts):
            out_tuple = [None if _none(e) else _axis(e) for e in out_axes.elts]
        else:
            out_axis = _axis(out_axes)
            if out_axis is None:
                return ("`out_axes` is not a literal int, None or tuple of them (a tree of axes): write the "
                        "`jax.shard_map` by hand, `out_specs` a tree of `P(None, ..., axis)`")
    axes: Optional[List[Optional[int]]] = None
    every = 0
    in_axes = options.get("in_axes")
    single = _axis(in_axes) if in_axes is not None else 0
    if single is not None:
        every = single
    elif in_axes is not None:
        if not isinstance(in_axes, (ast.Tuple, ast.List)) or not all(
                isinstance(e, ast.Constant) and e.value is None or _axis(e) is not None for e in in_axes.elts):
            return ("`in_axes` is not a literal of non-negative ints and None (a tree of axes, or an axis counted from "
                    "the end): write the `jax.shard_map` by hand, `in_specs` a tree of `P(None, ..., axis)`")
        axes = [_axis(e) for e in in_axes.elts]
        if arity is not None and len(axes) != arity:
            return f"`in_axes` has {len(axes)} entries for {arity} parameters"
        if all(a is None for a in axes):
            return "`in_axes` maps no argument"
    static: Tuple[int, ...] = ()
    if "static_broadcasted_argnums" in options:
        found = int_tuple(options["static_broadcasted_argnums"])
        if found is None:
            return "`static_broadcasted_argnums` is not a literal of non-negative ints"
        static = found
        if arity is None:
            return ("static arguments, and the number of the function's parameters is not visible: give `in_axes` "
                    "one entry per argument (`None` for each static one)")
        if any(i >= arity for i in static) or (axes is not None and any(axes[i] is not None for i in static)):
            return "a static argument that is also mapped, or past the parameters"
    donate = options.get("donate_argnums")  # any expression: `jax.jit` evaluates it once, where pmap did
    if axes is None and static and arity is not None:
        axes = [None if i in static else every for i in range(arity)]
    devices = options.get("devices")
    return Mapping(axis=ctx.text(axis) if axis is not None else '"i"', axes=axes, every=every, out_axis=out_axis,
                   out_tuple=out_tuple, static=static,
                   static_text=ctx.text(options["static_broadcasted_argnums"]) if static else None,
                   donate_text=ctx.text(donate) if donate is not None else None,
                   devices_text=ctx.text(devices) if devices is not None and not (
                       isinstance(devices, ast.Constant) and devices.value is None) else None)
