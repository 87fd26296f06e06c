"""JM902: ``TFRT_CPU_<n>`` device names in strings, which CPU devices no longer have since JAX 0.10.0."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.rules.base import Example, Rule, snippet

RENAMED_IN = "0.10.0"
_NAME = re.compile(r"TFRT_CPU_(\d+)")


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (SyntaxError, ValueError):
        return None


class CpuDeviceNames(Rule):
    """
    ## What it does
    Rewrites the CPU device names of a string literal, `"TFRT_CPU_0"`, to today's, `"cpu:0"`,
    for targets from JAX 0.10.0 on. A string that names the prefix alone (`"TFRT_CPU"`,
    `"TFRT_CPU_"`) or builds the name (`f"TFRT_CPU_{i}"`) is reported, with
    `device.platform == "cpu"` or `f"cpu:{i}"` to write.

    ## Why is this bad?
    `str(device)` of a CPU device was `TFRT_CPU_0` and is `cpu:0` since JAX 0.10.0: a test or a
    device lookup that compares with the old name finds nothing, silently. Fix safety: unsafe,
    as the string may also name devices in text the program reads from elsewhere (logs written
    by an older JAX), where the old name is still right.
    """

    code = "JM902"
    name = "cpu-device-names"
    summary = "`\"TFRT_CPU_0\"` device names (`cpu:0` since 0.10.0) → `\"cpu:0\"`"
    fix_safety = "unsafe"
    unsafe_note = ("a `TFRT_CPU_<n>` string that names a device in text from elsewhere (a log an older JAX wrote) no "
                   "longer matches it")
    triggers = (b"TFRT_CPU",)
    examples = (
        Example(
            snippet("""
                import jax

                first = jax.devices("cpu")[0]
                assert str(first) == "TFRT_CPU_0"
            """),
            snippet("""
                import jax

                first = jax.devices("cpu")[0]
                assert str(first) == "cpu:0"
            """),
            unsafe=True,
            title="a device name",
        ),
        Example(
            snippet("""
                import jax

                on_cpu = [d for d in jax.devices() if str(d).startswith("TFRT_CPU")]
            """),
            snippet("""
                import jax

                on_cpu = [d for d in jax.devices() if str(d).startswith("TFRT_CPU")]
            """),
            flagged=True,
            title="the prefix alone: reported with the test to write",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(RENAMED_IN):
            return
        why = f"CPU devices are named `cpu:<n>`, not `TFRT_CPU_<n>`, since JAX {RENAMED_IN}"
        for node in ctx.nodes(ast.Constant):
            if not isinstance(node.value, str) or "TFRT_CPU" not in node.value:
                continue
            parent = ctx.parent(node)
            if isinstance(parent, ast.Expr):
                continue  # a docstring, or a string on its own: prose
            if isinstance(parent, ast.JoinedStr):
                yield self.finding(ctx, parent, f"{why}: build the new name", suggestion='f"cpu:{...}"')
                continue
            new = _NAME.sub(lambda m: f"cpu:{m.group(1)}", node.value)
            if "TFRT_CPU" in new:  # a prefix, or a name without its number
                yield self.finding(ctx, node, f"{why}: test the platform instead of the name",
                                   suggestion='device.platform == "cpu"')
                continue
            text = _NAME.sub(lambda m: f"cpu:{m.group(1)}", ctx.text(node))  # its quotes and prefix kept
            fix = Fix("unsafe", edits=(ctx.replace(node, text),)) if _value(text) == new else None
            yield self.finding(ctx, node, f"{why}: use {text}", fix, replacement=text)
