"""What a rule sees of one file: the source, its ``ast``, positions and name resolution."""

from __future__ import annotations

import ast
import bisect
import re
from functools import cached_property
from typing import Dict, Iterator, List, Optional, Tuple, Type, TypeVar

from jaxmigrate.rules.base import Edit, ImportRef
from jaxmigrate.rules.moves import BY_OLD
from jaxmigrate.rules.names import Resolver

_NEWLINE = re.compile(r"\r\n|\r|\n")
N = TypeVar("N", bound=ast.AST)


class FileContext:
    def __init__(self, source: str, path: str = "<string>", target: Optional[Tuple[int, ...]] = None) -> None:
        self.source = source
        self.path = path
        self.target = target  # JAX version the user migrates to; None means the newest
        self.tree = ast.parse(source, filename=path, type_comments=False)
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(self.tree)

    @cached_property
    def _nodes_by_type(self) -> Dict[type, List[ast.AST]]:
        index: Dict[type, List[ast.AST]] = {}
        for node in ast.walk(self.tree):
            index.setdefault(type(node), []).append(node)
        return index

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of one type, in no particular order (one shared walk per file)."""
        return self._nodes_by_type.get(kind, [])  # type: ignore[return-value]

    @cached_property
    def parents(self) -> Dict[int, ast.AST]:
        out: Dict[int, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                out[id(child)] = node
        return out

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
        return self.resolver.qualname(node)

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
