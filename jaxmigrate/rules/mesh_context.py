"""JM702: ``with mesh:`` → ``with jax.set_mesh(mesh):``, together with JM701's pjit → jax.jit."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import insert_before
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.patterns.jit_plan import (
    HELD,
    eager_calls,
    mesh_as_function,
    mesh_helper_withs,
    mesh_withs,
    module_blocker,
    uses_jax,
)
from jaxmigrate.patterns.mesh_holds import MESH_HOLDS
from jaxmigrate.prefilter import has_with_statement, raw
from jaxmigrate.rules.base import Example, Rule, snippet

# `@mesh` or `mesh(f)`: a mesh used as a decorator or called (see ``wants``)
_MESH_AS_FUNCTION = re.compile(rb"@[\w.]*mesh\s*$|mesh\(\s*[\w.]+\s*\)", re.IGNORECASE | re.MULTILINE)
SET_MESH_NAME = "jax.set_mesh"
SET_MESH_SINCE = "0.7.1"


#: the statement JM702's findings name
SET_MESH = "with jax.set_mesh(mesh):"


class MeshContext(Rule):
    """
    ## What it does
    Rewrites `with mesh:` on a `jax.sharding.Mesh` (a name bound to a `Mesh(...)` or
    `maps.mesh(...)` construction, a construction itself, a name or attribute called like a
    mesh, a call of a factory called like one, and a name bound to such a call or attribute, or
    itself called like a mesh and bound to a call of unknown result: `mesh =
    cfg.get_jax_mesh(...)`, `GLOBAL_MESH = build()`) to `with jax.set_mesh(mesh):`. A name bound
    to a call of something known and not JAX's (`lock = threading.Lock()`) is no mesh, nor is a
    context manager that enters one (a generator of the module, `with_mesh(...)`-style helpers). A mesh
    that nothing names (`m = cfg.build()`, then `with m:`) is not recognised: review the `with`
    blocks of a module whose pjit calls JM701 converts. `with Mesh(...) as m:` becomes `m = Mesh(...)` followed by
    `with jax.set_mesh(m):`, as `jax.set_mesh` binds nothing to `as`. Applied for targets that
    have `jax.set_mesh` (0.7.1 and later). A mesh used as a decorator (`@mesh`) or called on a
    function (`mesh(f)`: a Mesh is a ContextDecorator) enters the same legacy context at each
    call, and `jax.set_mesh` decorates nothing: it is reported, and holds the module's pjit back.
    So is a block where code only some processes run (under a test of `jax.process_index()`)
    computes arrays eagerly: under `jax.set_mesh` an eager computation spans every process's
    devices, and the processes that skip it are waited for forever (a process-0 log line that
    calls a schedule hangs the migrated program on 2 processes). The message names the first
    array the block makes eagerly, which `jax.set_mesh` replicates over the mesh.

    The fix is unsafe and belongs with JM701: `jax.jit` with bare `PartitionSpec`s reads the
    mesh that `jax.set_mesh` sets, while `pjit` created outside the block reads the one `with
    mesh:` sets. The two are planned together (see JM701): nothing is rewritten in a module
    where one pjit or one `with` cannot be, or that reads `thread_resources` (which
    `jax.set_mesh` does not set), nor in the modules of the project linked to it by imports
    (those `fix` was not given hold the others: they keep their pjit). Code outside the project
    is not seen: a pjit there that the block calls stays pjit.

    ## Why is this bad?
    Entering a `Mesh` as a context manager is deprecated since JAX 0.10.1, and it does not
    provide a mesh to `jax.jit` ("jit requires a non-empty mesh in context if you are passing
    `PartitionSpec`s").
    """

    code = "JM702"
    project_facts = (MESH_HOLDS,)
    name = "mesh-context"
    summary = "`with mesh:` → `with jax.set_mesh(mesh):` (with JM701)"
    fix_safety = "unsafe"
    unsafe_note = ("`jax.set_mesh` sets the mesh that `jax.jit` reads, not the one a pjit or `thread_resources` reads: a "
                   "pjit that code outside the project's plan runs under the block gets no mesh")
    triggers = (b"mesh", b"Mesh")

    @classmethod
    def wants(cls, data) -> bool:
        """A `with` statement, or a mesh used as a decorator or called (``@mesh``, ``mesh(f)``)."""
        return super().wants(data) and (has_with_statement(raw(data)) or _MESH_AS_FUNCTION.search(raw(data)) is not None)
    deprecated_in = "0.10.1"
    replacement_since = SET_MESH_SINCE
    examples = (
        Example(
            snippet("""
                import jax
                import numpy as np
                from jax.sharding import Mesh, PartitionSpec as P

                mesh = Mesh(np.array(jax.devices()), ("x",))
                step = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P())
                with mesh:
                    out = step(np.arange(8.0))
            """),
            snippet("""
                import jax
                import numpy as np
                from jax.sharding import Mesh, PartitionSpec as P

                mesh = Mesh(np.array(jax.devices()), ("x",))
                step = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P())
                with jax.set_mesh(mesh):
                    out = step(np.arange(8.0))
            """),
            unsafe=True,
        ),
        Example(
            snippet("""
                import jax
                import numpy as np
                from jax.sharding import Mesh

                def run(f, x):
                    with Mesh(np.array(jax.devices()), ("x",)) as mesh:
                        return f(x, mesh)
            """),
            snippet("""
                import jax
                import numpy as np
                from jax.sharding import Mesh

                def run(f, x):
                    mesh = Mesh(np.array(jax.devices()), ("x",))
                    with jax.set_mesh(mesh):
                        return f(x, mesh)
            """),
            unsafe=True,
            title="`as` binds nothing under `jax.set_mesh`: the mesh is assigned first",
        ),
        Example(
            snippet("""
                import jax
                from jax.sharding import PartitionSpec as P
                from model import Configurator

                def serve(x, dims):
                    step = jax.jit(lambda a: a, in_shardings=P("dp"), out_shardings=P())
                    mesh = Configurator.get_jax_mesh(dims)
                    with mesh:
                        return step(x)
            """),
            snippet("""
                import jax
                from jax.sharding import PartitionSpec as P
                from model import Configurator

                def serve(x, dims):
                    step = jax.jit(lambda a: a, in_shardings=P("dp"), out_shardings=P())
                    mesh = Configurator.get_jax_mesh(dims)
                    with jax.set_mesh(mesh):
                        return step(x)
            """),
            unsafe=True,
            title="a mesh from a project's factory (imported or not) is a mesh",
        ),
        Example(
            snippet("""
                import contextlib
                import jax
                from jax.sharding import Mesh, PartitionSpec as P

                @contextlib.contextmanager
                def local_mesh(names):
                    with Mesh(jax.devices(), names):
                        yield

                def run(x):
                    f = jax.jit(lambda a: a, in_shardings=P("x"), out_shardings=P("x"))
                    with local_mesh(("x",)):
                        return f(x)
            """),
            snippet("""
                import contextlib
                import jax
                from jax.sharding import Mesh, PartitionSpec as P

                @contextlib.contextmanager
                def local_mesh(names):
                    with jax.set_mesh(Mesh(jax.devices(), names)):
                        yield

                def run(x):
                    f = jax.jit(lambda a: a, in_shardings=P("x"), out_shardings=P("x"))
                    with local_mesh(("x",)):
                        return f(x)
            """),
            unsafe=True,
            title="a context manager that enters a mesh is no mesh: the `with` inside it is rewritten",
        ),
        Example(
            snippet("""
                import threading

                mesh_lock = threading.Lock()
                with mesh_lock:
                    pass
            """),
            title="no JAX in the module: a name like a mesh is not taken for one",
        ),
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(SET_MESH_SINCE) or not uses_jax(ctx):
            return
        message = ("`with mesh:` is deprecated since JAX 0.10.1 and gives `jax.jit` no mesh for bare "
                   f"PartitionSpecs: use `{SET_MESH}`")
        held = module_blocker(ctx)
        for helper in mesh_helper_withs(ctx):
            yield self.finding(ctx, helper, "this helper enters a mesh in the `with mesh:` way (deprecated since JAX "
                               "0.10.1), which gives `jax.jit` no mesh: make it enter `jax.set_mesh(mesh)`")
        for use in mesh_as_function(ctx):
            yield self.finding(ctx, use, "a Mesh used as a decorator or called on a function enters the `with mesh:` "
                               "context, which gives `jax.jit` no mesh (deprecated since JAX 0.10.1): write "
                               "`with jax.set_mesh(mesh):` inside the function instead")
        for w in mesh_withs(ctx):
            expr = w.item.context_expr
            eager = _eager_note(ctx, w.statement)
            if w.problem:
                yield self.finding(ctx, expr, f"{message}; {w.problem}{eager}", replacement=SET_MESH)
            elif held:
                yield self.finding(ctx, expr, f"{message}; {HELD}: {held}{eager}", replacement=SET_MESH)
            else:
                yield self.finding(ctx, expr, message + eager, self._fix(ctx, w.statement, w.item), replacement=SET_MESH)

    @staticmethod
    def _fix(ctx: FileContext, node: ast.stmt, item: ast.withitem) -> Fix:
        set_mesh, imports = importer(ctx).reference(SET_MESH_NAME, at=node, dotted=True)
        expr, bound = item.context_expr, item.optional_vars
        if bound is None:
            return Fix("unsafe", edits=(ctx.replace(expr, f"{set_mesh}({ctx.text(expr)})"),), add_imports=imports)
        name = ctx.text(bound)
        edits = (insert_before(ctx, node, [f"{name} = {ctx.text(expr)}"]),
                 Edit(ctx.span(expr)[0], ctx.span(bound)[1], f"{set_mesh}({name})"))
        return Fix("unsafe", edits=edits, add_imports=imports)


def _eager_note(ctx: FileContext, statement: ast.stmt) -> str:
    """What moves under ``jax.set_mesh``: the first array the block makes eagerly (outside a
    ``def``, a lambda or a class), which JAX then replicates over the mesh; "" for none."""
    first = min(eager_calls(ctx, ast.iter_child_nodes(statement)), key=lambda c: (c.lineno, c.col_offset), default=None)
    if first is None:
        return ""
    return (f"; under `jax.set_mesh` an array made in the block outside `jax.jit` (line {first.lineno}: "
            f"`{ctx.qualname(first.func)}(...)`) is replicated over the mesh and committed to it, where `with mesh:` "
            "left it on one device: the values are equal, and a jitted call whose `in_shardings` split it raises")
