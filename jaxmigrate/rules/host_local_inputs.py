"""JM504: host-local inputs (and outputs) of pjit in multi-process code → ``multihost_utils`` conversions."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import insert_before, statement_prefix
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.era import gda_era_evidence, written_evidence
from jaxmigrate.patterns.gda import MULTI_PROCESS_MARKERS, MULTIHOST_UTILS, PJIT, outputs_are_global, spec_source
from jaxmigrate.patterns.pjit_calls import (
    PjitCall,
    SiteArguments,
    host_local_output,
    host_local_sites,
    mesh_for,
    out_value,
    output_open,
    partitioned_calls,
    position_specs,
    result_converted,
    site_arguments,
    statement_of,
    static_positions,
    visible_host_data,
)
from jaxmigrate.patterns.provenance import UNKNOWN
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules.base import Example, Rule, short, snippet


class HostLocalInputs(Rule):
    """
    ## What it does
    In multi-process code (a module that uses `jax.process_index`, `jax.process_count`,
    `jax.distributed` or `multihost_utils`, other than its two conversions alone, which the
    migration guide writes for code that may run on one process and JM503's fix writes for mixed
    `FROM_GDA`) written for GDA-era pjit (a pjit spelled with
    `in_axis_resources`/`out_axis_resources`, a GlobalDeviceArray name, or the `jax_array` /
    `jax_parallel_functions_output_gda` flags: code that says none of these was written for
    jax.Array and is left alone), reports every call of a pjitted function whose
    inputs were host-local under GDA-era pjit, and with `--unsafe-fixes` makes the conversion
    explicit: the arguments go through
    `multihost_utils.host_local_array_to_global_array(args, mesh, in_specs)` before the call
    and, unless the module turned on `jax_parallel_functions_output_gda`, the result through
    `multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)` after it. A
    `None` spec (replicated in legacy pjit) becomes `P()`, and a spec tree held in a name with
    `None` leaves is passed mapped so (`jax.tree_util.tree_map(lambda s: P() if s is None else
    s, ...)`: the conversions reject a `None` spec). A key made from a constant seed
    (`jax.random.PRNGKey(0)`) is the same on every process: passed as it is under a replicated
    spec, its call's result converted back. When the call sites, the mesh or the
    specs cannot be resolved in the module, the finding carries the code to write, one statement
    a line: the conversion of the inputs, then the call's own statement (its targets kept) with the
    output converted; the JSON and SARIF outputs and `fix --report` show it. Every finding's
    message shows the conversion to write on one line (a fixed one's too, with the whole code as
    its suggestion).

    Only host data is converted: numpy arrays and what is computed from them, this process's slice
    (`batch[jax.process_index()]`), containers of those, and the outputs of the module's pjits
    (host-local unless the module turned on GDA outputs). A GDA, an array made by `device_put` or
    `make_array_from_*` (global already) and a Python number (which the conversion cannot take)
    are passed as they are, and so is any argument under a replicated spec (`None`, `P()`): there
    host-local and global coincide (the migration guide: "the shape is already global"), a key
    made with `PRNGKey` on every process included. An argument whose origin the module does not
    show (a parameter, a loop variable) is not converted: the fix converts the host data beside
    it and the call stays reported for it, with the code to write.

    A call that converts some of its inputs with `host_local_array_to_global_array` itself is
    jax.Array code (the conversion raises with jax.Array off), as the migration guide writes it:
    its result is global and stays so, and an argument it leaves that may be host data is
    reported, not converted.

    A call with no arguments (`make()`) has no input to convert: it is reported only when its
    result is this process's part still to convert back (GDA outputs off, a spec that shards it,
    the result used), not in a module that turned GDA outputs on.

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

    A call that passes this process's NumPy data (a NumPy array or what is computed from it, the
    result of a loader function of the module, a batch drawn from a generator of NumPy batches, a
    dict of those) under a spec that shards it is reported in any multi-process module, also one
    that no longer says its era, and also where the pjit has become `jax.jit(..., in_shardings=...)`
    (JM701): jax.Array's pjit and jit raise on such a call with two processes ("Passing non-trivial
    shardings for numpy inputs is not allowed"). So no other rule waits for this one: JM101 renames
    the keywords of a reported pjit and JM701 rewrites it to `jax.jit`, and a later `check` of the
    fixed file still reports those calls. A call whose inputs are host data only by the era (the
    outputs of the module's pjits, values of unseen origin) is reported while the module says it is
    GDA-era; a finding that only the text before this run's fixes showed so says to review it now.

    ## Why is this bad?
    Before jax.Array, pjit took the inputs that were not GDAs as *host-local*: each process
    passed its own slice and pjit assembled the global array (dimension by dimension, in mesh
    order), and it handed back host-local outputs. jax.Array's pjit takes every input as the
    global value: code that feeds per-process batches now computes on the wrong data, silently,
    and only when run with two or more processes. The fix is unsafe because it needs judgement:
    an argument that is already a global jax.Array must not be converted; its message names what
    it converts.
    """

    code = "JM504"
    name = "host-local-inputs"
    summary = "host-local pjit inputs/outputs in multi-process code → `multihost_utils` conversions"
    fix_safety = "unsafe"
    unsafe_note = ("the inputs are converted from host-local to global arrays (and the outputs back): an input that is "
                   "already a global array must not be converted; with one process nothing changes")
    # multi-process code that calls pjit
    triggers = name_triggers(MULTI_PROCESS_MARKERS)[0]
    # a pjit, the jax.jit JM701 made of one (with bare specs: under `jax.set_mesh`, which JM702
    # writes; a Sharding object as a spec is jax.Array code, left alone), or a pjit in a partitioner
    requires = (name_triggers([PJIT])[0] + (b"set_mesh", b"use_mesh", b"partitioner"),)
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
                        arg2_global, = multihost_utils.host_local_array_to_global_array(
                            (batch[jax.process_index()],), mesh, (P("data"),))
                        loss = multihost_utils.global_array_to_host_local_array(p_step(params, arg2_global), mesh, P())
                    return loss
            """),
            unsafe=True,
            title="this process's slice of a batch is converted; numpy data under a replicated spec is passed as it is",
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
                    p_step = pjit(step, in_axis_resources=(P("model"), P("data")), out_axis_resources=None)
                    with mesh:
                        return p_step(params, batch[jax.process_index()])
            """),
            snippet("""
                import jax
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, params, batch):
                    p_step = pjit(step, in_axis_resources=(P("model"), P("data")), out_axis_resources=None)
                    with mesh:
                        arg2_global, = multihost_utils.host_local_array_to_global_array(
                            (batch[jax.process_index()],), mesh, (P("data"),))
                        return multihost_utils.global_array_to_host_local_array(p_step(params, arg2_global), mesh, P())
            """),
            unsafe=True,
            title="this process's data is converted; an argument whose origin is not visible (a parameter) is left, "
                  "and the call stays reported for it",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(step, mesh, params, batch):
                    p_step = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh:
                        return p_step(params, batch)

                rank = jax.process_index()
            """),
            flagged=True,
            title="an argument whose origin is not visible, under a spec that shards it, is reported, not converted",
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
                from jax.sharding import PartitionSpec as P

                def run(step, mesh, a, b):
                    f = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
                    with mesh: out = f(a, b[jax.process_index()])
                    return out
            """),
            snippet("""
                import jax
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def run(step, mesh, a, b):
                    f = pjit(step, in_axis_resources=(None, P("data")), out_axis_resources=None)
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
                        return p_step(params, batch)

                rank = jax.process_index()
            """),
            title="code written for jax.Array (the `in_shardings` spelling, no GDA-era name) passes global values: "
                  "only this process's NumPy data is reported there",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def train(f, mesh, data):
                    key = jax.random.PRNGKey(0)
                    with mesh:
                        batch = multihost_utils.host_local_array_to_global_array(
                            data[jax.process_index()], mesh, P("data"))
                        return pjit(f, in_axis_resources=(None, P("data")), out_axis_resources=P("data"))(key, batch)
            """),
            title="the migration guide's jax.Array code: a key under a replicated spec and a converted batch are "
                  "passed as they are, and the global result stays global",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call, origin in partitioned_calls(ctx):
            yield self.finding(ctx, call, f"`{short(ctx.text(call.func))}` was made by `{short(ctx.text(origin.func))}"
                               "(...)`, a pjit inside a partitioner: in GDA-era multi-process code its inputs were "
                               "host-local, and jax.Array takes them as global values: convert host data with "
                               "`multihost_utils.host_local_array_to_global_array` (or check the partitioner does)")
        sites = host_local_sites(ctx)
        note = _inherited_era(ctx) if sites else ""
        for pj, site in sites:
            if site is None:
                yield self.finding(ctx, pj.call, "in multi-process code this pjit's inputs were host-local under GDA-era "
                                   f"pjit; jax.Array takes them as global values{note}",
                                   suggestion=_suggestion(ctx, pj, None))
            else:
                finding = self._site(ctx, pj, site, "" if visible_host_data(ctx, pj, site) else note)
                if finding is not None:
                    yield finding

    def _site(self, ctx: FileContext, pj: PjitCall, site: ast.Call, note: str) -> Optional[Finding]:
        label = f"`{pj.name}`" if pj.name else "this pjit"
        code = _suggestion(ctx, pj, site)
        message = (f"{label} takes host-local inputs (GDA-era pjit assembled each process's slice), global values on "
                   f"jax.Array: write `{code.splitlines()[0]}`{note}")
        reason = _cannot(ctx, pj, site)
        if reason:
            return self.finding(ctx, site, f"{message} ({reason})", suggestion=code)
        args = site_arguments(ctx, pj, site)
        convert, unknown = args.convert, args.unknown
        unseen = [i for i, k in enumerate(args.kinds) if k == UNKNOWN]
        if args.converted:  # jax.Array-mode code, or a fix that left values of unseen origin
            listed, one = _listed(ctx, site, convert + unknown), len(convert + unknown) == 1
            reason = (f"the call takes inputs converted with `host_local_array_to_global_array` already (by hand, as "
                      f"code written for jax.Array does, or by this rule's fix): convert {listed} too only if "
                      f"{'it is' if one else 'they are'} this process's data")
        elif unknown and not convert:
            one = len(unknown) == 1
            what = "it is a global jax.Array or a Python number" if one else "they are global jax.Arrays or Python numbers"
            reason = (f"where {_listed(ctx, site, unknown)} {'comes' if one else 'come'} from is not visible here: "
                      f"convert {'it if it is' if one else 'them if they are'} this process's data, not if {what}")
        elif convert and _spec_for(ctx, pj, site, convert) is None:
            reason = "the specs are not a tuple and some arguments need no conversion: convert the others by hand"
        elif not convert and unseen:  # replicated inputs, a result to convert back
            one = len(unseen) == 1
            reason = (f"where {_listed(ctx, site, unseen)} {'comes' if one else 'come'} from is not visible here: "
                      f"{'its spec is' if one else 'their specs are'} replicated, which needs no conversion, but if the "
                      "call is GDA-era code its result is this process's part, to convert back")
        if reason:
            return self.finding(ctx, site, f"{message} ({reason})", suggestion=code)
        if not convert and not output_open(ctx, pj, site, args):
            return None  # global values, Python numbers and replicated inputs (converted already, or never host-local)
        return self._fix(ctx, pj, site, args, label, note, code)

    def _fix(self, ctx: FileContext, pj: PjitCall, site: ast.Call, args: SiteArguments, label: str, note: str,
             code: str) -> Finding:
        """The unsafe fix: this process's data converted before the call, the result back after it."""
        convert, unknown = args.convert, args.unknown
        mesh = mesh_for(ctx, site)
        stmt = statement_of(ctx, site)
        mhu, imports = importer(ctx).reference(MULTIHOST_UTILS, at=site)
        edits: List[Edit] = []
        more: Tuple[ImportRef, ...] = ()
        converted = [site.args[i] for i in convert]
        if convert:
            names = _global_names(ctx, converted, convert)
            texts = [ctx.text(a) for a in converted]
            to_global = f"{mhu}.host_local_array_to_global_array("
            whole = _whole(ctx, pj, site, convert)
            if len(convert) == 1 and whole and _is_tuple(pj.value):  # one argument, one spec
                spec, more = spec_source(ctx, pj.value.elts[0], site, trees=True)  # type: ignore[attr-defined]  # a tuple: _is_tuple
                line = f"{names[0]} = {to_global}{texts[0]}, {mesh}, {spec})"
            else:  # a tuple of specs, or one spec, which is a prefix of each argument (as pjit read it)
                spec, more = _spec_for(ctx, pj, site, convert)  # type: ignore[misc]  # not None: _site checked it
                one = "," if len(convert) == 1 else ""
                line = (f"{names[0]}, = {to_global}({texts[0]},), {mesh}, {spec})" if one and whole else
                        f"{', '.join(names)}{one} = {to_global}\n    ({', '.join(texts)}{one}), {mesh}, {spec})")
            edits.append(insert_before(ctx, stmt, [line]))  # type: ignore[arg-type]  # stmt is set: _cannot checked it
            edits += [ctx.replace(a, n) for a, n in zip(converted, names)]
        back = not outputs_are_global(ctx) and not result_converted(ctx, site)
        if back:
            out_edits, extra = host_local_output(ctx, pj, site, mhu, mesh)  # type: ignore[arg-type]  # mesh is set: _cannot checked it
            edits += out_edits
            more += extra
            back = bool(out_edits)
        # one short line of code in the message; all of it (the call with its result converted back too)
        # in the suggestion; what the unsafe fix may change in the rule's note (`fix` lists it)
        if convert:
            shown = " ".join(line.split()).replace("( (", "((")
            message = (f"{label} takes this process's {_listed(ctx, site, convert)}, host-local under GDA-era pjit: "
                       f"convert first, `{shown}`{', and the result back' if back else ''}")
        else:
            message = (f"{label} returned this process's part under GDA-era pjit: the fix converts the result back "
                       "with `global_array_to_host_local_array`")
        if unknown:
            single = len(unknown) == 1
            message += (f"; {_listed(ctx, site, unknown)} {'is' if single else 'are'} left as "
                        f"{'it is' if single else 'they are'} (origin not visible) and the call stays reported")
        fix = Fix("unsafe", edits=tuple(edits), add_imports=tuple(imports) + more)
        return self.finding(ctx, site, message + note, fix, suggestion=code)


def _listed(ctx: FileContext, site: ast.Call, positions: Sequence[int]) -> str:
    return ", ".join(f"`{short(ctx.text(site.args[i]))}`" for i in sorted(positions))


def _whole(ctx: FileContext, pj: PjitCall, site: ast.Call, positions: Sequence[int]) -> bool:
    """Whether ``positions`` are every argument pjit's input specs cover."""
    static = static_positions(pj) or set()
    return list(positions) == [i for i in range(len(site.args)) if i not in static]


def _spec_for(ctx: FileContext, pj: PjitCall, site: ast.Call,
              positions: Sequence[int]) -> Optional[Tuple[str, Tuple[ImportRef, ...]]]:
    """The input specs of the arguments at ``positions``, as the conversion takes them: pjit's own
    when they are all its arguments, else the tuple of their elements (``specs[1]`` of a tuple
    assigned to a name), or a single spec, which is a prefix of each; None where not known."""
    if _whole(ctx, pj, site, positions):
        return spec_source(ctx, pj.value, site, trees=True)
    specs = position_specs(ctx, pj, site)
    if any(specs[i] is None for i in positions):
        return None
    if isinstance(pj.value, (ast.Tuple, ast.List)):
        parts = [spec_source(ctx, specs[i], site, trees=True) for i in positions]  # type: ignore[arg-type]  # not None: checked above
        text = ", ".join(p for p, _ in parts) + ("," if len(parts) == 1 else "")
        return f"({text})", tuple(r for _, refs in parts for r in refs)
    if isinstance(pj.value, ast.Name) and specs[positions[0]] is not pj.value:  # a tuple assigned to the name
        static = static_positions(pj) or set()
        dynamic = [i for i in range(len(site.args)) if i not in static]
        text = ", ".join(f"{pj.value.id}[{dynamic.index(i)}]" for i in positions) + ("," if len(positions) == 1 else "")
        return f"({text})", ()
    return spec_source(ctx, pj.value, site, trees=True)  # one spec: a prefix of every argument


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
    if static_positions(pj) != set():  # in_shardings leave them out: the conversion must too
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


def _suggestion(ctx: FileContext, pj: PjitCall, site: Optional[ast.Call]) -> str:
    """The code to write, one statement a line, with this call's own arguments and specs where
    they are known: the inputs that may be this process's data converted first (not the global
    values, Python numbers and replicated inputs), then the call's own statement (its targets kept)
    with the call's output converted back where GDA-era pjit returned this process's part."""
    fn = pj.name or (ctx.text(site.func) if site is not None and site.func is pj.call else "f")
    in_spec = spec_source(ctx, pj.value, pj.call, trees=True)[0] if pj.value is not None else "in_specs"
    out = out_value(pj)
    out_spec = spec_source(ctx, out, pj.call, trees=True)[0] if out is not None else "out_specs"
    mesh = (mesh_for(ctx, site) if site is not None else None) or "mesh"
    used = not (site is not None and isinstance(ctx.parent(site), ast.Expr))  # a result is used
    back = not outputs_are_global(ctx) and used
    if site is None or not site.args:
        lines = [f"args = multihost_utils.host_local_array_to_global_array(args, {mesh}, {in_spec})"]
        call = f"{fn}(*args)"
    else:  # static arguments (literal `static_argnums`) and keywords are passed as they are
        static = static_positions(pj) or set()
        args = [ctx.text(a) for a in site.args]
        positions = [i for i in range(len(args)) if i not in static]
        spec = in_spec
        if not any(isinstance(a, ast.Starred) for a in site.args) and not site.keywords:
            known = site_arguments(ctx, pj, site)
            wanted = sorted(known.convert + known.unknown)
            found = _spec_for(ctx, pj, site, wanted) if wanted else None
            if found is not None or not wanted:
                positions, spec = wanted, found[0] if found else spec
            # the result goes back with converted inputs, as the fix writes it, or alone where GDA-era
            # pjit returned this process's part of a sharded output; not for code written for jax.Array
            back = back and not known.converted and (bool(positions) or output_open(ctx, pj, site, known))
        names = [(f"{a}_global" if a.isidentifier() else f"arg{i + 1}_global") if i in positions else a
                 for i, a in enumerate(args)]
        trailing = "," if len(positions) == 1 else ""
        lines = [f"{', '.join(names[i] for i in positions)}{trailing} = multihost_utils.host_local_array_to_global_array("
                 f"({', '.join(args[i] for i in positions)}{trailing}), {mesh}, {spec})"] if positions else []
        call = f"{fn}({', '.join(names + [ctx.text(k) for k in site.keywords])})"
    if back and not (site is not None and result_converted(ctx, site)):
        call = f"multihost_utils.global_array_to_host_local_array({call}, {mesh}, {out_spec})"
    return "\n".join([*lines, _in_place(ctx, site, call)])


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
