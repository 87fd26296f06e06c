"""The one import service: every rule and the engine add, reuse and drop imports through it.

``Importer`` (one per file, ``importer(ctx)``) answers where a fix stands: the text that names an
object there and the import it needs (reusing a visible one), the import that bound a rewritten
name (to drop once unused), and the edit that drops some names of an import statement (several
at once, the statement if all go, ``import jax`` kept while ``jax`` is still read through it).
``fix_imports``/``drops_before_edits`` then apply a round's adds and drops to the edited text.

LibCST's AddImportsVisitor/RemoveImportsVisitor walk the whole tree with scope analysis: measured
here, 12 s on one 3,500-line test module. Imports are a small, regular part of a module, so this
works on them alone: an import statement that loses an alias is re-rendered from its own text
(analysis/import_text.py, comments kept), and a new import joins the leading import block where
isort would put it (analysis/import_layout.py).
"""

from __future__ import annotations

import ast
import bisect
import builtins
import itertools
import re
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_layout import import_edits, is_docstring, leading_imports, line_after, splice
from jaxmigrate.analysis.import_text import render_without_names
from jaxmigrate.analysis.names import canonical
from jaxmigrate.analysis.statements import delete_statement, newline
from jaxmigrate.catalog.api_history import exists
from jaxmigrate.catalog.moves import BY_OLD, applies
from jaxmigrate.core.findings import Edit, ImportRef


def importer(ctx: FileContext) -> "Importer":
    """The file's import service; its answers are kept once per text and target."""
    return Importer(ctx, ctx.memo("import answers", lambda _: {}))


class Importer:
    """Import questions about one file, answered where a fix stands."""

    def __init__(self, ctx: FileContext, answers: Dict[tuple, Tuple[str, Tuple[ImportRef, ...]]]) -> None:
        self.ctx = ctx
        # ``reference``/``module_reference`` answers: a fix asks for the same name at the same
        # scope once per call it rewrites (12,000 times in one file: quadratic without it). Kept
        # in the context's memo, which must not hold the context itself (a reference cycle).
        self._answers = answers

    def reference(self, qualname: str, at: Optional[ast.AST] = None, dotted: bool = False) -> Tuple[str, Tuple[ImportRef, ...]]:
        """Source text that names ``qualname`` where ``at`` stands, and the imports it needs.

        Reuses a name visible there that is already bound to it (``P`` for PartitionSpec), else
        goes through a visible ``jax`` module, else imports the object under its own name at
        module level (or ``import jax`` when that name is taken, or when ``dotted`` asks for the
        idiomatic ``jax.jit`` over ``from jax import jit``). A ``jax.`` reference is never written
        where ``jax`` means something else (``import numpy as jax``, a parameter, an assignment,
        a function's ``global jax``): there the module is imported under a name the file never
        spells (``import jax as jax_``). A name a star import binds is reused only where the
        target still has it in that module (no fix rewrites a star import).
        """
        resolver = self.ctx.resolver
        scope = self._scope_at(at) if at is not None else resolver.module_scope
        # code of the module itself runs in order: a name its imports bind further down (a later
        # notebook cell's) is not bound yet where ``at`` stands
        key = ("reference", qualname, id(scope), dotted, self.ctx.target)  # the answer depends on nothing else
        if key not in self._answers:
            self._answers[key] = self._reference(qualname, scope, dotted)
        answer = self._answers[key]
        line = getattr(at, "lineno", None) if scope is resolver.module_scope else None
        if line is not None and not answer[1] and not self._bound_by(answer[0].split(".")[0], scope, line):
            at_line = (*key, line)  # rare: the name reused is imported below this line
            if at_line not in self._answers:
                self._answers[at_line] = self._reference(qualname, scope, dotted, line)
            answer = self._answers[at_line]
        return answer

    def _bound_by(self, name: str, scope, line: Optional[int]) -> bool:
        """Whether a binding of ``name`` in ``scope`` comes before ``line`` (None: anywhere)."""
        return line is None or any(getattr(b.node, "lineno", 0) < line for b in scope.bindings.get(name, ()))

    def _reference(self, qualname: str, scope, dotted: bool, line: Optional[int] = None) -> Tuple[str, Tuple[ImportRef, ...]]:
        resolver = self.ctx.resolver
        module, _, name = qualname.rpartition(".")
        # the visible names bound to ``qualname``, or to a name JM201 moves to it: looked up by
        # what they resolve to, not found among every visible name (10,000 functions of a
        # module, each asking once, went through its 10,000 names each time)
        existing = sorted((n for bound in _bound_as(qualname) for n in resolver.visible_resolving_to(scope, bound)
                           if resolver.is_import(n, scope) and _same_after_moves(n, bound, qualname, self.ctx.target)
                           and self._kept(n, scope, bound == qualname) and self._bound_by(n, scope, line)),
                          key=lambda n: (n != name, len(n), n))
        if existing:
            return existing[0], ()
        if qualname.startswith("jax.") and _reachable_from_jax(qualname):
            jax_names = sorted((n for n in resolver.visible_resolving_to(scope, "jax")
                                if self._means(n, scope, "jax") and self._bound_by(n, scope, line)),
                               key=lambda n: (n != "jax", n))
            if jax_names:
                return jax_names[0] + qualname[3:], ()
        if (not dotted and not resolver.is_visible(name, scope) and not resolver.bound_in_any_scope(name)
                and name not in _BUILTINS and not self.ctx.names(name)):  # `from jax.tree import map` hides a builtin
            return name, (ImportRef(module, name),)
        root = qualname.split(".")[0]
        # `import jax` does not load `jax.extend.core`: a dotted path below a submodule imports it
        needed = module if qualname.startswith("jax.") and not _reachable_from_jax(qualname) else root
        if self._root_free(root, scope):
            return qualname, (ImportRef(needed),)
        alias = self._fresh(needed.replace(".", "_"))  # `import jax as jax_`, `import jax.extend.core as jax_extend_core_`
        return alias + qualname[len(needed):], (ImportRef(needed, None, alias),)

    def module_reference(self, module: str, alias: str, at: Optional[ast.AST] = None) -> Tuple[str, Tuple[ImportRef, ...]]:
        """A name for ``module`` where ``at`` stands (``np`` for numpy), and the import it needs:
        a visible import of it, else ``import module as alias``, else ``import module``."""
        resolver = self.ctx.resolver
        scope = self._scope_at(at) if at is not None else resolver.module_scope
        key = ("module", module, alias, id(scope))
        if key not in self._answers:
            self._answers[key] = self._module_reference(module, alias, scope)
        return self._answers[key]

    def _module_reference(self, module: str, alias: str, scope) -> Tuple[str, Tuple[ImportRef, ...]]:
        resolver = self.ctx.resolver
        visible = sorted((n for n in resolver.visible_resolving_to(scope, module) if resolver.is_import(n, scope)),
                         key=lambda n: (n != alias, len(n), n))
        if visible:
            return visible[0], ()
        if not resolver.is_visible(alias, scope) and not resolver.bound_in_any_scope(alias):
            return alias, (ImportRef(module, None, alias),)
        if self._root_free(module.split(".")[0], scope):
            return module, (ImportRef(module),)
        fresh = self._fresh(alias)
        return fresh, (ImportRef(module, None, fresh),)

    def _scope_at(self, at: ast.AST):
        """The scope ``at`` stands in: a name's or chain's own, else that of the function or class
        whose body holds it (a statement of a function is in the function's scope, its
        decorators and defaults in the enclosing one)."""
        node = at
        while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
            node = node.func if isinstance(node, ast.Call) else node.value
        resolver = self.ctx.resolver
        if isinstance(node, ast.Name):
            return resolver.scope_of(node)
        by_node = self.ctx.memo("scopes by node", lambda c: {id(s.node): s for s in c.resolver.scopes})
        parents = self.ctx.parents
        child, parent = at, parents.get(id(at))
        while parent is not None:
            if isinstance(parent, ast.Lambda) and parent.body is child or isinstance(
                    parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(s is child for s in parent.body):
                return by_node[id(parent)]
            child, parent = parent, parents.get(id(parent))
        return resolver.module_scope

    def _root_free(self, root: str, scope) -> bool:
        """Whether ``import root...`` at module level makes ``root`` mean that package where
        ``scope`` stands: nothing there binds ``root``, or only an import of the package itself
        (a parameter, an assignment, ``import numpy as jax`` or a function's ``global jax`` do)."""
        return self.ctx.resolver.lookup(root, scope) is None or self._means(root, scope, root)

    def _means(self, name: str, scope, qualname: str) -> bool:
        """Whether every binding of ``name`` seen from ``scope`` binds ``qualname`` (an import of
        it, or an assignment of a name for it; ``x = None`` fallbacks aside). Stricter than the
        resolver, which passes over an assignment whose value it cannot read (``jax = jax.numpy``
        next to ``import jax``: a cycle)."""
        resolver = self.ctx.resolver
        owner = resolver.lookup(name, scope)
        if owner is None:
            return False
        for b in owner.bindings[name]:
            if b.kind == "import":
                if canonical(b.qualname) != qualname:
                    return False
            elif b.kind == "alias":
                if b.value is None or resolver.qualname(b.value, owner) != qualname:
                    return False
            elif b.kind != "none":
                return False
        return True

    def _fresh(self, base: str) -> str:
        """A name no scope of the file binds and the file never spells: ``base_``, ``base_2``, ..."""
        ctx, resolver = self.ctx, self.ctx.resolver
        candidates = itertools.chain([base + "_"], (f"{base}_{i}" for i in itertools.count(2)))
        return next(c for c in candidates if not resolver.bound_in_any_scope(c) and not ctx.names(c))

    def _kept(self, name: str, scope, exact: bool) -> bool:
        """Whether a reuse of ``name`` survives the fix: a name a star import binds does only
        when it is the very name wanted and the target still has it in that module (the star
        import stays as it is: no rename through it)."""
        stars = [b for b in self.ctx.resolver.bindings_of(name, scope)
                 if isinstance(b.node, ast.ImportFrom) and b.node.names[0].name == "*"]
        return not stars or exact and all(b.qualname is not None and exists(b.qualname, self.ctx.target) for b in stars)

    def root_import(self, root: ast.AST) -> Tuple[ImportRef, ...]:
        """The import that bound the root of a rewritten chain, to drop if it is now unused."""
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return ()
        refs = []
        for b in self.ctx.bindings(root):
            stmt = b.node
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for a in stmt.names:
                    if (a.asname or a.name) == root.id:
                        refs.append(ImportRef(stmt.module, a.name, a.asname))
                        moved = BY_OLD.get(f"{stmt.module}.{a.name}")
                        if moved is not None:  # JM201 may rewrite the import in the same run
                            new_module, _, new_name = moved.new.rpartition(".")
                            refs.append(ImportRef(new_module, new_name, a.asname or (a.name if a.name != new_name else None)))
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname == root.id:
                        refs.append(ImportRef(a.name, None, a.asname))
        return tuple(refs)

    def drop(self, stmt: ast.Import | ast.ImportFrom, aliases: Sequence[ast.alias]) -> Optional[Edit]:
        """The edit that drops ``aliases`` from an import statement, in one edit however many go
        (the statement, if all go); None if none."""
        return _without(self.ctx, stmt, list(aliases))

    def drop_alias(self, node: ast.Import, alias: ast.alias) -> Edit:
        """The edit that drops one name of an ``import`` statement (the statement, if it was the
        only one), keeping ``import jax`` if ``jax`` is still used through it."""
        ctx = self.ctx
        others = [a for a in node.names if a is not alias]
        root = alias.name.split(".")[0]
        kept_root = any(a.asname is None and a.name.split(".")[0] == root for a in others)  # `import jax, jax.x`
        needs_jax = not alias.asname and not kept_root and _needs_root(ctx, node, root)
        if others:
            return ctx.replace(node, "import " + ", ".join(ctx.text(a) for a in others) + (", jax" if needs_jax else ""))
        if needs_jax:
            return ctx.replace(node, "import jax")
        return delete_statement(ctx, node)


def _needs_root(ctx: FileContext, node: ast.Import, root: str) -> bool:
    """Whether dropping ``import root.x.y`` would leave uses of ``root`` with no other import."""
    used = bool(ctx.loads_of(root, root))
    if not used:
        return False
    for other in ctx.resolver.imports:
        if other is node or not isinstance(other, ast.Import):
            continue
        if any(a.asname is None and a.name.split(".")[0] == root for a in other.names):
            return False
    return True



def fix_imports(source: str, adds: Sequence[ImportRef], drops: Sequence[ImportRef]) -> str:
    if drops:
        source = _drop_unused(source, list(dict.fromkeys(drops)))
    if adds:
        source = _add(source, list(dict.fromkeys(adds)))
    return source


def _local(ref: ImportRef) -> str:
    return ref.asname or ref.name or ref.module.split(".")[0]


def _drop_unused(source: str, drops: List[ImportRef]) -> str:
    ctx = FileContext.of(source)
    wanted = {_local(ref) for ref in drops}
    loads: dict = {}
    for n in ctx.nodes(ast.Name):
        if n.id in wanted and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
    dunder_all = _names_in_all(ctx)
    unused = [ref for ref in drops if _local(ref) not in dunder_all]
    edits: List[Edit] = []
    statements: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]  # function-level too
    for stmt in statements:  # one edit per statement, however many of its aliases go
        gone = [a for a in stmt.names if any(_matches(stmt, a, ref) for ref in unused)
                and not _read(ctx, stmt, loads.get(a.asname or a.name.split(".")[0], []))]
        edit = _without(ctx, stmt, gone)
        if edit is not None:
            edits.append(edit)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[: edit.start] + edit.text + source[edit.end :]
    return source


def drops_before_edits(ctx: FileContext, edits: Sequence[Edit], drops: Sequence[ImportRef]) -> Optional[List[Edit]]:
    """The edits that drop the imports of ``drops`` which ``edits`` leave unused, decided and
    located on the text before ``edits`` (``ctx``), so that the edited text need not be parsed
    again for it. An alias goes when each read of its name lies inside an edited span and no new
    text names it. None when this cannot be decided here and ``fix_imports`` must look at the
    edited text: an import statement the edits touch, one inside a block (the edits may leave
    the block empty), or a new text that mentions a dropped name."""
    spans = sorted((e.start, e.end) for e in edits)
    starts = [s for s, _ in spans]
    reach = list(itertools.accumulate((e for _, e in spans), max))  # furthest end among the spans so far

    def covered(node: ast.AST) -> bool:
        start, end = ctx.span(node)
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and reach[i] >= end

    def overlaps(start: int, end: int) -> bool:
        return any(s < end and start < e or s == e == start for s, e in spans)

    dunder_all = _names_in_all(ctx)
    unused = [ref for ref in dict.fromkeys(drops) if _local(ref) not in dunder_all]
    out: List[Edit] = []
    statements: List[ast.Import | ast.ImportFrom] = [*ctx.nodes(ast.Import), *ctx.nodes(ast.ImportFrom)]
    for stmt in statements:
        gone = [a for a in stmt.names if any(_matches(stmt, a, ref) for ref in unused)]
        if not gone:
            continue
        if not isinstance(ctx.parent(stmt), ast.Module) or overlaps(*ctx.span(stmt)):
            return None
        really = []
        for alias in gone:
            local = alias.asname or alias.name.split(".")[0]
            word = re.compile(rf"(?<![\w.]){re.escape(local)}\b")
            if any(word.search(e.text) for e in edits):
                return None
            loads = [n for n in ctx.names(local) if isinstance(n.ctx, ast.Load) and not covered(n)]
            if not _read(ctx, stmt, loads):
                really.append(alias)
        edit = _without(ctx, stmt, really)
        if edit is None:
            continue
        if overlaps(edit.start, edit.end):
            return None
        out.append(edit)
    return out


def _without(ctx: FileContext, stmt: ast.Import | ast.ImportFrom, aliases: List[ast.alias]) -> Optional[Edit]:
    """The edit that drops ``aliases`` from an import statement (the statement, if all go)."""
    if not aliases:
        return None
    if len(aliases) == len(stmt.names):
        return delete_statement(ctx, stmt)
    return ctx.replace(stmt, render_without_names(ctx.text(stmt), {(a.name, a.asname) for a in aliases}))


def _read(ctx: FileContext, stmt: ast.stmt, loads: List[ast.Name]) -> bool:
    """Whether one of ``loads`` may read the name this import binds (a parameter or local of
    the same name elsewhere does not count)."""
    return any(not ctx.bindings(n) or any(b.node is stmt for b in ctx.bindings(n)) for n in loads)


def _matches(stmt: ast.stmt, alias: ast.alias, ref: ImportRef) -> bool:
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and stmt.module == ref.module and alias.name == ref.name and alias.asname == ref.asname
    return isinstance(stmt, ast.Import) and ref.name is None and alias.name == ref.module and alias.asname == ref.asname


def _names_in_all(ctx: FileContext) -> set:
    out = set()
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                out |= {e.value for e in stmt.value.elts if isinstance(e, ast.Constant)}
    return out


def _loads_submodule(ctx: FileContext, module: str) -> bool:
    """Whether a module-level import loads ``module`` (``import module``, or of something in it)."""
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Import) and any(a.name == module or a.name.startswith(module + ".") for a in stmt.names):
            return True
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and (
                stmt.module == module or stmt.module.startswith(module + ".")):
            return True
    return False


def _add(source: str, adds: List[ImportRef]) -> str:
    ctx = FileContext.of(source)
    refs = []
    for ref in adds:
        qual = f"{ref.module}.{ref.name}" if ref.name else ref.module
        if _local(ref) in set(ctx.resolver.module_names_for(qual if ref.name or ref.asname else ref.module.split(".")[0])):
            if ref.name or ref.asname or "." not in ref.module or _loads_submodule(ctx, ref.module):
                continue  # `import jax` binds `jax`, but only `import jax.extend.core` loads that submodule
        refs.append(ref)
    if not refs:
        return source
    edits = import_edits(ctx, refs)
    if edits is not None:
        return splice(source, edits)
    nl = newline(ctx)
    lines = [f"from {r.module} import {r.name}" + (f" as {r.asname}" if r.asname else "") if r.name
             else f"import {r.module}" + (f" as {r.asname}" if r.asname else "") for r in refs]
    block = leading_imports(ctx)
    anchor = block[-1] if block else None
    if anchor is None:
        first = ctx.tree.body[0] if ctx.tree.body else None
        at = line_after(ctx, first) if first is not None and is_docstring(first) else _after_magic_comments(ctx)
        return source[:at] + "".join(line + nl for line in lines) + _gap(ctx, at) + source[at:]
    end_line = anchor.end_lineno or anchor.lineno
    at = ctx.line_start(end_line) + len(ctx.line_text(end_line))
    text = ctx.line_text(end_line)
    prefix = "" if text.endswith(("\n", "\r")) else nl
    # on lines of their own at column 0 (the block is module-level; the text before the anchor on
    # its line is another statement: `import os; import sys`)
    return source[:at] + prefix + "".join(line + nl for line in lines) + source[at:]


def _gap(ctx: FileContext, at: int) -> str:
    """The blank lines new imports at ``at`` need before the code that follows them there: two
    before a def or class (E302), one before other code, none where a blank line follows."""
    line, _ = ctx.line_col(at)
    if at >= len(ctx.source) or not ctx.line_text(line).strip():
        return ""
    nxt = next((s for s in ctx.tree.body if ctx.span(s)[0] >= at), None)
    return newline(ctx) * (2 if isinstance(nxt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else 1)


def _after_magic_comments(ctx: FileContext) -> int:
    """The start of the first line after a ``#!`` line and an encoding declaration, which stay first."""
    line = 1
    while line <= 2 and re.match(r"#!|#.*coding[:=]", ctx.line_text(line)):
        line += 1
    return ctx.line_start(line) if ctx.line_text(line) else len(ctx.source)


_BUILTINS = frozenset(dir(builtins))

# Submodules that ``import jax`` makes reachable as attributes, so ``jax.sharding.Mesh`` works
# after a plain ``import jax`` (checked against jax 0.4.x and 0.10.x).
# the submodules `import jax` loads (0.4.13 and 0.10.2 both): reached as `jax.<module>.<name>`
_JAX_ATTRIBUTE_MODULES = ("jax.sharding.", "jax.lax.", "jax.tree_util.", "jax.tree.", "jax.random.", "jax.dtypes.")


def _same_after_moves(name: str, bound: Optional[str], qualname: str, target) -> bool:
    """Whether ``name``, bound to ``bound``, names ``qualname`` once JM201 has moved its import.

    Not when the move renames it: ``from jax.experimental.maps import mesh`` becomes
    ``from jax.sharding import Mesh``, so the name ``mesh`` goes away."""
    if bound == qualname:
        return True
    move = BY_OLD.get(bound or "")
    if move is None or move.new != qualname or not applies(move, target):
        return False
    old_last, new_last = move.old.rpartition(".")[2], move.new.rpartition(".")[2]
    return name != old_last or old_last == new_last


_BOUND_AS: Dict[str, Tuple[str, ...]] = {}


def _bound_as(qualname: str) -> Tuple[str, ...]:
    """What a name must resolve to for ``_same_after_moves`` to take it for ``qualname``: that,
    or the old name of a move to it."""
    if not _BOUND_AS:
        for move in BY_OLD.values():
            _BOUND_AS.setdefault(move.new, (move.new,))
            _BOUND_AS[move.new] += (move.old,)
    return _BOUND_AS.get(qualname) or (qualname,)


def _reachable_from_jax(qualname: str) -> bool:
    return qualname.count(".") == 1 or qualname.startswith(_JAX_ATTRIBUTE_MODULES)
