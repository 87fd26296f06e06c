"""JM704: ``jax.device_put_sharded`` / ``jax.device_put_replicated`` → ``jax.device_put`` with a sharding."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.core.findings import Finding, Fix, ImportRef
from jaxmigrate.patterns.gda import NAMED_SHARDING, PARTITION_SPEC, bind_arguments
from jaxmigrate.rules.base import Example, Rule, snippet

SHARDED = "jax.device_put_sharded"
REPLICATED = "jax.device_put_replicated"
PARAMS = {SHARDED: ("shards", "devices"), REPLICATED: ("x", "devices")}
MESH = "jax.sharding.Mesh"
# device lists that are safe to name twice (device_put_replicated needs their length too)
PURE_DEVICES = ("jax.devices", "jax.local_devices")


class DevicePutSharded(Rule):
    """
    ## What it does
    Rewrites `jax.device_put_sharded(shards, devices)` to
    `jax.device_put(jax.tree.map(lambda *s: STACK(s), *shards), NamedSharding(Mesh(np.array(devices), ("x",)), P("x")))`
    and `jax.device_put_replicated(x, devices)` to
    `jax.device_put(jax.tree.map(lambda v: STACK([v] * len(devices)), x), <the same sharding>)`,
    where `STACK` is `(np if isinstance(s[0], np.ndarray) else jnp).stack` (with `v` for `s[0]`):
    the stacked array, split along its new leading axis, one slice per device, as before. The
    `jax.tree.map` keeps pytrees of shards working. These are the drop-in replacements of JAX's
    own pmap migration guide (`docs/migrate_pmap.md`, "Drop-in replacements"), with its
    performance tip: NumPy leaves are stacked with `np.stack`, so host data stays on the host
    until `jax.device_put` sends each slice to its device (`jnp.stack` first copies all of it to
    the default device). Every other leaf (a `jax.Array`, a typed PRNG key array, a Python or
    NumPy scalar) is stacked with `jnp.stack`, as in the guide: `np.stack` would pull a `jax.Array`
    back to the host, fails on a typed key array (`TypeError`: a PRNGKey array cannot be converted
    to a NumPy array), and would turn a Python scalar into a float64/int64 NumPy array that
    `jax.device_put` makes a strongly typed float32/int32 array, where `device_put_replicated` and
    `jnp.stack` give a weakly typed one (times a bfloat16 array, it stays bfloat16). Values,
    dtypes, weak types and shardings are those of the `jnp.stack` spelling for each kind of leaf
    (checked on JAX 0.10.2 against the two on the real JAX 0.4.13: `fixtures/JM704/forms`). Applied for
    targets where the two are deprecated (0.8.1 and later).

    The fix is unsafe: the result is a `jax.Array` with a `NamedSharding` instead of the pmap
    layout (`PmapSharding`, itself removed in 0.10.0): `x[0]` of it, as in flax's `unreplicate`,
    is the same value but an array on all the devices rather than on the first one. The stacked
    array is built in full before it is split (for `device_put_replicated`, `len(devices)`
    copies, on the host for NumPy leaves).
    `device_put_replicated` with a device list that is not a name or `jax.devices()` /
    `jax.local_devices()` is reported, as the fix names the list twice.

    ## Why is this bad?
    Both were deprecated in JAX 0.8.1 ("use `jax.device_put` with a sharding") and removed in
    0.10.0, with the rest of the pmap infrastructure.
    """

    code = "JM704"
    name = "device-put-sharded"
    summary = "`jax.device_put_sharded`/`device_put_replicated` → `jax.device_put` with a `NamedSharding`"
    fix_safety = "unsafe"
    unsafe_note = ("the result is a jax.Array with a NamedSharding, not the pmap layout, and the stacked array is built "
                   "in full before it is split (NumPy leaves on the host)")
    triggers = (b"device_put_sharded", b"device_put_replicated")
    deprecated_in = "0.8.1"
    removed_in = "0.10.0"
    replacement_since = "0.4.25"  # jax.tree.map
    history_names = ("jax.device_put_sharded", "jax.device_put_replicated")
    examples = (
        Example(
            snippet("""
                import jax
                import numpy as np

                devices = jax.local_devices()
                batch = jax.device_put_sharded([np.ones(3) * i for i in range(len(devices))], devices)
            """),
            snippet("""
                import jax
                import jax.numpy as jnp
                import numpy as np

                devices = jax.local_devices()
                batch = jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *[np.ones(3) * i for i in range(len(devices))]), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devices), ("x",)), jax.sharding.PartitionSpec("x")))
            """),  # noqa: E501 - the fixer's output, verbatim
            unsafe=True,
        ),
        Example(
            snippet("""
                import jax

                def replicate(params, pick):
                    return jax.device_put_replicated(params, pick(jax.devices()))
            """),
            snippet("""
                import jax

                def replicate(params, pick):
                    return jax.device_put_replicated(params, pick(jax.devices()))
            """),
            flagged=True,
            title="a device list computed in place is reported",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        for call, callee in ctx.calls_to(SHARDED, REPLICATED):
            message = (f"`{callee}` is deprecated since JAX 0.8.1 and removed in 0.10.0: use `jax.device_put` "
                       "with a sharding")
            args = bind_arguments(call, PARAMS[callee])
            if args is None or len(args) != 2:
                yield self.finding(ctx, call, message, suggestion=_suggestion(callee))
            elif callee == REPLICATED and not _pure(ctx, args["devices"]):
                yield self.finding(ctx, call, f"{message}; name the device list first (the fix uses it twice)",
                                   suggestion=_suggestion(callee))
            else:
                yield self.finding(ctx, call, message, self._fix(ctx, call, callee, args), replacement="jax.device_put")

    def _fix(self, ctx: FileContext, call: ast.Call, callee: str, args) -> Fix:
        np_, imports = importer(ctx).module_reference("numpy", "np", at=call)
        jnp, more0 = importer(ctx).module_reference("jax.numpy", "jnp", at=call)
        put, more = importer(ctx).reference("jax.device_put", at=call, dotted=True)
        tree_map, more2 = importer(ctx).reference("jax.tree.map", at=call, dotted=True)
        sharding, more3 = _sharding(ctx, call, np_, ctx.text(args["devices"]))
        devices = ctx.text(args["devices"])
        if callee == SHARDED:
            stack = f"({np_} if isinstance(s[0], {np_}.ndarray) else {jnp}).stack"
            stacked = f"{tree_map}(lambda *s: {stack}(s), *{ctx.text(args['shards'])})"
        else:
            stack = f"({np_} if isinstance(v, {np_}.ndarray) else {jnp}).stack"
            stacked = f"{tree_map}(lambda v: {stack}([v] * len({devices})), {ctx.text(args['x'])})"
        edit = ctx.replace(call, f"{put}({stacked}, {sharding})")
        return Fix("unsafe", edits=(edit,), add_imports=imports + more0 + more + more2 + more3,
                   drop_unused_imports=importer(ctx).root_import(call.func))


def _sharding(ctx: FileContext, at: ast.AST, np_: str, devices: str) -> Tuple[str, Tuple[ImportRef, ...]]:
    named, a = importer(ctx).reference(NAMED_SHARDING, at=at)
    mesh, b = importer(ctx).reference(MESH, at=at)
    spec, c = importer(ctx).reference(PARTITION_SPEC, at=at)
    return f'{named}({mesh}({np_}.array({devices}), ("x",)), {spec}("x"))', a + b + c


def _pure(ctx: FileContext, devices: ast.expr) -> bool:
    if isinstance(devices, (ast.Name, ast.Attribute)):
        return True
    return isinstance(devices, ast.Call) and not devices.args and ctx.qualname(devices.func) in PURE_DEVICES


def _suggestion(callee: str) -> Optional[str]:
    if callee == SHARDED:
        return ('jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *shards), '
                'NamedSharding(Mesh(np.array(devices), ("x",)), P("x")))')
    return ('jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(devices)), x), '
            'NamedSharding(Mesh(np.array(devices), ("x",)), P("x")))')
