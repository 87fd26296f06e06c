"""pjit calls and the places their pjitted functions are called: shared by JM503 and JM504."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.core.findings import Edit, ImportRef
from jaxmigrate.patterns.era import array_mode_set_at, gda_era_evidence
from jaxmigrate.patterns.gda import (
    FROM_GDA,
    MULTIHOST_UTILS,
    PARTIAL,
    PJIT,
    is_multi_process,
    migrated_mesh_text,
    outputs_are_global,
    spec_source,
)
from jaxmigrate.patterns.provenance import GLOBAL, HOST, UNKNOWN, provenance

#: pjit's keywords removed in JAX 0.4.14, and the ones that replaced them
AXIS_RESOURCES_RENAMES = {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"}
IN_KEYWORDS = ("in_axis_resources", "in_shardings")
OUT_KEYWORDS = ("out_axis_resources", "out_shardings")
MESH_CONSTRUCTORS = (
    "jax.sharding.Mesh",
    "jax.experimental.maps.Mesh",
    "jax.experimental.maps.mesh",
    "jax.interpreters.pxla.Mesh",
    "jax.make_mesh",
)
SET_MESH_SPELLINGS = ("jax.set_mesh", "jax.sharding.set_mesh", "jax.sharding.use_mesh")
# where inserting a statement before the call would change when the arguments are evaluated
_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp, ast.BoolOp)
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)


@dataclass
class PjitCall:
    call: ast.Call  # the pjit(...) or partial(pjit, ...) call
    spec: ast.AST  # the keyword (or positional argument) that carries the input shardings
    value: ast.expr
    bound_to: Optional[ast.AST]  # the Assign or FunctionDef whose name is the pjitted function
    name: Optional[str]


def pjit_calls(ctx: FileContext) -> Iterator[PjitCall]:
    for call, _, is_partial in ctx.applications(PJIT):
        callee = PARTIAL if is_partial else PJIT
        spec: Optional[ast.AST] = next((k for k in call.keywords if k.arg in IN_KEYWORDS), None)
        value = spec.value if isinstance(spec, ast.keyword) else None
        if spec is None and callee == PJIT and len(call.args) >= 2:
            spec = value = call.args[1]
        if spec is None:
            continue
        bound_to, name = binding_of(ctx, call, bool(is_partial))
        yield PjitCall(call, spec, value, bound_to, name)  # type: ignore[arg-type]  # with a spec, value is set


def binding_of(ctx: FileContext, call: ast.Call, is_partial: bool) -> Tuple[Optional[ast.AST], Optional[str]]:
    parent = ctx.parent(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent, parent.targets[0].id
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and call in parent.decorator_list and is_partial:
        return parent, parent.name
    return None, None


def spec_leaves(value: ast.expr) -> Optional[List[ast.expr]]:
    """The elements of a flat tuple/list of specs, or the value itself; None for deeper pytrees."""
    if isinstance(value, (ast.Tuple, ast.List)):
        if any(isinstance(e, (ast.Tuple, ast.List, ast.Dict, ast.Starred)) for e in value.elts):
            return None
        return list(value.elts)
    if isinstance(value, ast.Dict):
        return None
    return [value]


def call_sites(ctx: FileContext, pj: PjitCall) -> List[ast.Call]:
    """Calls of the pjitted function's name that resolve to the same binding."""
    binding_scope = ctx.resolver.lookup(pj.name, ctx.resolver.scope_of(pj.call.func))  # type: ignore[arg-type]  # callers ask only for a named pjit
    sites = []
    for call in [ctx.parent(n) for n in ctx.names_bound_by(pj.name, binding_scope)]:  # type: ignore[arg-type]  # pj.name: as above
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == pj.name:
            owner = ctx.resolver.lookup(pj.name, ctx.resolver.scope_of(call.func))
            bindings = owner.bindings.get(pj.name, []) if owner else []
            if owner is binding_scope and len(bindings) == 1 and bindings[0].node is pj.bound_to:
                sites.append(call)
    return sorted(sites, key=lambda c: (c.lineno, c.col_offset))


def statement_of(ctx: FileContext, node: ast.AST) -> Optional[ast.stmt]:
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, _DEFERRED):
            return None
        parent = ctx.parent(parent)
    return parent if isinstance(parent, _SIMPLE) else None


def mesh_for(ctx: FileContext, site: ast.AST) -> Optional[str]:
    """The mesh in force at ``site``: the innermost enclosing ``with`` on a Mesh, else the one
    variable in scope bound to a Mesh construction."""
    node = ctx.parent(site)
    while node is not None:
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                entered = set_mesh_argument(ctx, item.context_expr)
                if entered is not None:
                    return ctx.text(entered)
                if is_mesh(ctx, item.context_expr):
                    if isinstance(item.optional_vars, ast.Name):
                        return item.optional_vars.id
                    if isinstance(item.context_expr, (ast.Name, ast.Attribute)):
                        return migrated_mesh_text(ctx, item.context_expr)
        node = ctx.parent(node)
    meshes = ctx.memo("mesh variables", lambda _: {})  # id(scope) → its names bound to a Mesh construction
    candidates = set(ctx.resolver.visible_from(ctx.resolver.scope_of(site), lambda s: _mesh_variables(ctx, s, meshes)))
    return candidates.pop() if len(candidates) == 1 else None


def _mesh_variables(ctx: FileContext, scope, meshes: dict) -> List[str]:
    """The names ``scope`` binds once, by an assignment of a Mesh construction (once per scope:
    each pjit site asked it of every name visible there, 10,000 module-level names a site)."""
    found = meshes.get(id(scope))
    if found is None:
        found = meshes[id(scope)] = [
            name for name, bindings in scope.bindings.items()
            if len(bindings) == 1 and isinstance(bindings[0].node, ast.Assign)
            and is_mesh_construction(ctx, bindings[0].node.value)]
    return found


def set_mesh_argument(ctx: FileContext, expr: ast.expr) -> Optional[ast.expr]:
    """The mesh of ``jax.set_mesh(mesh)`` (what JM702 makes of ``with mesh:``), else None."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and ctx.qualname(expr.func) in SET_MESH_SPELLINGS:
        return expr.args[0]
    return None


def is_mesh_construction(ctx: FileContext, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ctx.qualname(node.func) in MESH_CONSTRUCTORS


def is_generator(ctx: FileContext, callee: ast.expr) -> bool:
    """Whether ``callee`` names a function of this module that yields (a ``@contextmanager``)."""
    if not isinstance(callee, ast.Name):
        return False
    bindings = ctx.bindings(callee)
    node = bindings[0].node if len(bindings) == 1 else None
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def is_mesh_helper(ctx: FileContext, expr: ast.expr) -> bool:
    """A call of a context manager that enters a mesh itself: ``with_mesh(...)``-style helpers, or a
    generator of this module named like a mesh (a ``@contextmanager``)."""
    if not isinstance(expr, ast.Call):
        return False
    callee = expr.func
    name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else ""
    return "mesh" in name.lower() and (name.startswith("with_") or is_generator(ctx, callee))


def is_mesh(ctx: FileContext, expr: ast.expr, depth: int = 0) -> bool:
    """Whether a `with` item is taken for a mesh: a Mesh construction, a name bound to one (or to
    a project's factory or attribute named like a mesh, or itself named like a mesh and bound to
    something unknown), a factory call or an attribute named like a mesh."""
    if is_mesh_construction(ctx, expr):
        return True
    if isinstance(expr, ast.Name):
        stmt = ctx.single_assignment(expr)
        if stmt is not None and depth < 8:
            value = stmt.value
            if is_mesh(ctx, value, depth + 1):  # `mesh = cfg.get_jax_mesh(...)`, `Configurator.get_mesh()`
                return True
            callee = value.func if isinstance(value, ast.Call) else value
            resolved = ctx.qualname(callee)
            if resolved is not None and not resolved.startswith("jax."):  # `threading.Lock()`: known, no mesh
                return False
            return "mesh" in expr.id.lower()  # `GLOBAL_MESH = build()`: the name says so
        # a parameter or other binding named like a mesh, entered with `with`: taken as the mesh
        return "mesh" in expr.id.lower()
    if isinstance(expr, ast.Call):  # a project's own factory: `with make_mesh():`, `with config.get_mesh(...):`
        callee = expr.func
        name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else ""
        # `with with_mesh(...):`, a generator of this module: a context manager that enters a mesh
        # itself, not a mesh (wrapped in `jax.set_mesh`, it fails); nor is JAX's own context
        # manager that sets one (`jax.sharding.use_abstract_mesh(am)`; `jtu.create_mesh()` is a mesh)
        qualname = ctx.qualname(callee) or ""
        last = qualname.rpartition(".")[2]
        jax_own = qualname.startswith("jax.") and (last.startswith(("use_", "set_")) or "abstract" in last)
        return "mesh" in name.lower() and not jax_own and not is_mesh_helper(ctx, expr)
    return isinstance(expr, ast.Attribute) and "mesh" in expr.attr.lower()


def out_value(pj: PjitCall) -> Optional[ast.expr]:
    kw = next((k for k in pj.call.keywords if k.arg in OUT_KEYWORDS), None)
    if kw is not None:
        return kw.value
    positional = pj.call.args[1:] if pj.spec is pj.value else []  # pjit(f, in, out, ...)
    return positional[1] if len(positional) >= 2 else None


def host_local_output(ctx: FileContext, pj: PjitCall, site: ast.Call, mhu: str,
                      mesh: str) -> Tuple[List[Edit], Tuple[ImportRef, ...]]:
    """Edits wrapping a call's result in ``global_array_to_host_local_array(result, mesh, out_specs)``,
    as GDA-era pjit returned host-local outputs; none when the result is discarded."""
    out = out_value(pj)
    if out is None or isinstance(ctx.parent(site), ast.Expr):
        return [], ()
    out_spec, imports = spec_source(ctx, out, site)
    start, end = ctx.span(site)
    return [Edit(start, start, f"{mhu}.global_array_to_host_local_array("), Edit(end, end, f", {mesh}, {out_spec})")], imports


def host_local_sites(ctx: FileContext) -> List[Tuple[PjitCall, Optional[ast.Call]]]:
    """Where multi-process code hands a pjit host-local inputs (JM504's findings, in order): (the
    pjit, None) for one called where its name is not known, (the pjit, the call) for each call of
    a named one whose arguments are not converted yet. A pjit with ``FROM_GDA`` is JM503's."""
    if gda_era_evidence(ctx) is None:
        return []  # current code (in_shardings, no GDA-era name) passes global values: patterns/era.py
    return unconverted_sites(ctx)


def unconverted_sites(ctx: FileContext) -> List[Tuple[PjitCall, Optional[ast.Call]]]:
    """The same sites in multi-process code of either era: what keeps pjit from becoming
    ``jax.jit`` (the JM701/JM702 plan). The era is not asked, so that a fix run and the next one
    decide alike: the first run's fixes rewrite the evidence of a GDA-era module."""
    return ctx.memo("pjit_calls.unconverted_sites", _unconverted_sites)


def _unconverted_sites(ctx: FileContext) -> List[Tuple[PjitCall, Optional[ast.Call]]]:
    calls = list(pjit_calls(ctx))
    if not calls or not is_multi_process(ctx):
        return []
    sites: List[Tuple[PjitCall, Optional[ast.Call]]] = []
    for pj in calls:
        if any(ctx.qualname(n) == FROM_GDA for n in ast.walk(pj.value) if isinstance(n, (ast.Name, ast.Attribute))):
            continue
        if _takes_shardings(ctx, pj) or array_mode_set_at(ctx, pj.call):
            continue  # written for jax.Array: its inputs are global
        inline = inline_site(ctx, pj)
        if inline is not None:  # `pjit(f, ...)(x)`: the call is right there
            if _pending(ctx, inline) and not array_mode_set_at(ctx, inline):
                sites.append((pj, inline))
            continue
        if pj.name is None:
            sites.append((pj, None))
            continue
        sites.extend((pj, site) for site in call_sites(ctx, pj) if _pending(ctx, site) and not array_mode_set_at(ctx, site))
    return sites


def inline_site(ctx: FileContext, pj: PjitCall) -> Optional[ast.Call]:
    """The call of a pjit called where it is made, ``pjit(f, ...)(x)`` (not ``partial(pjit, ...)(f)``,
    which makes one), else None."""
    outer = ctx.parent(pj.call)
    if isinstance(outer, ast.Call) and outer.func is pj.call and ctx.qualname(pj.call.func) == PJIT:
        return outer
    return None


def _takes_shardings(ctx: FileContext, pj: PjitCall) -> bool:
    """The input specs hold a Sharding object (``NamedSharding(mesh, P("x"))``), which pjit took only
    with jax.Array on: not a GDA-era call."""
    for node in ast.walk(pj.value):
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func) or ""
            if name.startswith("jax.") and name.endswith("Sharding"):
                return True
    return False


def _pending(ctx: FileContext, site: ast.Call) -> bool:
    """Whether an argument may be host data still (not global, not a Python number), or the call
    passes none it can tell (``f(*args)``, ``f(x=batch)``): not converted yet."""
    if not site.args or site.keywords or any(isinstance(a, ast.Starred) for a in site.args):
        return not _converted(ctx, site)
    return any(kind in (HOST, UNKNOWN) for kind in argument_kinds(ctx, site))


def argument_kinds(ctx: FileContext, site: ast.Call) -> List[str]:
    """The provenance of each argument of ``site`` (patterns/provenance.py): the outputs of the
    module's pjitted functions are global if it turned on GDA outputs, else host-local."""
    names = ctx.memo("pjit_calls.pjit names", lambda c: {pj.name for pj in pjit_calls(c) if pj.name})
    output = GLOBAL if outputs_are_global(ctx) else HOST

    def pjit_output(call: ast.Call) -> Optional[str]:
        return output if isinstance(call.func, ast.Name) and call.func.id in names else None

    return [provenance(ctx, a, pjit_output) for a in site.args]


def _converted(ctx: FileContext, site: ast.Call) -> bool:
    """Every argument is a name bound only from ``host_local_array_to_global_array``: done already."""
    to_global = f"{MULTIHOST_UTILS}.host_local_array_to_global_array"
    for arg in site.args:
        if not isinstance(arg, ast.Name):
            return False
        bindings = ctx.bindings(arg)
        if not bindings or not all(
            isinstance(b.node, ast.Assign) and isinstance(b.node.value, ast.Call)
            and ctx.qualname(b.node.value.func) == to_global for b in bindings
        ):
            return False
    return bool(site.args)


PARTITIONING_METHODS = ("partition", "compile")


def partitioned_calls(ctx: FileContext) -> List[Tuple[ast.Call, ast.Call]]:
    """In GDA-era multi-process code, (call, origin) for each call of a function a partitioner made
    (``f = self._partitioner.partition(fn, ...)``, ``.compile(...)``: pjit inside a project's
    object, which JM504 cannot see into), ``origin`` being the ``partition``/``compile`` call."""
    if not is_multi_process(ctx) or gda_era_evidence(ctx) is None:
        return []
    made = {}  # the target's text -> the partition/compile call that made it
    for stmt in ctx.nodes(ast.Assign):
        value = stmt.value
        if (len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Name, ast.Attribute))
                and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in PARTITIONING_METHODS and "partitioner" in ctx.text(value.func.value).lower()):
            made[ctx.text(stmt.targets[0])] = value
    if not made:
        return []
    found = [(call, made[ctx.text(call.func)]) for call in ctx.nodes(ast.Call)
             if isinstance(call.func, (ast.Name, ast.Attribute)) and ctx.text(call.func) in made]
    return sorted(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset))
