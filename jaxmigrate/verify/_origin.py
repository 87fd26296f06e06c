"""Each side imports its own tree: a side's process must not run the other side's copy of a file.

A side runs in one tree (``verify --pytest BEFORE_DIR AFTER_DIR``: each folder; ``fix --verify``:
the original project and its fixed copy) while its ``sys.path`` may point into the other one: an
absolute ``PYTHONPATH``, a ``.pth`` file of an editable install (``pip install -e``), a
``conftest.py`` inserting an absolute path. The fixed side would then test the original code,
without a word. In each child process, given ``JAXMIGRATE_VERIFY_TREES`` (its own tree and the
other side's, joined by ``os.pathsep``):

- ``redirect()``, at start-up: every ``sys.path`` entry inside the other tree whose counterpart
  exists in its own tree is replaced by that counterpart (the path order is kept);
- ``foreign()``, at the end: the modules imported from a file of the other tree that has a
  counterpart in its own tree (imported before the redirection, or through a path added later or
  an import hook). The runner makes such a run undecidable: it did not run its own code.

Files the copy does not have (a virtual environment inside the project, tool folders) are not the
other side's code and are left alone.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional, Tuple

ENV = "JAXMIGRATE_VERIFY_TREES"
_SKIPPED = (".git", ".hg", ".venv", "venv", "env", "__pycache__", "node_modules", "build", "dist", "site-packages")


def trees_value(own: str, other: str) -> Optional[str]:
    """The value of ``ENV`` for a side running in ``own``; None when the trees are the same or
    one holds the other (nothing to tell apart)."""
    own, other = os.path.abspath(own), os.path.abspath(other)
    if own == other or _inside(own, other) or _inside(other, own):
        return None
    return own + os.pathsep + other


def _inside(path: str, tree: str) -> bool:
    return path.startswith(tree.rstrip(os.sep) + os.sep)


def _trees() -> Optional[Tuple[str, str]]:
    value = os.environ.get(ENV, "")
    own, _, other = value.partition(os.pathsep)
    return (own, other) if own and other else None


def counterpart(path: str, own: str, other: str) -> Optional[str]:
    """The path in ``own`` of ``path`` inside ``other`` when it exists there, else None."""
    path = os.path.abspath(path)
    if not (path == other or _inside(path, other)):
        return None
    rel = os.path.relpath(path, other)
    if rel != "." and any(part in _SKIPPED for part in rel.split(os.sep)):
        return None
    mine = os.path.normpath(os.path.join(own, rel))
    return mine if os.path.exists(mine) else None


def redirect() -> List[str]:
    """Point this process's ``sys.path`` entries inside the other tree at their counterparts;
    ``"old -> new"`` for each entry changed."""
    trees = _trees()
    if trees is None:
        return []
    own, other = trees
    changed = []
    for i, entry in enumerate(sys.path):
        mine = counterpart(entry, own, other) if entry else None
        if mine is not None:
            sys.path[i] = mine
            changed.append(f"{entry} -> {mine}")
    return changed


def foreign() -> List[str]:
    """``"module (file)"`` of each module this process imported from the other side's copy of a
    file its own tree has."""
    trees = _trees()
    if trees is None:
        return []
    own, other = trees
    out = []
    for name, module in sorted(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str) and counterpart(filename, own, other) is not None:
            out.append(f"{name} ({filename})")
    return out


def refusal(side: str, found: List[str], other: str) -> str:
    """The reason a run that imported the other side's code is undecidable."""
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return (f"the {side} side imported the {other} side's code, not its own: {found[0]}{more}; it would not "
            f"verify the {'fixed' if side == 'after' else 'original'} code. Check PYTHONPATH, editable installs "
            f"(pip install -e, .pth files) and sys.path changes in conftest.py")
