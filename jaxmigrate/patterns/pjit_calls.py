"""pjit calls and the places their pjitted functions are called: shared by JM503 and JM504."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, List, Optional, Set, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.keyword_renames import AXIS_RESOURCES_RENAMES
from jaxmigrate.core.findings import Edit, ImportRef
from jaxmigrate.patterns.era import GDA_OUTPUTS, array_mode_set_at, gda_era_evidence, module_turns_array_on
from jaxmigrate.patterns.gda import (
    FROM_GDA,
    PJIT,
    TO_GLOBAL,
    TO_HOST_LOCAL,
    is_multi_process,
    is_partition_spec,
    migrated_mesh_text,
    outputs_are_global,
    spec_source,
)
from jaxmigrate.patterns.provenance import GLOBAL, HOST, UNKNOWN, provenance

JIT = "jax.jit"
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


def pjit_calls(ctx: FileContext, jit: bool = False) -> Iterator[PjitCall]:
    """Every pjit (and, with ``jit``, every ``jax.jit`` given ``in_shardings``: what JM701 makes of
    a pjit) that says its input shardings, in source order."""
    found = ctx.applications(PJIT)
    if jit:
        found = sorted([*found, *ctx.applications(JIT)], key=lambda item: (item[0].lineno, item[0].col_offset))
    for call, callee_node, is_partial in found:
        positional = not is_partial and ctx.qualname(callee_node) == PJIT  # jax.jit's options are keywords
        spec: Optional[ast.AST] = next((k for k in call.keywords if k.arg in IN_KEYWORDS), None)
        value = spec.value if isinstance(spec, ast.keyword) else None
        if spec is None and positional and len(call.args) >= 2:
            spec = value = call.args[1]
        if spec is None:
            continue
        bound_to, name = binding_of(ctx, call, bool(is_partial))
        yield PjitCall(call, spec, value, bound_to, name)  # type: ignore[arg-type]  # with a spec, value is set


def legacy_keys(ctx: FileContext, value: ast.expr) -> List[tuple]:
    """(node, key) for each legacy keyword in a ``dict(...)`` call or a ``{...}`` literal."""
    found: List[tuple] = []
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        for kw in value.keywords:
            if kw.arg in AXIS_RESOURCES_RENAMES:
                found.append((kw, kw.arg))
    elif isinstance(value, ast.Dict):
        for key in value.keys:
            if isinstance(key, ast.Constant) and key.value in AXIS_RESOURCES_RENAMES:
                found.append((key, key.value))
    return found


def rename_key(ctx: FileContext, node: ast.AST, key: str) -> Edit:
    if isinstance(node, ast.keyword):
        start = ctx.offset(node.lineno, node.col_offset)
        return Edit(start, start + len(key), AXIS_RESOURCES_RENAMES[key])
    text = ctx.text(node)
    quote = text[-1]
    prefix = text[: text.index(quote)]  # keep string prefixes and quote style
    q = quote if quote * 3 not in text else quote * 3
    return ctx.replace(node, f"{prefix}{q}{AXIS_RESOURCES_RENAMES[key]}{q}")


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
    out_spec, imports = spec_source(ctx, out, site, trees=True)
    start, end = ctx.span(site)
    return [Edit(start, start, f"{mhu}.global_array_to_host_local_array("), Edit(end, end, f", {mesh}, {out_spec})")], imports


def host_local_sites(ctx: FileContext) -> List[Tuple[PjitCall, Optional[ast.Call]]]:
    """Where multi-process code hands a pjit (or the ``jax.jit`` made of one) host-local inputs
    (JM504's findings, in order): (the pjit, None) for one called where its name is not known, (the
    pjit, the call) for each call of a named one whose arguments are not converted yet. A pjit
    with ``FROM_GDA`` is JM503's.

    In a module that shows it was written for GDA-era pjit (patterns/era.py), every such call.
    Elsewhere only the calls that pass this process's NumPy data under a spec that shards it
    (``visible_host_data``): jax.Array's pjit and jit raise on those with two processes ("Passing
    non-trivial shardings for numpy inputs is not allowed"), whatever the era, so they are
    reported from the call and its module alone, also once a fix renamed the keywords that said
    the era; the calls that pass values of unseen origin are left to code of its era."""
    sites = ctx.memo("pjit_calls.unconverted_sites", _unconverted_sites)
    if gda_era_evidence(ctx) is not None:
        return sites
    return [(pj, site) for pj, site in sites if site is not None and visible_host_data(ctx, pj, site)]


def visible_host_data(ctx: FileContext, pj: PjitCall, site: ast.Call) -> bool:
    """Whether ``site`` passes NumPy data this module shows (a loader's result, an iterator of
    NumPy batches, this process's slice) under a spec that shards it. The outputs of the module's
    pjits count as global here: only GDA-era code (the era said) handed them back host-local."""
    if not site.args or site.keywords or any(isinstance(a, ast.Starred) for a in site.args):
        return False
    specs = position_specs(ctx, pj, site)
    static = static_positions(pj) or set()
    kinds = argument_kinds(ctx, site, GLOBAL)
    return any(kind == HOST and i not in static and spec is not None and not is_replicated(ctx, spec)
               for i, (kind, spec) in enumerate(zip(kinds, specs)))


def _unconverted_sites(ctx: FileContext) -> List[Tuple[PjitCall, Optional[ast.Call]]]:
    calls = list(pjit_calls(ctx, jit=True))
    if not calls or not is_multi_process(ctx) or module_turns_array_on(ctx):
        return []  # (a module that turns jax.Array on passes global values: patterns/era.py)
    sites: List[Tuple[PjitCall, Optional[ast.Call]]] = []
    for pj in calls:
        if any(ctx.qualname(n) == FROM_GDA for n in ast.walk(pj.value) if isinstance(n, (ast.Name, ast.Attribute))):
            continue
        if _takes_shardings(ctx, pj) or array_mode_set_at(ctx, pj.call):
            continue  # written for jax.Array: its inputs are global
        inline = inline_site(ctx, pj)
        if inline is not None:  # `pjit(f, ...)(x)`: the call is right there
            if _pending(ctx, pj, inline) and not array_mode_set_at(ctx, inline):
                sites.append((pj, inline))
            continue
        if pj.name is None:
            sites.append((pj, None))
            continue
        sites.extend((pj, site) for site in call_sites(ctx, pj) if _pending(ctx, pj, site) and not array_mode_set_at(ctx, site))
    return sites


def inline_site(ctx: FileContext, pj: PjitCall) -> Optional[ast.Call]:
    """The call of a pjit called where it is made, ``pjit(f, ...)(x)`` (not ``partial(pjit, ...)(f)``,
    which makes one), else None."""
    outer = ctx.parent(pj.call)
    if isinstance(outer, ast.Call) and outer.func is pj.call and _makes_pjit(ctx, pj.call):
        return outer
    return None


def _makes_pjit(ctx: FileContext, call: ast.Call) -> bool:
    """``pjit(f, ...)``, or ``jax.jit(f, in_shardings=...)`` (JM701's rewrite of one)."""
    name = ctx.qualname(call.func)
    return name == PJIT or name == JIT and any(k.arg == "in_shardings" for k in call.keywords)


def _takes_shardings(ctx: FileContext, pj: PjitCall) -> bool:
    """The input specs hold a Sharding object (``NamedSharding(mesh, P("x"))``), which pjit took only
    with jax.Array on: not a GDA-era call."""
    for node in ast.walk(pj.value):
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func) or ""
            if name.startswith("jax.") and name.endswith("Sharding"):
                return True
    return False


def _pending(ctx: FileContext, pj: PjitCall, site: ast.Call) -> bool:
    """Whether an argument may be host data still (not global, not a Python number, not under a
    replicated spec), or the result is this process's part of a global output still to convert
    back, or the call passes no argument it can tell (``f(*args)``, ``f(x=batch)``). A call with no
    argument (``make()``) has no input to convert: only its result may be open."""
    if not site.args and not site.keywords:
        return output_open(ctx, pj, site, SiteArguments([], [], False))
    if not site.args or site.keywords or any(isinstance(a, ast.Starred) for a in site.args):
        return not site.args or not all(is_converted(ctx, a) for a in site.args)
    args = site_arguments(ctx, pj, site)
    return bool(args.convert or args.unknown) or args.host_data and output_open(ctx, pj, site, args)


@dataclass
class SiteArguments:
    """What a call's positional arguments are, as far as the module shows (see ``site_arguments``)."""

    kinds: List[str]  # the provenance of each (patterns/provenance.py)
    replicated: List[bool]  # passed as it is whatever it holds: its spec is replicated, or it is static
    converted: bool  # one of them was converted with `host_local_array_to_global_array` already

    @property
    def convert(self) -> List[int]:
        """The positions of host data under a spec that shards it: what a conversion takes."""
        return [i for i, k in enumerate(self.kinds) if k == HOST and not self.replicated[i]]

    @property
    def unknown(self) -> List[int]:
        """The positions of values of unseen origin under a spec that may shard them."""
        return [i for i, k in enumerate(self.kinds) if k == UNKNOWN and not self.replicated[i]]

    @property
    def host_data(self) -> bool:
        """Some argument may be host data (under any spec)."""
        return any(k in (HOST, UNKNOWN) for k in self.kinds)


def site_arguments(ctx: FileContext, pj: PjitCall, site: ast.Call) -> SiteArguments:
    """The arguments of ``site`` (a call with positional arguments only). An argument under a
    replicated spec (``None``, ``P()``) needs no conversion: host-local and global coincide there
    (the migration guide: "the shape is already global"), so a key made on every process with
    ``PRNGKey`` is passed as it is."""
    found = ctx.memo("pjit_calls.site_arguments", lambda _: {})
    key = id(site)
    if key not in found:
        specs = position_specs(ctx, pj, site)
        static = static_positions(pj) or set()
        replicated = [i in static or spec is not None and is_replicated(ctx, spec) for i, spec in enumerate(specs)]
        found[key] = SiteArguments(argument_kinds(ctx, site), replicated, any(is_converted(ctx, a) for a in site.args))
    return found[key]


def position_specs(ctx: FileContext, pj: PjitCall, site: ast.Call) -> List[Optional[ast.expr]]:
    """The input spec of each positional argument of ``site``: the element of a tuple of specs
    (``in_axis_resources`` covers the arguments that are not static, in order), or a single spec,
    which pjit reads as a prefix of every argument; None where it is not known (or static)."""
    unknown: List[Optional[ast.expr]] = [None] * len(site.args)
    static = static_positions(pj)
    if static is None or pj.value is None:
        return unknown
    dynamic = [i for i in range(len(site.args)) if i not in static]
    value = pj.value
    if isinstance(value, ast.Name):  # `specs = (P(), P("x"))` assigned once
        stmt = ctx.single_assignment(value)
        if stmt is not None and isinstance(stmt.value, (ast.Tuple, ast.List)):
            value = stmt.value
    if isinstance(value, (ast.Tuple, ast.List)):
        if len(value.elts) != len(dynamic) or any(isinstance(e, ast.Starred) for e in value.elts):
            return unknown
        for i, spec in zip(dynamic, value.elts):
            unknown[i] = spec
        return unknown
    if value is pj.value and is_spec_literal(ctx, value):
        for i in dynamic:
            unknown[i] = value
    return unknown


def is_spec_literal(ctx: FileContext, spec: ast.expr) -> bool:
    """``None`` or a PartitionSpec: a leaf that pjit applies to everything under it."""
    return isinstance(spec, ast.Constant) and spec.value is None or is_partition_spec(ctx, spec)


def is_replicated(ctx: FileContext, spec: ast.expr, depth: int = 0) -> bool:
    """Whether a spec (of one argument or output, any pytree prefix of it) replicates every leaf:
    ``None``, ``P()``, ``P(None, None)``, a tuple of those, or a name assigned one once."""
    if isinstance(spec, ast.Constant):
        return spec.value is None
    if isinstance(spec, (ast.Tuple, ast.List)):
        return bool(spec.elts) and all(is_replicated(ctx, e, depth) for e in spec.elts)
    if isinstance(spec, ast.Call):
        return (is_partition_spec(ctx, spec) and not spec.keywords
                and all(isinstance(a, ast.Constant) and a.value is None for a in spec.args))
    if isinstance(spec, ast.Name) and depth < 3:
        stmt = ctx.single_assignment(spec)
        return stmt is not None and len(stmt.targets) == 1 and is_replicated(ctx, stmt.value, depth + 1)
    return False


def static_positions(pj: PjitCall) -> Optional[Set[int]]:
    """The positions pjit's literal ``static_argnums`` names (empty without one), None when they
    are not literal or ``static_argnames`` is given."""
    found: Set[int] = set()
    for kw in pj.call.keywords:
        if kw.arg == "static_argnames":
            return None
        if kw.arg == "static_argnums":
            try:
                value = ast.literal_eval(kw.value)
            except ValueError:
                return None
            items = value if isinstance(value, (tuple, list)) else (value,)
            if not all(isinstance(i, int) and i >= 0 for i in items):
                return None
            found |= set(items)
    return found


def output_open(ctx: FileContext, pj: PjitCall, site: ast.Call, args: SiteArguments) -> bool:
    """Whether the call's result is this process's part of the output under GDA-era pjit and is
    not converted back yet: the module did not turn on GDA outputs (nor did the text as given to
    the run, before JM301 deleted the line), the result is used and not passed to
    `global_array_to_host_local_array` already, its spec may shard it, and the call converts none
    of its inputs itself (code that does was written for jax.Array, whose outputs
    are global; a fix that converts the inputs converts the result in the same edit)."""
    if outputs_are_global(ctx) or ctx.origin.get(GDA_OUTPUTS) or args.converted or isinstance(ctx.parent(site), ast.Expr) \
            or result_converted(ctx, site):
        return False
    out = out_value(pj)
    return out is None or not is_replicated(ctx, out)


def result_converted(ctx: FileContext, site: ast.Call) -> bool:
    """``global_array_to_host_local_array(site, ...)``: the result goes back to this process's part."""
    parent = ctx.parent(site)
    return isinstance(parent, ast.Call) and bool(parent.args) and parent.args[0] is site \
        and ctx.qualname(parent.func) == TO_HOST_LOCAL


def argument_kinds(ctx: FileContext, site: ast.Call, outputs: Optional[str] = None) -> List[str]:
    """The provenance of each argument of ``site`` (patterns/provenance.py): the outputs of the
    module's pjitted functions (named, or called where they are made) are ``outputs`` if given, else
    global if it turned on GDA outputs or the call converts inputs itself (jax.Array code), else
    host-local."""
    names = ctx.memo("pjit_calls.pjit names", lambda c: {pj.name for pj in pjit_calls(c, jit=True) if pj.name})
    output = outputs or (GLOBAL if outputs_are_global(ctx) else HOST)

    def pjit_output(call: ast.Call) -> Optional[str]:
        func = call.func
        if not (isinstance(func, ast.Name) and func.id in names
                or isinstance(func, ast.Call) and _makes_pjit(ctx, func)):
            return None
        return GLOBAL if outputs == GLOBAL or any(is_converted(ctx, a) for a in call.args) else output

    return [provenance(ctx, a, pjit_output) for a in site.args]


def is_converted(ctx: FileContext, arg: ast.expr) -> bool:
    """Whether ``arg`` is the result of ``host_local_array_to_global_array``: the call itself, an
    element of it, or a name bound only from it (``x_global``, ``a, b = ...``)."""
    while isinstance(arg, ast.Subscript):
        arg = arg.value
    if isinstance(arg, ast.Call):
        return ctx.qualname(arg.func) == TO_GLOBAL
    if not isinstance(arg, ast.Name):
        return False
    bindings = ctx.bindings(arg)
    return bool(bindings) and all(
        isinstance(b.node, ast.Assign) and isinstance(b.node.value, ast.Call)
        and ctx.qualname(b.node.value.func) == TO_GLOBAL for b in bindings)


PARTITIONING_METHODS = ("partition", "compile")


def partitioned_calls(ctx: FileContext) -> List[Tuple[ast.Call, ast.Call]]:
    """In GDA-era multi-process code, (call, origin) for each call of a function a partitioner made
    (``f = self._partitioner.partition(fn, ...)``, ``.compile(...)``: pjit inside a project's
    object, which JM504 cannot see into), ``origin`` being the ``partition``/``compile`` call."""
    if not is_multi_process(ctx) or gda_era_evidence(ctx) is None or module_turns_array_on(ctx):
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
