"""``hasattr(jax_module, "name")`` guards, as plain data: which JAX name each one asks for.

A library of 2023 that ran on several JAX releases chose its code path by asking whether a name
existed (``if hasattr(jax, "device_put_sharded"):``). Where the target no longer has the name,
the guard is False there and the branch it selects no longer runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from jaxmigrate.analysis.context import FileContext


@dataclass(frozen=True)
class Guard:
    call: ast.Call  # the ``hasattr(...)`` call
    qualname: str  # the name it asks for: ``jax.device_put_sharded``


def attribute_guards(ctx: FileContext) -> Iterator[Guard]:
    """Each ``hasattr(m, "name")`` whose ``m`` is a JAX module (or ``jax`` itself) and whose
    ``hasattr`` is the builtin (not a name the module binds)."""
    for node in ctx.names("hasattr"):
        call = ctx.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node and len(call.args) == 2 and not call.keywords):
            continue
        if ctx.bindings(node):
            continue  # a hasattr of the module's own
        owner, name = call.args
        module = ctx.qualname(owner)
        if module is None or module.split(".")[0] != "jax":
            continue
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
            yield Guard(call, f"{module}.{name.value}")
