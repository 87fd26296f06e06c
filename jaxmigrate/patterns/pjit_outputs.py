"""What a pjitted function returned, for JM502: GlobalDeviceArrays where GDA outputs were on.

GDA-era pjit returned host-local arrays unless the option ``jax_parallel_functions_output_gda``
was on where it was called; then each array it returned was a GlobalDeviceArray (jax-v0.4.1:
pjit's ``out_positional_semantics`` is GLOBAL under the option, and pxla's results handler makes
GDAs). So where the module turns the option on (``jax.config.update(...)``, as the GDA docs told),
or the call runs inside ``with parallel_functions_output_gda(True):`` or a function or class
decorated with it (or ``jtu.with_config(jax_parallel_functions_output_gda=True)``), a value a
call of a pjitted function returns (or one unpacked from it) is a GDA, and its GDA attributes
are migrated as any GDA's. Elsewhere it was a GDA only if the option was on where the program ran.

A call of a pjitted function: ``pjit(f, ...)(x)``, or a call of a name bound once to
``pjit(f, ...)`` or to a function decorated ``@partial(pjit, ...)``, resolving to that binding.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.patterns.era import GDA_OUTPUTS
from jaxmigrate.patterns.gda import PJIT, outputs_are_global

GDA_OUTPUT_OPTION = "jax_parallel_functions_output_gda"


def pjitted_calls(ctx: FileContext) -> Dict[int, ast.Call]:
    """id(call) → call, for each call of a pjitted function (memoised)."""
    return ctx.memo("pjit_outputs.pjitted_calls", _pjitted_calls)


def _pjitted_calls(ctx: FileContext) -> Dict[int, ast.Call]:
    found: Dict[int, ast.Call] = {}
    for call, _, is_partial in ctx.applications(PJIT):
        outer = ctx.parent(call)
        if not is_partial and isinstance(outer, ast.Call) and outer.func is call:  # pjit(f, ...)(x)
            found[id(outer)] = outer
            continue
        binding = _binding(ctx, call, is_partial)
        if binding is None:
            continue
        name, stmt, scope = binding
        for use in ctx.names_bound_by(name, scope):
            site = ctx.parent(use)
            if isinstance(site, ast.Call) and site.func is use:
                bindings = ctx.bindings(use)
                if len(bindings) == 1 and bindings[0].node is stmt:
                    found[id(site)] = site
    return found


def _binding(ctx: FileContext, call: ast.Call, is_partial: bool):
    """(name, binding statement, its scope) of ``f = pjit(...)`` or ``@partial(pjit, ...) def f``."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0]
        return name.id, parent, ctx.resolver.lookup(name.id, ctx.resolver.scope_of(name))
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_partial and call in parent.decorator_list:
        return parent.name, parent, ctx.resolver.lookup(parent.name, ctx.resolver.scope_of(call))
    return None


def returns_gdas(ctx: FileContext, call: ast.Call) -> bool:
    """Whether ``call`` calls a pjitted function where GDA outputs were on (see the module's docstring)."""
    return id(call) in pjitted_calls(ctx) and gda_outputs_at(ctx, call)


def pjit_output(ctx: FileContext, receiver: ast.expr) -> Optional[ast.Call]:
    """The call of a pjitted function whose result ``receiver`` is: the call itself, or a name
    bound once by an assignment of it (``out = f(x)``, ``out, aux = f(x)``); else None."""
    calls = pjitted_calls(ctx)
    if not calls:
        return None
    if isinstance(receiver, ast.Call):
        return receiver if id(receiver) in calls else None
    if not isinstance(receiver, ast.Name):
        return None
    bindings = ctx.bindings(receiver)
    stmt = bindings[0].node if len(bindings) == 1 else None
    if isinstance(stmt, ast.Assign) and id(stmt.value) in calls:
        return stmt.value  # type: ignore[return-value]  # an entry of ``calls``: a Call
    return None


def gda_outputs_at(ctx: FileContext, node: ast.AST) -> bool:
    """Whether pjit returned GDAs where ``node`` runs: the module turns the option on (or did
    before a fix round), or ``node`` is inside ``with ...parallel_functions_output_gda(True):`` or a
    function or class decorated with it or with ``with_config(jax_parallel_functions_output_gda=True)``."""
    if outputs_are_global(ctx) or ctx.origin.get(GDA_OUTPUTS):
        return True
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(_turns_on(ctx, i.context_expr) for i in parent.items):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                _turns_on(ctx, d) for d in parent.decorator_list):
            return True
        parent = ctx.parent(parent)
    return False


def _turns_on(ctx: FileContext, expr: ast.expr) -> bool:
    """``parallel_functions_output_gda(True)`` (JAX's option state) or ``with_config(jax_parallel_functions_output_gda=True)``."""
    if not isinstance(expr, ast.Call):
        return False
    name = (ctx.qualname(expr.func) or ctx.text(expr.func)).rpartition(".")[2]
    if name == GDA_OUTPUT_OPTION[len("jax_"):]:
        return len(expr.args) == 1 and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is True
    if name == "with_config":
        return any(k.arg == GDA_OUTPUT_OPTION and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in expr.keywords)
    return False
