"""JM706: ``jax.pmap`` → ``jax.jit`` of ``jax.shard_map`` over a one-axis mesh, the device axis kept."""

from __future__ import annotations

import ast
from typing import Callable, Iterator, List, Optional, Set, Tuple, Union

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_layout import is_docstring, leading_imports, line_after, splice
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import newline
from jaxmigrate.analysis.values import binding_scope, own_nodes, reaching_binding
from jaxmigrate.catalog.api_history import exists
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.gda import MULTIHOST_UTILS
from jaxmigrate.patterns.pmap_uses import Function, Mapping, PmapUse, mapping, pmap_uses
from jaxmigrate.rules.base import Example, Rule, snippet

SINCE = "0.8.0"  # pmap is in maintenance mode, reimplemented on jit and shard_map
MESSAGE = ("`jax.pmap` is in maintenance mode since JAX 0.8.0, where it runs as `jax.jit` of `jax.shard_map` (and "
           "JAX 0.10.0 removed its helpers and shardings)")
HELPER = "host_local_call"
#: the helper a rewritten module gets once: pmap's view of a call's data, in any number of processes
HELPER_TEXT = '''def {name}(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

    @{wraps}(f)
    def call(*args):
        if {process_count}() == 1:
            return f(*args)
        dynamic = [i for i in range(len(args)) if i not in static]
        specs = dict(zip(dynamic, in_specs if type(in_specs) is tuple else [in_specs] * len(dynamic)))

        def to_global(i, a):  # a Python number stays one (weakly typed), as pmap passed it
            if i not in specs or isinstance(a, (int, float, complex)):
                return a
            a = {tree_map}(lambda x: x if isinstance(x, {array}) else {np}.asarray(x), a)
            return {mhu}.host_local_array_to_global_array(a, mesh, specs[i])

        out = f(*(to_global(i, a) for i, a in enumerate(args)))
        for leaf in {leaves}([args[i] for i in donated]):
            if isinstance(leaf, {array}) and not leaf.is_deleted():
                leaf.delete()
        return {mhu}.global_array_to_host_local_array(out, mesh, out_specs)

    return call
'''
STABLE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign)


class PmapToShardMap(Rule):
    """
    ## What it does
    Rewrites `jax.pmap` as `jax.jit` of `jax.shard_map` over a one-axis mesh of the devices, the
    axis named as pmap's `axis_name`, keeping pmap's view on both sides: each mapped argument
    arrives with its leading (device) axis, split one slice per device; the function sees the
    slice without it (`jax.tree.map(lambda a: a[0], x)`) and each output gets it back
    (`jax.tree.map(lambda o: jnp.expand_dims(o, 0), out)`). Callers that index `[0]`,
    unreplicate, `device_get` or feed the outputs back keep working, and collectives on the axis
    name (`psum`, `pmean`, `all_gather`, `ppermute`, `axis_index`) mean what they meant.

    - A decorated `def` (`@jax.pmap`, `@functools.partial(jax.pmap, ...)`) gets `@jax.jit` and
      `@functools.partial(jax.shard_map, mesh=..., in_specs=..., out_specs=P(axis))`, a first
      line that takes the slices of its mapped parameters, and each of its `return`s the axis
      back. With `static_broadcasted_argnums`, the `jax.jit` takes them as `static_argnums` and
      the body moves into a function of the dynamic parameters that it maps (a static value
      cannot pass through `shard_map`). A def with parameters that have defaults keeps its body
      and loses its decorator; its name is bound to the call form after it (a default is mapped
      only when a call passes it). Decorators above the pmap stay where they are and wrap the
      rewrite as they wrapped pmap: the module's own, another library's, `jax.named_scope`.
    - A call `jax.pmap(f, ...)` becomes `jax.jit(jax.shard_map(lambda *args: ..., ...))` around
      `f`, which is left as it is. A mapped function that is an expression
      (`functools.partial(train_step, lr=lr)`), a name bound more than once or a lambda with
      defaults is evaluated once, where pmap evaluated it: `(lambda pmapped: jax.jit(...))(f)`.
    - In any number of processes: the module gets a small helper, `host_local_call`, which the
      rewrite wraps around the jitted function, as JAX's own pmap does since 0.8.0: with several
      processes each argument (this process's data) becomes a global array over the mesh
      (`multihost_utils.host_local_array_to_global_array`) and each output this process's part
      again (`global_array_to_host_local_array`); with one process it calls the function as it
      is. So a module with no process references of its own (an evaluator a multi-process
      trainer imports) runs as pmap ran it.
    - `in_axes` of an int k and None become `P(None, ..., axis)` (k `None`s) and `P()` (an
      unmapped argument is passed whole, as pmap broadcast it); `out_axes` likewise, and
      `out_axes=None` is `out_specs=P()` with no device axis added back, as JAX's pmap has it.
      `donate_argnums` goes to `jax.jit`, `devices=` gives the mesh its devices, in that order
      (default: `jax.devices()`).
    - `check_vma=False`, as JAX's own pmap on `shard_map` has it: the gradient of an unmapped
      argument stays per device (checking would sum it over the devices, 8x on 8 devices).
    - In a module where a pmap names its `devices=`, each `jax.jit` gets `in_shardings` of its
      mesh: pmap resharded an input placed on the same devices in another order, and `jax.jit`
      does so only when told (else it raises "incompatible devices").
    - Names a parameter or local binds (`jax`, `jnp`) are not written where they mean something
      else: the module is imported under a fresh name there (`import jax as jax_`).

    Applied for targets from 0.8.0 on. Reported, with what to write: `in_axes`/`out_axes` that
    are trees or count from the end, `axis_size`, `backend`, `global_arg_shapes`, options given
    with `*`/`**`, a nested pmap (it no longer runs), a function that is a generator, has other
    decorators below the pmap or a JAX (Flax, Haiku) transformation above it, has
    `*args`/`**kwargs` or keyword-only parameters, a static parameter its body assigns or static
    arguments beside defaults, a mapped function called with keyword arguments (pmap mapped
    them; `shard_map` takes positional ones only), and pmap used as a value.

    The fix is unsafe: the outputs are `jax.Array`s sharded over a mesh of all the devices
    given (pmap used as many of its devices as the leading axis had: a call whose leading axis
    is not the device count now raises), the function is a jitted one (its `.lower()` and its
    compilation cache are jit's), and a value pmap replicated per device is now one value.

    A plain `jax.jit` over global arrays is simpler still, and not what this rewrite does: it is
    not the same program where the code relies on per-device values (a PRNG key per device, or
    `fold_in(key, axis_index(...))`; `pmean` of per-device means where per-device batches differ
    in size or masks; an input pipeline that stacks one batch per device).

    ## Why is this bad?
    JAX put `jax.pmap` in maintenance mode in 0.8.0 and reimplemented it on `jax.jit` and
    `jax.shard_map` (JAX's `docs/migrate_pmap.md`), and removed `jax.device_put_replicated`,
    `jax.device_put_sharded` and `PmapSharding` in 0.10.0; new code is meant to use
    `jax.shard_map` directly.
    """

    code = "JM706"
    name = "pmap-to-shard-map"
    summary = "`jax.pmap` → `jax.jit` of `jax.shard_map` over a one-axis mesh, keeping the device axis"
    fix_safety = "unsafe"
    unsafe_note = ("the outputs are sharded over a mesh of all the devices given, so a leading axis other than the "
                   "device count raises, and the function is a jitted one")
    triggers = (b"pmap",)
    deprecated_in = None  # maintenance mode from 0.8.0 (SINCE), not a deprecation
    replacement_since = "0.6.1"  # jax.shard_map

    examples = (
        Example(
            snippet("""
                import functools

                import jax


                @functools.partial(jax.pmap, axis_name="batch")
                def step(w, x):
                    g = jax.grad(lambda w: (x @ w).sum())(w)
                    return w - 0.1 * jax.lax.pmean(g, "batch")
            """),
            snippet('''
                import functools

                import jax
                import jax.numpy as jnp
                import numpy as np
                from jax.experimental import multihost_utils


                def host_local_call(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
                    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
                    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
                    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
                    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
                    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

                    @functools.wraps(f)
                    def call(*args):
                        if jax.process_count() == 1:
                            return f(*args)
                        dynamic = [i for i in range(len(args)) if i not in static]
                        specs = dict(zip(dynamic, in_specs if type(in_specs) is tuple else [in_specs] * len(dynamic)))

                        def to_global(i, a):  # a Python number stays one (weakly typed), as pmap passed it
                            if i not in specs or isinstance(a, (int, float, complex)):
                                return a
                            a = jax.tree.map(lambda x: x if isinstance(x, jax.Array) else np.asarray(x), a)
                            return multihost_utils.host_local_array_to_global_array(a, mesh, specs[i])

                        out = f(*(to_global(i, a) for i, a in enumerate(args)))
                        for leaf in jax.tree.leaves([args[i] for i in donated]):
                            if isinstance(leaf, jax.Array) and not leaf.is_deleted():
                                leaf.delete()
                        return multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)

                    return call


                @functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"))
                @jax.jit
                @functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
                def step(w, x):
                    w, x = jax.tree.map(lambda a: a[0], (w, x))
                    g = jax.grad(lambda w: (x @ w).sum())(w)
                    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), w - 0.1 * jax.lax.pmean(g, "batch"))
            '''),  # noqa: E501 - the fixer's output, verbatim
            unsafe=True,
            title="a decorated training step",
        ),
        Example(
            snippet("""
                import jax
                import jax.numpy as jnp

                total = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(jnp.arange(8.0))
            """),
            snippet('''
                from functools import wraps

                import jax
                import jax.numpy as jnp
                import numpy as np
                from jax.experimental import multihost_utils


                def host_local_call(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
                    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
                    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
                    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
                    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
                    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

                    @wraps(f)
                    def call(*args):
                        if jax.process_count() == 1:
                            return f(*args)
                        dynamic = [i for i in range(len(args)) if i not in static]
                        specs = dict(zip(dynamic, in_specs if type(in_specs) is tuple else [in_specs] * len(dynamic)))

                        def to_global(i, a):  # a Python number stays one (weakly typed), as pmap passed it
                            if i not in specs or isinstance(a, (int, float, complex)):
                                return a
                            a = jax.tree.map(lambda x: x if isinstance(x, jax.Array) else np.asarray(x), a)
                            return multihost_utils.host_local_array_to_global_array(a, mesh, specs[i])

                        out = f(*(to_global(i, a) for i, a in enumerate(args)))
                        for leaf in jax.tree.leaves([args[i] for i in donated]):
                            if isinstance(leaf, jax.Array) and not leaf.is_deleted():
                                leaf.delete()
                        return multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)

                    return call


                total = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda x: jax.lax.psum(x, "i"))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(jnp.arange(8.0))
            '''),  # noqa: E501 - the fixer's output, verbatim
            unsafe=True,
            title="a call on a lambda",
        ),
        Example(
            snippet("""
                import jax

                def nested(x):
                    return jax.pmap(lambda row: jax.pmap(lambda v: v * 2)(row))(x)
            """),
            flagged=True,
            title="a nested pmap is reported",
        ),
        Example(
            snippet("""
                import jax

                f = jax.pmap(lambda x: x * 2)
            """),
            target="0.7.2",
            title="before 0.8.0 pmap is not in maintenance mode",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(SINCE) or not exists("jax.shard_map", ctx.target):
            return
        uses = list(pmap_uses(ctx))
        if not uses:
            return
        mapped = _mapped_functions(ctx, uses)
        references = [use.reference for use in uses]
        reorders = any("devices" in use.options for use in uses)  # meshes of other device orders
        for use in uses:
            why = use.why or _nested(ctx, use, mapped, references) or _keyword_call(ctx, use)
            fix: Union[Fix, str] = why if why is not None else _Rewrite(ctx, use, reorders).fix()
            if isinstance(fix, str):
                yield self.finding(ctx, use.reference, f"{MESSAGE}; not rewritten: {fix}")
            else:
                yield self.finding(ctx, use.reference, f"{MESSAGE}: rewritten as `jax.jit` of `jax.shard_map`, the "
                                   "device axis kept", fix, replacement="jax.shard_map")


def _definition_of(ctx: FileContext, fun: Optional[ast.expr]) -> Optional[ast.AST]:
    """The def (or lambda) a mapped function names."""
    if isinstance(fun, ast.Lambda):
        return fun
    if isinstance(fun, ast.Name):
        bound = reaching_binding(ctx, fun.id, fun)
        if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)) and bound.name == fun.id:
            return bound
    return None


def _mapped_functions(ctx: FileContext, uses: List[PmapUse]) -> Set[int]:
    found = set()
    for use in uses:
        target = use.definition if use.definition is not None else _definition_of(ctx, use.function)
        if target is not None:
            found.add(id(target))
    return found


def _nested(ctx: FileContext, use: PmapUse, mapped: Set[int], references: List[ast.expr]) -> Optional[str]:
    """Why ``use`` is a nested pmap: it stands in a mapped function, or maps one that maps (one of
    the module's pmap ``references`` lies in its body)."""
    node = ctx.parent(use.node)
    while node is not None:
        if id(node) in mapped and node is not use.definition:
            return ("a pmap inside a mapped function: nested pmap no longer runs (write one `jax.shard_map` over a mesh "
                    "of two axes)")
        node = ctx.parent(node)
    body = use.definition if use.definition is not None else _definition_of(ctx, use.function)
    start, end = ctx.span(body) if body is not None else (0, -1)
    if any(ref is not use.reference and start <= ctx.span(ref)[0] < end for ref in references):
        return "the mapped function maps again: nested pmap no longer runs (write one `jax.shard_map` over a mesh of two axes)"
    return None


def _keyword_call(ctx: FileContext, use: PmapUse) -> Optional[str]:
    """Why not: a call of the mapped function passes keyword arguments, which `shard_map` does
    not take (pmap mapped them). The calls looked at: the decorated def's, a pmap called where it
    stands, and those of a name a pmap is assigned to."""
    holder: ast.AST
    if use.definition is not None:
        name, holder = use.definition.name, use.definition
    elif isinstance(ctx.parent(use.node), ast.Call) and ctx.parent(use.node).func is use.node:  # type: ignore[union-attr]
        call = ctx.parent(use.node)
        return _keywords_why(call) if isinstance(call, ast.Call) else None
    elif isinstance(ctx.parent(use.node), ast.Assign) and len(ctx.parent(use.node).targets) == 1:  # type: ignore[union-attr]
        target = ctx.parent(use.node).targets[0]  # type: ignore[union-attr]
        if not isinstance(target, ast.Name):
            return None
        name, holder = target.id, target
    else:
        return None
    binder = _binder(ctx, holder)
    for ref in ctx.names(name):
        call = ctx.parent(ref)  # a call with keywords first: the binding it reads is the costly part
        if isinstance(call, ast.Call) and call.func is ref and call.keywords and \
                reaching_binding(ctx, name, ref) is binder:
            return _keywords_why(call)
    return None


def _binder(ctx: FileContext, holder: ast.AST) -> Optional[ast.AST]:
    """What ``reaching_binding`` gives for a read of the name ``holder`` binds."""
    return holder if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)) else ctx.parent(holder)


def _keywords_why(call: ast.Call) -> Optional[str]:
    if call.keywords:
        return (f"it is called with keyword arguments (line {call.lineno}), which `shard_map` does not take: pass "
                "them by position")
    return None


def _taken(ctx: FileContext, name: str) -> bool:
    return bool(ctx.names(name)) or ctx.resolver.bound_in_any_scope(name)


def _visible(ctx: FileContext, module: str) -> bool:
    """Whether a module-level name is bound to ``module`` (``import functools``)."""
    return bool(ctx.resolver.visible_resolving_to(ctx.resolver.module_scope, module))


def _has_defaults(fun: ast.expr) -> bool:
    """A lambda with defaults: they are evaluated where pmap stands, once."""
    return isinstance(fun, ast.Lambda) and bool(fun.args.defaults or any(fun.args.kw_defaults))


def _plain_parameters(fn: Union[Function, ast.Lambda]) -> Union[List[str], str]:
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        return "the function takes `*args`, `**kwargs` or keyword-only parameters"
    return [a.arg for a in (*args.posonlyargs, *args.args)]


class _Rewrite:
    """The fix of one use, or why there is none."""

    def __init__(self, ctx: FileContext, use: PmapUse, reorders: bool) -> None:
        self.ctx, self.use, self.reorders = ctx, use, reorders
        self.imports: Tuple[ImportRef, ...] = ()
        self.extra: List[Edit] = []  # the helper's definition, where the module has none yet

    def ref(self, qualname: str, at: Optional[ast.AST] = None, dotted: bool = True) -> str:
        text, imports = importer(self.ctx).reference(qualname, at=at or self.use.node, dotted=dotted)
        self.imports += imports
        return text

    def fix(self) -> Union[Fix, str]:
        use = self.use
        if use.kind == "decorator":
            assert use.definition is not None
            if use.definition.args.defaults and not use.options.get("static_broadcasted_argnums"):
                if use.wrapped:
                    return ("the function has other decorators and parameters with defaults: the rewrite binds the "
                            "name after the `def`, under the decorators above the pmap")
                return self._assigned(use.definition)
            return self._decorated(use.definition)
        return self.call_fix()

    def _fix(self, edits: List[Edit]) -> Fix:
        return Fix("unsafe", edits=tuple(sorted([*edits, *self.extra], key=lambda e: e.start)),
                   add_imports=tuple(dict.fromkeys(self.imports)))

    # pieces -------------------------------------------------------------------------------------
    def _mesh(self, plan: Mapping) -> str:
        devices = plan.devices_text or f"{self.ref('jax.devices')}()"
        return f"{self.ref('jax.sharding.Mesh')}({devices}, ({plan.axis},))"

    def _spec(self, plan: Mapping, axis: Optional[int]) -> str:
        """``P(None, ..., axis)`` for a value mapped at ``axis``, ``P()`` for one not mapped."""
        p = self.ref("jax.sharding.PartitionSpec")
        return f"{p}()" if axis is None else f"{p}({'None, ' * axis}{plan.axis})"

    def _per_argument(self, plan: Mapping, positions: Optional[List[int]],
                      wrap: Callable[[str], str] = lambda spec: spec) -> str:
        """One spec (``wrap``-ped) where every argument of ``positions`` is mapped at the same
        axis, else a tuple of one spec per position."""
        axes = [plan.axis_of(i) for i in positions] if positions is not None else [plan.every]
        if len(set(axes)) == 1 and axes[0] is not None:
            return wrap(self._spec(plan, axes[0]))
        each = [wrap(self._spec(plan, a)) for a in axes]
        return f"({', '.join(each)}{',' if len(each) == 1 else ''})"

    def _shard_map_options(self, plan: Mapping, positions: Optional[List[int]]) -> str:
        """``check_vma=False``, as JAX's own pmap on shard_map has it: the gradient of an unmapped
        (``P()``) argument stays per device, where checking would sum it over the devices."""
        return (f"mesh={self._mesh(plan)}, in_specs={self._per_argument(plan, positions)}, "
                f"out_specs={self._out_specs(plan)}, check_vma=False")

    def jnp(self, at: Optional[ast.AST] = None) -> str:
        text, imports = importer(self.ctx).module_reference("jax.numpy", "jnp", at or self.use.node)
        self.imports += imports
        return text

    def _unmap(self, text: str, axis: Optional[int], at: Optional[ast.AST] = None) -> str:
        """``text`` without its device axis (an unmapped value as it is)."""
        if axis is None:
            return text
        slice_ = "a[0]" if axis == 0 else f"{self.jnp(at)}.squeeze(a, {axis})"
        return f"{self.ref('jax.tree.map', at)}(lambda a: {slice_}, {text})"

    def _out_specs(self, plan: Mapping) -> str:
        if plan.out_tuple is None:
            return self._spec(plan, plan.out_axis)
        return f"({', '.join(self._spec(plan, a) for a in plan.out_tuple)},)"

    def _remap(self, text: str, plan: Mapping, at: Optional[ast.AST] = None) -> str:
        """``text`` with the device axis back (none with ``out_axes=None``); with a tuple of
        ``out_axes``, each output at its own axis."""
        if plan.out_tuple is not None:
            each = [f"o[{i}]" if a is None else self._expand(f"o[{i}]", a, at) for i, a in enumerate(plan.out_tuple)]
            return f"(lambda o: ({', '.join(each)},))({text})"
        return text if plan.out_axis is None else self._expand(text, plan.out_axis, at)

    def _expand(self, text: str, axis: int, at: Optional[ast.AST]) -> str:
        return f"{self.ref('jax.tree.map', at)}(lambda o: {self.jnp(at)}.expand_dims(o, {axis}), {text})"

    def _jit_options(self, plan: Mapping, positions: Optional[List[int]]) -> str:
        out = f", static_argnums={plan.static_text}" if plan.static_text else ""
        out += f", donate_argnums={plan.donate_text}" if plan.donate_text else ""
        if self.reorders:  # pmap resharded inputs placed on its devices in another order; jit does so when told
            named, mesh = self.ref("jax.sharding.NamedSharding"), self._mesh(plan)
            out += f", in_shardings={self._per_argument(plan, positions, lambda spec: f'{named}({mesh}, {spec})')}"
        return out

    # this process's data -------------------------------------------------------------------------
    def _helper(self) -> str:
        """The name of the module's helper that converts a call's data as pmap did; its
        definition joins the fix where the module has none yet."""
        ctx = self.ctx
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith(HELPER) and any(
                    isinstance(n, ast.Attribute) and n.attr == "host_local_array_to_global_array" for n in ast.walk(stmt)):
                return stmt.name
        name = next(n for n in (HELPER, f"{HELPER}_", f"{HELPER}__", f"{HELPER}_fn") if not _taken(ctx, n))
        body = ctx.tree.body
        imports = leading_imports(ctx)
        after = body[body.index(imports[-1]) + 1] if imports and imports[-1] is not body[-1] else None
        if imports:
            at = line_after(ctx, imports[-1])
            line = (imports[-1].end_lineno or imports[-1].lineno) + 1
        else:
            first = next((s for s in body if not is_docstring(s)), None)
            if first is None:
                return name
            at, line, after = ctx.line_start(_first(first)[0]), _first(first)[0], first
        nl = newline(ctx)
        blank = 0
        while ctx.line_text(line + blank) and not ctx.line_text(line + blank).strip():
            blank += 1
        text = HELPER_TEXT.format(
            name=name, wraps=self.ref("functools.wraps", after, dotted=_visible(ctx, "functools")),
            tree_map=self.ref("jax.tree.map", after), leaves=self.ref("jax.tree.leaves", after),
            array=self.ref("jax.Array", after), process_count=self.ref("jax.process_count", after), np=self._numpy(after),
            mhu=self.ref(MULTIHOST_UTILS, after, dotted=False)).replace("\n", nl)
        lead = "" if ctx.source[:at].endswith(("\n", "\r")) or not at else nl
        self.extra.append(Edit(at, at, lead + nl + nl + text + nl * max(0, 2 - blank if after is not None else 0)))
        return name

    def _numpy(self, at: Optional[ast.AST]) -> str:
        text, imports = importer(self.ctx).module_reference("numpy", "np", at or self.use.node)
        self.imports += imports
        return text

    def _host_local(self, plan: Mapping, positions: Optional[List[int]]) -> Tuple[str, str]:
        """The helper's name and its options: mesh, in_specs, out_specs, the static positions."""
        name = self._helper()
        options = (f"mesh={self._mesh(plan)}, in_specs={self._per_argument(plan, positions)}, "
                   f"out_specs={self._out_specs(plan)}")
        if plan.static_text:
            options += f", static_argnums={plan.static_text}"
        if plan.donate_text:
            options += f", donate_argnums={plan.donate_text}"
        return name, options

    # a call on a function ---------------------------------------------------------------------
    def _call(self, fun: ast.expr, fun_text: str, definition: Optional[ast.AST],
              bind_always: bool = False) -> Union[str, Tuple[str, Mapping]]:
        """The text of the call form (``jax.jit(jax.shard_map(...))`` under the helper) for the
        function ``fun`` (written ``fun_text``), or why not."""
        ctx, use = self.ctx, self.use
        params = _plain_parameters(definition) if definition is not None else None  # type: ignore[arg-type]  # a def or lambda
        defaults = definition is not None and bool(definition.args.defaults)  # type: ignore[attr-defined]
        if isinstance(params, str) or defaults:
            params = None  # the number of arguments a call passes is not known
        in_axes = use.options.get("in_axes")
        arity = len(in_axes.elts) if isinstance(in_axes, (ast.Tuple, ast.List)) else (len(params) if params is not None else None)
        plan = mapping(ctx, use, arity)
        if isinstance(plan, str):
            return plan
        wrapper_names = {"args", *(f"a{i}" for i in range(len(plan.axes or ())))}
        bind = bind_always or not self._stable(fun) or any(
            isinstance(n, ast.Name) and n.id in wrapper_names for n in ast.walk(fun)) or _has_defaults(fun)
        binder = next(n for n in ("pmapped", "pmapped_", "pmapped_fn", "pmapped_function") if not ctx.names(n))
        function = binder if bind else f"({fun_text})" if isinstance(fun, ast.Lambda) else fun_text
        jit, shard_map = self.ref("jax.jit"), self.ref("jax.shard_map")
        if plan.axes is None:
            called = f"{function}(*{self._unmap('args', plan.every)})"
            body = f"lambda *args: {self._remap(called, plan)}"
            dynamic = None
            text = f"{jit}({shard_map}({body}, {self._shard_map_options(plan, None)}){self._jit_options(plan, None)})"
        else:
            names = [f"a{i}" for i in range(len(plan.axes))]
            dynamic = [i for i in range(len(names)) if i not in plan.static]
            passed = ", ".join(self._unmap(n, plan.axes[i]) for i, n in enumerate(names))
            called = f"{function}({passed})"
            inner = f"lambda {', '.join(names[i] for i in dynamic)}: {self._remap(called, plan)}"
            mapped = f"{shard_map}({inner}, {self._shard_map_options(plan, dynamic)})"
            if plan.static:
                mapped = f"lambda {', '.join(names)}: {mapped}({', '.join(names[i] for i in dynamic)})"
            text = f"{jit}({mapped}{self._jit_options(plan, dynamic)})"
        helper, options = self._host_local(plan, dynamic)
        text = f"{helper}({text}, {options})"
        if bind:  # the function is evaluated once, where pmap evaluated it, not at each trace
            text = f"(lambda {binder}: {text})({fun_text})"
        return text, plan

    def call_fix(self) -> Union[Fix, str]:
        fun = self.use.function
        assert fun is not None
        made = self._call(fun, self.ctx.text(fun), _definition_of(self.ctx, fun))
        if isinstance(made, str):
            return made
        return self._fix([self.ctx.replace(self.use.node, made[0])])

    def _stable(self, fun: ast.expr) -> bool:
        """Whether the function the call maps may be named inside the lambda that runs at each
        trace: a lambda, or a name (or attribute of one) bound once. Else it is bound first."""
        if isinstance(fun, ast.Lambda):
            return True
        root = fun
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        bound = reaching_binding(self.ctx, root.id, root)
        scope = binding_scope(self.ctx, root)
        return not (bound is not None and not isinstance(bound, STABLE) or scope is not None and len(
            scope.bindings.get(root.id, [])) > 1)

    # a decorated def with defaults: the def as it is, then its name bound to the call form ------
    def _assigned(self, fn: Function) -> Union[Fix, str]:
        """A parameter with a default is mapped only when a call passes it: the def loses its
        decorator and its name is bound to the call form after it (as a decorator binds it)."""
        ctx = self.ctx
        decorator = self.use.node
        first, last = decorator.lineno, decorator.end_lineno or decorator.lineno
        rest = ctx.source[ctx.span(decorator)[1]:ctx.line_start(last) + len(ctx.line_text(last))].strip()
        if ctx.line_text(first)[:decorator.col_offset - 1].strip() or rest and not rest.startswith("#"):
            return "the decorator shares its lines with other code"
        made = self._call(ast.Name(id=fn.name, ctx=ast.Load()), fn.name, fn, bind_always=True)
        if isinstance(made, str):
            return made
        nl = newline(ctx)
        indent = ctx.line_text(fn.lineno)[:fn.col_offset]
        end = line_after(ctx, fn)
        eol = "" if ctx.source[:end].endswith(("\n", "\r")) else nl
        gap = nl * (2 if any(fn is stmt for stmt in ctx.tree.body) else 1)
        kept = f"{indent}{rest}{nl}" if rest else ""  # the decorator's comment stays where it was
        return self._fix([Edit(ctx.line_start(first), ctx.line_start(last) + len(ctx.line_text(last)), kept),
                          Edit(end, end, f"{eol}{gap}{indent}{fn.name} = {made[0]}{nl}")])

    # a decorated def ---------------------------------------------------------------------------
    def _decorated(self, fn: Function) -> Union[Fix, str]:
        ctx = self.ctx
        params = _plain_parameters(fn)
        if isinstance(params, str):
            return params
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fn)):
            return "the function is a generator"
        plan = mapping(ctx, self.use, len(params))
        if isinstance(plan, str):
            return plan
        if plan.static and fn.args.defaults:
            return "static arguments and parameters with defaults"
        body = fn.body[1:] if is_docstring(fn.body[0]) else fn.body
        if body and body[0].lineno == fn.lineno:
            return "the body is on the line of the `def`"
        assigned = {n.id for n in own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        static_names = {params[i] for i in plan.static}
        if static_names & assigned:
            return f"the body assigns the static parameter `{sorted(static_names & assigned)[0]}`"
        positions = [i for i in range(len(params)) if i not in plan.static]
        mapped = [i for i in positions if plan.axis_of(i) is not None]
        unmap = ""
        if mapped and body:
            target = ", ".join(params[i] for i in mapped)
            axes = {plan.axis_of(i) for i in mapped}
            if len(axes) == 1:
                value = params[mapped[0]] if len(mapped) == 1 else f"({target})"
                unmap = f"{target} = {self._unmap(value, axes.pop(), body[0])}"
            else:
                unmap = f"{target} = {', '.join(self._unmap(params[i], plan.axis_of(i), body[0]) for i in mapped)}"
        returns = [n for n in own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]
        wraps = [] if plan.out_axis is None and plan.out_tuple is None else [
            Edit(*ctx.span(r.value), self._remap(_one_argument(ctx, r.value), plan, r)) for r in returns]  # type: ignore[arg-type]  # has a value
        partial, jit, shard_map = self.ref("functools.partial"), self.ref("jax.jit"), self.ref("jax.shard_map")
        decorator = self.use.node
        indent = ctx.line_text(fn.lineno)[:fn.col_offset]
        nl = newline(ctx)
        helper, options = self._host_local(plan, positions)
        converted = f"{partial}({helper}, {options}){nl}{indent}@"
        shard = f"@{partial}({shard_map}, {self._shard_map_options(plan, positions)})"
        if not plan.static:
            options = self._jit_options(plan, positions)
            jitted = f"{partial}({jit}{options})" if options else jit
            edits = [ctx.replace(decorator, f"{converted}{jitted}{nl}{indent}{shard}"), *wraps]
            if unmap:
                line, column = _first(body[0])
                start = ctx.offset(line, column)
                nested = isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                gap = nl if nested else ""  # a blank line before a nested definition (E306)
                edits.append(Edit(start, start, f"{unmap}{nl}{gap}{ctx.line_text(line)[:column]}"))
            return self._fix(edits)
        return self._nest(fn, body, plan, params, positions, unmap, wraps, shard, converted)

    def _nest(self, fn: Function, body: List[ast.stmt], plan: Mapping, params: List[str], positions: List[int],
              unmap: str, wraps: List[Edit], shard: str, converted: str) -> Union[Fix, str]:
        """Static arguments: the body moves into a function of the dynamic parameters, which it maps."""
        ctx = self.ctx
        if not body:
            return "the function has no body to map"
        start = ctx.line_start(_first(body[0])[0])
        end = ctx.line_start(fn.end_lineno or fn.lineno) + len(ctx.line_text(fn.end_lineno or fn.lineno))
        region = ctx.source[start:end]
        if _multiline_strings(region):
            return "the body holds a string of several lines, which moving it one level in would change"
        region = splice(region, [Edit(e.start - start, e.end - start, e.text) for e in wraps])
        outer = ctx.line_text(body[0].lineno)[:body[0].col_offset]
        unit = outer[len(ctx.line_text(fn.lineno)[:fn.col_offset]):] or "    "
        names = set(params) | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        inner = next(n for n in ("per_device", "per_device_", "per_device__", "per_device_fn") if n not in names)
        dynamic = ", ".join(params[i] for i in positions)
        nl = newline(ctx)
        lines = region.splitlines(keepends=True)
        moved = "".join(unit + line if line.strip() else line for line in lines)
        nested = isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        text = (f"{outer}{shard}{nl}{outer}def {inner}({dynamic}):{nl}"
                + (f"{outer}{unit}{unmap}{nl}" + (nl if nested else "") if unmap else "") + moved
                + ("" if moved.endswith(("\n", "\r")) else nl) + f"{outer}return {inner}({dynamic}){nl}")
        if not region.endswith(("\n", "\r")):
            text = text[:-len(nl)]
        jitted = f"{self.ref('functools.partial')}({self.ref('jax.jit')}{self._jit_options(plan, positions)})"
        return self._fix([ctx.replace(self.use.node, converted + jitted), Edit(start, end, text)])


def _one_argument(ctx: FileContext, value: ast.expr) -> str:
    """``value``'s text as one argument of a call: ``return a, b`` gives ``(a, b)``."""
    text = ctx.text(value)
    if isinstance(value, ast.Tuple) and value.elts and ctx.span(value.elts[0])[0] == ctx.span(value)[0]:
        return f"({text})"
    return text


def _first(stmt: ast.stmt) -> Tuple[int, int]:
    """The line and column where a statement starts: a decorated definition at its first
    decorator's ``@`` (one left of the decorator)."""
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        first = min(decorators, key=lambda d: (d.lineno, d.col_offset))
        return first.lineno, first.col_offset - 1
    return stmt.lineno, stmt.col_offset


def _multiline_strings(text: str) -> bool:
    import io
    import tokenize  # here: only a decorated pmap with static arguments needs it

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True
    return any(t.type == tokenize.STRING and t.start[0] != t.end[0] for t in tokens)
