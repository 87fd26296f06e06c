"""The one renamer: the imports and uses of a JAX name that moved, rewritten to its new name.

Two tables feed it: the hand table of moved names (``catalog/moves.py``, for JM201 and JM601) and
JAX's API history (``catalog/api_history.py``, whose pure renames and the hand drop-ins of
``catalog/renames.py`` JM801-JM803 fix through ``rename_fix``). Each rule decides which of its
names move and says so in its messages; this module alone writes the text that moves them: every
import statement a rename rewrites is rendered here (``rewrite_from_import``,
``rewrite_module_path``, ``rewrite_module_import``), and every use (``rewrite_use``). Which rule
owns a name is decided once, in ``catalog/owners.py``.

A ``from`` import of moved names imports them from their new modules, a comment on a moved
name's line going with it, and keeps the names it does not move. The local name stays
(``from m import new as old``) unless the rule renames its uses (JM201: ``from jax.sharding
import Mesh`` for ``maps.mesh``, each use renamed). A use spelled through the old name's module
keeps that module when the rule asks for it (``jnp.product`` -> ``jnp.prod``); another gets the
new name through what the file already imports, else a new import.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Sequence, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_text import alias_comments, render_import_from, render_without_names
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.names import canonical
from jaxmigrate.analysis.statements import (
    delete_statement,
    newline,
    replace_statement,
    statement_prefix,
    trailing_text,
)
from jaxmigrate.core.findings import Edit, Fix, FixSafety, ImportRef
from jaxmigrate.patterns.api_references import Reference
from jaxmigrate.patterns.call_advice import arguments, prng_impl_arguments, split_wrapper


def _last(qualname: str) -> str:
    return qualname.rpartition(".")[2]


# imports -----------------------------------------------------------------------------------
def rewrite_from_import(ctx: FileContext, node: ast.ImportFrom, moved: Sequence[Tuple[ast.alias, str]],
                        dropped: Sequence[ast.alias] = (), rename_uses: bool = False) -> List[Edit]:
    """The edits that move the aliases of ``moved`` (each with its new qualified name) of a
    ``from`` import to their new modules and drop the aliases ``dropped``.

    Without ``rename_uses`` (the history's renames) a name keeps its local name, and one that
    stays in its module is renamed in place. With it (the hand table's moves), a name that
    changes and is not bound elsewhere is imported under its new name and its uses are renamed;
    the moved names always get statements of their own (the engine joins one to the block's
    other import of its module, in order)."""
    assert node.module is not None
    edits: List[Edit] = []
    groups: Dict[str, List[Tuple[str, Optional[str]]]] = {}
    texts: List[Tuple[ast.alias, str]] = []
    comments = alias_comments(ctx.text(node), {(a.name, a.asname) for a, _ in moved})
    for alias, new in moved:
        text, renames = _alias_text(ctx, node, alias, new, rename_uses)
        groups.setdefault(new.rpartition(".")[0], []).append((text, comments.get((alias.name, alias.asname))))
        texts.append((alias, text))
        edits.extend(renames)
    if not rename_uses and not dropped and list(groups) == [node.module]:
        return [ctx.replace(alias, text) for alias, text in texts]  # the same module: in place
    gone = {id(a) for a, _ in moved} | {id(a) for a in dropped}
    kept = [a for a in node.names if id(a) not in gone]
    if not kept and len(groups) == 1 and not edits and all(a.name == _last(new) for a, new in moved):
        module_edit = _module_span_edit(ctx, node, node.module, next(iter(groups)))
        if module_edit is not None:
            return [module_edit]
    # a moved name's comment goes with it, at the end of its line unless code follows there
    prefix = statement_prefix(ctx, node)
    own_lines = prefix.strip() == ""
    last_free = own_lines and (bool(kept) or not trailing_text(ctx, node))
    new_lines = [render_import_from(mod, items, own_lines and (i < len(groups) - 1 or last_free), prefix, newline(ctx))
                 for i, (mod, items) in enumerate(groups.items())]
    if kept:
        new_lines.append(render_without_names(ctx.text(node), {(a.name, a.asname) for a in node.names if id(a) in gone}))
    edits.append(replace_statement(ctx, node, new_lines) if new_lines else delete_statement(ctx, node))
    return edits


def _alias_text(ctx: FileContext, node: ast.ImportFrom, alias: ast.alias, new: str,
                rename_uses: bool) -> Tuple[str, List[Edit]]:
    """The alias text in the new import, and the edits renaming its uses if the name changes."""
    new_name = _last(new)
    if alias.asname:
        return (new_name if alias.asname == new_name else f"{new_name} as {alias.asname}"), []
    if alias.name == new_name:
        return new_name, []
    if not rename_uses or ctx.resolver.bound_in_any_scope(new_name):
        return f"{new_name} as {alias.name}", []
    old_qual = canonical(f"{node.module}.{alias.name}")
    return new_name, [ctx.replace(n, new_name) for n in ctx.loads_of(alias.name, old_qual)]


def rewrite_module_path(ctx: FileContext, node: ast.ImportFrom, new_module: str) -> Edit:
    """The edit that imports from ``new_module`` instead (a moved module: the names stay)."""
    assert node.module is not None
    edit = _module_span_edit(ctx, node, node.module, new_module)
    if edit is None:  # an unusual layout (a backslash after `from`): rebuild the statement
        names = ", ".join(ctx.text(a) for a in node.names)
        edit = ctx.replace(node, f"from {new_module} import {names}")
    return edit


def rewrite_module_import(ctx: FileContext, alias: ast.alias, new_module: str) -> Edit:
    """The edit that makes ``import old as x`` (an alias of an ``import``) ``import new as x``."""
    return ctx.replace(alias, new_module + (f" as {alias.asname}" if alias.asname else ""))


def _module_span_edit(ctx: FileContext, node: ast.ImportFrom, old: str, new: str) -> Optional[Edit]:
    text = ctx.text(node)
    pattern = re.compile(r"from\s+(" + r"\s*\.\s*".join(map(re.escape, old.split("."))) + r")\b")
    match = pattern.match(text)
    if match is None:
        return None
    start = ctx.span(node)[0]
    return Edit(start + match.start(1), start + match.end(1), new)


# uses --------------------------------------------------------------------------------------
def rewrite_use(ctx: FileContext, node: ast.expr, old: str, new: str, safety: FixSafety, *,
                keep_module: bool = False, module: bool = False) -> Fix:
    """The fix that names ``new`` instead of ``old`` at the use ``node`` (a name or attribute
    chain). ``keep_module``: a chain through ``old``'s module keeps it when ``new`` is in the
    same module (``jnp.product`` -> ``jnp.prod``); ``module``: ``old`` is a module path, and a
    chain whose root names a package of ``new`` keeps its root."""
    new_module, _, new_name = new.rpartition(".")
    if keep_module and isinstance(node, ast.Attribute) and old.rpartition(".")[0] == new_module:
        return Fix(safety, edits=(ctx.replace(node, f"{ctx.text(node.value)}.{new_name}"),))
    root: ast.expr = node
    while isinstance(root, ast.Attribute):
        root = root.value
    root_qual = (ctx.qualname(root) or "") if module else ""
    imports: Tuple[ImportRef, ...] = ()
    if module and (new + ".").startswith(root_qual + "."):
        text = ctx.text(root) + new[len(root_qual):]
    else:
        text, imports = importer(ctx).reference(new, at=node)
    return Fix(safety, edits=(ctx.replace(node, text),), add_imports=imports,
               drop_unused_imports=importer(ctx).root_import(root))


# the API history's renames -------------------------------------------------------------------
def rename_fix(ctx: FileContext, ref: Reference, new: str, safety: FixSafety) -> Optional[Fix]:
    """The fix of a reference the API history (or the hand drop-ins) renames to ``new``."""
    if ref.status.qualname != ref.spelled:
        return None  # an attribute of a removed name: no rename of the whole chain is known
    if ref.is_import:
        statement, alias = ref.statement, ref.node
        if not isinstance(statement, ast.ImportFrom) or not isinstance(alias, ast.alias):
            return None  # `import jax.x.y`: a module path, no rename known
        return Fix(safety, edits=tuple(rewrite_from_import(ctx, statement, [(alias, new)])))
    if ref.via_import is not None:
        return None  # fixed in its import
    assert isinstance(ref.node, ast.expr)  # a use: a name, an attribute chain, an option's string
    return rewrite_use(ctx, ref.node, ref.spelled, new, safety, keep_module=True)


def _x64_value(ctx: FileContext, node: ast.expr, disable: bool) -> Fix:
    """``enable_x64``/``disable_x64`` named as a value (``modes = [enable_x64, disable_x64]``),
    called later to make the context manager: ``jax.enable_x64`` (its call with no argument
    enables), and ``functools.partial(jax.enable_x64, False)``."""
    text, imports = importer(ctx).reference("jax.enable_x64", at=node)
    if disable:
        partial, more = importer(ctx).reference("functools.partial", at=node)
        text, imports = f"{partial}({text}, False)", (*imports, *more)
    return Fix("safe", edits=(ctx.replace(node, text),), add_imports=imports,
               drop_unused_imports=importer(ctx).root_import(node))


def in_type_test(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` is (in) the class argument of ``isinstance``/``issubclass``."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Tuple):
        node, parent = parent, ctx.parent(parent)
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
            and parent.func.id in ("isinstance", "issubclass") and len(parent.args) == 2 and parent.args[1] is node)


def call_fix(ctx: FileContext, ref: Reference, transform: str) -> Optional[Fix]:
    """The call transforms of ``catalog.renames.CALLS`` on a use that is called."""
    call = ctx.parent(ref.node)
    if transform.startswith("jax.enable_x64/with") and not (isinstance(call, ast.Call) and call.func is ref.node) \
            and isinstance(ref.node, ast.expr) and not ref.is_import:
        return _x64_value(ctx, ref.node, transform.endswith("False"))
    if not isinstance(call, ast.Call) or call.func is not ref.node or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if transform == "second-argument":  # tie_in(x, y) -> y
        if len(call.args) != 2 or call.keywords:
            return None
        first, second = call.args
        pure = isinstance(first, (ast.Name, ast.Constant, ast.Attribute))  # dropping it drops no call
        text = f"({ctx.text(second)})" if _needs_parens(second) else ctx.text(second)
        return Fix("safe" if pure else "unsafe", edits=(ctx.replace(call, text),))
    if transform == "jax.random.permutation/independent":  # shuffle(key, x, axis=0)
        if len(call.args) not in (2, 3) or any(k.arg not in ("axis",) for k in call.keywords):
            return None
        imports: Tuple[ImportRef, ...]
        if isinstance(call.func, ast.Attribute):  # `random.shuffle` -> `random.permutation`
            text, imports = f"{ctx.text(call.func.value)}.permutation", ()
        else:
            text, imports = importer(ctx).reference("jax.random.permutation", at=call.func)
        args = [ctx.text(a) for a in call.args] + [f"{k.arg}={ctx.text(k.value)}" for k in call.keywords]
        return Fix("unsafe", edits=(ctx.replace(call, f"{text}({', '.join(args)}, independent=True)"),), add_imports=imports)
    if transform.startswith("jax.enable_x64/with"):  # a `with` item: the option's context manager
        if not isinstance(ctx.parent(call), ast.withitem):
            return None  # a decorator, or kept for later: the old context manager's other uses
        if transform.endswith("False") and (call.args or call.keywords):
            return None
        if call.keywords or len(call.args) > 1:
            return None
        text, imports = importer(ctx).reference("jax.enable_x64", at=call.func)
        arg = "False" if transform.endswith("False") else ", ".join(ctx.text(a) for a in call.args)
        return Fix("safe", edits=(ctx.replace(call, f"{text}({arg})"),), add_imports=imports,
                   drop_unused_imports=importer(ctx).root_import(call.func))
    if transform == "jax.eval_shape/key-shape":
        return _key_shape(ctx, call)
    if transform == "jax.extend.random.define_prng_impl/from-prng-impl":
        return _prng_impl(ctx, call)
    if transform == "jax.random.key/seed-with-impl":  # seed_with_impl(impl, seed): a key of that impl
        found = arguments(ctx, call, ["impl", "seed"])
        if found is None or len(found) != 2:
            return None
        # safe: key() takes define_prng_impl's result and a PRNGImpl alike, seed_with_impl only the latter
        text, imports = importer(ctx).reference("jax.random.key", at=call.func, dotted=True)
        return Fix("safe", edits=(ctx.replace(call, f"{text}({found['seed']}, impl={found['impl']})"),),
                   add_imports=imports, drop_unused_imports=importer(ctx).root_import(call.func))
    if transform.startswith("jax.random.PRNGKey/impl:"):  # rbg_key(seed) -> PRNGKey(seed, impl="rbg")
        found = arguments(ctx, call, ["seed"])
        if found is None or len(found) != 1:
            return None
        text, imports = importer(ctx).reference("jax.random.PRNGKey", at=call.func, dotted=True)
        impl = transform.rpartition(":")[2]
        return Fix("safe", edits=(ctx.replace(call, f'{text}({found["seed"]}, impl="{impl}")'),), add_imports=imports,
                   drop_unused_imports=importer(ctx).root_import(call.func))
    if transform == "jax.effects_barrier/no-arguments":  # barrier_wait(logging_name=None): a name for logs
        if len(call.args) + len(call.keywords) > 1 or any(k.arg != "logging_name" for k in call.keywords):
            return None
        # unsafe: before JAX 0.4.30, host_callback's own taps (the legacy outfeed) are not effects
        text, imports = importer(ctx).reference("jax.effects_barrier", at=call.func, dotted=True)
        return Fix("unsafe", edits=(ctx.replace(call, f"{text}()"),), add_imports=imports,
                   drop_unused_imports=importer(ctx).root_import(call.func))
    return None


def _prng_impl(ctx: FileContext, call: ast.Call) -> Optional[Fix]:
    """``PRNGImpl(...)`` -> ``define_prng_impl(...)`` in place (its layout and comments kept):
    positional arguments named, ``split`` wrapped to take the shape JAX passes now. Unsafe: what
    it returns is opaque (no ``.key_shape``, ``.tag``), where the NamedTuple's fields could be read."""
    found = prng_impl_arguments(call)
    if found is None:
        return None
    text, imports = importer(ctx).reference("jax.extend.random.define_prng_impl", at=call.func, dotted=True)
    edits = [ctx.replace(call.func, text)]
    for name, node in found.items():
        value = split_wrapper(ctx, node) if name == "split" else None
        if any(node is a for a in call.args):
            start, end = ctx.span(node)
            edits.append(Edit(start, end if value else start, f"{name}={value or ''}"))
        elif value:
            edits.append(ctx.replace(node, value))
    return Fix("unsafe", edits=tuple(edits), add_imports=imports, drop_unused_imports=importer(ctx).root_import(call.func))


def _key_shape(ctx: FileContext, call: ast.Call) -> Optional[Fix]:
    """``default_prng_impl().key_shape`` (or ``impl = default_prng_impl()`` read only for
    ``impl.key_shape``): the abstract data of a default key, and its ``.shape``."""
    if call.args or call.keywords:
        return None
    names = {}
    imports: List[ImportRef] = []
    for name in ("jax.eval_shape", "jax.random.key_data", "jax.random.key"):
        names[name], needed = importer(ctx).reference(name, at=call, dotted=name == "jax.eval_shape")
        imports += needed
    data = f"{names['jax.eval_shape']}(lambda seed: {names['jax.random.key_data']}({names['jax.random.key']}(seed)), 0)"
    drop = importer(ctx).root_import(call.func)
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr == "key_shape":
        return Fix("safe", edits=(ctx.replace(parent, f"{data}.shape"),), add_imports=tuple(imports), drop_unused_imports=drop)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return None
    bound = parent.targets[0].id
    reads = [n for n in ctx.names(bound) if isinstance(n.ctx, ast.Load) and any(b.node is parent for b in ctx.bindings(n))]
    attrs = [ctx.parent(n) for n in reads]
    if not reads or not all(isinstance(a, ast.Attribute) and a.attr == "key_shape" and a.value is n
                            for a, n in zip(attrs, reads)):
        return None
    edits = [ctx.replace(call, data)] + [ctx.replace(cast(ast.Attribute, a), f"{bound}.shape") for a in attrs]
    return Fix("safe", edits=tuple(edits), add_imports=tuple(imports), drop_unused_imports=drop)


def _needs_parens(node: ast.AST) -> bool:
    return not isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.Tuple, ast.List, ast.Dict))


