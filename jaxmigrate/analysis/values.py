"""Value facts every rule can ask of a file: whether an expression holds an instance of a class
where it stands (its single binding, a constructor call, an annotation, ``Optional``/``| None``,
an isinstance narrowing or guard before it, and no rebinding in between); whether a name is bound
again between two points, and why an assignment may not be its name's one value at a use; where
a class reference stands in a type test (an annotation or type argument, an isinstance/issubclass
class, a ``type(x) is C`` comparison).
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.statements import EXITS

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: the key in ``FileContext.origin`` (with the class's qualified name after it) of the functions of
#: other modules that return the class's instances, as this module names them (patterns/gda_makers.py)
IMPORTED_MAKERS = "imported makers of "
# where a class reference in a subscript is a type argument: typing's generics and the builtin ones
TYPE_ARGUMENT_HOSTS = ("typing.", "typing_extensions.", "collections.abc.")
BUILTIN_GENERICS = ("dict", "list", "tuple", "set", "frozenset", "type")


def position(node: Optional[ast.AST]) -> Tuple[int, int]:
    """(line, column) where a node or binding stands (the target of a comprehension, the name of a with item)."""
    if isinstance(node, ast.comprehension):
        node = node.target
    elif isinstance(node, ast.withitem):
        node = node.optional_vars or node.context_expr
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def rebound_between(ctx: FileContext, name: ast.Name, start: Tuple[int, int], end: Tuple[int, int]) -> bool:
    """Whether the scope that binds ``name`` binds it again strictly between ``start`` and ``end``."""
    resolver = ctx.resolver
    owner = resolver.lookup(name.id, resolver.scope_of(name))
    if owner is None:
        return False
    return any(start < position(b.node) < end for b in owner.bindings.get(name.id, []) if b.node is not None)


def argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.expr]:
    """The argument a call passes to the parameter at ``index`` named ``keyword``, where it
    shows it (no ``*`` up to that position)."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def passed_for(fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, param: str) -> Optional[ast.expr]:
    """What ``call`` passes to the positional parameter ``param`` of ``fn`` (the function it
    calls), where it shows it; None for a parameter that is not positional."""
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return argument(call, positional.index(param), param) if param in positional else None


def binding_scope(ctx: FileContext, name: ast.Name):
    """The scope whose binding ``name`` reads or writes where it stands."""
    return ctx.resolver.lookup(name.id, ctx.resolver.scope_of(name))


def declared_names(ctx: FileContext) -> Dict[str, str]:
    """Each name a ``global`` or ``nonlocal`` statement of the module declares → the first such
    statement's keyword (``global`` statements first)."""
    found: Dict[str, str] = {}
    for decl in ctx.nodes(ast.Global) + ctx.nodes(ast.Nonlocal):
        for name in decl.names:
            found.setdefault(name, type(decl).__name__.lower())
    return found

def why_rebound(ctx: FileContext, stmt: ast.Assign) -> Optional[str]:
    """Why the name an assignment ``name = value`` binds may hold something else at a use, or None
    when ``stmt`` is its one binding: bound more than once in its scope, a class attribute (read
    through the class or its instances), declared ``global``/``nonlocal``, or deleted with ``del``."""
    target: ast.Name = stmt.targets[0]  # type: ignore[assignment]  # the caller's statement assigns a Name
    declared = ctx.memo("global and nonlocal names", declared_names)
    if target.id in declared:  # first: a function's `global t; t = ...` is also a binding of the module's `t`
        return f"`{target.id}` is declared `{declared[target.id]}` in this module"
    bindings = ctx.bindings(target)
    if len(bindings) != 1 or bindings[0].node is not stmt:
        return f"`{target.id}` is bound more than once in its scope"
    if ctx.resolver.scope_of(target).kind == "class":
        return f"`{target.id}` is a class attribute, read through the class or its instances"
    for name in ctx.names_bound_by(target.id, binding_scope(ctx, target)):
        if isinstance(name.ctx, ast.Del) and any(b.node is stmt for b in ctx.bindings(name)):
            return f"`{target.id}` is deleted with `del`"
    return None


#: bindings a read after them sees for sure where they run on every path to it (a ``for`` target,
#: a walrus in a condition or a comprehension's target may not have been bound, or not again)
CERTAIN_BINDERS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom, ast.FunctionDef,
                   ast.AsyncFunctionDef, ast.ClassDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def reaching_binding(ctx: FileContext, identifier: str, at: ast.AST, _callers: frozenset = frozenset()) -> Optional[ast.AST]:
    """The statement whose binding a read of ``identifier`` where ``at`` stands (a Name, or an
    expression the read would be part of) sees, where the code alone says which, else None.

    A name the scope binds once: that binding (read from any scope, as ``single_assignment``
    takes it). A name bound more than once (``sharding = sharding.reshape(4, 2)``), read in the
    code of the scope that binds it (not from a nested function or class, which may run at any
    time): the latest binding before the read, where it runs on every path to the read (it stands
    in the read's block, or in a block around it, before it: not in an ``if`` or a loop the read
    is not in) and binds for sure (an assignment, an import, a ``def``; not a ``for`` target or a
    walrus), with no ``del`` of the name in between, and, for each loop around the read that does
    not hold that binding, no binding or ``del`` of the name in that loop (its next turn would
    read them). A parameter is bound where its function starts. Read in a function the scope
    defines (a ``def``, undecorated or decorated by JAX, as ``@jax.jit``, which does not call
    it), that the scope's code only calls, where each read of its name is known to see it or
    another binding: the binding every call sees, if it is the same one. A name declared
    ``global`` or ``nonlocal`` anywhere, or a class attribute, bound more than once: None.
    Answers are kept per file: a rule asks for each read, and again for each use it inlines."""
    answers = ctx.memo("reaching bindings", _new_table)
    key = (identifier, id(at), _callers)
    if key not in answers:
        answers[key] = _reaching(ctx, identifier, at, _callers)
    return answers[key]


def _new_table(ctx: FileContext) -> dict:
    return {}


def _reaching(ctx: FileContext, identifier: str, at: ast.AST, callers: frozenset) -> Optional[ast.AST]:
    resolver = ctx.resolver
    anchor = at if isinstance(at, ast.Name) else next((n for n in ast.walk(at) if isinstance(n, ast.Name)), at)
    scope = resolver.scope_of(anchor)
    owner = resolver.lookup(identifier, scope)
    if owner is None:
        return None
    bindings = owner.bindings.get(identifier, [])
    if len(bindings) == 1:
        return bindings[0].node
    if owner.kind == "class" or identifier in ctx.memo("global and nonlocal names", declared_names):
        return None
    if owner is not scope:
        return _seen_by_every_call(ctx, identifier, owner, scope, callers)
    spans, deletes = _binding_facts(ctx, identifier, owner)
    if spans is None:
        return None
    start = ctx.span(at)[0]
    ancestors = []
    node: Optional[ast.AST] = at
    while node is not None and node is not owner.node:
        ancestors.append(node)
        node = ctx.parent(node)
    ancestor_ids = {id(a) for a in ancestors}
    latest: Optional[ast.AST] = None
    latest_end = -1
    for bound, _, end in spans:
        if id(bound) in ancestor_ids:
            if isinstance(bound, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue  # the read is in its value: it binds after
            return None  # a loop's or a with's target, a walrus around the read
        if end > start:
            continue  # after the read (a loop around the read is checked below)
        if end > latest_end:
            latest, latest_end = bound, end
    if latest is None:
        return None
    if latest is not owner.node and not (isinstance(latest, CERTAIN_BINDERS) and _runs_before(ctx, latest, ancestors)):
        return None
    if any(latest_end <= d < start for d in deletes):
        return None
    for loop in ancestors:
        if isinstance(loop, LOOPS) and loop is not latest:
            low, high = ctx.span(loop)
            if latest_end <= low and (any(low <= d < high for d in deletes) or any(
                    low <= begin < high for bound, begin, _ in spans if bound is not owner.node)):
                return None
    return latest


def _binding_facts(ctx: FileContext, identifier: str, owner) -> Tuple[Optional[List[Tuple[ast.AST, int, int]]], List[int]]:
    """Each binding of ``identifier`` in ``owner`` with where it starts and ends (a parameter at
    0), None if one has no statement; and where its ``del`` statements stand. Once per name."""
    facts = ctx.memo("binding spans", _new_table)
    key = (id(owner), identifier)
    if key not in facts:
        spans: Optional[List[Tuple[ast.AST, int, int]]] = []
        for binding in owner.bindings.get(identifier, []):
            bound = binding.node
            if bound is None:
                spans = None
                break
            where = (0, 0) if bound is owner.node else _binding_span(ctx, bound)
            spans.append((bound, *where))  # type: ignore[union-attr]  # None only after the loop
        deletes = [ctx.span(n)[0] for n in ctx.names_bound_by(identifier, owner) if isinstance(n.ctx, ast.Del)]
        facts[key] = (spans, deletes)
    return facts[key]


def _seen_by_every_call(ctx: FileContext, identifier: str, owner, scope, callers: frozenset) -> Optional[ast.AST]:
    """For a read in the function of ``scope``: the binding of ``owner``'s name every call of
    the function sees (see ``reaching_binding``), else None."""
    fn = scope.node
    if (scope.parent is not owner or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) in callers
            or not all(_does_not_call(ctx, d) for d in fn.decorator_list)):
        return None
    callers = callers | {id(fn)}
    found: Optional[ast.AST] = None
    for name in ctx.names_bound_by(fn.name, owner):
        if not isinstance(name.ctx, ast.Load):
            continue  # a binding: where it reaches, the reads below see another function
        function = reaching_binding(ctx, fn.name, name, callers)
        if function is not fn and function is not None:
            continue  # another function of that name (a notebook's cells each define their own `f`)
        call = ctx.parent(name)
        if function is None or not (isinstance(call, ast.Call) and call.func is name):
            return None  # passed on or kept, or maybe this function: it may run anywhere
        seen = reaching_binding(ctx, identifier, call, callers)
        if seen is None or found is not None and seen is not found:
            return None
        found = seen
    return found


def _does_not_call(ctx: FileContext, decorator: ast.expr) -> bool:
    """A decorator of JAX's (``jax.jit``, ``partial(jax.jit, ...)``): it wraps the function, not calls it."""
    if isinstance(decorator, ast.Call):
        if ctx.qualname(decorator.func) == "functools.partial" and decorator.args:
            decorator = decorator.args[0]
        else:
            decorator = decorator.func
    return (ctx.qualname(decorator) or "").startswith("jax.")


def _binding_span(ctx: FileContext, node: ast.AST) -> Tuple[int, int]:
    """Where a binding stands: a comprehension's or a with item's, where its target does."""
    if isinstance(node, ast.comprehension):
        node = node.target
    elif isinstance(node, ast.withitem):
        node = node.optional_vars or node.context_expr
    return ctx.span(node)


def _runs_before(ctx: FileContext, stmt: ast.AST, ancestors: List[ast.AST]) -> bool:
    """Whether ``stmt`` stands in the block of one of ``ancestors`` (the read's, innermost first), before it."""
    where = _block_place(ctx, stmt)
    if where is None:
        return False
    for node in ancestors:
        if isinstance(node, ast.stmt) and ctx.parent(node) is ctx.parent(stmt):
            place = _block_place(ctx, node)
            return place is not None and place[0] == where[0] and where[1] < place[1]
    return False


def _block_place(ctx: FileContext, stmt: ast.AST) -> Optional[Tuple[str, int]]:
    """The block (``body``, ``orelse``, ``finalbody``) of its parent a statement stands in, and its index there."""
    places = ctx.memo("statement places", _new_table)
    if id(stmt) not in places:
        parent = ctx.parent(stmt)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list):
                places.update((id(s), (name, i)) for i, s in enumerate(block))
        places.setdefault(id(stmt), None)
    return places[id(stmt)]


def why_not_followed(ctx: FileContext, stmt: ast.Assign) -> Optional[str]:
    """Why a rule that follows an assignment ``name = value`` to the reads that see it may miss
    one, or None: as ``why_rebound`` says, except that a name bound more than once in its scope
    is followed where ``reaching_binding`` knows the binding each of its reads sees."""
    why = why_rebound(ctx, stmt)
    target: ast.Name = stmt.targets[0]  # type: ignore[assignment]  # the caller's statement assigns a Name
    if why is None or not why.endswith("bound more than once in its scope"):
        return why
    if ctx.resolver.scope_of(target).kind == "class":
        return f"`{target.id}` is a class attribute, read through the class or its instances"
    owner = binding_scope(ctx, target)
    answers = ctx.memo("names not followed", _new_table)  # once per name: each of its assignments asks
    key = (id(owner), target.id)
    if key not in answers:
        names = ctx.names_bound_by(target.id, owner)
        if any(isinstance(n.ctx, ast.Del) for n in names):
            answers[key] = f"`{target.id}` is deleted with `del`"
        else:
            unknown = next((n for n in names if isinstance(n.ctx, ast.Load) and reaching_binding(ctx, n.id, n) is None), None)
            answers[key] = None if unknown is None else f"{why}, and which of its values line {unknown.lineno} reads is not known"
    return answers[key]


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes defined in it."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


class InstanceFacts:
    """What a file says of one class's instances (``cls``, a qualified name): values that
    ``makers`` (qualified callables) return are instances; ``names_class`` says whether a string
    annotation names the class; ``outputs``, where given, says of a call whose callee is not a
    qualified name (a function the module made) whether what it returns is an instance, or a
    tuple of them where its result is unpacked (``a, b = f(x)``)."""

    def __init__(self, ctx: FileContext, cls: str, makers: Tuple[str, ...], names_class: Callable[[str], bool],
                 outputs: Optional[Callable[[ast.Call], bool]] = None) -> None:
        self.ctx = ctx
        self.cls = cls
        self.makers = makers
        self.names_class = names_class
        self.outputs = outputs

    def receiver(self, receiver: ast.expr) -> Tuple[object, Optional[ast.AST]]:
        """Whether ``receiver`` is known to be an instance of the class (True, or "string" when only a
        string annotation says so), and the class reference that says so (an annotation or an
        isinstance check), else None."""
        if isinstance(receiver, ast.Call):
            return self._is_made(receiver), None
        if isinstance(receiver, ast.Attribute):
            ref = self._field_annotation(receiver)
            return ref is not None, ref
        if not isinstance(receiver, ast.Name):
            return False, None
        resolver = self.ctx.resolver
        owner = resolver.lookup(receiver.id, resolver.scope_of(receiver))
        bindings = owner.bindings.get(receiver.id, []) if owner is not None else []
        if len(bindings) == 1:
            known, evidence = self._binding(receiver.id, bindings[0].node)
            if known:
                return known, evidence
        narrowing = self._narrowing(receiver)
        return (True, narrowing) if narrowing is not None else (False, None)

    def _binding(self, name: str, stmt: Optional[ast.AST]) -> Tuple[object, Optional[ast.AST]]:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return (True, None) if self._is_made(stmt.value) else self._returned(stmt.value)
        if isinstance(stmt, ast.Assign) and self.outputs is not None and isinstance(stmt.value, ast.Call):
            unpacked = any(isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name
                                                                         for e in t.elts) for t in stmt.targets)
            return (unpacked and self.outputs(stmt.value)), None
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None and self._is_made(stmt.value):
                return True, None
            ref = self._annotation_ref(stmt.annotation)
            return ref is not None, ref
        if isinstance(stmt, FUNCTIONS):
            args = stmt.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if a.arg == name and a.annotation is not None:
                    ann = a.annotation
                    if isinstance(ann, ast.Constant) and isinstance(ann.value, str) and self.names_class(ann.value):
                        return "string", None
                    ref = self._annotation_ref(ann)
                    return ref is not None, ref
        return False, None

    def _returned(self, value: ast.expr) -> Tuple[object, Optional[ast.AST]]:
        """A call of a function of this module that returns an instance: its return annotation
        says so (the evidence), or each of its ``return`` statements returns a value a maker makes."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return False, None
        bindings = self.ctx.bindings(value.func)
        function = bindings[0].node if len(bindings) == 1 else None
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False, None
        return self.returns_instance(function)

    def returns_instance(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Tuple[bool, Optional[ast.AST]]:
        """Whether ``function`` returns an instance: its return annotation says so (the evidence),
        or each of its ``return`` statements returns a value a maker makes."""
        if function.returns is not None:
            ref = self._annotation_ref(function.returns)
            return ref is not None, ref
        returns = [n for n in own_nodes(function) if isinstance(n, ast.Return)]
        return bool(returns) and all(r.value is not None and self._is_made(r.value) for r in returns), None

    def _field_annotation(self, receiver: ast.Attribute) -> Optional[ast.expr]:
        """``self.params`` in a method of a class whose body declares ``params: TheClass``."""
        if not isinstance(receiver.value, ast.Name):
            return None
        function: Optional[ast.AST] = receiver
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = self.ctx.parent(function)
        cls = self.ctx.parent(function) if function is not None else None
        if not isinstance(cls, ast.ClassDef) or not function.args.args:  # type: ignore[union-attr]  # function is not None when cls is a class
            return None
        if function.args.args[0].arg != receiver.value.id:  # type: ignore[union-attr]  # function is set (above); receiver.value is a Name
            return None
        for stmt in cls.body:
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and target.id == receiver.attr:
                return self._annotation_ref(stmt.annotation)  # type: ignore[attr-defined]  # an AnnAssign: see target
        return None

    def _is_made(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call):
            return False
        callee = self.ctx.qualname(value.func)
        if callee is not None:
            return callee in self.makers or callee in self.imported_makers()
        return self.outputs is not None and self.outputs(value)

    def imported_makers(self) -> Tuple[str, ...]:
        """Functions of other modules of the project that return instances (their qualified names as
        this module imports them), which the project's scan hands over (``ctx.origin``)."""
        return cast(Tuple[str, ...], self.ctx.origin.get(IMPORTED_MAKERS + self.cls) or ())

    def _annotation_ref(self, ann: ast.expr) -> Optional[ast.expr]:
        """The class reference in ``TheClass``, ``Optional[TheClass]`` or ``TheClass | None``."""
        ctx = self.ctx
        if ctx.qualname(ann) == self.cls:
            return ann
        if isinstance(ann, ast.Subscript):
            q = ctx.qualname(ann.value)
            if q in ("typing.Optional", "typing_extensions.Optional"):
                return self._annotation_ref(ann.slice)
            if q == "typing.Union" and isinstance(ann.slice, ast.Tuple):
                return self._without_none(ann.slice.elts)
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self._without_none([ann.left, ann.right])
        return None

    def _without_none(self, elts: List[ast.expr]) -> Optional[ast.expr]:
        rest = [e for e in elts if not (isinstance(e, ast.Constant) and e.value is None)]
        return self._annotation_ref(rest[0]) if len(rest) == 1 and len(elts) == 2 else None

    def _narrowing(self, name: ast.Name) -> Optional[ast.expr]:
        """The class reference of an isinstance check that makes ``name`` an instance where it stands."""
        ctx = self.ctx
        use = position(name)
        node: ast.AST = name
        while True:
            parent = ctx.parent(node)
            if parent is None:
                return None
            candidates: List[Tuple[ast.AST, Optional[ast.expr]]] = []
            if isinstance(parent, (ast.If, ast.While)) and node in parent.body:
                candidates.append((parent, self._isinstance_ref(parent.test, name.id)))
            elif isinstance(parent, ast.IfExp) and node is parent.body:
                candidates.append((parent, self._isinstance_ref(parent.test, name.id)))
            elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And) and node in parent.values:
                for value in parent.values[: parent.values.index(node)]:
                    candidates.append((value, self._isinstance_ref(value, name.id)))
            if isinstance(node, ast.stmt):
                block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                              if isinstance(b, list) and node in b), [])
                for stmt in reversed(block[: block.index(node)] if block else []):
                    candidates.append((stmt, self._guard_ref(stmt, name.id)))
            for anchor, ref in candidates:
                if ref is not None and not self._rebound(name, position(anchor), use):
                    return ref
            if isinstance(parent, (*FUNCTIONS, ast.ClassDef)):
                return None  # a check outside this function says nothing about the name in it
            node = parent

    def _guard_ref(self, stmt: ast.stmt, name: str) -> Optional[ast.expr]:
        """``assert isinstance(x, C)``, ``self.assertIsInstance(x, C)``, or ``if not isinstance(x, C):
        raise ...``: x is a C in the statements after it."""
        if isinstance(stmt, ast.Assert):
            return self._isinstance_ref(stmt.test, name)
        if isinstance(stmt, ast.Expr):
            return self._isinstance_ref(stmt.value, name)
        if (isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.test, ast.UnaryOp)
                and isinstance(stmt.test.op, ast.Not) and isinstance(stmt.body[-1], EXITS)):
            return self._isinstance_ref(stmt.test.operand, name, allow_and=False)
        return None

    def _isinstance_ref(self, test: ast.expr, name: str, allow_and: bool = True) -> Optional[ast.expr]:
        if allow_and and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return next((r for r in (self._isinstance_ref(v, name) for v in test.values) if r is not None), None)
        if not (isinstance(test, ast.Call) and len(test.args) == 2 and not test.keywords):
            return None
        func = test.func
        is_check = (isinstance(func, ast.Name) and func.id == "isinstance" and self.ctx.qualname(func) is None) or (
            isinstance(func, ast.Attribute) and func.attr == "assertIsInstance")
        subject, cls = test.args
        if is_check and isinstance(subject, ast.Name) and subject.id == name and self.ctx.qualname(cls) == self.cls:
            return cls
        return None

    def _rebound(self, name: ast.Name, start: Tuple[int, int], end: Tuple[int, int]) -> bool:
        return rebound_between(self.ctx, name, start, end)


# type tests ----------------------------------------------------------------------------
def type_position(ctx: FileContext, node: ast.expr) -> Optional[str]:
    """"annotation" or "check" when ``node`` (a class reference) stands where only its type
    matters: an annotation or a type argument, or the class of an isinstance/issubclass check."""
    child: ast.AST = node
    parent = ctx.parent(node)
    type_argument = False
    while isinstance(parent, (ast.Subscript, ast.Tuple, ast.List, ast.BinOp)):
        if isinstance(parent, ast.BinOp) and not isinstance(parent.op, ast.BitOr):
            break
        if isinstance(parent, ast.Subscript):
            if child is parent.value:
                break
            host = ctx.qualname(parent.value) or ""
            bare = isinstance(parent.value, ast.Name) and parent.value.id in BUILTIN_GENERICS and not host
            if not (host.startswith(TYPE_ARGUMENT_HOSTS) or bare):
                break
            type_argument = True
        child, parent = parent, ctx.parent(parent)
    if isinstance(parent, ast.arg) and parent.annotation is child:
        return "annotation"
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child:
        return "annotation"
    if isinstance(parent, ast.AnnAssign) and parent.annotation is child:
        return "annotation"
    if isinstance(parent, ast.Call) and len(parent.args) >= 2 and parent.args[1] is child and (
        child is node or (isinstance(child, ast.Tuple) and node in child.elts)
    ):
        func = parent.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and ctx.qualname(func) is None:
            return "check"
        if isinstance(func, ast.Attribute) and func.attr in ("assertIsInstance", "assertNotIsInstance"):
            return "check"
    return "annotation" if type_argument else None


def rejects_when_true(ctx: FileContext, node: ast.expr) -> bool:
    """Whether the isinstance check whose class is ``node`` raises when true:
    ``if isinstance(x, C): raise ...`` (or the class in a tuple), also as one operand of an
    ``and`` (``if isinstance(x, C) and jax.config.jax_array: raise``: a flag folded away in the
    same run leaves the check alone)."""
    call = ctx.parent(node)
    if isinstance(call, ast.Tuple):
        call = ctx.parent(call)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"):
        return False
    test: Optional[ast.AST] = call
    holder = ctx.parent(call)
    if isinstance(holder, ast.BoolOp) and isinstance(holder.op, ast.And):
        test, holder = holder, ctx.parent(holder)
    return isinstance(holder, ast.If) and holder.test is test and isinstance(holder.body[-1], ast.Raise)


def type_comparison(ctx: FileContext, node: ast.expr) -> Optional[str]:
    """For ``type(x) is C`` (or ``==``, ``in (...)``), the text of ``x``."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Tuple):
        parent = ctx.parent(parent)
    if not isinstance(parent, ast.Compare):
        return None
    for side in [parent.left, *parent.comparators]:
        if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id == "type" and side.args:
            return ctx.text(side.args[0])
    return None


def defines_attribute(ctx: FileContext, attr: str) -> bool:
    """Whether the module defines ``attr`` itself (a method, or an attribute it assigns)."""
    for node in ctx.nodes(ast.ClassDef):
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == attr:
                return True
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                    return True
    return any(isinstance(n.ctx, ast.Store) for n in ctx.attributes(attr))
