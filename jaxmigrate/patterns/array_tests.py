"""Type tests of the removed array classes, as plain data for JM502 and JM801: whether a test told its
class from other arrays, and where the values it turned away went.

Every array is a `jax.Array` now, tracers included. A test of a removed class (DeviceArray,
ShardedDeviceArray, GlobalDeviceArray, KeyArray: ``catalog/array_classes.py``) rewritten to
`jax.Array` takes every array. Where it stood in a chain of branches beside another test of the
same value for arrays or tracers, it told its class from them, and the rewrite takes what that
branch took: single-device arrays skip their replication, tracers reach code that needs concrete
values, a fully addressable array is handled as one that spans processes. A chain is an
``if``/``elif`` chain, and consecutive ``if`` statements whose branches leave the block
(``if ...: return``), which act as one. Where no such sibling stands, the values the test turned
away went to the chain's other branch or the code after it (``other_path``), which the rewrite
takes from them.

A class used as neither a type test nor an annotation (a registry key, an argument, an alias)
is ``value``: an array's type is never `jax.Array` itself (it is an abstract base class), so a
lookup by ``type(x)`` misses every array, and a lookup by isinstance takes tracers too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.analysis.statements import EXITS, enclosing_block, is_elif
from jaxmigrate.analysis.values import binding_scope, type_comparison, type_position
from jaxmigrate.catalog.array_classes import ARRAYS_OR_TRACERS, SAME_CLASS

#: attributes only an array has: ``hasattr(x, "sharding")`` takes arrays
ARRAY_ONLY_ATTRIBUTES = ("sharding", "addressable_shards", "global_shards")


@dataclass
class ArrayTest:
    """An ``isinstance(subject, C)`` test (C alone or in a tuple) that is, or is part of, a branch's test."""

    subject: ast.expr
    sibling: Optional[ast.expr]  # another test of the chain, of the same subject, for arrays or tracers
    other_path: Optional[str]  # where the values it turned away went: "the `else` branch (line 9)", ...


def use_kind(ctx: FileContext, node: ast.expr, depth: int = 0) -> str:
    """How a reference to a class is used: "annotation", "test" (isinstance/issubclass,
    ``assertIsInstance``), "comparison" (``type(x) is C``) or "value" (anything else: a registry
    key, an argument). An alias bound once (``KeyArray = jax.random.KeyArray``) is used as its
    uses are: an annotation where each of them is one."""
    if type_comparison(ctx, node) is not None:
        return "comparison"
    kind = {"annotation": "annotation", "check": "test"}.get(type_position(ctx, node) or "", "value")
    stmt = ctx.parent(node)
    if (kind == "value" and depth < 3 and isinstance(stmt, ast.Assign) and stmt.value is node
            and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and ctx.single_assignment(stmt.targets[0]) is stmt):
        alias = stmt.targets[0]
        uses = [n for n in ctx.names_bound_by(alias.id, binding_scope(ctx, alias)) if isinstance(n.ctx, ast.Load)]
        if uses and all(use_kind(ctx, use, depth + 1) == "annotation" for use in uses):
            return "annotation"
    return kind


def array_test(ctx: FileContext, node: ast.expr) -> Optional[ArrayTest]:
    """For ``node``, the class of an ``isinstance`` call (alone or in a tuple) that stands in an
    ``if``/``elif`` test (itself, or under ``not``/``and``/``or``): the test, its sibling for arrays
    or tracers, and where the values it turned away went. None elsewhere (an assert, a return)."""
    call = ctx.parent(node)
    if isinstance(call, ast.Tuple):
        call = ctx.parent(call)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"
            and len(call.args) == 2 and not call.keywords):
        return None
    test: ast.AST = call
    holder = ctx.parent(call)
    negated = False
    while isinstance(holder, (ast.BoolOp, ast.UnaryOp)):
        negated ^= isinstance(holder, ast.UnaryOp) and isinstance(holder.op, ast.Not)
        test, holder = holder, ctx.parent(holder)
    if not (isinstance(holder, ast.If) and holder.test is test):
        return None
    subject = call.args[0]
    wanted = ctx.text(subject)
    own = _class_name(ctx, node)
    # under `not` the branch takes what the class test turns away: the chain's other tests sort
    # what it accepted (`if not isinstance(x, C): raise`, then `if isinstance(x, D):`), no alternative
    sibling = None if negated else next(
        (t for t in _chain_tests(ctx, holder) if t is not holder.test and _takes_arrays(ctx, t, wanted, own)), None)
    # what the class test turned away went past the branch, or, under `not`, into it
    went = f"the branch it guards (line {holder.body[0].lineno})" if negated else _other_path(ctx, holder)
    return ArrayTest(subject, sibling, went)


def _chain_tests(ctx: FileContext, branch: ast.If) -> List[ast.expr]:
    """The tests of the chain ``branch`` is in: its ``if``/``elif`` chain, the ``if`` statements
    just before it whose every branch leaves the block, and, when ``branch`` leaves it too, the
    ``if`` statements just after it."""
    head = branch
    while is_elif(ctx, head):
        head = ctx.parent(head)  # type: ignore[assignment]  # an `elif` is the `orelse` of an If
    tests = _if_chain(ctx, head)
    block = enclosing_block(ctx, head)
    at = block.index(head)
    for before in reversed(block[:at]):
        if not (isinstance(before, ast.If) and _leaves(ctx, before)):
            break
        tests += _if_chain(ctx, before)
    if branch.body and isinstance(branch.body[-1], EXITS):
        for after in block[at + 1:]:
            if not isinstance(after, ast.If):
                break
            tests += _if_chain(ctx, after)
    return tests


def _if_chain(ctx: FileContext, head: ast.If) -> List[ast.expr]:
    tests = [head.test]
    node = head
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and is_elif(ctx, node.orelse[0]):
        node = node.orelse[0]
        tests.append(node.test)
    return tests


def _leaves(ctx: FileContext, head: ast.If) -> bool:
    """Whether every branch of the chain ends by leaving the block (no branch falls through)."""
    node = head
    while True:
        if not (node.body and isinstance(node.body[-1], EXITS)):
            return False
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and is_elif(ctx, node.orelse[0]):
            node = node.orelse[0]
            continue
        return not node.orelse or isinstance(node.orelse[-1], EXITS)


def _takes_arrays(ctx: FileContext, test: ast.expr, wanted: str, own: Optional[str]) -> bool:
    """Whether ``test`` holds an isinstance test of the value ``wanted`` (its text) for arrays or
    tracers other than the class ``own`` (a test of the same class is no other branch), or a
    ``hasattr`` of an attribute only arrays have."""
    for node in ast.walk(test):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2
                and ctx.text(node.args[0]) == wanted):
            continue
        cls = node.args[1]
        if node.func.id == "isinstance":
            classes = cls.elts if isinstance(cls, ast.Tuple) else [cls]
            for c in classes:
                name = _class_name(ctx, c)
                if name in ARRAYS_OR_TRACERS and SAME_CLASS.get(name, name) != SAME_CLASS.get(own or "", own):
                    return True
        elif node.func.id == "hasattr" and isinstance(cls, ast.Constant) and cls.value in ARRAY_ONLY_ATTRIBUTES:
            return True
    return False


def _class_name(ctx: FileContext, node: ast.expr) -> Optional[str]:
    """The qualified name of a class reference, as ``ARRAYS_OR_TRACERS`` spells it where it is one."""
    name = ctx.qualname(node)
    return name if name is None or name in ARRAYS_OR_TRACERS else canonical(name)


def _other_path(ctx: FileContext, branch: ast.If) -> Optional[str]:
    """Where the values ``branch``'s test turns away go: its ``elif``/``else``, or the code after the chain."""
    if branch.orelse:
        first = branch.orelse[0]
        if isinstance(first, ast.If) and is_elif(ctx, first):
            return f"the `elif` at line {first.lineno}"
        return f"the `else` branch (line {first.lineno})"
    head = branch
    while is_elif(ctx, head):
        head = ctx.parent(head)  # type: ignore[assignment]  # an `elif` is the `orelse` of an If
    block = enclosing_block(ctx, head)
    after = block[block.index(head) + 1:]
    return f"the code after it (line {after[0].lineno})" if after else None


def describe(ctx: FileContext, node: ast.AST) -> str:
    """A test for a message: "`isinstance(x, Tracer)` at line 7" (on one line, at most 40 characters)."""
    text = " ".join(ctx.text(node).split())
    return f"`{text if len(text) <= 40 else text[:37] + '...'}` at line {getattr(node, 'lineno', 0)}"
