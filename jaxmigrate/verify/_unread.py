"""Module globals a program binds and never reads: what a migration may drop without a trace.

A global the BEFORE side has and the AFTER side lacks is a difference when something the
program computed or printed could depend on it. Read in the before file's source (``ast``
only): a name is **unread** when the file binds it only as the variable of a ``for`` loop or a
``with ... as`` and nothing in the file loads it (a name an assignment binds is a result the
program made, compared whether or not it is read): no ``Name`` read of it anywhere (module level,
functions, classes, comprehensions, the right-hand side of its own assignment), no augmented
assignment to it (``i += 1`` reads ``i``), no attribute of that name (``__main__.i`` from an
imported module of the program's). Whatever the program computed from such a
name went through a read, so nothing of it can depend on the name's last value but the name
itself, which is then listed, not compared: a loop variable the migrated loop no longer needs,
a temporary. A file that reaches its globals by name (``globals()``, ``vars()``, ``locals()``,
``eval``, ``exec``, ``__import__``, ``sys.modules``, ``getattr`` on a module) has none unread.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Set

_BY_NAME = frozenset({"globals", "vars", "locals", "eval", "exec", "__import__", "getattr", "modules"})


def unread_globals(source: str) -> FrozenSet[str]:
    """The globals ``source`` binds and never reads (empty when it cannot be parsed)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    bound: Set[str] = set()
    read: Set[str] = set()
    loops: Set[int] = set()  # the Name nodes a `for` or `with ... as` binds
    for node in ast.walk(tree):
        targets = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else \
            [i.optional_vars for i in node.items if i.optional_vars is not None] \
            if isinstance(node, (ast.With, ast.AsyncWith)) else []
        loops |= {id(n) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    other: Set[str] = set()  # names some other statement binds: a result, not a loop's variable
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _BY_NAME:
                return frozenset()
            if isinstance(node.ctx, ast.Store):
                (bound if id(node) in loops else other).add(node.id)
            else:
                read.add(node.id)  # a del reads too
        elif isinstance(node, ast.Attribute):
            if node.attr in _BY_NAME:
                return frozenset()
            read.add(node.attr)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            read.add(node.target.id)
    return frozenset(bound - read - other)
