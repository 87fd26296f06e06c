"""JM701: ``jax.experimental.pjit.pjit`` → ``jax.jit`` (keyword-only options, legacy ``None`` → ``P()``)."""

from __future__ import annotations

import ast
from typing import Iterator, List, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import drop_arguments
from jaxmigrate.core.findings import Edit, Finding, Fix, FixSafety, ImportRef
from jaxmigrate.patterns.gda import spec_source
from jaxmigrate.patterns.jit_plan import (
    HELD,
    PJIT_DEPRECATED_SINCE,
    POSITIONAL,
    SHARDINGS,
    PjitUse,
    blocker,
    enters_no_mesh,
    kwargs_entries,
    module_blocker,
    nothing_to_shard,
    pjit_uses,
)
from jaxmigrate.patterns.mesh_holds import MESH_HOLDS
from jaxmigrate.patterns.pjit_calls import JIT, legacy_keys, rename_key
from jaxmigrate.rules.base import Example, Rule, snippet


class PjitToJit(Rule):
    """
    ## What it does
    Rewrites `jax.experimental.pjit.pjit` to `jax.jit`: in calls, in `functools.partial(pjit,
    ...)` (also as a decorator) and as a bare `@pjit` decorator. `jax.jit` takes its options
    keyword-only, so positional specs become keywords (`pjit(f, P("x"), None)` →
    `jax.jit(f, in_shardings=P("x"), out_shardings=P())`); `in_axis_resources` and
    `out_axis_resources` become `in_shardings` and `out_shardings`. A literal `None` spec,
    which legacy pjit read as *replicated*, becomes `P()`: in `jax.jit`, `None` means
    *unspecified* (an output follows propagation, an input keeps its own placement); a spec tree
    held in a name with `None` leaves (`param_spec = {"b": None, ...}`) is passed mapped so
    (`jax.tree_util.tree_map(lambda s: P() if s is None else s, ...)`). Imports of
    pjit left unused are dropped. Applied for targets that deprecate pjit (0.8.0 and later).

    The fix is unsafe: a bare `PartitionSpec` in `jax.jit` needs the mesh set with
    `jax.set_mesh(mesh)`; `with mesh:` does not provide it. JM702 rewrites those blocks, and
    the two are planned together, over the whole project of the files given to `check` or
    `fix` (the folder of its `pyproject.toml`, `setup.py` or `setup.cfg`, else the top of its
    package chain): where one pjit or one `with mesh:` cannot be rewritten (pjit used as a value,
    options through `**kwargs` from elsewhere, `FROM_GDA` in the shardings, a module that reads
    `thread_resources`), neither rule rewrites anything in that module, nor in the modules
    linked to it by imports (one imports the other, directly or through others), and each held
    finding names the file and line that holds it. A module of the project that was not given
    is read, never fixed: it keeps its pjit and holds the modules linked to it (give `fix` the
    whole project to change them together). A spec held in a variable may still contain a
    `None` that meant replicated: check it.

    A pjit with nothing to shard (every spec a literal `None`, or none given) in a module that
    enters no mesh (no `with mesh:`, no `jax.set_mesh`, no helper or decorator that enters one)
    becomes `jax.jit(f)` with its other options (`static_argnums`, `donate_argnums`, ...): JAX
    0.4.13 read a `None` spec outside a mesh as unspecified, and ran the call; the `P()` written
    for it elsewhere raises "jit requires a non-empty mesh" there. (A `P()` spec outside a mesh
    raised on 0.4.13 too, and is kept.) A caller in another module that enters a mesh around the
    call gets an output placed by propagation rather than replicated: the values are the same.

    ## Why is this bad?
    `jax.experimental.pjit.pjit` is deprecated since JAX 0.8.0 ("use `jax.jit` instead") and
    warns on every import.
    """

    code = "JM701"
    project_facts = (MESH_HOLDS,)
    name = "pjit-to-jit"
    summary = "`jax.experimental.pjit.pjit` → `jax.jit` (keyword-only options, legacy `None` → `P()`)"
    fix_safety = "unsafe"
    unsafe_note = ("`jax.jit` finds the mesh of bare PartitionSpecs only under `jax.set_mesh` (JM702): a call reached "
                   "under `with mesh:` alone, from code outside the project's plan, gets none")
    triggers = (b"pjit",)
    deprecated_in = PJIT_DEPRECATED_SINCE
    replacement_since = PJIT_DEPRECATED_SINCE
    history_names = ("jax.experimental.pjit.pjit",)
    examples = (
        Example(
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P

                step = pjit(lambda x: x * 2, P("x"), None, donate_argnums=0)
            """),
            snippet("""
                import jax
                from jax.sharding import PartitionSpec as P

                step = jax.jit(lambda x: x * 2, in_shardings=P("x"), out_shardings=P(), donate_argnums=0)
            """),
            unsafe=True,
            title="positional specs become keywords, `None` becomes `P()`",
        ),
        Example(
            snippet("""
                from functools import partial

                import jax
                from jax.experimental.pjit import pjit

                @partial(pjit, in_shardings=None, out_shardings=None, static_argnums=1)
                def step(x, n):
                    return x * n
            """),
            snippet("""
                from functools import partial

                import jax

                @partial(jax.jit, static_argnums=1)
                def step(x, n):
                    return x * n
            """),
            unsafe=True,
            title="partial used as a decorator; `None` specs where the module enters no mesh: nothing to shard "
                  "(0.4.13 read them as unspecified there)",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import pjit

                def compile_all(fns, use_pjit):
                    wrap = pjit if use_pjit else None
                    return [wrap(f) for f in fns]
            """),
            snippet("""
                from jax.experimental.pjit import pjit

                def compile_all(fns, use_pjit):
                    wrap = pjit if use_pjit else None
                    return [wrap(f) for f in fns]
            """),
            flagged=True,
            title="pjit used as a value is reported",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(PJIT_DEPRECATED_SINCE):
            return
        message = "`jax.experimental.pjit.pjit` is deprecated since JAX 0.8.0: use `jax.jit`"
        held = module_blocker(ctx)
        for use in pjit_uses(ctx):
            why = blocker(ctx, use)
            if why:
                yield self.finding(ctx, use.node, f"{message}; {why}", replacement="jax.jit")
            elif held:
                yield self.finding(ctx, use.node, f"{message}; {HELD}: {held}", replacement="jax.jit")
            else:
                yield self.finding(ctx, use.node, message, self._fix(ctx, use), replacement="jax.jit")

    def _fix(self, ctx: FileContext, use: PjitUse) -> Fix:
        ref, imports = importer(ctx).reference(JIT, at=use.node, dotted=True)
        edits: List[Edit] = [ctx.replace(use.callee, ref)]
        if nothing_to_shard(ctx, use) and enters_no_mesh(ctx):  # `None` outside a mesh: unspecified (0.4.13)
            call: ast.Call = use.node  # type: ignore[assignment]  # a call or a partial: nothing_to_shard asked
            dropped = [*use.options[:2], *(k for k in use.keywords if k.arg in SHARDINGS)]
            edits += drop_arguments(ctx, call, dropped)
            edits += [ctx.replace(arg, f"{name}={ctx.text(arg)}") for name, arg in zip(POSITIONAL[2:], use.options[2:])]
            return Fix("unsafe" if dropped else "safe", edits=tuple(edits), add_imports=imports,
                       drop_unused_imports=importer(ctx).root_import(use.callee))
        specs = False
        for name, arg in zip(POSITIONAL, use.options):
            text, more = self._value(ctx, name, arg, use.node)
            edits.append(ctx.replace(arg, f"{name}={text}"))
            imports += more
            specs = specs or name in SHARDINGS
        for kw in use.keywords:
            if kw.arg in SHARDINGS:
                text, more = self._value(ctx, kw.arg, kw.value, use.node)
                edits.append(ctx.replace(kw, f"{SHARDINGS[kw.arg]}={text}"))
                imports += more
                specs = True
            elif kw.arg is None:  # a keyword dict used only here: its legacy None values become P(), its
                # legacy keys the new ones (JM101's rename, applied here too: JM701 waits for no other rule)
                built = ctx.single_assignment(kw.value) if isinstance(kw.value, ast.Name) else None
                edits += [rename_key(ctx, node, key) for node, key in legacy_keys(ctx, built.value)] if built else []
                for key, value in kwargs_entries(ctx, kw.value) or ():
                    specs = specs or key in SHARDINGS
                    text, more = self._value(ctx, key, value, use.node)
                    if key in SHARDINGS and text != ctx.text(value):
                        edits.append(ctx.replace(value, text))
                        imports += more
        safety: FixSafety = "unsafe" if specs else "safe"
        return Fix(safety, edits=tuple(edits), add_imports=imports, drop_unused_imports=importer(ctx).root_import(use.callee))

    @staticmethod
    def _value(ctx: FileContext, name: str, value: ast.expr, at: ast.AST) -> Tuple[str, Tuple[ImportRef, ...]]:
        if name in SHARDINGS:
            return spec_source(ctx, value, at, trees=True)  # pjit's None leaves meant replicated, jax.jit's mean unspecified
        return ctx.text(value), ()
