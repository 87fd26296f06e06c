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
from typing import List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.patterns.gda import FROM_GDA, GDA_MODULE, is_multi_process, outputs_are_global

#: the key of the era evidence in ``FileContext.origin``
GDA_ERA = "gda-era evidence"
#: the key of the functions and classes that set the jax.Array mode (``@jax_array(True)``, a setUp
#: that skips in one mode), whose evidence a fix may drop (JM301)
ARRAY_ON_FUNCTIONS = "functions that set the jax.Array mode"
#: the key that says the text as given turned `jax_parallel_functions_output_gda` on module-wide
#: (JM301 deletes that line; JM502 still knows pjit returned GDAs: patterns/pjit_outputs.py)
GDA_OUTPUTS = "gda outputs"
#: the key of a module that turns jax.Array on for itself (``jax.config.update("jax_array", True)``
#: outside any function, as the migration guide enables it), which JM301 deletes
ARRAY_ON_MODULE = "module turns jax.Array on"
AXIS_RESOURCES = ("in_axis_resources", "out_axis_resources")
ERA_FLAGS = ("jax_array", "jax_parallel_functions_output_gda")


def gda_era_evidence(ctx: FileContext) -> Optional[str]:
    """What shows that the module was written for GDA-era pjit (``in_axis_resources`` at line 12),
    or None: of the text as given to the run, else of this text."""
    inherited = ctx.origin.get(GDA_ERA)
    return str(inherited) if inherited is not None else written_evidence(ctx)


def written_evidence(ctx: FileContext) -> Optional[str]:
    """The GDA-era evidence this text itself holds (not inherited from before a fix round)."""
    found = evidence_items(ctx)
    return min(found, key=lambda item: item[:2])[1] if found else None


#: one piece of evidence: its line, what it is (``in_axis_resources` at line 12``), its span (the
#: keyword's name alone, not its value) and its node
Item = Tuple[int, str, Tuple[int, int], ast.AST]


def evidence_items(ctx: FileContext) -> List[Item]:
    """Every piece of GDA-era evidence the text holds, in no particular order."""
    return ctx.memo("era.evidence_items", _evidence)


def _evidence(ctx: FileContext) -> List[Item]:
    found: List[Item] = []
    for kw in ctx.nodes(ast.keyword):  # pjit(..., in_axis_resources=...), jtu.with_config(jax_array=True)
        if kw.arg in AXIS_RESOURCES or kw.arg in ERA_FLAGS:
            start = ctx.offset(kw.lineno, kw.col_offset)
            found.append((kw.value.lineno, f"`{kw.arg}` at line {kw.value.lineno}", (start, start + len(kw.arg)), kw))
    for node, qualname in ctx.qualified():
        if _gda_era_name(qualname):
            found.append((node.lineno, f"`{qualname.rpartition('.')[2]}` at line {node.lineno}", ctx.span(node), node))
    for imp in ctx.nodes(ast.ImportFrom):  # an import nothing reads still says it
        if not imp.level and imp.module:
            for alias in imp.names:
                if _gda_era_name(canonical(f"{imp.module}.{alias.name}") or ""):
                    found.append((imp.lineno, f"`{alias.name}` at line {imp.lineno}", ctx.span(alias), alias))
    for plain in ctx.nodes(ast.Import):
        found += [(plain.lineno, f"`{a.name}` at line {plain.lineno}", ctx.span(a), a)
                  for a in plain.names if _gda_era_name(canonical(a.name) or "")]
    for const in ctx.nodes(ast.Constant):
        if isinstance(const.value, str) and const.value in ERA_FLAGS:
            found.append((const.lineno, f"`{const.value}` at line {const.lineno}", ctx.span(const), const))
    for attr in ctx.attributes(*ERA_FLAGS):
        found.append((attr.lineno, f"`{attr.attr}` at line {attr.lineno}", ctx.span(attr), attr))
    return found


def _gda_era_name(qualname: str) -> bool:
    return qualname == FROM_GDA or qualname == GDA_MODULE or qualname.startswith(GDA_MODULE + ".")


def origin_facts(ctx: FileContext) -> dict:
    """The facts of the text as given that later fix rounds inherit (see the module's docstring):
    whether it turned GDA outputs on; the era only of multi-process modules, the only ones whose
    era a rule asks (JM504's sites)."""
    facts: dict = {GDA_OUTPUTS: True} if outputs_are_global(ctx) else {}
    if not is_multi_process(ctx):
        return facts
    evidence = written_evidence(ctx)
    if evidence is not None:
        facts[GDA_ERA] = evidence
    functions = _array_on_functions(ctx)
    if functions:
        facts[ARRAY_ON_FUNCTIONS] = functions
    if module_turns_array_on(ctx):
        facts[ARRAY_ON_MODULE] = True
    return facts


def module_turns_array_on(ctx: FileContext) -> bool:
    """Whether the module turns jax.Array on outside any function: ``jax.config.update("jax_array",
    True)``, as the migration guide says to enable it "at the top of your main file". Its pjit
    calls then take global values (0.4.1 in that mode; the legacy runtime too)."""
    if ctx.origin.get(ARRAY_ON_MODULE):
        return True
    for call, _ in ctx.calls_to("jax.config.update"):
        if (len(call.args) == 2 and isinstance(call.args[0], ast.Constant) and call.args[0].value == "jax_array"
                and isinstance(call.args[1], ast.Constant) and call.args[1].value is True and not _in_function(ctx, call)):
            return True
    return False


def _in_function(ctx: FileContext, node: ast.AST) -> bool:
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return True
        parent = ctx.parent(parent)
    return False


def array_mode_set_at(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` runs where a GDA-era module set the jax.Array mode for itself: inside ``with
    jax_array(True):``, in a function or class decorated ``@jax_array(...)`` or
    ``@jtu.with_config(jax_array=...)``, or in a test class whose ``setUp`` skips it in one mode
    (``if jax.config.jax_array: self.skipTest(...)``): JAX's own tests ran such code in both modes.
    Turned on, its pjit inputs are global; turned off, it is GDA-mode code that a jax.Array
    conversion would make raise, and that has no jax.Array future (the option goes in 0.4.7)."""
    inherited = cast(Tuple[str, ...], ctx.origin.get(ARRAY_ON_FUNCTIONS) or ())
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(_sets_array_mode(ctx, i.context_expr)
                                                                 for i in parent.items):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
                _mode_set_by(ctx, parent) or inherited and _dotted(ctx, parent) in inherited):
            return True
        parent = ctx.parent(parent)
    return False


def _array_on_functions(ctx: FileContext) -> tuple:
    """The dotted names of the functions and classes that set the jax.Array mode for themselves."""
    defs: list = [*ctx.nodes(ast.FunctionDef), *ctx.nodes(ast.AsyncFunctionDef), *ctx.nodes(ast.ClassDef)]
    return tuple(sorted(_dotted(ctx, d) for d in defs if _mode_set_by(ctx, d)))


def _mode_set_by(ctx: FileContext, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    if any(_sets_array_mode(ctx, d) for d in node.decorator_list):
        return True
    if not isinstance(node, ast.ClassDef):
        return False
    for method in node.body:
        if isinstance(method, ast.FunctionDef) and method.name in ("setUp", "setUpClass"):
            for stmt in ast.walk(method):
                if isinstance(stmt, ast.If) and _reads_flag(stmt.test) and any(
                        isinstance(n, ast.Attribute) and n.attr == "skipTest" or isinstance(n, ast.Raise)
                        for b in stmt.body for n in ast.walk(b)):
                    return True
    return False


def _reads_flag(test: ast.expr) -> bool:
    """``jax.config.jax_array``, ``config.jax_array``, ``not ...`` of it (either mode)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Attribute) and test.attr == "jax_array"


def _sets_array_mode(ctx: FileContext, expr: ast.expr) -> bool:
    """``jax_array(True)``/``jax_array(False)`` or ``with_config(jax_array=...)`` with a constant."""
    if not isinstance(expr, ast.Call):
        return False
    name = (ctx.qualname(expr.func) or ctx.text(expr.func)).rpartition(".")[2]
    if name == "jax_array":
        return bool(expr.args) and isinstance(expr.args[0], ast.Constant) and isinstance(expr.args[0].value, bool)
    if name == "with_config":
        return any(k.arg == "jax_array" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool)
                   for k in expr.keywords)
    return False


def _dotted(ctx: FileContext, node: ast.AST) -> str:
    names = []
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        node = ctx.parent(node)  # type: ignore[assignment]  # None ends the walk
    return ".".join(reversed(names))
