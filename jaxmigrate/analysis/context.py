"""What a rule sees of one file: the source, its ``ast``, positions and name resolution."""

from __future__ import annotations

import ast
import bisect
import copy
import re
import threading
from functools import cached_property
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type, TypeVar, cast, overload

from jaxmigrate.analysis.names import Resolver, canonical
from jaxmigrate.analysis.scopes import Walk, walk
from jaxmigrate.core.findings import Edit

_NEWLINE = re.compile(r"\r\n|\r|\n")
N = TypeVar("N", bound=ast.AST)
E = TypeVar("E", bound=ast.expr)


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

    @classmethod
    def forget(cls, keep: Optional[str] = None) -> None:
        """Let the recent contexts go (their trees are most of a run's heap); with ``keep``, all
        but the context of that text."""
        recent: List[FileContext] = getattr(cls._local, "recent", []) if keep is not None else []
        cls._local.recent = [ctx for ctx in recent if ctx.source == keep]

    def __init__(self, source: str, path: str = "<string>", target: Optional[Tuple[int, ...]] = None) -> None:
        self.source = source
        self.path = path
        self.target = target  # JAX version the user migrates to; None means the newest
        self.tree = ast.parse(source, filename=path, type_comments=False)
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
        self._ascii = source.isascii()  # then a UTF-8 column is a character column
        self._wide_chars: Dict[int, Tuple[List[int], List[int], List[int]]] = {}  # see ``offset``
        self._memo: Dict[tuple, object] = {}  # see ``memo``; shared with ``of``'s twins, so keyed by target
        # facts of the text a fix round started from, which its fixes may have rewritten (see
        # ``fixed_from`` and patterns/era.py); empty for a text as given
        self.origin: Dict[str, object] = {}
        self._shared: Dict[str, object] = {}  # the walk and the resolver, shared with ``of``'s twins
        # ``loads_of``, ``names_in`` and ``names_bound_by`` answers (they depend on the text alone)
        self._loads: Dict[Tuple[str, Optional[str]], List[ast.Name]] = {}
        self._names_by_scope: Dict[str, Dict[int, List[ast.Name]]] = {}
        self._names_by_owner: Dict[str, Dict[Optional[int], List[ast.Name]]] = {}

    def fixed_from(self, origin: Dict[str, object]) -> "FileContext":
        """This text as the fixed form of a text whose facts were ``origin`` (a twin: the parsed
        state is shared, ``memo`` answers are kept apart)."""
        if not origin:
            return self
        twin = copy.copy(self)
        twin.origin = dict(origin)
        return twin

    def memo(self, key: str, compute):
        """``compute(self)`` once per text, target and origin: for an analysis several rules share."""
        slot = (key, self.target, tuple(sorted(self.origin.items())) if self.origin else ())
        if slot not in self._memo:
            self._memo[slot] = compute(self)
        return self._memo[slot]

    # The walk and the resolver live in ``_shared``, which ``of``'s twins share: a twin made
    # before they were computed must see the same scopes, which the answers kept by scope
    # (the importer's, ``names_in``, ``names_bound_by``, ``memo``) are keyed by.
    @cached_property
    def _walk(self) -> Walk:
        found = self._shared.get("walk")
        if found is None:
            found = self._shared["walk"] = walk(self.tree)
        return cast(Walk, found)

    @cached_property
    def resolver(self) -> Resolver:
        found = self._shared.get("resolver")
        if found is None:
            found = self._shared["resolver"] = Resolver(self.tree, self._walk)
        return cast(Resolver, found)

    @property
    def parents(self) -> Dict[int, ast.AST]:
        return self._walk.parents

    def nodes(self, kind: Type[N]) -> List[N]:
        """Every node of one type, in no particular order (one shared walk per file)."""
        return self._walk.index.get(kind, [])  # type: ignore[return-value]  # the index holds nodes of their own kind

    @cached_property
    def statements(self) -> List[ast.stmt]:
        """Every statement node, in no particular order."""
        return [n for kind, found in self._walk.index.items() if issubclass(kind, ast.stmt)
                for n in cast(List[ast.stmt], found)]

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.parents.get(id(node))

    def runs_at_import(self, node: ast.AST) -> bool:
        """Whether ``node`` is evaluated when the module is imported: at module level, in a class
        body, a decorator, a default value or an annotation of a ``def``, a comprehension there
        (not in a body of a function or lambda, which runs when called)."""
        parents = self.parents
        child, at = node, parents.get(id(node))
        while at is not None:
            if isinstance(child, ast.stmt):  # a statement of a def's body (its other parts are expressions)
                if isinstance(at, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    return False
                if isinstance(at, ast.If) and _is_main_test(at.test) and any(child is s for s in at.body):
                    return False  # runs as a script, not when imported
            elif isinstance(at, ast.Lambda) and child is at.body:
                return False
            child, at = at, parents.get(id(at))
        return True

    # positions ---------------------------------------------------------------------------
    def offset(self, lineno: int, col_utf8: int) -> int:
        """Character offset of an ``ast`` position (1-based line, UTF-8 byte column)."""
        start = self._line_starts[lineno - 1]
        if self._ascii:
            return start + col_utf8
        # a line is read once, not once per position on it (10,000 findings on one long line):
        # where its non-ASCII characters start in UTF-8 and how many bytes they add up to there
        wide = self._wide_chars.get(lineno)
        if wide is None:
            wide = self._wide_chars[lineno] = _wide_chars(self.line_text(lineno))
        if not wide[0]:
            return start + col_utf8
        starts, ends, extra = wide
        i = bisect.bisect_left(starts, col_utf8)  # the characters that start before the column
        if i and ends[i - 1] > col_utf8 or i == len(starts) and col_utf8 > len(self.line_text(lineno)) + extra[-1]:
            # inside a character, or past the line: as decoding the bytes before the column says
            line = self.line_text(lineno)
            return start + len(line.encode("utf-8")[:col_utf8].decode("utf-8", "replace"))
        return start + col_utf8 - (extra[i - 1] if i else 0)

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]  # nodes with positions
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]  # nodes with positions
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
        """The text of a line with its line ending; "" for a line number past either end."""
        if not 1 <= lineno <= len(self._line_starts):
            return ""
        start = self._line_starts[lineno - 1]
        end = self._line_starts[lineno] if lineno < len(self._line_starts) else len(self.source)
        return self.source[start:end]

    # names -------------------------------------------------------------------------------
    @cached_property
    def _qualified(self) -> Dict[int, Tuple[ast.expr, str]]:
        """id(node) → (node, qualified name) for every Name and attribute chain of the module that
        resolves: found from the names that can resolve, climbing their attribute chains, so the
        many names and attributes that cannot resolve (``self.x``, locals) cost nothing."""
        resolver, parents, scope_of = self.resolver, self.parents, self._walk.scope_of
        resolvable = resolver.resolvable
        out: Dict[int, Tuple[ast.expr, str]] = {}
        heads: Dict[Tuple[int, str], Optional[str]] = {}  # (id(scope), name) → what it resolves to
        for name in self.nodes(ast.Name):
            if name.id not in resolvable:
                continue
            scope = scope_of[id(name)]
            key = (id(scope), name.id)
            head = heads[key] if key in heads else heads.setdefault(key, resolver.resolve_name(name.id, scope))
            if head is None:
                continue
            out[id(name)] = (name, canonical(head))
            node: ast.expr = name
            parent = parents.get(id(node))
            while parent.__class__ is ast.Attribute:
                head = f"{head}.{parent.attr}"
                out[id(parent)] = (parent, canonical(head))
                parent = parents.get(id(parent))
        return out

    @overload
    def qualified(self) -> List[Tuple[ast.expr, str]]: ...
    @overload
    def qualified(self, kind: Type[E]) -> List[Tuple[E, str]]: ...

    def qualified(self, kind: Optional[type] = None) -> List[Tuple[Any, str]]:
        """(node, qualified name) for each Name and attribute chain that resolves (of ``kind`` only,
        if given): what rules scan instead of every name and attribute of the module."""
        found = list(self._qualified.values())
        return found if kind is None else [(n, q) for n, q in found if n.__class__ is kind]

    @cached_property
    def _by_qualname(self) -> Dict[str, List[ast.expr]]:
        out: Dict[str, List[ast.expr]] = {}
        for node, q in self._qualified.values():
            out.setdefault(q, []).append(node)
        return out

    def resolved_names(self) -> Dict[str, List[ast.expr]]:
        """Every qualified name the module's names and chains resolve to, with their nodes (a
        rule that judges names one by one looks each name up once, not each use)."""
        return self._by_qualname

    def references(self, qualname: str) -> List[ast.expr]:
        """The Names and attribute chains that resolve to exactly ``qualname``, in source order."""
        return self._by_qualname.get(qualname, [])

    def qualname(self, node: ast.AST) -> Optional[str]:
        found = self._qualified.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or id(root) in self._walk.scope_of:
            return None  # a name or chain of this module that does not resolve
        return self.resolver.qualname(node)  # a node built by a rule, not in this module's tree

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
        """Every read of the name ``local`` where it resolves to ``qualname`` (worked out once:
        rules ask it for each import, and a module may import the same name in each function)."""
        key = (local, qualname)
        found = self._loads.get(key)
        if found is None:
            found = self._loads[key] = [n for n in self.names(local)
                                        if isinstance(n.ctx, ast.Load) and self.qualname(n) == qualname]
        return found

    def names_in(self, identifier: str, scope) -> List[ast.Name]:
        """The Name nodes spelled ``identifier`` that stand in ``scope`` (as ``resolver.scope_of``
        says), in the order of ``names``. Grouped once per identifier: a rule that asks at each
        binding of a name common to many functions (``step``, ``mesh``) would otherwise go through
        every function's uses each time."""
        index = self._names_by_scope.get(identifier)
        if index is None:
            index = self._names_by_scope[identifier] = {}
            scope_of, module_scope = self._walk.scope_of, self.resolver.module_scope
            for n in self.names(identifier):
                index.setdefault(id(scope_of.get(id(n), module_scope)), []).append(n)
        return index.get(id(scope), [])

    def names_bound_by(self, identifier: str, owner) -> List[ast.Name]:
        """The Name nodes spelled ``identifier`` whose binding, where they stand, is ``owner``'s
        (the scope ``resolver.lookup`` finds; None: unbound names), in the order of ``names``.
        What a rule that follows one binding's uses needs, grouped once per identifier."""
        index = self._names_by_owner.get(identifier)
        if index is None:
            index = self._names_by_owner[identifier] = {}
            resolver = self.resolver
            scope_of, module_scope = self._walk.scope_of, resolver.module_scope
            for n in self.names(identifier):
                found = resolver.lookup(identifier, scope_of.get(id(n), module_scope))
                index.setdefault(None if found is None else id(found), []).append(n)
        return index.get(None if owner is None else id(owner), [])

    @cached_property
    def _names_by_id(self) -> Dict[str, List[ast.Name]]:
        return _grouped(self.nodes(ast.Name), "id")

    def names(self, identifier: str) -> List[ast.Name]:
        """Every Name node spelled ``identifier`` (any context), in source order."""
        return self._names_by_id.get(identifier, [])

    @cached_property
    def _attributes_by_attr(self) -> Dict[str, List[ast.Attribute]]:
        return _grouped(self.nodes(ast.Attribute), "attr")

    def attributes(self, *attrs: str) -> List[ast.Attribute]:
        """Every ``x.attr`` node for these attribute names (any context)."""
        if len(attrs) == 1:
            return self._attributes_by_attr.get(attrs[0], [])
        return [node for attr in dict.fromkeys(attrs) for node in self._attributes_by_attr.get(attr, [])]

    def applications(self, qualname: str) -> List[Tuple[ast.Call, ast.expr, bool]]:
        """``(call, callee, is_partial)`` for each call of ``qualname`` and each
        ``functools.partial(qualname, ...)``, in source order; ``callee`` is the node naming it."""
        found = [(call, call.func, False) for call, _ in self.calls_to(qualname)]
        for call, _ in self.calls_to("functools.partial"):
            if call.args and self.qualname(call.args[0]) == qualname:
                found.append((call, call.args[0], True))
        found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        return found

    def target_at_least(self, since: str) -> bool:
        """Whether the target JAX (None: the newest) is ``since`` or later."""
        from jaxmigrate.catalog.moves import version

        return self.target is None or self.target >= version(since)

    def calls_to(self, *qualnames: str) -> Iterator[Tuple[ast.Call, str]]:
        """Calls whose callee resolves to one of ``qualnames``."""
        found = []
        for qualname in dict.fromkeys(qualnames):
            for node in self.references(qualname):
                parent = self.parents.get(id(node))
                if parent.__class__ is ast.Call and parent.func is node:
                    found.append((parent, qualname))
        if len(qualnames) > 1:
            found.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
        return iter(found)

    # edits -------------------------------------------------------------------------------
    def replace(self, node: ast.AST, text: str) -> Edit:
        start, end = self.span(node)
        return Edit(start, end, text)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _wide_chars(line: str) -> Tuple[List[int], List[int], List[int]]:
    """For each non-ASCII character of ``line``: its first UTF-8 byte's offset, its end's, and
    the bytes beyond one a character that it and those before it take."""
    starts: List[int] = []
    ends: List[int] = []
    extra: List[int] = []
    added = 0
    for match in _NON_ASCII.finditer(line):
        size = len(match.group().encode("utf-8"))
        at = match.start() + added
        starts.append(at)
        ends.append(at + size)
        added += size - 1
        extra.append(added)
    return starts, ends, extra


def _grouped(nodes: List[N], field: str) -> Dict[str, List[N]]:
    out: Dict[str, List[N]] = {}
    for node in nodes:
        out.setdefault(getattr(node, field), []).append(node)
    return out


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in sides)
