"""One walk of a module's ``ast``: every node by type, each node's parent, and the scopes with
the names each binds.

Rules ask about the same file in many ways; they all read what this one pass collected. It is
the hot loop of ``check`` (every node of every file with legacy names passes through it once), so
it is written flat: an explicit stack, per node class the fields that can hold nodes (from the
class's ASDL signature), and binding work only for the few statement kinds that bind names.

Scoping is light, as ``names.Resolver`` documents: modules, functions (``def``/``lambda``) and
class bodies are scopes; imports, assignments, ``for``/``with``/``except`` targets, walrus
targets, comprehension targets (in the enclosing scope), parameters and ``def``/``class``
statements bind. A name a function declares ``global`` is bound in the module's scope, where the
function rebinds it. ``from m import *`` of a JAX module binds, at the end of the walk, the public
names the API history lists under ``m`` (``star_names``) that the module binds in no other way:
an explicit import, ``def`` or assignment of the name is taken to win over the star import.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from jaxmigrate.catalog.api_history import star_names


@dataclass
class Binding:
    kind: str  # "import", "alias" (x = some.dotted.name), "none" (x = None), "other"
    qualname: Optional[str] = None
    value: Optional[ast.expr] = None  # for "alias"
    node: Optional[ast.AST] = None  # the statement that binds


class Scope:
    def __init__(self, node: ast.AST, parent: Optional["Scope"], kind: str) -> None:
        self.node = node
        self.parent = parent
        self.kind = kind  # "module", "function", "class"
        self.bindings: Dict[str, List[Binding]] = {}
        self.declared_global: Optional[set] = None  # the names a `global` statement here names

    def bind(self, name: str, binding: Binding) -> None:
        scope = self
        if scope.declared_global is not None and name in scope.declared_global:
            while scope.parent is not None:  # `global jax` then `jax = np`: the module's `jax`
                scope = scope.parent
        scope.bindings.setdefault(name, []).append(binding)


def dotted(node: ast.AST) -> Optional[List[str]]:
    """``["a", "b", "c"]`` for the chain ``a.b.c``, else None."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


@dataclass
class Walk:
    index: Dict[type, List[ast.AST]]  # node class → its nodes, in source order
    parents: Dict[int, ast.AST]  # id(node) → parent node
    module_scope: Scope
    scope_of: Dict[int, Scope]  # id(Name node) → the scope it stands in
    imports: List[ast.AST] = field(default_factory=list)
    scopes: List[Scope] = field(default_factory=list)
    stars: List[ast.ImportFrom] = field(default_factory=list)  # module-level `from jax... import *`


# ASDL types of fields that never hold a node worth visiting: identifiers, constants and the
# shared operator singletons (``Load()``, ``Add()``)
_NOT_NODES = frozenset({"identifier", "string", "constant", "int", "expr_context", "boolop", "operator",
                        "unaryop", "cmpop", "type_ignore"})
_SIGNATURE = re.compile(r"^\w+\((.*)\)$")
_FIELDS: Dict[type, Tuple[Tuple[str, bool], ...]] = {}


def _fields(cls: type) -> Tuple[Tuple[str, bool], ...]:
    """``(field, is_list)`` for the fields of ``cls`` that can hold nodes, last field first (the
    walk pops them in source order)."""
    doc = (cls.__doc__ or "").split("\n", 1)[0]
    match = _SIGNATURE.match(doc)
    if match is None:
        found = tuple((name, True) for name in getattr(cls, "_fields", ()))  # unknown shape: look at all
    else:
        fields = []
        for part in match.group(1).split(","):
            kind, _, name = part.strip().rpartition(" ")
            base = kind.rstrip("*?")
            if base and base not in _NOT_NODES:
                fields.append((name, kind.endswith("*")))
        found = tuple(fields)
    _FIELDS[cls] = found[::-1]
    return _FIELDS[cls]


def walk(module: ast.Module) -> Walk:
    """Index, parents, scopes and bindings of ``module``, in one pass."""
    index: Dict[type, List[ast.AST]] = {}
    parents: Dict[int, ast.AST] = {}
    scope_of: Dict[int, Scope] = {}
    module_scope = Scope(module, None, "module")
    result = Walk(index, parents, module_scope, scope_of, [], [module_scope])
    stack: List[Tuple[ast.AST, Scope]] = [(module, module_scope)]
    pop, push = stack.pop, stack.append
    fields, binders = _FIELDS, _BINDERS
    name_cls, attribute_cls = ast.Name, ast.Attribute
    while stack:
        node, scope = pop()
        cls = node.__class__
        found = index.get(cls)
        if found is None:
            found = index[cls] = []
        found.append(node)
        if cls is name_cls:
            scope_of[id(node)] = scope
            continue
        if cls is not attribute_cls:
            binder = binders.get(cls)
            if binder is not None and binder(result, node, scope, push):
                continue  # it pushed the children itself, with their scopes
        spec = fields.get(cls)
        if spec is None:
            spec = _fields(cls)
        for name, many in spec:
            value = getattr(node, name, None)
            if value is None:
                continue
            if many:
                for item in reversed(value):
                    if item is not None and isinstance(item, ast.AST):
                        parents[id(item)] = node
                        push((item, scope))
            elif isinstance(value, ast.AST):
                parents[id(value)] = node
                push((value, scope))
    if result.stars:
        _bind_stars(result)
    return result


def _bind_stars(walk_: Walk) -> None:
    """Bind what the module's ``from jax... import *`` statements bind (see the module's doc)."""
    bindings = walk_.module_scope.bindings
    explicit = {name for name, found in bindings.items() if any(b.kind != "none" for b in found)}
    for node in walk_.stars:
        module = node.module or ""
        for name in star_names(module):
            if name not in explicit:
                # a module's own `import jax`, re-exported, is JAX itself
                bindings.setdefault(name, []).append(Binding("import", "jax" if name == "jax" else f"{module}.{name}",
                                                             node=node))


# binders: bind what a node binds; return True when they pushed the node's children themselves
def _push_children(walk_: Walk, node: ast.AST, push, scope_for) -> None:
    spec = _FIELDS.get(node.__class__) or _fields(node.__class__)
    for name, many in spec:
        value = getattr(node, name, None)
        if value is None:
            continue
        scope = scope_for(name)
        for item in (reversed(value) if many else (value,)):
            if item is not None and isinstance(item, ast.AST):
                walk_.parents[id(item)] = node
                push((item, scope))


def _function(walk_: Walk, node, scope: Scope, push) -> bool:
    name = getattr(node, "name", None)
    if name is not None:
        scope.bind(name, Binding("other", node=node))
    inner = Scope(node, scope, "function")
    walk_.scopes.append(inner)
    args: ast.arguments = node.args
    for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
        if a is not None:
            inner.bind(a.arg, Binding("other", node=node))
    _push_children(walk_, node, push, lambda field_name: inner if field_name == "body" else scope)
    return True


def _class(walk_: Walk, node: ast.ClassDef, scope: Scope, push) -> bool:
    scope.bind(node.name, Binding("other", node=node))
    inner = Scope(node, scope, "class")
    walk_.scopes.append(inner)
    _push_children(walk_, node, push, lambda field_name: inner if field_name == "body" else scope)
    return True


def _import(walk_: Walk, node: ast.Import, scope: Scope, push) -> bool:
    walk_.imports.append(node)
    for alias in node.names:
        if alias.asname:
            scope.bind(alias.asname, Binding("import", alias.name, node=node))
        else:
            root = alias.name.split(".")[0]
            scope.bind(root, Binding("import", root, node=node))
    return False


def _import_from(walk_: Walk, node: ast.ImportFrom, scope: Scope, push) -> bool:
    walk_.imports.append(node)
    for alias in node.names:
        if alias.name == "*":
            module = node.module or ""
            if not node.level and scope.kind == "module" and (module == "jax" or module.startswith("jax.")):
                walk_.stars.append(node)
            continue
        qual = f"{node.module}.{alias.name}" if node.module and not node.level else None
        scope.bind(alias.asname or alias.name, Binding("import" if qual else "other", qual, node=node))
    return False


def _bind_target(scope: Scope, target: ast.AST, value: Optional[ast.expr], stmt: ast.AST) -> None:
    if isinstance(target, ast.Name):
        if value is not None and dotted(value) is not None:
            scope.bind(target.id, Binding("alias", value=value, node=stmt))
        elif isinstance(value, ast.Constant) and value.value is None:
            scope.bind(target.id, Binding("none", node=stmt))
        else:
            scope.bind(target.id, Binding("other", node=stmt))
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _bind_target(scope, elt, None, stmt)
    elif isinstance(target, ast.Starred):
        _bind_target(scope, target.value, None, stmt)


def _assign(walk_: Walk, node: ast.Assign, scope: Scope, push) -> bool:
    for target in node.targets:
        _bind_target(scope, target, node.value, node)
    return False


def _ann_assign(walk_: Walk, node: ast.AnnAssign, scope: Scope, push) -> bool:
    _bind_target(scope, node.target, node.value, node)
    return False


def _target_only(walk_: Walk, node, scope: Scope, push) -> bool:  # AugAssign, walrus, loops, comprehensions
    _bind_target(scope, node.target, None, node)
    return False


def _with_item(walk_: Walk, node: ast.withitem, scope: Scope, push) -> bool:
    if node.optional_vars is not None:
        _bind_target(scope, node.optional_vars, None, node)
    return False


def _except(walk_: Walk, node: ast.ExceptHandler, scope: Scope, push) -> bool:
    if node.name:
        scope.bind(node.name, Binding("other", node=node))
    return False


def _global(walk_: Walk, node: ast.Global, scope: Scope, push) -> bool:
    if scope.kind != "module":
        scope.declared_global = (scope.declared_global or set()) | set(node.names)
    return False


_BINDERS = {
    ast.FunctionDef: _function, ast.AsyncFunctionDef: _function, ast.Lambda: _function,
    ast.ClassDef: _class,
    ast.Import: _import, ast.ImportFrom: _import_from,
    ast.Assign: _assign, ast.AnnAssign: _ann_assign,
    ast.AugAssign: _target_only, ast.NamedExpr: _target_only, ast.For: _target_only, ast.AsyncFor: _target_only,
    ast.comprehension: _target_only,
    ast.withitem: _with_item, ast.ExceptHandler: _except, ast.Global: _global,
}
