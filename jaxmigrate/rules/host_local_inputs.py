"""JM504: host-local inputs (and outputs) of pjit in multi-process code → ``multihost_utils`` conversions."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import insert_before, statement_prefix
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.era import gda_era_evidence, written_evidence
from jaxmigrate.patterns.gda import (
    MULTI_PROCESS_MARKERS,
    MULTIHOST_UTILS,
    PJIT,
    outputs_are_global,
    spec_source,
)
from jaxmigrate.patterns.pjit_calls import (
    PjitCall,
    argument_kinds,
    host_local_output,
    host_local_sites,
    mesh_for,
    out_value,
    partitioned_calls,
    statement_of,
)
from jaxmigrate.patterns.provenance import HOST, UNKNOWN
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules.base import Example, Rule, short, snippet


class HostLocalInputs(Rule):
    """
    ## What it does
    In multi-process code (a module that uses `jax.process_index`, `jax.process_count`,
    `jax.distributed` or `multihost_utils`) written for GDA-era pjit (a pjit spelled with
    `in_axis_resources`/`out_axis_resources`, a GlobalDeviceArray name, or the `jax_array` /
    `jax_parallel_functions_output_gda` flags: code that says none of these was written for
    jax.Array and is left alone), reports every call of a pjitted function whose
    inputs were host-local under GDA-era pjit, and with `--unsafe-fixes` makes the conversion
    explicit: the arguments go through
    `multihost_utils.host_local_array_to_global_array(args, mesh, in_specs)` before the call
    and, unless the module turned on `jax_parallel_functions_output_gda`, the result through
    `multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)` after it. A
    `None` spec (replicated in legacy pjit) becomes `P()`. When the call sites, the mesh or the
    specs cannot be resolved in the module, the finding carries the code to write, one statement
    a line: the conversion of the inputs, then the call's own statement (its targets kept) with the
    output converted; the JSON and SARIF outputs and `fix --report` show it.

    Only host data is converted: numpy arrays and what is computed from them, this process's slice
    (`batch[jax.process_index()]`), containers of those, and the outputs of the module's pjits
    (host-local unless the module turned on GDA outputs). A GDA, an array made by `device_put` or
    `make_array_from_*` (global already) and a Python number (which the conversion cannot take)
    are passed as they are; an argument whose origin the module does not show (a parameter, a
    loop variable) makes the call reported with the code to write, not converted.

    A pjit called where it is made, `pjit(f, ...)(batch)`, is converted the same way. Code that
    set the jax.Array mode for itself is left alone: a pjit whose input specs are Sharding
    objects (`NamedSharding(mesh, P("x"))`, which pjit took only with jax.Array on), a call
    inside `with jax_array(True):` (or `False`), in a function or class decorated
    `@jax_array(...)` / `@jtu.with_config(jax_array=...)`, or in a test class whose `setUp`
    skips it in one mode (`if jax.config.jax_array: self.skipTest(...)`). JAX's own tests ran
    such code in both modes: turned on, its inputs are global; turned off, it is GDA-mode code
    that a conversion would make raise, and that has no jax.Array future.

    A function a project's partitioner makes (`self._step = self._partitioner.partition(fn, ...)`
    or `.compile(...)`: a pjit JM504 cannot see into) is reported at each call.

    The safe fixes rewrite some of that evidence (JM101 spells `in_shardings`): a `fix` run keeps the
    era of the text as given for its findings and says so in them. Review those calls in that run,
    since a later `check` of the fixed text cannot tell it from code written for jax.Array.

    ## Why is this bad?
    Before jax.Array, pjit took the inputs that were not GDAs as *host-local*: each process
    passed its own slice and pjit assembled the global array (dimension by dimension, in mesh
    order), and it handed back host-local outputs. jax.Array's pjit takes every input as the
    global value: code that feeds per-process batches now computes on the wrong data, silently,
    and only when run with two or more processes. The fix is unsafe because it needs judgement:
    an argument that is already a global jax.Array must not be converted.
    """

    code = "JM504"
    name = "host-local-inputs"
    summary = "host-local pjit inputs/outputs in multi-process code → `multihost_utils` conversions"
    fix_safety = "unsafe"
    unsafe_note = ("the inputs are converted from host-local to global arrays (and the outputs back): an input that is "
                   "already a global array must not be converted; with one process nothing changes")
    # multi-process code that calls pjit
    triggers = name_triggers(MULTI_PROCESS_MARKERS)[0]
    requires = (name_triggers([PJIT])[0] + (b"partitioner",),)  # or a pjit inside a partitioner
    deprecated_in = "0.4.1"
    removed_in = "0.4.7"
    replacement_since = "0.4.1"
    history_names = ("jax.experimental.global_device_array.GlobalDeviceArray",)
    examples = (
        Example(
            snippet("""
                import jax
                import numpy as np
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, batch):
                    params = np.zeros(4)
                    p_step = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh:
                        loss = p_step(params, batch[jax.process_index()])
                    return loss
            """),
            snippet("""
                import jax
                import numpy as np
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, batch):
                    params = np.zeros(4)
                    p_step = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh:
                        params_global, arg2_global = multihost_utils.host_local_array_to_global_array(
                            (params, batch[jax.process_index()]), mesh, (P(), P("data")))
                        loss = multihost_utils.global_array_to_host_local_array(p_step(params_global, arg2_global), mesh, P())
                    return loss
            """),
            unsafe=True,
            title="numpy data and this process's slice of a batch are converted",
        ),
        Example(
            snippet("""
                import jax
                import numpy as np
                from jax.experimental.pjit import pjit
                from jax.sharding import NamedSharding, PartitionSpec as P

                def train(step, mesh, batch):
                    params = jax.device_put(np.zeros(4), NamedSharding(mesh, P()))
                    p_step = pjit(step, in_axis_resources=(None, P("data"), None), out_axis_resources=None)
                    with mesh:
                        return p_step(params, batch[jax.process_index()], 0.1)
            """),
            snippet("""
                import jax
                import numpy as np
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit
                from jax.sharding import NamedSharding, PartitionSpec as P

                def train(step, mesh, batch):
                    params = jax.device_put(np.zeros(4), NamedSharding(mesh, P()))
                    p_step = pjit(step, in_axis_resources=(None, P("data"), None), out_axis_resources=None)
                    with mesh:
                        arg2_global, = multihost_utils.host_local_array_to_global_array(
                            (batch[jax.process_index()],), mesh, (P("data"),))
                        return multihost_utils.global_array_to_host_local_array(p_step(params, arg2_global, 0.1), mesh, P())
            """),
            unsafe=True,
            title="a global jax.Array and a Python number are passed as they are",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, params, batch):
                    p_step = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh:
                        return p_step(params, batch[jax.process_index()])
            """),
            flagged=True,
            title="an argument whose origin is not visible (a parameter) is reported, not converted",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, params, batch):
                    p_step = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh:
                        return p_step(params, batch)
            """),
            title="single-process code: host-local and global coincide",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import pjit

                def run(step, mesh, a, b):
                    f = pjit(step, in_axis_resources=(None, None), out_axis_resources=None)
                    with mesh: out = f(a, b[jax.process_index()])
                    return out
            """),
            snippet("""
                import jax
                from jax.experimental.pjit import pjit

                def run(step, mesh, a, b):
                    f = pjit(step, in_axis_resources=(None, None), out_axis_resources=None)
                    with mesh: out = f(a, b[jax.process_index()])
                    return out
            """),
            flagged=True,
            title="a call in a one-line block (or after `;`) is reported: the conversion would precede the header",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, params, batch):
                    p_step = pjit(step, in_shardings=(None, P("data")), out_shardings=None)
                    with mesh:
                        return p_step(params, batch[jax.process_index()])
            """),
            title="code written for jax.Array (the `in_shardings` spelling, no GDA-era name) passes global values",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call, origin in partitioned_calls(ctx):
            yield self.finding(ctx, call, f"`{short(ctx.text(call.func))}` was made by `{short(ctx.text(origin.func))}"
                               "(...)`, a pjit inside a partitioner: in GDA-era multi-process code its inputs were "
                               "host-local, and jax.Array takes them as global values: convert host data with "
                               "`multihost_utils.host_local_array_to_global_array` (or check the partitioner does)")
        sites = host_local_sites(ctx)
        outputs_global = outputs_are_global(ctx) if sites else False
        note = _inherited_era(ctx) if sites else ""
        for pj, site in sites:
            if site is None:
                yield self.finding(ctx, pj.call, "in multi-process code this pjit's inputs were host-local under GDA-era "
                                   f"pjit; jax.Array takes them as global values{note}",
                                   suggestion=_suggestion(ctx, pj, None, outputs_global))
            else:
                finding = self._site(ctx, pj, site, outputs_global, note)
                if finding is not None:
                    yield finding

    def _site(self, ctx: FileContext, pj: PjitCall, site: ast.Call, outputs_global: bool, note: str) -> Optional[Finding]:
        label = f"`{pj.name}`" if pj.name else "this pjit"
        message = (f"{label} was written for host-local inputs (GDA-era pjit assembled each process's slice into "
                   f"the global array); jax.Array takes them as global values: convert with `multihost_utils`{note}")
        reason = _cannot(ctx, pj, site)
        kinds = argument_kinds(ctx, site)
        unknown = [a for a, k in zip(site.args, kinds) if k == UNKNOWN]
        convert = [i for i, k in enumerate(kinds) if k == HOST]
        if not reason and unknown:
            reason = (f"where `{short(ctx.text(unknown[0]))}` comes from is not visible here: convert it if it is this "
                      "process's data, not if it is a global jax.Array or a Python number")
        elif not reason and len(convert) < len(kinds) and not _is_tuple(pj.value):
            reason = "some arguments are global or Python numbers and the specs are not a tuple: convert the others by hand"
        if reason:
            return self.finding(ctx, site, f"{message} ({reason})", suggestion=_suggestion(ctx, pj, site, outputs_global))
        if not convert:
            return None  # global values and Python numbers (converted already, or never host-local)
        mesh = mesh_for(ctx, site)
        stmt = statement_of(ctx, site)
        mhu, imports = importer(ctx).reference(MULTIHOST_UTILS, at=site)
        converted = [site.args[i] for i in convert]
        names = _global_names(ctx, converted, convert)
        args = [ctx.text(a) for a in converted]
        more: Tuple[ImportRef, ...] = ()
        if len(convert) < len(kinds):  # global values and numbers are passed as they are
            elts = pj.value.elts  # type: ignore[attr-defined]  # pj.value is a tuple: checked above
            specs = [spec_source(ctx, elts[i], site) for i in convert]
            spec_text = ", ".join(s for s, _ in specs) + ("," if len(specs) == 1 else "")
            more = tuple(r for _, refs in specs for r in refs)
            one = "," if len(names) == 1 else ""
            lines = [f"{', '.join(names)}{one} = {mhu}.host_local_array_to_global_array(\n"
                     f"    ({', '.join(args)}{one}), {mesh}, ({spec_text}))"]
        elif len(args) == 1 and _is_tuple(pj.value):  # one argument, one spec
            in_spec, more = spec_source(ctx, pj.value.elts[0], site)  # type: ignore[attr-defined]  # pj.value is a tuple: _is_tuple
            lines = [f"{names[0]} = {mhu}.host_local_array_to_global_array({args[0]}, {mesh}, {in_spec})"]
        elif len(args) == 1:  # a spec for the tuple of arguments (a prefix, as pjit read it)
            in_spec, more = spec_source(ctx, pj.value, site)
            lines = [f"{names[0]}, = {mhu}.host_local_array_to_global_array(({args[0]},), {mesh}, {in_spec})"]
        else:
            in_spec, more = spec_source(ctx, pj.value, site)
            lines = [f"{', '.join(names)} = {mhu}.host_local_array_to_global_array(\n"
                     f"    ({', '.join(args)}), {mesh}, {in_spec})"]
        edits: List[Edit] = [insert_before(ctx, stmt, lines)]  # type: ignore[arg-type]  # stmt is set: _cannot checked it
        edits += [ctx.replace(a, n) for a, n in zip(converted, names)]
        if not outputs_global:
            out_edits, extra = host_local_output(ctx, pj, site, mhu, mesh)  # type: ignore[arg-type]  # mesh is set: _cannot checked it
            edits += out_edits
            more += extra
        fix = Fix("unsafe", edits=tuple(edits), add_imports=tuple(imports) + more)
        return self.finding(ctx, site, message, fix)




def _inherited_era(ctx: FileContext) -> str:
    """What to add to a finding when only the text before this run's fixes said the module is
    GDA-era: a later ``check`` of the fixed text cannot tell it from code written for jax.Array."""
    if written_evidence(ctx) is not None:
        return ""
    return (f" [GDA-era by {gda_era_evidence(ctx)} before this run's fixes rewrote it: review this call now, "
            "a later `check` cannot tell the fixed module from code written for jax.Array]")


def _cannot(ctx: FileContext, pj: PjitCall, site: ast.Call) -> Optional[str]:
    if not site.args or site.keywords or any(isinstance(a, ast.Starred) for a in site.args):
        return f"the call at line {site.lineno} does not pass its arguments positionally"
    if not isinstance(pj.spec, ast.keyword):
        return "positional shardings"
    if _static(pj) != set():  # in_shardings leave them out: the conversion must too
        return "`static_argnums`/`static_argnames`: convert the other arguments by hand"
    if _is_tuple(pj.value) and len(pj.value.elts) != len(site.args):  # type: ignore[attr-defined]  # a tuple: _is_tuple
        return f"the call at line {site.lineno} passes {len(site.args)} arguments for {len(pj.value.elts)} specs"  # type: ignore[attr-defined]  # a tuple: _is_tuple
    stmt = statement_of(ctx, site)
    if stmt is None:
        return f"the call at line {site.lineno} is inside an expression evaluated lazily or repeatedly"
    if statement_prefix(ctx, stmt).strip():
        # `with mesh: out = f(x)`, `a = 1; out = f(x)`: the conversion would go before the header
        return f"the call at line {site.lineno} shares its line with other code: put its statement on a line of its own"
    if mesh_for(ctx, site) is None:
        return f"no single mesh found for the call at line {site.lineno}"
    for spec in filter(None, (pj.value, out_value(pj))):
        if not _visible_at(ctx, spec, site):
            return f"the shardings of `{pj.name or 'pjit'}` use names not visible at the call at line {site.lineno}"
    return None


def _static(pj: PjitCall) -> Optional[set]:
    """The positions pjit's literal ``static_argnums`` names (empty without one), None when they
    are not literal or ``static_argnames`` is given."""
    found: set = set()
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


def _is_tuple(node: ast.AST) -> bool:
    return isinstance(node, (ast.Tuple, ast.List))


def _visible_at(ctx: FileContext, spec: ast.expr, site: ast.AST) -> bool:
    """Every name the spec uses resolves to the same binding at the call site."""
    resolver = ctx.resolver
    site_scope = resolver.scope_of(site.func if isinstance(site, ast.Call) else site)
    for name in (n for n in ast.walk(spec) if isinstance(n, ast.Name)):
        here = resolver.lookup(name.id, resolver.scope_of(name))
        there = resolver.lookup(name.id, site_scope)
        if here is not there:
            return False
    return True


def _global_names(ctx: FileContext, args: Sequence[ast.expr], positions: Sequence[int]) -> List[str]:
    """A new name for each converted argument: ``x_global``, or ``argN_global`` by its position."""
    names: List[str] = []
    for i, arg in zip(positions, args):
        base = f"{arg.id}_global" if isinstance(arg, ast.Name) else f"arg{i + 1}_global"
        name, k = base, 2
        while ctx.resolver.bound_in_any_scope(name) or name in names:
            name, k = f"{base}{k}", k + 1
        names.append(name)
    return names


def _suggestion(ctx: FileContext, pj: PjitCall, site: Optional[ast.Call], outputs_global: bool) -> str:
    """The code to write, one statement a line, with this call's own arguments and specs where
    they are known: the inputs converted first, then the call's own statement (its targets kept)
    with the call's output converted back, as the fix writes it."""
    fn = pj.name or (ctx.text(site.func) if site is not None and site.func is pj.call else "f")
    in_spec = spec_source(ctx, pj.value, pj.call)[0] if pj.value is not None else "in_specs"
    out = out_value(pj)
    out_spec = spec_source(ctx, out, pj.call)[0] if out is not None else "out_specs"
    mesh = (mesh_for(ctx, site) if site is not None else None) or "mesh"
    if site is None or not site.args:
        convert, call = f"args = multihost_utils.host_local_array_to_global_array(args, {mesh}, {in_spec})", f"{fn}(*args)"
    else:  # static arguments (literal `static_argnums`) and keywords are passed as they are
        static = _static(pj) or set()
        args = [ctx.text(a) for a in site.args]
        names = [a if i in static else f"{a}_global" if a.isidentifier() else f"arg{i + 1}_global"
                 for i, a in enumerate(args)]
        converted = [(a, n) for i, (a, n) in enumerate(zip(args, names)) if i not in static]
        trailing = "," if len(converted) == 1 else ""
        convert = (f"{', '.join(n for _, n in converted)}{trailing} = multihost_utils.host_local_array_to_global_array("
                   f"({', '.join(a for a, _ in converted)}{trailing}), {mesh}, {in_spec})")
        call = f"{fn}({', '.join(names + [ctx.text(k) for k in site.keywords])})"
    if not outputs_global and not (site is not None and isinstance(ctx.parent(site), ast.Expr)):  # a result is used
        call = f"multihost_utils.global_array_to_host_local_array({call}, {mesh}, {out_spec})"
    return f"{convert}\n{_in_place(ctx, site, call)}"


def _in_place(ctx: FileContext, site: Optional[ast.Call], call: str) -> str:
    """``site``'s statement with ``call`` written in its place, so that its targets stay; where the
    call is no simple statement's (a comprehension, a lambda, a block's header), ``out = call``
    and a comment saying what ``out`` replaces."""
    stmt = statement_of(ctx, site) if site is not None else None
    if stmt is None or site is None:  # (no site: no statement either)
        used = " ".join(ctx.text(site).split()) if site is not None else ""  # on one line: a comment
        return f"out = {call}" + (f"  # then use `out` in place of `{used}`" if used else "")
    (start, end), (first, _) = ctx.span(site), ctx.span(stmt)
    text = ctx.text(stmt)
    return text[:start - first] + call + text[end - first:]
