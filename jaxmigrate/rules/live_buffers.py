"""JM401: ``live_buffers()`` on a backend or a device → ``jax.live_arrays()``."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.folding import fold_true
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import delete_statement
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

GET_BACKEND = "jax._src.lib.xla_bridge.get_backend"
DEVICE_LISTS = ("jax.devices", "jax.local_devices")


class LiveBuffers(Rule):
    """
    ## What it does
    Replaces `backend.live_buffers()` (a backend from `xla_bridge.get_backend()`, directly or
    through a variable) with `jax.live_arrays()`, passing on the platform given to
    `get_backend(platform)` as written (`jax.live_arrays(platform=None)` takes the same argument),
    and `device.live_buffers()` (a device from
    `jax.devices()`/`jax.local_devices()`) with the shards of live arrays on that device:
    `[s.data for a in jax.live_arrays() for s in a.addressable_shards if s.device == device]`.
    A `hasattr(backend, "live_buffers")` guard around it is folded away, and a local `backend`
    variable left unused is deleted (`jax.lib.xla_bridge` is gone from current JAX). A
    `live_buffers()` call on anything else is reported with both forms, and so is a backend whose
    platform cannot be carried over (`get_backend(**kwargs)`, or a variable bound to
    `get_backend(name)` where `name` may hold another value at the `live_buffers()` call).

    `live_buffers()` listed one buffer a device: a sharded array on 8 devices was 8 entries, but is
    one entry of `jax.live_arrays()`. So the backend form is rewritten to `jax.live_arrays()` where
    that changes nothing (a test of emptiness, a loop that deletes each one), and a count,
    `len(backend.live_buffers())`, to
    `sum(len(a.sharding.addressable_devices) for a in jax.live_arrays())`: one buffer a device
    of this process, counted without making the shards' arrays (iterating `addressable_shards`
    creates single-device arrays that later `jax.live_arrays()` calls list, so a leak check
    built on it finds leaks of its own making). A device's count, `len(device.live_buffers())`,
    becomes `sum(1 for a in jax.live_arrays() if device in a.sharding.device_set)` for the same
    reason. Safe fixes; a program that holds its arrays' shard views, `shard.data`, has them
    counted again, as they are live arrays of their own.
    Any other use (the buffers' shapes, their bytes) is reported: `jax.live_arrays()` lists
    arrays, and their shards' `.data` are new arrays that later listings see. The device form
    is unsafe where it is a list: single-device jax.Arrays (shards) rather than raw device buffers.

    ## Why is this bad?
    With jax.Array (the only mode since JAX 0.4.7) `live_buffers()` no longer sees arrays: it
    returns an empty list, so leak checks built on it silently pass. `jax.live_arrays()` is
    the replacement.
    """

    code = "JM401"
    name = "live-buffers"
    summary = "`live_buffers()` → `jax.live_arrays()`"
    fix_safety = "safe"
    unsafe_note = ("a device's buffers become its shards of `jax.live_arrays()`: single-device arrays, not raw buffers, "
                   "so what a leak check counts may differ")
    triggers = (b"live_buffers",)
    deprecated_in = "0.4.7"
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                import jax

                def leaked():
                    backend = jax.lib.xla_bridge.get_backend()
                    if hasattr(backend, "live_buffers"):
                        return len(backend.live_buffers())
                    return 0
            """),
            snippet("""
                import jax

                def leaked():
                    return sum(len(a.sharding.addressable_devices) for a in jax.live_arrays())
            """),
            title="a count of a backend's buffers, under a hasattr guard: the line it made unreachable goes too",
        ),
        Example(
            snippet("""
                import jax

                def clear_mem(device="gpu"):
                    backend = jax.lib.xla_bridge.get_backend(device)
                    for buf in backend.live_buffers():
                        buf.delete()
            """),
            snippet("""
                import jax

                def clear_mem(device="gpu"):
                    for buf in jax.live_arrays(device):
                        buf.delete()
            """),
            title="the backend's platform is passed on",
        ),
        Example(
            snippet("""
                import jax

                def count(**kwargs):
                    return len(jax.lib.xla_bridge.get_backend(**kwargs).live_buffers())
            """),
            snippet("""
                import jax

                def count(**kwargs):
                    return len(jax.lib.xla_bridge.get_backend(**kwargs).live_buffers())
            """),
            flagged=True,
            title="a platform that cannot be carried over is reported",
        ),
        Example(
            snippet("""
                import jax

                n = len(jax.devices()[0].live_buffers())
            """),
            snippet("""
                import jax

                n = sum(1 for a in jax.live_arrays() if jax.devices()[0] in a.sharding.device_set)
            """),
            title="a device's count: the live arrays with a shard on it",
        ),
        Example(
            snippet("""
                import jax

                on_first = jax.devices()[0].live_buffers()
            """),
            snippet("""
                import jax

                on_first = [s.data for a in jax.live_arrays() for s in a.addressable_shards if s.device == jax.devices()[0]]
            """),
            unsafe=True,
            title="a device's buffers: its shards of the live arrays",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.nodes(ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "live_buffers" and not call.args and not call.keywords:
                yield self._call(ctx, call, func.value)
            elif _is_hasattr_live_buffers(ctx, call):
                finding = self._guard(ctx, call)
                if finding:
                    yield finding
        yield from self._unused_backends(ctx)

    def _unused_backends(self, ctx: FileContext) -> Iterator[Finding]:
        """``backend = xla_bridge.get_backend()`` left with no use once its ``live_buffers()`` calls
        are rewritten: ``jax.lib.xla_bridge`` no longer exists, so the line goes (with its import)."""
        for stmt in ctx.nodes(ast.Assign):
            if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                    and ctx.qualname(stmt.value.func) == GET_BACKEND):
                continue
            name = stmt.targets[0].id
            owner = ctx.resolver.scope_of(stmt.targets[0])
            used = any(isinstance(n.ctx, ast.Load) and ctx.resolver.lookup(name, ctx.resolver.scope_of(n)) is owner
                       for n in ctx.names_bound_by(name, owner))
            if not used and owner.kind == "function":
                drops = importer(ctx).root_import(stmt.value.func)
                fix = Fix("safe", edits=(delete_statement(ctx, stmt),), drop_unused_imports=drops)
                yield self.finding(ctx, stmt, f"`{name}` is no longer used and `xla_bridge.get_backend()` is gone from "
                                   "current JAX: delete the line", fix)

    def _call(self, ctx: FileContext, call: ast.Call, receiver: ast.expr) -> Finding:
        live, imports = importer(ctx).reference("jax.live_arrays", at=call)
        kind = _receiver_kind(ctx, receiver)
        if kind == "backend":
            platform = _platform(ctx, receiver, call)
            if platform is None:
                return self.finding(ctx, call, "`live_buffers()` sees no jax.Array: use `jax.live_arrays()` with the "
                                    "platform given to `get_backend()`, which cannot be carried over here",
                                    suggestion="jax.live_arrays(platform)")
            bound = receiver.func if isinstance(receiver, ast.Call) else receiver
            drops = importer(ctx).root_import(bound)
            use = _use(ctx, call)
            if use == "count":  # len(...): one buffer a device, so count the arrays' shards
                counted = ctx.parent(call)
                assert counted is not None  # the `len(...)` call
                text = f"sum(len(a.sharding.addressable_devices) for a in {live}({platform}))"
                fix = Fix("safe", edits=(ctx.replace(counted, text),), add_imports=imports, drop_unused_imports=drops)
                return self.finding(ctx, call, "`live_buffers()` sees no jax.Array: count the devices of "
                                    "`jax.live_arrays()` (one buffer a device, as `live_buffers()` counted)", fix)
            if use is None:  # no expression lists the buffers as 0.4.1 did: a person decides
                return self.finding(ctx, call, "`live_buffers()` sees no jax.Array, and `jax.live_arrays()` lists "
                                    "arrays, not device buffers (a sharded array is one entry, it had one buffer a "
                                    "device): use the arrays, or their shards' `.data` (single-device arrays that stay "
                                    "alive and are listed by later `jax.live_arrays()` calls)",
                                    suggestion=f"jax.live_arrays({platform})  # or: [s.data for a in jax.live_arrays("
                                    f"{platform}) for s in a.addressable_shards]")
            fix = Fix("safe", edits=(ctx.replace(call, f"{live}({platform})"),), add_imports=imports,
                      drop_unused_imports=drops)
            return self.finding(ctx, call, "`live_buffers()` sees no jax.Array: use `jax.live_arrays()`", fix,
                                replacement="jax.live_arrays()")
        device = ctx.text(receiver)
        shards = f"[s.data for a in {live}() for s in a.addressable_shards if s.device == {device}]"
        if kind == "device" and _use(ctx, call) == "count":  # one buffer an array with a shard there
            counted = ctx.parent(call)
            assert counted is not None  # the `len(...)` call
            text = f"sum(1 for a in {live}() if {device} in a.sharding.device_set)"
            return self.finding(ctx, call, "`Device.live_buffers()` sees no jax.Array: count the arrays of "
                                "`jax.live_arrays()` with a shard on that device (one buffer each, as it counted)",
                                Fix("safe", edits=(ctx.replace(counted, text),), add_imports=imports))
        if kind == "device":
            fix = Fix("unsafe", edits=(ctx.replace(call, shards),), add_imports=imports)
            return self.finding(ctx, call, "`Device.live_buffers()` sees no jax.Array: use the shards of "
                                "`jax.live_arrays()` on that device", fix)
        if _use(ctx, call) == "count":  # the counts that create nothing, of a backend and of a device
            return self.finding(ctx, call, "`live_buffers()` sees no jax.Array: count the devices of "
                                "`jax.live_arrays()` for a backend, or the arrays with a shard on a device",
                                suggestion="sum(len(a.sharding.addressable_devices) for a in jax.live_arrays())"
                                f"  # or, for a device: sum(1 for a in jax.live_arrays() if {device} in "
                                "a.sharding.device_set)")
        shards = f"[s.data for a in jax.live_arrays() for s in a.addressable_shards if s.device == {device}]"
        return self.finding(ctx, call, "`live_buffers()` sees no jax.Array: use `jax.live_arrays()` for a backend, or "
                            "the shards on a device", suggestion=f"jax.live_arrays()  # or: {shards}")

    def _guard(self, ctx: FileContext, call: ast.Call) -> Optional[Finding]:
        if _receiver_kind(ctx, call.args[0]) is None:
            return None
        folded = fold_true(ctx, call)
        message = "`hasattr(..., \"live_buffers\")` guards a removed API: `jax.live_arrays()` always exists"
        if folded is None:
            return self.finding(ctx, call, message, suggestion="True")
        statement_edits, edits = folded
        return self.finding(ctx, call, message, Fix("safe", edits=edits, statement_edits=statement_edits))


def _use(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """How the list is used where arrays stand in for buffers without changing the result:
    "count" (``len(...)``, rewritten to count shards), "truth" (empty or not), "delete" (a loop
    that deletes each one, which frees an array's buffers); None for any other use."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Call) and parent.args == [call] and not parent.keywords:
        builtin = _builtin(ctx, parent)
        return "count" if builtin == "len" else "truth" if builtin == "bool" else None
    if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is call:
        return "truth"
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return "truth"
    if isinstance(parent, ast.BoolOp) and isinstance(ctx.parent(parent), (ast.If, ast.While, ast.Assert)):
        return "truth"
    if isinstance(parent, ast.For) and parent.iter is call and isinstance(parent.target, ast.Name) and not parent.orelse:
        name = parent.target.id
        uses = [n for stmt in parent.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name]
        return "delete" if uses and all(_deleted(ctx, n) for n in uses) else None
    return None


def _builtin(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """The builtin ``call`` calls (``len``, ``bool``, ...), if its name is not bound here."""
    func = call.func
    if isinstance(func, ast.Name) and ctx.resolver.lookup(func.id, ctx.resolver.scope_of(func)) is None:
        return func.id
    return None


def _deleted(ctx: FileContext, name: ast.Name) -> bool:
    """Whether ``name`` is used as ``name.delete()``."""
    attr = ctx.parent(name)
    if not (isinstance(attr, ast.Attribute) and attr.attr == "delete"):
        return False
    called = ctx.parent(attr)
    return isinstance(called, ast.Call) and called.func is attr and isinstance(ctx.parent(called), ast.Expr)


def _is_hasattr_live_buffers(ctx: FileContext, call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "hasattr"
        and len(call.args) == 2
        and isinstance(call.args[1], ast.Constant)
        and call.args[1].value == "live_buffers"
    )


def _receiver_kind(ctx: FileContext, expr: ast.expr) -> Optional[str]:
    """"backend", "device" or None (unknown)."""
    return _receiver(ctx, expr)[0]


def _receiver(ctx: FileContext, expr: ast.expr, depth: int = 0) -> Tuple[Optional[str], Optional[ast.Call]]:
    """The kind of ``expr`` ("backend", "device" or None) and, for a backend, its ``get_backend(...)`` call."""
    if isinstance(expr, ast.Call) and ctx.qualname(expr.func) == GET_BACKEND:
        return "backend", expr
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call) and ctx.qualname(expr.value.func) in DEVICE_LISTS:
        return "device", None
    if isinstance(expr, ast.Name) and depth < 3:
        source = _single_assignment(ctx, expr)
        if source is not None:
            return _receiver(ctx, source, depth + 1)
        loop = _loop_over(ctx, expr)
        if loop is not None and isinstance(loop, ast.Call) and ctx.qualname(loop.func) in DEVICE_LISTS:
            return "device", None
    return None, None


def _platform(ctx: FileContext, receiver: ast.expr, call: ast.Call) -> Optional[str]:
    """The arguments of ``jax.live_arrays(...)`` for a backend receiver: ``get_backend(platform)``'s one
    argument as written (positional or ``platform=``), "" for none, None when it cannot be carried over
    (another keyword, ``*args``/``**kwargs``, or, through a variable, a value that may differ at ``call``)."""
    backend = _receiver(ctx, receiver)[1]
    if backend is None:
        return None
    if not backend.args and not backend.keywords:
        return ""
    if len(backend.args) == 1 and not backend.keywords and not isinstance(backend.args[0], ast.Starred):
        value, text = backend.args[0], ctx.text(backend.args[0])
    elif not backend.args and len(backend.keywords) == 1 and backend.keywords[0].arg == "platform":
        value, text = backend.keywords[0].value, f"platform={ctx.text(backend.keywords[0].value)}"
    else:
        return None
    if backend is receiver or _same_value(ctx, value, call):
        return text
    return None


def _same_value(ctx: FileContext, value: ast.expr, call: ast.Call) -> bool:
    """Whether ``value``, evaluated where it stands, is what its text means at ``call``: a constant, or
    a name bound once (a parameter or one assignment) that ``call`` sees the same binding of."""
    if isinstance(value, ast.Constant):
        return True
    if not isinstance(value, ast.Name):
        return False
    owner = ctx.resolver.lookup(value.id, ctx.resolver.scope_of(value))
    if owner is None or ctx.resolver.lookup(value.id, ctx.resolver.scope_of(call.func)) is not owner:
        return False
    bindings = owner.bindings[value.id]
    return len(bindings) == 1 and (bindings[0].node is owner.node or isinstance(bindings[0].node, ast.Assign))


def _single_assignment(ctx: FileContext, name: ast.Name) -> Optional[ast.expr]:
    stmt = ctx.single_assignment(name)
    if stmt is not None and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.value
    return None


def _loop_over(ctx: FileContext, name: ast.Name) -> Optional[ast.expr]:
    """What the loop binding ``name`` iterates over: the comprehension around it that binds it
    (however many others bind the same name), else the one ``for`` or comprehension binding it."""
    child: ast.AST = name
    at = ctx.parent(name)
    while at is not None and not isinstance(at, (ast.stmt, ast.Lambda)):
        if isinstance(at, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for i, gen in enumerate(at.generators):
                if i == 0 and child is gen.iter:
                    break  # the first iterable is evaluated outside the comprehension
                if isinstance(gen.target, ast.Name) and gen.target.id == name.id:
                    return gen.iter
        child, at = at, ctx.parent(at)
    bindings = ctx.bindings(name)
    if len(bindings) == 1 and isinstance(bindings[0].node, (ast.For, ast.comprehension)):
        target = bindings[0].node.target
        if isinstance(target, ast.Name) and target.id == name.id:
            return bindings[0].node.iter
    return None
