"""JM403: ``arr.device()``, the method of JAX arrays removed in JAX 0.4.27 (``.device`` is a property since 0.4.31)."""

from __future__ import annotations

import ast
from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.values import defines_attribute
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

#: ``jax.Array.device`` as a property (jax/_src/basearray.py at jax-v0.4.31: a Device for a
#: single-device array, the Sharding for a sharded one)
PROPERTY_SINCE = "0.4.31"


class ArrayDeviceMethod(Rule):
    """
    ## What it does
    Rewrites `arr.device()`, a call without arguments in a module that uses JAX, to `arr.device`
    for targets from JAX 0.4.31, where `device` is a property: the array's one device, what the
    method returned. For a target from 0.4.21 to 0.4.30 the call is reported with JAX's own
    advice, `arr.devices()` (the set of the array's devices). Left alone in a module that defines
    a `device` attribute or method itself, and on a module's attribute (`torch.cuda.device()`).

    ## Why is this bad?
    `jax.Array.device()` was deprecated in JAX 0.4.21 and removed in 0.4.27; from 0.4.31
    `arr.device` is a property, so the old call raises `TypeError: 'Device' object is not
    callable` on current JAX, often in a test helper whose argument could be anything. Fix
    safety: unsafe, as the receiver's type is not known: the fix is right where it is a JAX
    array (the method only ever worked on single-device arrays, where the property is the same
    device).
    """

    code = "JM403"
    name = "array-device-method"
    summary = "`arr.device()` → `arr.device` (a property since JAX 0.4.31)"
    fix_safety = "unsafe"
    unsafe_note = "`x.device()` becomes `x.device`, right where `x` is a JAX array (its type is not known here)"
    triggers = (b".device()",)
    requires = ((b"jax",),)
    deprecated_in = "0.4.21"
    removed_in = "0.4.27"
    replacement_since = "0.4.21"
    examples = (
        Example(
            snippet("""
                import jax

                def assert_on(test, data, device):
                    test.assertEqual(data.device(), device)
            """),
            snippet("""
                import jax

                def assert_on(test, data, device):
                    test.assertEqual(data.device, device)
            """),
            unsafe=True,
            title="the method becomes the property",
        ),
        Example(
            snippet("""
                import jax

                class Placement:
                    def device(self):
                        return jax.devices()[0]

                where = Placement().device()
            """),
            title="a module's own `device` method",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return
        calls = [node for node in ctx.attributes("device") if isinstance(node.ctx, ast.Load)]
        if not calls or defines_attribute(ctx, "device"):
            return
        prop = ctx.target_at_least(PROPERTY_SINCE)
        for node in calls:
            call = ctx.parent(node)
            if not (isinstance(call, ast.Call) and call.func is node and not call.args and not call.keywords):
                continue
            if ctx.qualname(node.value) is not None:
                continue  # a module's function (`torch.cuda.device()`, `jax.device()`), not an array's method
            removed = f"`.device()` of JAX arrays was deprecated in JAX {self.deprecated_in} and removed in {self.removed_in}"
            if prop:
                text = f"{ctx.text(node.value)}.device"
                yield self.finding(ctx, call, f"{removed}: use the property `.device` (since {PROPERTY_SINCE})",
                                   Fix("unsafe", edits=(ctx.replace(call, text),)), replacement=text)
            else:
                yield self.finding(ctx, call, f"{removed}: use `.devices()`, the set of the array's devices",
                                   suggestion=f"{ctx.text(node.value)}.devices()")
