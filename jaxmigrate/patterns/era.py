"""Which era a module was written in: for GDA-era pjit (inputs host-local) or for jax.Array (global).

Current code calls pjit with the same arguments as code written before jax.Array, and only the
era tells whether its inputs were host-local. A module is GDA-era when it says so: a pjit call
spelled with ``in_axis_resources``/``out_axis_resources``, a GlobalDeviceArray name (the class, its
module, ``FROM_GDA``), or one of the flags that switched between the eras (``jax_array``,
``jax_parallel_functions_output_gda``). The safe fixes rewrite some of these (JM101, JM301, JM5xx):
the pipeline hands the evidence of the text as given on to the later rounds (``FileContext.origin``),
so that a fix round does not make the era unknown.
"""

from __future__ import annotations

import ast
from typing import Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.patterns.gda import FROM_GDA, GDA_MODULE, is_multi_process

#: the key of the era evidence in ``FileContext.origin``
GDA_ERA = "gda-era evidence"
#: the key of the functions that turned jax.Array on (``@jax_array(True)``), which a fix may drop
ARRAY_ON_FUNCTIONS = "functions with jax.Array on"
AXIS_RESOURCES = ("in_axis_resources", "out_axis_resources")
ERA_FLAGS = ("jax_array", "jax_parallel_functions_output_gda")


def gda_era_evidence(ctx: FileContext) -> Optional[str]:
    """What shows that the module was written for GDA-era pjit (``in_axis_resources`` at line 12),
    or None: of the text as given to the run, else of this text."""
    inherited = ctx.origin.get(GDA_ERA)
    return str(inherited) if inherited is not None else written_evidence(ctx)


def written_evidence(ctx: FileContext) -> Optional[str]:
    """The GDA-era evidence this text itself holds (not inherited from before a fix round)."""
    return ctx.memo("era.written_evidence", _evidence)


def _evidence(ctx: FileContext) -> Optional[str]:
    found = []
    for kw in ctx.nodes(ast.keyword):  # pjit(..., in_axis_resources=...), jtu.with_config(jax_array=True)
        if kw.arg in AXIS_RESOURCES or kw.arg in ERA_FLAGS:
            found.append((kw.value.lineno, f"`{kw.arg}` at line {kw.value.lineno}"))
    for node, qualname in ctx.qualified():
        if _gda_era_name(qualname):
            found.append((node.lineno, f"`{qualname.rpartition('.')[2]}` at line {node.lineno}"))
    for imp in ctx.nodes(ast.ImportFrom):  # an import nothing reads still says it
        if not imp.level and imp.module:
            for alias in imp.names:
                if _gda_era_name(canonical(f"{imp.module}.{alias.name}") or ""):
                    found.append((imp.lineno, f"`{alias.name}` at line {imp.lineno}"))
    for plain in ctx.nodes(ast.Import):
        found += [(plain.lineno, f"`{a.name}` at line {plain.lineno}")
                  for a in plain.names if _gda_era_name(canonical(a.name) or "")]
    for const in ctx.nodes(ast.Constant):
        if isinstance(const.value, str) and const.value in ERA_FLAGS:
            found.append((const.lineno, f"`{const.value}` at line {const.lineno}"))
    for attr in ctx.attributes(*ERA_FLAGS):
        found.append((attr.lineno, f"`{attr.attr}` at line {attr.lineno}"))
    return min(found)[1] if found else None


def _gda_era_name(qualname: str) -> bool:
    return qualname == FROM_GDA or qualname == GDA_MODULE or qualname.startswith(GDA_MODULE + ".")


def origin_facts(ctx: FileContext) -> dict:
    """The facts of the text as given that later fix rounds inherit (see the module's docstring):
    only multi-process modules, the only ones whose era a rule asks (JM504's sites)."""
    if not is_multi_process(ctx):
        return {}
    evidence = written_evidence(ctx)
    facts: dict = {GDA_ERA: evidence} if evidence is not None else {}
    functions = _array_on_functions(ctx)
    if functions:
        facts[ARRAY_ON_FUNCTIONS] = functions
    return facts


def array_on_at(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` runs where a GDA-era module turned jax.Array on for itself: inside ``with
    jax_array(True):``, or in a function or class decorated ``@jax_array(True)`` or
    ``@jtu.with_config(jax_array=True)`` (JAX's own tests ran such blocks in both modes): its
    pjit inputs are global there."""
    inherited = cast(Tuple[str, ...], ctx.origin.get(ARRAY_ON_FUNCTIONS) or ())
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(_turns_array_on(ctx, i.context_expr)
                                                                 for i in parent.items):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
                any(_turns_array_on(ctx, d) for d in parent.decorator_list) or _dotted(ctx, parent) in inherited):
            return True
        parent = ctx.parent(parent)
    return False


def _array_on_functions(ctx: FileContext) -> tuple:
    """The dotted names of the functions and classes decorated to turn jax.Array on."""
    defs: list = [*ctx.nodes(ast.FunctionDef), *ctx.nodes(ast.AsyncFunctionDef), *ctx.nodes(ast.ClassDef)]
    return tuple(sorted(_dotted(ctx, d) for d in defs if any(_turns_array_on(ctx, x) for x in d.decorator_list)))


def _dotted(ctx: FileContext, node: ast.AST) -> str:
    names = []
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        node = ctx.parent(node)  # type: ignore[assignment]  # None ends the walk
    return ".".join(reversed(names))


def _turns_array_on(ctx: FileContext, expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = (ctx.qualname(expr.func) or ctx.text(expr.func)).rpartition(".")[2]
    if name == "jax_array":
        return bool(expr.args) and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is True
    if name == "with_config":
        return any(k.arg == "jax_array" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in expr.keywords)
    return False
