"""Calls of JAX functions whose arguments the installed JAX rejects, found without jaxmigrate.

    python scripts/rejected_calls.py PATH [PATH ...] [--findings CHECK_JSON]

An independent measure for rule JM804: it shares no code with jaxmigrate. Each ``*.py`` file is
parsed with ``ast``; its module-level imports of ``jax`` modules and names give a map from local
names to dotted JAX names (``import jax.numpy as jnp``, ``from jax import numpy as jnp``,
``from jax.numpy import clip``); each call whose callee is such a name, or an attribute chain on
one, is looked up in the installed JAX (``importlib`` and ``getattr``) and its arguments are bound
to ``inspect.signature`` of what it finds, with placeholders for the values. A call with ``*`` or
``**`` arguments is counted apart (its arguments are not known). A ``TypeError`` from ``bind`` is
a rejected call, unless the code expects it: a call inside ``assertRaises(TypeError, ...)``,
``with self.assertRaises(TypeError):`` or ``pytest.raises(TypeError)`` is listed apart. A name a
function binds itself (a parameter, an assignment) is not the module-level import it shadows.

With ``--findings``, the JSON of ``jaxmigrate check --format json`` on the same paths: each
rejected call is matched with a finding on one of its lines (a keyword is reported where it
stands), and the unmatched ones are listed. Exit status 1 when a rejected call has none.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import sys
import warnings
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Set, Tuple


def _aliases(tree: ast.Module) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "jax" or a.name.startswith("jax."):
                    if a.asname:
                        out[a.asname] = a.name
                    else:
                        out["jax"] = "jax"
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and (
                stmt.module == "jax" or stmt.module.startswith("jax.")):
            for a in stmt.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{stmt.module}.{a.name}"
    return out


def _dotted(node: ast.expr) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _lookup(dotted: str):
    parts = dotted.split(".")
    for size in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:size]))
        except Exception:  # noqa: BLE001 - not a module
            continue
        try:
            for attr in parts[size:]:
                obj = getattr(obj, attr)
        except Exception:  # noqa: BLE001 - a removed name: not this script's business
            return None
        return obj
    return None


def _bound_names(fn: ast.AST) -> Set[str]:
    """Names a function or lambda binds itself: its parameters and the names it stores (a local
    ``jvp`` from ``_, jvp = linearize(f, x)`` is not ``jax.jvp``)."""
    a = fn.args  # type: ignore[attr-defined]
    names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]}
    body = fn.body if isinstance(fn.body, list) else [fn.body]  # type: ignore[attr-defined]
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue  # its own body is its own scope
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((n.asname or n.name).split(".")[0] for n in node.names)
        elif isinstance(node, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


def _raises_type_error(node: ast.AST) -> bool:
    """``self.assertRaises(TypeError, ...)``, ``pytest.raises(TypeError)`` and the like: code
    that expects the calls in it to be rejected."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name in ("assertRaises", "assertRaisesRegex", "raises") and bool(node.args) and any(
        isinstance(n, ast.Name) and n.id == "TypeError" for n in ast.walk(node.args[0]))


def calls(path: Path) -> Tuple[List[Tuple[int, int, str, str, bool]], int]:
    """(first line, last line, callee, error, whether the code expects the TypeError) of each
    rejected call, and how many calls had splats."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return [], 0
    aliases = _aliases(tree)
    rejected: List[Tuple[int, int, str, str, bool]] = []
    splats = 0

    def visit(node: ast.AST, shadowed: FrozenSet[str], expected: bool) -> None:
        nonlocal splats
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            shadowed = shadowed | _bound_names(node)
        if isinstance(node, ast.With) and any(_raises_type_error(item.context_expr) for item in node.items):
            expected = True
        if _raises_type_error(node):
            expected = True
        for child in ast.iter_child_nodes(node):
            visit(child, shadowed, expected)
        if not isinstance(node, ast.Call):
            return
        parts = _dotted(node.func)
        if parts is None or parts[0] not in aliases or parts[0] in shadowed:
            return
        dotted = ".".join([aliases[parts[0]], *parts[1:]])
        obj = _lookup(dotted)
        if obj is None or not callable(obj):
            return
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            splats += 1
            return
        try:
            sig.bind(*[object()] * len(node.args), **{k.arg: object() for k in node.keywords if k.arg})
        except TypeError as exc:
            rejected.append((node.lineno, node.end_lineno or node.lineno, dotted, str(exc), expected))

    visit(tree, frozenset(), False)
    return rejected, splats


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--findings", type=Path, help="JSON of `jaxmigrate check --format json` on the same paths")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    found: Dict[Tuple[str, int], List[str]] = {}
    if args.findings:
        for f in json.loads(args.findings.read_text()):
            found.setdefault((str(Path(f["path"]).resolve()), f["line"]), []).append(f["code"])
    files = sorted(p for root in args.paths for p in ([root] if root.is_file() else root.rglob("*.py")))
    total = splats = unmatched = expected_count = 0
    for path in files:
        rejected, splat = calls(path)
        splats += splat
        for line, last, dotted, error, expected in sorted(rejected):
            if expected:  # the code asserts that the call raises TypeError: not a migration's business
                expected_count += 1
                print(f"{path}:{line}: {dotted}: {error} [EXPECTED: inside assertRaises(TypeError)]")
                continue
            total += 1
            codes = [c for n in range(line, last + 1) for c in found.get((str(path.resolve()), n), [])]
            mark = ",".join(codes) if codes else "NOT REPORTED"
            unmatched += not codes
            print(f"{path}:{line}: {dotted}: {error} [{mark}]")
    import jax

    print(f"{len(files)} files, JAX {jax.__version__}: {total} rejected calls"
          + (f", {unmatched} without a finding at their line" if args.findings else "")
          + f"; {expected_count} more inside assertRaises(TypeError) (expected to raise)"
          + f"; {splats} calls with * or ** arguments not checked")
    return 1 if args.findings and unmatched else 0


if __name__ == "__main__":
    sys.exit(main())
