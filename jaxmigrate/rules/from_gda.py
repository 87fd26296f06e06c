"""JM503: ``FROM_GDA`` in pjit's input shardings: drop it, converting host-local arguments if mixed."""

from __future__ import annotations

import ast
from typing import Iterator, List, Sequence, Set

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import drop_argument, insert_before
from jaxmigrate.core.findings import Edit, Finding, Fix, ImportRef
from jaxmigrate.patterns.gda import FROM_GDA, MULTIHOST_UTILS, PARTITION_SPEC, is_multi_process, outputs_are_global
from jaxmigrate.patterns.pjit_calls import (
    PjitCall,
    call_sites,
    host_local_output,
    mesh_for,
    pjit_calls,
    spec_leaves,
    statement_of,
)
from jaxmigrate.rules.base import Example, Rule, snippet

OUT_SHARDINGS_SINCE = "0.4.4"  # pjit takes `out_shardings=` (jax/_src/pjit.py at jax-v0.4.4); before it, out_axis_resources

class FromGda(Rule):
    """
    ## What it does
    Removes `FROM_GDA` from pjit's input shardings. `in_axis_resources=FROM_GDA` (or a tuple of
    only `FROM_GDA`) is dropped, a safe fix: jax.Array inputs carry their own sharding, which
    is what omitting `in_shardings` means.

    When `FROM_GDA` is mixed with specs for host-local inputs, as in
    `pjit(f, in_axis_resources=(FROM_GDA, P('x')), ...)`, the rewrite is the one of JAX's
    jax.Array migration guide: the input shardings are dropped and, at each call of the pjitted
    function in this module, the host-local arguments are converted first with
    `multihost_utils.host_local_array_to_global_array(args, mesh, specs)`. This is an unsafe
    fix (`--unsafe-fixes`): it needs the call sites and the mesh (the enclosing `with mesh:`, or
    the one variable bound to a Mesh) to be found here, and it assumes those arguments are
    host-local data, as GDA-era pjit did. A number literal passes as it is (pjit and jit take
    Python numbers; the conversion wants arrays), and a `None` spec, replicated in pjit's input
    shardings, converts with `P()`. In multi-process code (see JM504) the call's result is
    converted back with `global_array_to_host_local_array` too, as GDA-era pjit returned
    host-local outputs (unless `jax_parallel_functions_output_gda` was set). Otherwise, and for
    `FROM_GDA` held in a variable or nested in a pytree, the finding says what to write.
    Applied for targets from 0.4.7: before, `FROM_GDA` works, and a project that still turns
    jax.Array off needs it for GDA inputs.

    ## Why is this bad?
    `FROM_GDA` was deprecated in JAX 0.4.7 and removed in 0.4.8 (JAX's changelog lists the
    removal under 0.4.11; from 0.4.8 on the name only raises). Its meaning, "use the input's
    own sharding", is the default for jax.Array; but a spec next to it declared a host-local
    input, which jax.Array's pjit no longer assembles into a global array by itself.
    """

    code = "JM503"
    name = "from-gda"
    summary = "`FROM_GDA` input shardings: drop them, converting host-local arguments when mixed"
    fix_safety = "safe"
    unsafe_note = ("each call's inputs are converted with `host_local_array_to_global_array`, taken for host-local data "
                   "as GDA-era pjit did: an input that is already a global array must not be converted")
    triggers = (b"FROM_GDA",)
    deprecated_in = "0.4.7"
    removed_in = "0.4.8"
    history_names = ("jax.experimental.pjit.FROM_GDA",)
    replacement_since = "0.4.1"
    examples = (
        Example(
            snippet("""
                from jax.experimental.pjit import pjit, FROM_GDA
                from jax.sharding import PartitionSpec as P

                f = pjit(lambda x: x * 2, in_shardings=FROM_GDA, out_shardings=P("x"))
            """),
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                f = pjit(lambda x: x * 2, out_shardings=P("x"))
            """),
        ),
        Example(
            snippet("""
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit, FROM_GDA
                from jax.sharding import PartitionSpec as P

                def run(f, mesh, gda1, np_array1):
                    pjitted_f = pjit(f, in_shardings=(FROM_GDA, P("x")), out_shardings=P("x"))
                    with mesh:
                        return pjitted_f(gda1, np_array1)
            """),
            snippet("""
                from jax.experimental import multihost_utils
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                def run(f, mesh, gda1, np_array1):
                    pjitted_f = pjit(f, out_shardings=P("x"))
                    with mesh:
                        array2 = multihost_utils.host_local_array_to_global_array(np_array1, mesh, P("x"))
                        return pjitted_f(gda1, array2)
            """),
            unsafe=True,
            title="mixed with a spec for a host-local input",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(self.deprecated_in):
            return  # FROM_GDA works there, and a project may still run with jax.Array off (GDA inputs need it)
        handled: Set[int] = set()
        for pj in pjit_calls(ctx):
            leaves = spec_leaves(pj.value)
            flags = [ctx.qualname(leaf) == FROM_GDA for leaf in leaves] if leaves is not None else None
            if not any(flags or []) and not _mentions_from_gda(ctx, pj.value):
                continue
            handled.update(id(n) for n in ast.walk(pj.value))
            if flags is not None and all(flags):
                yield self._drop(ctx, pj)
            elif flags is not None and isinstance(pj.value, (ast.Tuple, ast.List)):
                yield self._mixed(ctx, pj, leaves, flags)  # type: ignore[arg-type]  # leaves is set when flags is
            else:
                yield self.finding(ctx, pj.value, f"`FROM_GDA` inside a pytree or a variable was removed in JAX "
                                   f"{self.removed_in}: "
                                   "drop it from the input shardings and convert host-local inputs with "
                                   "`multihost_utils.host_local_array_to_global_array`",
                                   suggestion="pjit(f, out_shardings=...) and host_local_array_to_global_array(x, mesh, spec) "
                                              "for each non-FROM_GDA input")
        for node in ctx.references(FROM_GDA):
            if id(node) in handled or not isinstance(getattr(node, "ctx", None), ast.Load):
                continue
            if not isinstance(ctx.parent(node), ast.Attribute):
                yield self.finding(ctx, node, f"`FROM_GDA` was removed in JAX {self.removed_in}: jax.Array inputs carry "
                                   "their own "
                                   "sharding; drop it where it reaches pjit's input shardings",
                                   suggestion="omit in_shardings (or None for that input under jax.jit)")

    # ----------------------------------------------------------------------------------------
    def _drop(self, ctx: FileContext, pj: PjitCall) -> Finding:
        drops = tuple(r for leaf in spec_leaves(pj.value) or [] for r in importer(ctx).root_import(leaf))
        if isinstance(pj.spec, ast.keyword):
            edit = drop_argument(ctx, pj.call, pj.spec)
        else:  # pjit(f, FROM_GDA[, out]): the output spec becomes a keyword
            rest = pj.call.args[2:]
            if len(rest) > 1 or pj.call.keywords and rest:
                return self.finding(ctx, pj.value, f"`FROM_GDA` was removed in JAX {self.removed_in}: drop the input shardings",
                                    suggestion="pjit(f, out_shardings=..., ...) with the other options as keywords")
            if rest:
                start, end = ctx.span(pj.value)[0], ctx.span(rest[0])[1]
                keyword = "out_shardings" if ctx.target_at_least(OUT_SHARDINGS_SINCE) else "out_axis_resources"
                edit = Edit(start, end, f"{keyword}={ctx.text(rest[0])}")
            else:
                edit = drop_argument(ctx, pj.call, pj.value)
        return self.finding(ctx, pj.value, f"`FROM_GDA` was removed in JAX {self.removed_in}: jax.Array inputs carry their own "
                            "sharding, so drop the input shardings", Fix("safe", edits=(edit,), drop_unused_imports=drops))

    def _mixed(self, ctx: FileContext, pj: PjitCall, leaves: List[ast.expr], flags: List[bool]) -> Finding:
        host = [i for i, is_gda in enumerate(flags) if not is_gda]
        specs = [ctx.text(leaves[i]) for i in host]
        message = (f"`FROM_GDA` mixed with specs for host-local inputs was removed in JAX {self.removed_in}: drop the input "
                   "shardings and convert the host-local arguments with `multihost_utils.host_local_array_to_global_array`")
        args = [f"arg{i + 1}" for i in host]
        generic = (f"{pj.name or 'pjitted_f'} = pjit(f, out_shardings=...)\n"
                   f"{', '.join(f'array{k + 2}' for k in range(len(host)))} = multihost_utils.host_local_array_to_global_array("
                   f"{_group(args)}, mesh, {_group(specs)})")
        if not isinstance(pj.spec, ast.keyword):
            return self.finding(ctx, pj.value, message, suggestion=generic)
        sites = _sites(ctx, pj)
        if not sites:
            where = f" at each call of `{pj.name}`" if pj.name else ""
            return self.finding(ctx, pj.value, message + where, suggestion=generic)
        edits: List[Edit] = [drop_argument(ctx, pj.call, pj.spec)]
        imports: List[ImportRef] = []
        for site in sites:
            planned = self._convert_site(ctx, pj, site, len(flags), host, specs)
            if isinstance(planned, str):
                if len(site.args) == len(flags):
                    args = [ctx.text(site.args[i]) for i in host]
                    names = [f"array{k + 2}" for k in range(len(host))]
                    call = ", ".join(names[host.index(i)] if i in host else ctx.text(a) for i, a in enumerate(site.args))
                    name = pj.name or "pjitted_f"
                    generic = (f"{name} = pjit(f, out_shardings=...)\n{', '.join(names)} = "
                               f"multihost_utils.host_local_array_to_global_array({_group(args)}, mesh, {_group(specs)})\n"
                               f"{name}({call})")
                return self.finding(ctx, pj.value, f"{message}: {planned}", suggestion=generic)
            edits.extend(planned[0])
            imports.extend(planned[1])
        drops = tuple(r for i, leaf in enumerate(leaves) if flags[i] for r in importer(ctx).root_import(leaf))
        fix = Fix("unsafe", edits=tuple(edits), add_imports=tuple(imports), drop_unused_imports=drops)
        return self.finding(ctx, pj.value, message, fix)

    def _convert_site(self, ctx: FileContext, pj: PjitCall, site: ast.Call, arity: int, host: Sequence[int],
                      specs: Sequence[str]):
        """Edits converting one call's host-local arguments, or a reason why this call cannot be done."""
        if len(site.args) != arity or site.keywords or any(isinstance(a, ast.Starred) for a in site.args):
            return f"the call at line {site.lineno} does not pass its {arity} arguments positionally"
        stmt = statement_of(ctx, site)
        if stmt is None:
            return f"the call at line {site.lineno} is inside an expression evaluated lazily or repeatedly"
        mesh = mesh_for(ctx, site)
        if mesh is None:
            return f"no single mesh found for the call at line {site.lineno} (an enclosing `with mesh:` or one Mesh variable)"
        mhu, imports = importer(ctx).reference(MULTIHOST_UTILS, at=site)
        spec_of = dict(zip(host, specs))
        host = [i for i in host if not _python_number(site.args[i])]  # numbers pass as they are
        if not host:
            return [], ()
        specs = []
        for i in host:  # `None` (replicated, in pjit's input shardings) is `P()` to the conversion
            if spec_of[i] == "None":
                empty, more = importer(ctx).reference(PARTITION_SPEC, at=site)
                spec_of[i], imports = f"{empty}()", tuple(imports) + tuple(more)
            specs.append(spec_of[i])
        names = _fresh_names(ctx, len(host))
        args = [ctx.text(site.args[i]) for i in host]
        if len(host) == 1:
            line = f"{names[0]} = {mhu}.host_local_array_to_global_array({args[0]}, {mesh}, {specs[0]})"
        else:
            line = (f"{', '.join(names)} = {mhu}.host_local_array_to_global_array(\n"
                    f"    ({', '.join(args)}), {mesh}, ({', '.join(specs)}))")
        edits = [insert_before(ctx, stmt, [line])]
        edits += [ctx.replace(site.args[i], name) for i, name in zip(host, names)]
        if is_multi_process(ctx) and not outputs_are_global(ctx):  # outputs came back host-local too
            out_edits, more = host_local_output(ctx, pj, site, mhu, mesh)
            edits += out_edits
            imports = tuple(imports) + more
        return edits, imports


# helpers -----------------------------------------------------------------------------------
def _sites(ctx: FileContext, pj: PjitCall) -> List[ast.Call]:
    """The calls of the pjitted function: of its name, or the one call of a pjit called at once
    (``pjit(f, ...)(x, y)``)."""
    if pj.name is not None:
        return call_sites(ctx, pj)
    parent = ctx.parent(pj.call)
    return [parent] if isinstance(parent, ast.Call) and parent.func is pj.call else []


def _python_number(node: ast.expr) -> bool:
    """A number literal (``3.0``, ``-1``, ``True``): pjit and jit take Python numbers as they are, and the
    host-local conversion does not (it wants arrays)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))


def _group(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"({', '.join(items)})"


def _mentions_from_gda(ctx: FileContext, value: ast.expr) -> bool:
    return any(ctx.qualname(n) == FROM_GDA for n in ast.walk(value) if isinstance(n, (ast.Name, ast.Attribute))) or (
        isinstance(value, ast.Name) and _assigned_value_mentions(ctx, value)
    )


def _assigned_value_mentions(ctx: FileContext, name: ast.Name) -> bool:
    owner = ctx.resolver.lookup(name.id, ctx.resolver.scope_of(name))
    for b in owner.bindings.get(name.id, []) if owner else []:
        if isinstance(b.node, ast.Assign) and any(
            ctx.qualname(n) == FROM_GDA for n in ast.walk(b.node.value) if isinstance(n, (ast.Name, ast.Attribute))
        ):
            return True
    return False


def _fresh_names(ctx: FileContext, count: int) -> List[str]:
    """``array2, array3, ...`` as in JAX's migration guide (``array1`` being the first GDA
    input), skipping names the module already binds."""
    names: List[str] = []
    k = 2
    while len(names) < count:
        name = f"array{k}"
        if not ctx.resolver.bound_in_any_scope(name):
            names.append(name)
        k += 1
    return names
