"""JM501: GlobalDeviceArray constructors → ``jax.make_array_from_callback`` / ``..._single_device_arrays``."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.patterns.gda import (
    CONSTRUCTORS,
    MAKE_FROM_ARRAYS,
    MAKE_FROM_CALLBACK,
    construction_method,
    named_sharding_text,
    rewritable_construction,
)
from jaxmigrate.rules.base import Example, Rule, snippet

BATCHED = (
    "s = NamedSharding(global_mesh, P(*mesh_axes))\n"
    "devices = list(s.addressable_devices_indices_map(global_shape))\n"
    "arrays = data_callback([s.addressable_devices_indices_map(global_shape)[d] for d in devices])\n"
    "jax.make_array_from_single_device_arrays(global_shape, s, "
    "[jax.device_put(a, d) for a, d in zip(arrays, devices)])"
)
BATCHED_WITH_DEVICES = (
    "s = NamedSharding(global_mesh, P(*mesh_axes))\n"
    "# group the devices of s.addressable_devices_indices_map(global_shape) by index:\n"
    "groups = [(index, (device, ...)), ...]\n"
    "jax.make_array_from_single_device_arrays(global_shape, s, data_callback(groups))"
)


class GdaConstruction(Rule):
    """
    ## What it does
    Rewrites `GlobalDeviceArray.from_callback(shape, mesh, mesh_axes, cb)` to
    `jax.make_array_from_callback(shape, NamedSharding(mesh, spec), cb)` and the constructor
    `GlobalDeviceArray(shape, mesh, mesh_axes, buffers)` to
    `jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, spec), buffers)`.
    `spec` is `mesh_axes` itself when it is known to be a PartitionSpec, `P('x', None)` for a
    literal list or tuple, and `P(*mesh_axes)` otherwise.

    `from_batched_callback` and `from_batched_callback_with_devices` call back with all local
    indices at once; they have no one-call jax.Array form and are reported with the code to write.

    ## Why is this bad?
    `jax.experimental.global_device_array` was removed in JAX 0.4.7: jax.Array replaced it. The
    callback contract is the same (called per device with that shard's index, a tuple of
    slices), and so is the layout (`NamedSharding(mesh, P(*mesh_axes))`), so the rewrite keeps
    what the program computes.
    """

    code = "JM501"
    name = "gda-construction"
    summary = "`GlobalDeviceArray` constructors → `jax.make_array_from_callback` / `make_array_from_single_device_arrays`"
    fix_safety = "safe"
    triggers = (b"GlobalDeviceArray",)
    deprecated_in = "0.4.1"
    removed_in = "0.4.7"
    replacement_since = "0.4.1"
    history_names = ("jax.experimental.global_device_array.GlobalDeviceArray",)
    examples = (
        Example(
            snippet("""
                import jax
                from jax.experimental.global_device_array import GlobalDeviceArray
                from jax.sharding import PartitionSpec as P

                def load(shape, mesh, data):
                    return GlobalDeviceArray.from_callback(shape, mesh, P("x", None), lambda idx: data[idx])
            """),
            snippet("""
                import jax
                from jax.sharding import PartitionSpec as P

                def load(shape, mesh, data):
                    return jax.make_array_from_callback(shape, jax.sharding.NamedSharding(mesh, P("x", None)), lambda idx: data[idx])
            """),  # noqa: E501 - the fixer's output, verbatim
        ),
        Example(
            snippet("""
                import jax.experimental.global_device_array as gda_lib

                def assemble(shape, mesh, buffers):
                    return gda_lib.GlobalDeviceArray(shape, mesh, ["data", None], buffers)
            """),
            snippet("""
                from jax import make_array_from_single_device_arrays
                from jax.sharding import NamedSharding, PartitionSpec

                def assemble(shape, mesh, buffers):
                    return make_array_from_single_device_arrays(shape, NamedSharding(mesh, PartitionSpec("data", None)), buffers)
            """),
            title="the constructor, with mesh axes as a list",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call, kind in ctx.calls_to(*CONSTRUCTORS):
            finding = self._construction(ctx, call, kind)
            if finding is not None:
                yield finding

    def _construction(self, ctx: FileContext, call: ast.Call, kind: str) -> Optional[Finding]:
        method = construction_method(kind)
        if method.startswith("from_batched"):
            code = BATCHED if method == "from_batched_callback" else BATCHED_WITH_DEVICES
            return self.finding(ctx, call, f"`GlobalDeviceArray.{method}` was removed in JAX 0.4.7 and has no "
                                "one-call jax.Array form", suggestion=code)
        target = MAKE_FROM_CALLBACK if method == "from_callback" else MAKE_FROM_ARRAYS
        args = rewritable_construction(call, kind)
        if args is None:
            return self.finding(ctx, call, f"`GlobalDeviceArray` was removed in JAX 0.4.7: use `{target}`",
                                suggestion=f"{target}(global_shape, NamedSharding(global_mesh, P(*mesh_axes)), ...)")
        callee, imports = importer(ctx).reference(target, at=call)
        sharding, more = named_sharding_text(ctx, args["global_mesh"], args["mesh_axes"], at=call)
        last = args["data_callback" if method == "from_callback" else "device_buffers"]
        if not call.keywords:
            # keep the layout: swap the callee, and fold (mesh, mesh_axes) into one sharding argument
            start = ctx.span(call.args[1])[0]
            end = ctx.span(call.args[2])[1]
            edits: Tuple[Edit, ...] = (ctx.replace(call.func, callee), Edit(start, end, sharding))
        else:
            text = f"{callee}({ctx.text(args['global_shape'])}, {sharding}, {ctx.text(last)})"
            edits = (ctx.replace(call, text),)
        fix = Fix("safe", edits=edits, add_imports=imports + more, drop_unused_imports=importer(ctx).root_import(call.func))
        return self.finding(ctx, call, f"`GlobalDeviceArray{'.' + method if method != 'GlobalDeviceArray' else ''}` "
                            f"was removed in JAX 0.4.7: use `{target}` with a NamedSharding", fix, replacement=target)
