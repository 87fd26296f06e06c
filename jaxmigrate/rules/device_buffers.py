"""JM402: ``arr.device_buffers`` / ``arr.device_buffer`` → the array's shards (gone in JAX 0.4.27)."""

from __future__ import annotations

import ast
from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import defines_attribute
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

REPLACEMENTS = {
    "device_buffers": "[s.data for s in {x}.addressable_shards]",
    "device_buffer": "{x}.addressable_data(0)",
}


class DeviceBuffers(Rule):
    """
    ## What it does
    Rewrites `arr.device_buffers` to `[s.data for s in arr.addressable_shards]` and
    `arr.device_buffer` to `arr.addressable_data(0)`, the spellings JAX named when it deprecated
    them. Left alone in a module that defines an attribute of that name itself (its own class).

    ## Why is this bad?
    `jax.Array.device_buffers` and `.device_buffer` were deprecated in JAX 0.4.22 and raise
    AttributeError since 0.4.27. The shards' `.data` are the same single-device arrays, in the
    same order, that `device_buffers` returned.
    """

    code = "JM402"
    name = "device-buffers"
    summary = "`arr.device_buffers` → `[s.data for s in arr.addressable_shards]`"
    fix_safety = "safe"
    triggers = (b"device_buffer",)
    deprecated_in = "0.4.22"
    removed_in = "0.4.27"
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                import jax

                def first_buffers(arr: jax.Array):
                    return arr.device_buffers[0], arr.device_buffer
            """),
            snippet("""
                import jax

                def first_buffers(arr: jax.Array):
                    return [s.data for s in arr.addressable_shards][0], arr.addressable_data(0)
            """),
            title="both attributes",
        ),
        Example(
            snippet("""
                class Holder:
                    def __init__(self, buffers):
                        self.device_buffers = buffers

                def count(holder):
                    return len(holder.device_buffers)
            """),
            title="a module's own attribute of that name",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        own = {attr: defines_attribute(ctx, attr) for attr in REPLACEMENTS if ctx.attributes(attr)}
        for node in ctx.attributes(*REPLACEMENTS):
            if not isinstance(node.ctx, ast.Load) or ctx.qualname(node.value) is not None or own[node.attr]:
                continue  # an assignment, a module's attribute, or the module's own attribute of that name
            text = REPLACEMENTS[node.attr].format(x=ctx.text(node.value))
            fix = Fix("safe", edits=(ctx.replace(node, text),))  # the receiver is evaluated once either way
            yield self.finding(ctx, node, f"`.{node.attr}` was deprecated in JAX 0.4.22 and removed in 0.4.27: use "
                               f"`{REPLACEMENTS[node.attr].format(x='arr')}`", fix, replacement=text)
