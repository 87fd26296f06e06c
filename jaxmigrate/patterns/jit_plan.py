"""What JM701 (pjit → jax.jit) and JM702 (`with mesh:` → `jax.set_mesh`) may do in a module.

The two rewrites are one migration: `jax.jit` with bare PartitionSpecs needs the mesh that
`jax.set_mesh` sets, and a pjit left behind loses the one `with mesh:` set. So they are planned
together, per module: either every pjit and every `with mesh:` can be rewritten, or none is and
both rules report why.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Iterable, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.patterns.gda import FROM_GDA, PJIT
from jaxmigrate.patterns.pjit_calls import (
    AXIS_RESOURCES_RENAMES,
    SET_MESH_SPELLINGS,
    is_mesh,
    is_mesh_helper,
    set_mesh_argument,
)

# pjit's positional parameters after the function, in order (the same in 0.4.1 and 0.10.2)
POSITIONAL = ("in_shardings", "out_shardings", "static_argnums", "donate_argnums")
SHARDINGS = {"in_shardings": "in_shardings", "out_shardings": "out_shardings", **AXIS_RESOURCES_RENAMES}
PJIT_DEPRECATED_SINCE = "0.8.0"  # pjit deprecated; jax.jit with shardings and jax.set_mesh (0.7.1) exist there
#: the key in ``FileContext.origin`` of why the project's mesh plan holds this module's rewrites
#: back (patterns/mesh_holds.py): another module it is linked to by imports keeps the old API
PROJECT_HOLD = "project mesh hold"
#: what a JM701/JM702 finding says, after its own message, when the module's rewrites are held back
HELD = "held back with the module's other pjit and mesh uses"


@dataclass
class PjitUse:
    """A reference to pjit: a call, a ``partial(pjit, ...)``, a bare decorator, or anything else."""

    node: ast.AST  # the call, or the reference itself
    callee: ast.expr  # the expression naming pjit
    options: List[ast.expr]  # positional arguments after the function
    keywords: List[ast.keyword]
    kind: str  # "call", "partial", "decorator" or "other"


def pjit_uses(ctx: FileContext) -> List[PjitUse]:
    """Every reference to JAX's pjit in the module, classified."""
    uses, seen = [], set()
    for call, callee, is_partial in ctx.applications(PJIT):
        if is_partial:
            uses.append(PjitUse(call, callee, [], call.keywords, "partial"))
        else:
            uses.append(PjitUse(call, callee, call.args[1:], call.keywords, "call"))
        seen.add(id(callee))
    # (references are Name and Attribute nodes: they have a ctx)
    references = [node for node in ctx.references(PJIT) if id(node) not in seen
                  and isinstance(node.ctx, ast.Load)]  # type: ignore[attr-defined]
    functions: List[ast.FunctionDef | ast.AsyncFunctionDef] = (
        [*ctx.nodes(ast.FunctionDef), *ctx.nodes(ast.AsyncFunctionDef)] if references else [])
    decorators = {id(d) for f in functions for d in f.decorator_list}
    for node in references:
        if isinstance(node, ast.Attribute) and isinstance(ctx.parent(node), ast.Attribute):
            continue
        kind = "decorator" if id(node) in decorators else "other"
        uses.append(PjitUse(node, node, [], [], kind))
    return uses


def blocker(ctx: FileContext, use: PjitUse) -> Optional[str]:
    """Why this use cannot be rewritten automatically, or None."""
    return next((why for why, _ in use_blockers(ctx, use)), None)


def use_blockers(ctx: FileContext, use: PjitUse) -> Iterator[Tuple[str, Optional[str]]]:
    """Every reason this use cannot be rewritten, in order, each with the rule whose fix removes
    it (None: a person must)."""
    if use.kind == "other":
        yield "pjit is used as a value here: replace it with `jax.jit` by hand (its options are keyword-only)", None
        return
    if use.kind == "partial" and len(use.node.args) > 1:  # type: ignore[attr-defined]  # a "partial" use is a call
        yield "`partial(pjit, f, ...)` binds the function: write `partial(jax.jit, f, ...)` with keyword options by hand", None
    if len(use.options) > len(POSITIONAL) or any(isinstance(a, ast.Starred) for a in use.options):
        yield "starred or extra positional arguments: write the `jax.jit` keywords by hand", None
    if isinstance(use.node, ast.Call) and any(isinstance(a, ast.Starred) for a in use.node.args):
        yield "starred arguments: write the `jax.jit` keywords by hand", None
    given = [*POSITIONAL[: len(use.options)], *(SHARDINGS.get(k.arg, k.arg) for k in use.keywords if k.arg)]
    if len(given) != len(set(given)):
        yield "an option is given twice (positionally and by keyword, or in both spellings)", None
    for kw in use.keywords:
        entries = kwargs_entries(ctx, kw.value) if kw.arg is None else []
        if entries is None:
            yield ("options arrive through `**kwargs` built elsewhere: pass them to `jax.jit` as keywords, "
                   "with `P()` for a legacy `None`"), None
    for value in [*use.options[:2], *(v for _, v in sharding_values(ctx, use))]:
        if any(ctx.qualname(n) == FROM_GDA for n in ast.walk(value)):
            yield "FROM_GDA in the shardings: migrate it first", "JM503"
            break


def kwargs_entries(ctx: FileContext, value: ast.expr) -> Optional[List[Tuple[str, ast.expr]]]:
    """(key, value) of a keyword dict that reaches pjit only through ``**name``: a ``dict(...)`` or
    ``{...}`` assigned once in the same scope and used nowhere else; None otherwise."""
    if not isinstance(value, ast.Name):
        return None
    stmt = ctx.single_assignment(value)
    if stmt is None or len(stmt.targets) != 1:
        return None
    scope = ctx.resolver.scope_of(value)
    if sum(1 for n in ctx.names_in(value.id, scope) if isinstance(n.ctx, ast.Load) and ctx.qualname(n) is None) != 1:
        return None
    built = stmt.value
    if isinstance(built, ast.Call) and isinstance(built.func, ast.Name) and built.func.id == "dict" and not built.args:
        if all(k.arg for k in built.keywords):
            return [(k.arg, k.value) for k in built.keywords]  # type: ignore[misc]  # every k.arg is set: checked above
    if isinstance(built, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in built.keys):
        return [(k.value, v) for k, v in zip(built.keys, built.values)]  # type: ignore[union-attr]  # every key is a str constant: checked above
    return None


def sharding_values(ctx: FileContext, use: PjitUse) -> List[Tuple[str, ast.expr]]:
    """(keyword, value) of every sharding option given by keyword, directly or in a ``**`` dict."""
    found = []
    for kw in use.keywords:
        if kw.arg in SHARDINGS:
            found.append((kw.arg, kw.value))
        elif kw.arg is None:
            found += [(k, v) for k, v in kwargs_entries(ctx, kw.value) or () if k in SHARDINGS]
    return found


@dataclass
class MeshWith:
    """One `with` item that enters a mesh the old way."""

    statement: ast.stmt
    item: ast.withitem
    problem: Optional[str]  # why it cannot be rewritten, or None


def mesh_withs(ctx: FileContext) -> List[MeshWith]:
    found = []
    withs: List[ast.With | ast.AsyncWith] = [*ctx.nodes(ast.With), *ctx.nodes(ast.AsyncWith)]
    for node in withs:
        for index, item in enumerate(node.items):
            expr, bound = item.context_expr, item.optional_vars
            if set_mesh_argument(ctx, expr) is not None or not is_mesh(ctx, expr):
                continue
            problem = None
            if bound is not None and index:
                problem = "`as` on a later item of the `with`: assign the mesh before the `with` by hand"
            elif bound is not None and not isinstance(bound, ast.Name):
                problem = "`as` with a pattern: assign the mesh before the `with` by hand"
            else:
                problem = _process_branch_problem(ctx, node)
            found.append(MeshWith(node, item, problem))
    return found


#: modules whose functions, called outside a compiled function, compute arrays where they run
EAGER_MODULES = ("jax.numpy.", "jax.random.", "jax.nn.", "jax.lax.", "jax.scipy.")
#: array methods that compute a new array eagerly
ARRAY_METHODS = frozenset(("astype", "sum", "mean", "max", "min", "reshape", "transpose", "std", "var", "argmax",
                           "argmin", "prod", "clip", "round"))
PROCESS_TESTS = ("jax.process_index", "jax.host_id", "jax.process_count", "jax.host_count")


def eager_calls(ctx: FileContext, nodes: Iterable[ast.AST]) -> Iterator[ast.Call]:
    """The calls in ``nodes`` (not in a ``def``, lambda or class among them) of ``jax.numpy``/
    ``jax.random``/... functions, which compute arrays where they run."""
    pending = list(nodes)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call) and (ctx.qualname(node.func) or "").startswith(EAGER_MODULES):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _process_branch_problem(ctx: FileContext, node: ast.AST) -> Optional[str]:
    """Why ``jax.set_mesh`` would hang the block: code some processes run alone (under a test of
    ``jax.process_index()``) computes arrays eagerly, which under ``jax.set_mesh`` takes every
    process's devices, so the others are waited for forever; None where no branch does."""
    for branch in (n for n in ast.walk(node) if isinstance(n, (ast.If, ast.IfExp, ast.While))):
        if not any(isinstance(c, ast.Call) and ctx.qualname(c.func) in PROCESS_TESTS for c in ast.walk(branch.test)):
            continue
        bodies = [branch.body, branch.orelse] if isinstance(branch, ast.IfExp) else [*branch.body, *branch.orelse]
        for part in bodies:
            call = _eager_in(ctx, part)
            if call is not None:
                return (f"line {call.lineno} computes an array (`{ctx.text(call.func)}(...)`) in code that only some "
                        "processes run (under `jax.process_index()`); under `jax.set_mesh` an eager computation "
                        "spans every process's devices and waits for the others forever: compute it outside the "
                        "block, or in the compiled function, then rewrite the `with` by hand")
    return None


def _eager_in(ctx: FileContext, part: ast.AST) -> Optional[ast.Call]:
    """An eager array computation in ``part``: a JAX function, an array method, or a function of
    the module whose own code calls a JAX function."""
    for call in (n for n in ast.walk(part) if isinstance(n, ast.Call)):
        name = ctx.qualname(call.func) or ""
        if name.startswith(EAGER_MODULES):
            return call
        if isinstance(call.func, ast.Attribute) and not name and call.func.attr in ARRAY_METHODS:
            return call
        if isinstance(call.func, ast.Name) and not name:
            defs = [b.node for b in ctx.bindings(call.func)]
            if len(defs) == 1 and isinstance(defs[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and next(eager_calls(ctx, defs[0].body), None) is not None:
                return call
    return None


def mesh_as_function(ctx: FileContext) -> List[ast.expr]:
    """A mesh used as a decorator (``@mesh``) or called on a function (``mesh(f)``): a Mesh is a
    ContextDecorator, and either enters the `with mesh:` context at each call, which ``jax.jit``
    does not see (it needs ``jax.set_mesh``, which decorates nothing)."""
    return ctx.memo("jit_plan.mesh_as_function", _mesh_as_function)


def _mesh_as_function(ctx: FileContext) -> List[ast.expr]:
    if not uses_jax(ctx):
        return []
    found: List[ast.expr] = []
    functions: List[ast.FunctionDef | ast.AsyncFunctionDef] = [*ctx.nodes(ast.FunctionDef), *ctx.nodes(ast.AsyncFunctionDef)]
    found += [d for f in functions for d in f.decorator_list if _mesh_value(ctx, d)]
    # a call of a name only: `cfg.get_mesh(axes)` makes a mesh, `mesh(f)` enters one
    found += [call for call in ctx.nodes(ast.Call) if isinstance(call.func, ast.Name)
              and len(call.args) == 1 and not call.keywords and _mesh_value(ctx, call.func)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


MESH_ATTRIBUTES = ("mesh", "global_mesh", "device_mesh")  # `@self.mesh`: an attribute that holds one


def _mesh_value(ctx: FileContext, expr: ast.expr) -> bool:
    """A name or attribute that holds a mesh (not a function or class named like one)."""
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else ""
    if "mesh" not in name.lower() or isinstance(expr, ast.Attribute) and name.lower() not in MESH_ATTRIBUTES:
        return False
    if isinstance(expr, ast.Name):
        bindings = ctx.bindings(expr)
        defined = (ast.ClassDef, ast.Import, ast.ImportFrom)
        if not bindings or any(isinstance(b.node, defined) or isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef))
                               and b.node.name == expr.id for b in bindings):
            return False  # a function, class or import named like a mesh
    return is_mesh(ctx, expr)


def mesh_helper_withs(ctx: FileContext) -> List[ast.expr]:
    """``with with_mesh(...):``-style items: a helper enters the mesh (see ``is_mesh_helper``)."""
    if not uses_jax(ctx):
        return []
    withs: List[ast.With | ast.AsyncWith] = [*ctx.nodes(ast.With), *ctx.nodes(ast.AsyncWith)]
    found = [item.context_expr for node in withs for item in node.items if is_mesh_helper(ctx, item.context_expr)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def uses_jax(ctx: FileContext) -> bool:
    """Whether the module imports anything from JAX (a name like ``mesh_lock`` is no mesh elsewhere)."""
    imports: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]
    for node in imports:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if any(n == "jax" or n.startswith("jax.") for n in names):
            return True
    return False


def module_blocker(ctx: FileContext) -> Optional[str]:
    """Why neither rewrite may happen in this module (the first reason found), or None; worked
    out once for JM701 and JM702 together."""
    return ctx.memo("jit_plan.module_blocker", _module_blocker)


def _module_blocker(ctx: FileContext) -> Optional[str]:
    why = next((why for why, _ in module_blockers(ctx)), None)
    if why:
        return why
    hold = ctx.origin.get(PROJECT_HOLD)
    return str(hold) if hold else None


def held_until_fixed(ctx: FileContext) -> Optional[FrozenSet[str]]:
    """The rules whose fixes remove every reason the module's own rewrites are held back for (the
    project's hold aside): empty when nothing holds them, None when one reason needs a person."""
    codes = set()
    for _, code in module_blockers(ctx):
        if code is None:
            return None
        codes.add(code)
    return frozenset(codes)


def nothing_to_shard(ctx: FileContext, use: PjitUse) -> bool:
    """Whether every sharding the use gives is a literal ``None`` (or none is given): pjit had
    nothing to shard. JAX 0.4.13 read a ``None`` spec outside a mesh as unspecified, what
    ``jax.jit`` without shardings does (``P()`` there raised "requires a non-empty mesh")."""
    if use.kind not in ("call", "partial") or any(k.arg is None for k in use.keywords):
        return False
    given = [*use.options[:2], *(k.value for k in use.keywords if k.arg in SHARDINGS)]
    return all(isinstance(v, ast.Constant) and v.value is None for v in given)


def enters_no_mesh(ctx: FileContext) -> bool:
    """Whether the module enters no mesh at all: no `with` on one (legacy or ``jax.set_mesh``), no
    helper that enters one, no mesh used as a decorator, no other call of ``jax.set_mesh``."""
    return ctx.memo("jit_plan.enters_no_mesh", lambda c: not mesh_withs(c) and not always_reported(c)
                    and next(c.calls_to(*SET_MESH_SPELLINGS), None) is None)


def always_reported(ctx: FileContext) -> List[ast.expr]:
    """The mesh uses JM702 reports without a fix whatever the plan: helpers that enter a mesh,
    meshes used as decorators or called on functions."""
    return [*mesh_helper_withs(ctx), *mesh_as_function(ctx)]


def module_blockers(ctx: FileContext) -> Iterator[Tuple[str, Optional[str]]]:
    """Why neither rewrite may happen in this module, every reason in order (the project's hold
    aside), each with the rule whose fix removes it (None: a person must)."""
    if not ctx.target_at_least(PJIT_DEPRECATED_SINCE):
        if pjit_uses(ctx):
            yield "the target JAX still has pjit undeprecated", None
        return
    for use in pjit_uses(ctx):
        line = getattr(use.node, "lineno", 0)
        for _, code in use_blockers(ctx, use):
            yield f"the pjit on line {line} needs a person", code
    for w in mesh_withs(ctx) if uses_jax(ctx) else ():
        if w.problem:
            yield f"the `with` on line {w.statement.lineno} needs a person", None
    for helper in mesh_helper_withs(ctx) if pjit_uses(ctx) else ():
        yield (f"the `with` on line {helper.lineno} enters a mesh through a helper, in the `with mesh:` way "
               "that `jax.jit` does not see"), None
    for called in mesh_as_function(ctx) if pjit_uses(ctx) else ():
        yield (f"the mesh on line {called.lineno} is used as a decorator or called on a function: that enters the "
               "`with mesh:` context, which `jax.jit` does not see"), None
    if ctx.attributes("thread_resources") or ctx.names("thread_resources"):
        yield "the module reads `thread_resources`, which `jax.set_mesh` does not set", None
