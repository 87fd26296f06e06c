"""Resolve names and attribute chains to qualified names, on ``ast``, with light scoping.

This is the cheap stand-in for LibCST's QualifiedNameProvider: imports anywhere in the module
(module level, function bodies, ``try`` blocks) bind names, and ``from jax... import *`` the
module's public names the API history lists (``scopes.py``); a function's parameters, its own
``def``/``class`` statements and assignments shadow outer bindings. A name bound in one scope by
both a JAX import and something else (a project's own ``def pjit``) resolves to nothing, so rules
leave it alone.
"""

from __future__ import annotations

import ast
import functools
from typing import Callable, Dict, Iterable, Iterator, List, Optional, overload

from jaxmigrate.analysis.scopes import Binding, Scope, Walk, dotted as _dotted, walk

__all__ = ["Binding", "Resolver", "Scope", "canonical"]

# Internal or historical paths of the same object, mapped to the path rules match on.
CANONICAL = {
    "jax._src.pjit.pjit": "jax.experimental.pjit.pjit",
    "jax.experimental.pjit.pjit": "jax.experimental.pjit.pjit",
    "jax._src.pjit.with_sharding_constraint": "jax.experimental.pjit.with_sharding_constraint",
    "jax._src.pjit.FROM_GDA": "jax.experimental.pjit.FROM_GDA",  # defined there in 0.4.x, re-exported
    "jax.config.config": "jax.config",
    "jax._src.config.config": "jax.config",
    "jax.lib.xla_bridge": "jax._src.lib.xla_bridge",
    "jax._src.xla_bridge": "jax._src.lib.xla_bridge",
    "jax.interpreters.xla.xb": "jax._src.lib.xla_bridge",
    "jax.extend.backend.get_backend": "jax._src.lib.xla_bridge.get_backend",
    "jax._src.global_device_array": "jax.experimental.global_device_array",
}


@overload
def canonical(qualname: str) -> str: ...
@overload
def canonical(qualname: Optional[str]) -> Optional[str]: ...


def canonical(qualname: Optional[str]) -> Optional[str]:
    if qualname is None or not qualname.startswith("jax"):  # every CANONICAL path is JAX's
        return qualname
    return _canonical(qualname)


@functools.lru_cache(maxsize=1 << 16)
def _canonical(qualname: str) -> str:
    # longest matching prefix wins: "jax.lib.xla_bridge.get_backend" -> "jax._src.lib..."
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in CANONICAL:
            return ".".join([CANONICAL[head], *parts[i:]])
    return qualname


class Resolver:
    """Qualified names for expressions of one module."""

    def __init__(self, module: ast.Module, walked: Optional[Walk] = None) -> None:
        walked = walked if walked is not None else walk(module)
        self.module_scope = walked.module_scope
        self._scope_of = walked.scope_of
        self.imports = walked.imports
        self.scopes = walked.scopes
        self.stars = walked.stars  # the module's `from jax... import *` statements, whose names the walk bound
        self._resolving: set = set()
        self._resolved: Dict[tuple, Optional[str]] = {}
        self._resolving_index: Dict[int, Dict[str, List[str]]] = {}  # see ``resolving_to``
        self._bound_anywhere: Optional[set] = None
        # only these names can resolve: a name no scope binds by an import or an alias cannot
        self.resolvable = {name for s in self.scopes for name, bs in s.bindings.items()
                            if any(b.kind in ("import", "alias") for b in bs)}

    # -------------------------------------------------------------------------------------
    def lookup(self, name: str, scope: Optional[Scope]) -> Optional[Scope]:
        start = scope
        while scope is not None:
            if scope.kind == "class" and scope is not start:
                scope = scope.parent  # class bodies are not visible to nested functions
                continue
            if name in scope.bindings:
                return scope
            scope = scope.parent
        return None

    def resolve_name(self, name: str, scope: Optional[Scope]) -> Optional[str]:
        if name not in self.resolvable:
            return None
        owner = self.lookup(name, scope)
        if owner is None:
            return None
        key = (id(owner), name)
        if key in self._resolved:
            return self._resolved[key]
        if key in self._resolving:
            return None
        if not self._resolving:  # not inside a cycle check: the answer is final, keep it
            self._resolved[key] = answer = self._resolve_bindings(owner, name, key)
            return answer
        return self._resolve_bindings(owner, name, key)

    def _resolve_bindings(self, owner: Scope, name: str, key: tuple) -> Optional[str]:
        self._resolving.add(key)
        try:
            quals = set()
            for b in owner.bindings[name]:
                if b.kind == "import":
                    quals.add(canonical(b.qualname))
                elif b.kind == "alias":
                    quals.add(self.qualname(b.value, owner))  # type: ignore[arg-type]  # an alias binding has a value
                elif b.kind == "none":
                    continue  # `x = None` fallbacks next to an import do not hide it
                else:
                    return None
            quals.discard(None)
            return quals.pop() if len(quals) == 1 else None
        finally:
            self._resolving.discard(key)

    def qualname(self, node: ast.AST, scope: Optional[Scope] = None) -> Optional[str]:
        """``jax.experimental.pjit.pjit`` for ``pjit_lib.pjit`` and the like, else None."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in self.resolvable:  # the common case, decided cheaply
            return None
        parts = _dotted(node)
        if parts is None:
            return None
        if scope is None:
            scope = self._scope_of.get(id(root), self.module_scope)
        head = self.resolve_name(parts[0], scope)
        if head is None:
            return None
        return canonical(".".join([head, *parts[1:]]))

    def scope_of(self, node: ast.AST) -> Scope:
        """The scope a name, attribute chain or call stands in (other nodes: the module's)."""
        while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return self._scope_of.get(id(node), self.module_scope)

    def module_names_for(self, qualname: str) -> Iterator[str]:
        """Module-level names that are bound to exactly ``qualname``."""
        for name in self.module_scope.bindings:
            if self.resolve_name(name, self.module_scope) == qualname:
                yield name

    def bindings_of(self, name: str, scope: Scope) -> List[Binding]:
        """The bindings of ``name`` as seen from ``scope`` (none when it is unbound)."""
        owner = self.lookup(name, scope)
        return owner.bindings.get(name, []) if owner is not None else []

    def is_import(self, name: str, scope: Scope) -> bool:
        """Whether ``name``, seen from ``scope``, is bound by import statements only."""
        owner = self.lookup(name, scope)
        return owner is not None and all(b.kind == "import" for b in owner.bindings[name])

    def visible_from(self, scope: Optional[Scope], candidates: Callable[[Scope], Iterable[str]]) -> List[str]:
        """The names of ``candidates(s)``, for each scope ``s`` that ``scope`` sees (itself, then
        enclosing function and module scopes), that ``s`` binds where ``scope`` stands: those an
        inner scope of the chain binds as well are its, not ``s``'s. In chain order.

        What ``visible_names`` gives, without going through every visible name: a question
        asked at each of a module's 10,000 functions need not go through the module's 10,000
        names each time when ``candidates`` answers it per scope, once (callers memoize it)."""
        found: List[str] = []
        inner: List[Scope] = []
        start = scope
        while scope is not None:
            if scope.kind != "class" or scope is start:
                for name in candidates(scope):
                    if not any(name in s.bindings for s in inner):
                        found.append(name)
                inner.append(scope)
            scope = scope.parent
        return found

    def resolving_to(self, scope: Scope, qualname: str) -> List[str]:
        """The names ``scope`` itself binds that resolve to ``qualname`` there."""
        index = self._resolving_index.get(id(scope))
        if index is None:
            index = self._resolving_index[id(scope)] = {}
            for name in scope.bindings:
                if name in self.resolvable:
                    resolved = self.resolve_name(name, scope)
                    if resolved is not None:
                        index.setdefault(resolved, []).append(name)
        return index.get(qualname, [])

    def visible_resolving_to(self, scope: Scope, qualname: str) -> List[str]:
        """The names visible from ``scope`` that resolve to ``qualname`` there (in chain order)."""
        return self.visible_from(scope, lambda s: self.resolving_to(s, qualname))

    def is_visible(self, name: str, scope: Scope) -> bool:
        """Whether ``name`` is in ``visible_names(scope)``."""
        return self.lookup(name, scope) is not None

    def visible_names(self, scope: Optional[Scope]) -> set:
        """Names visible from ``scope`` (its own, then enclosing function and module scopes)."""
        names: set = set()
        start = scope
        while scope is not None:
            if scope.kind != "class" or scope is start:
                names.update(scope.bindings)
            scope = scope.parent
        return names

    def bound_in_any_scope(self, name: str) -> bool:
        bound = self._bound_anywhere
        if bound is None:  # once per module: asked once per fix, it went through every scope each time
            bound = self._bound_anywhere = {name for s in self.scopes for name in s.bindings}
        return name in bound

