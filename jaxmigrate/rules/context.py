"""What a rule sees of one file: the source, its ``ast``, positions and name resolution."""

from __future__ import annotations

import ast
import bisect
import copy
import re
import threading
from collections import deque
from functools import cached_property
from typing import Dict, Iterator, List, Optional, Tuple, Type, TypeVar

from jaxmigrate.rules.base import Edit, ImportRef
from jaxmigrate.rules.moves import BY_OLD
from jaxmigrate.rules.names import Resolver

_NEWLINE = re.compile(r"\r\n|\r|\n")
# shared singleton nodes (`Load()`, `Add()`, ...) that no rule looks up: not indexed
_OPERATORS = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
N = TypeVar("N", bound=ast.AST)


class FileContext:
    _local = threading.local()  # per thread: the last few parsed sources, for ``of``

    @classmethod
    def of(cls, source: str, path: str = "<string>", target: Optional[Tuple[int, ...]] = None) -> "FileContext":
        """A context for ``source``, reusing the tree, index and resolver of a recent context of
        the same text: a fix round parses the text the analysis parsed, and the analysis after
        it often the text the import editing parsed last."""
        recent: List[FileContext] = getattr(cls._local, "recent", [])
        for ctx in recent:
            if ctx.source == source:
                if (ctx.path, ctx.target) == (path, target):
                    return ctx
                twin = copy.copy(ctx)  # shares the parsed state, which depends on the text alone
                twin.path, twin.target = path, target
                return twin
        ctx = cls(source, path, target)
        cls._local.recent = [ctx, *recent[:1]]
        return ctx

    def __init__(self, source: str, path: str = "<string>", target: Optional[Tuple[int, ...]] = None) -> None:
        self.source = source
        self.path = path
        self.target = target  # JAX version the user migrates to; None means the newest
        self.tree = ast.parse(source, filename=path, type_comments=False)
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
        self._qualnames: Dict[int, Optional[str]] = {}  # id(node) → qualname: rules ask about the same nodes
        self._memo: Dict[tuple, object] = {}  # see ``memo``; shared with ``of``'s twins, so keyed by target

    def memo(self, key: str, compute):
        """``compute(self)`` once per text and target: for an analysis several rules share."""
        slot = (key, self.target)
        if slot not in self._memo:
            self._memo[slot] = compute(self)
        return self._memo[slot]

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(self.tree)

    @cached_property
    def _nodes_by_type(self) -> Dict[type, List[ast.AST]]:
        self._walk()
        return self._nodes_by_type

    def _walk(self) -> None:
        """One walk of the tree (in ``ast.walk``'s order) fills the index by node type and the parent map."""
        index: Dict[type, List[ast.AST]] = {}
        parents: Dict[int, ast.AST] = {}
        todo = deque([self.tree])
        pop, push = todo.popleft, todo.append
        while todo:
            node = pop()
            index.setdefault(type(node), []).append(node)
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    if not isinstance(value, _OPERATORS):
                        parents[id(value)] = node
                        push(value)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.AST) and not isinstance(item, _OPERATORS):
                            parents[id(item)] = node
                            push(item)
        self.__dict__["_nodes_by_type"], self.__dict__["parents"] = index, parents

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of one type, in no particular order (one shared walk per file)."""
        return self._nodes_by_type.get(kind, [])  # type: ignore[return-value]

    @cached_property
    def statements(self) -> List[ast.stmt]:
        """Every statement node, in no particular order."""
        return [n for kind, found in self._nodes_by_type.items() if issubclass(kind, ast.stmt) for n in found]

    @cached_property
    def parents(self) -> Dict[int, ast.AST]:
        self._walk()
        return self.parents

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.parents.get(id(node))

    # positions ---------------------------------------------------------------------------
    def offset(self, lineno: int, col_utf8: int) -> int:
        """Character offset of an ``ast`` position (1-based line, UTF-8 byte column)."""
        start = self._line_starts[lineno - 1]
        line_end = self._line_starts[lineno] if lineno < len(self._line_starts) else len(self.source)
        line = self.source[start:line_end]
        if line.isascii():
            return start + col_utf8
        return start + len(line.encode("utf-8")[:col_utf8].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def line_col(self, offset: int) -> Tuple[int, int]:
        """1-based line and 0-based character column of a character offset."""
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]

    def position(self, node: ast.AST) -> Tuple[int, int, int, int]:
        """(line, column, end_line, end_column), 1-based, columns in characters."""
        start, end = self.span(node)
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(end)
        return line, col + 1, end_line, end_col + 1

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_start(self, lineno: int) -> int:
        return self._line_starts[lineno - 1]

    def line_text(self, lineno: int) -> str:
        start = self._line_starts[lineno - 1]
        end = self._line_starts[lineno] if lineno < len(self._line_starts) else len(self.source)
        return self.source[start:end]

    # names -------------------------------------------------------------------------------
    def qualname(self, node: ast.AST) -> Optional[str]:
        key = id(node)
        if key not in self._qualnames:
            self._qualnames[key] = self.resolver.qualname(node)
        return self._qualnames[key]

    def bindings(self, name: ast.Name, scope=None):
        """The bindings of a name where it stands (or as seen from ``scope``)."""
        return self.resolver.bindings_of(name.id, scope or self.resolver.scope_of(name))

    def single_assignment(self, name: ast.Name) -> Optional[ast.Assign]:
        """The one ``name = value`` statement that binds ``name`` here, if that is its only binding."""
        bindings = self.bindings(name)
        if len(bindings) == 1 and isinstance(bindings[0].node, ast.Assign):
            return bindings[0].node
        return None

    def loads_of(self, local: str, qualname: Optional[str]) -> List[ast.Name]:
        """Every read of the name ``local`` where it resolves to ``qualname``."""
        return [n for n in self.nodes(ast.Name)
                if n.id == local and isinstance(n.ctx, ast.Load) and self.qualname(n) == qualname]

    def target_at_least(self, since: str) -> bool:
        """Whether the target JAX (None: the newest) is ``since`` or later."""
        from jaxmigrate.rules.moves import version

        return self.target is None or self.target >= version(since)

    def calls_to(self, *qualnames: str) -> Iterator[Tuple[ast.Call, str]]:
        """Calls whose callee resolves to one of ``qualnames``."""
        wanted = set(qualnames)
        for call in self.nodes(ast.Call):
            q = self.qualname(call.func)
            if q in wanted:
                yield call, q

    def reference(self, qualname: str, at: Optional[ast.AST] = None, dotted: bool = False) -> Tuple[str, Tuple[ImportRef, ...]]:
        """Source text that names ``qualname`` where ``at`` stands, and the imports it needs.

        Reuses a name visible there that is already bound to it (``P`` for PartitionSpec), else
        goes through a visible ``jax`` module, else imports the object under its own name at
        module level (or ``import jax`` when that name is taken, or when ``dotted`` asks for the
        idiomatic ``jax.jit`` over ``from jax import jit``).
        """
        resolver = self.resolver
        scope = resolver.scope_of(at) if at is not None else resolver.module_scope
        module, _, name = qualname.rpartition(".")
        visible = resolver.visible_names(scope)
        existing = sorted((n for n in visible if resolver.is_import(n, scope)
                           and _same_after_moves(n, resolver.resolve_name(n, scope), qualname, self.target)),
                          key=lambda n: (n != name, len(n), n))
        if existing:
            return existing[0], ()
        if qualname.startswith("jax.") and _reachable_from_jax(qualname):
            jax_names = sorted((n for n in visible if resolver.resolve_name(n, scope) == "jax"), key=lambda n: (n != "jax", n))
            if jax_names:
                return jax_names[0] + qualname[3:], ()
        if not dotted and name not in visible and not resolver.bound_in_any_scope(name):
            return name, (ImportRef(module, name),)
        root = qualname.split(".")[0]
        return qualname, (ImportRef(root),)

    def module_reference(self, module: str, alias: str, at: Optional[ast.AST] = None) -> Tuple[str, Tuple[ImportRef, ...]]:
        """A name for ``module`` where ``at`` stands (``np`` for numpy), and the import it needs:
        a visible import of it, else ``import module as alias``, else ``import module``."""
        resolver = self.resolver
        scope = resolver.scope_of(at) if at is not None else resolver.module_scope
        visible = sorted((n for n in resolver.visible_names(scope)
                          if resolver.is_import(n, scope) and resolver.resolve_name(n, scope) == module),
                         key=lambda n: (n != alias, len(n), n))
        if visible:
            return visible[0], ()
        if alias not in resolver.visible_names(scope) and not resolver.bound_in_any_scope(alias):
            return alias, (ImportRef(module, None, alias),)
        return module, (ImportRef(module),)

    def root_import(self, root: ast.AST) -> Tuple[ImportRef, ...]:
        """The import that bound the root of a rewritten chain, to drop if it is now unused."""
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return ()
        refs = []
        for b in self.bindings(root):
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

    # edits -------------------------------------------------------------------------------
    def replace(self, node: ast.AST, text: str) -> Edit:
        start, end = self.span(node)
        return Edit(start, end, text)


# Submodules that ``import jax`` makes reachable as attributes, so ``jax.sharding.Mesh`` works
# after a plain ``import jax`` (checked against jax 0.4.x and 0.10.x).
_JAX_ATTRIBUTE_MODULES = ("jax.sharding.", "jax.lax.", "jax.tree_util.", "jax.tree.")


def _same_after_moves(name: str, bound: Optional[str], qualname: str, target) -> bool:
    """Whether ``name``, bound to ``bound``, names ``qualname`` once JM201 has moved its import.

    Not when the move renames it: ``from jax.experimental.maps import mesh`` becomes
    ``from jax.sharding import Mesh``, so the name ``mesh`` goes away."""
    if bound == qualname:
        return True
    from jaxmigrate.rules.moves import BY_OLD, applies

    move = BY_OLD.get(bound or "")
    if move is None or move.new != qualname or not applies(move, target):
        return False
    old_last, new_last = move.old.rpartition(".")[2], move.new.rpartition(".")[2]
    return name != old_last or old_last == new_last


def _reachable_from_jax(qualname: str) -> bool:
    return qualname.count(".") == 1 or qualname.startswith(_JAX_ATTRIBUTE_MODULES)
