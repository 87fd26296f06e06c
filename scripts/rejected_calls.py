"""Calls of JAX functions whose arguments the installed JAX rejects, found without jaxmigrate.

    python scripts/rejected_calls.py PATH [PATH ...] [--findings CHECK_JSON]

An independent measure for rule JM804: it shares no code with jaxmigrate. Each ``*.py`` file is
parsed with ``ast``; its module-level imports of ``jax`` modules and names give a map from local
names to dotted JAX names (``import jax.numpy as jnp``, ``from jax import numpy as jnp``,
``from jax.numpy import clip``); each call whose callee is such a name, or an attribute chain on
one, is looked up in the installed JAX (``importlib`` and ``getattr``) and its arguments are bound
to ``inspect.signature`` of what it finds, with placeholders for the values. A call with ``*`` or
``**`` arguments is counted apart (its arguments are not known). A ``TypeError`` from ``bind`` is
a rejected call.

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
from typing import Dict, List, Optional, Tuple


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


def calls(path: Path) -> Tuple[List[Tuple[int, int, str, str]], int]:
    """(first line, last line, callee, error) of each rejected call, and how many calls had splats."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return [], 0
    aliases = _aliases(tree)
    rejected: List[Tuple[int, int, str, str]] = []
    splats = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts = _dotted(node.func)
        if parts is None or parts[0] not in aliases:
            continue
        dotted = ".".join([aliases[parts[0]], *parts[1:]])
        obj = _lookup(dotted)
        if obj is None or not callable(obj):
            continue
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            splats += 1
            continue
        try:
            sig.bind(*[object()] * len(node.args), **{k.arg: object() for k in node.keywords if k.arg})
        except TypeError as exc:
            rejected.append((node.lineno, node.end_lineno or node.lineno, dotted, str(exc)))
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
    total = splats = unmatched = 0
    for path in files:
        rejected, splat = calls(path)
        splats += splat
        for line, last, dotted, error in rejected:
            total += 1
            codes = [c for n in range(line, last + 1) for c in found.get((str(path.resolve()), n), [])]
            mark = ",".join(codes) if codes else "NOT REPORTED"
            unmatched += not codes
            print(f"{path}:{line}: {dotted}: {error} [{mark}]")
    import jax

    print(f"{len(files)} files, JAX {jax.__version__}: {total} rejected calls"
          + (f", {unmatched} without a finding at their line" if args.findings else "")
          + f"; {splats} calls with * or ** arguments not checked")
    return 1 if args.findings and unmatched else 0


if __name__ == "__main__":
    sys.exit(main())
