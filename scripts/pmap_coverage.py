"""Whether ``fix --unsafe-fixes --target-jax latest`` migrates or reports every pmap-era reference.

    python scripts/pmap_coverage.py TREE [TREE ...] [--select CODES] [--json OUT]

An independent measure for issue 29: it shares no code with jaxmigrate, which it only runs as a
subprocess. Each ``*.py`` file of a tree (and each ``*.ipynb``: its code cells joined, IPython
``%``/``!`` lines blanked, ``%%`` cells skipped) is parsed with ``ast``, and the references to
``jax.pmap``, ``jax.device_put_replicated`` and ``jax.device_put_sharded`` are counted through any
import of them (``import jax as j``, ``from jax import pmap as pm``, ``jax.api.pmap``,
``from jax._src.api import pmap``), wherever they stand: a call, a decorator, an argument
(``functools.partial(jax.pmap, ...)``), an assignment. An import statement is not a reference
(its uses are). A name a function binds itself (a parameter, an assignment, a ``def``) is not the
import it shadows; an import inside a function counts there.

Each tree is copied to a temporary folder, where ``python -m jaxmigrate fix --unsafe-fixes
--target-jax latest --no-cache`` and then ``check --target-jax latest --format json --no-cache``
run (with ``--select CODES`` when given; the jaxmigrate of this checkout). Per file and name, the
references of the original that the fixed copy no longer holds are *migrated* (original count
minus the count left, at least 0); a reference left with a finding (any code) on one of its lines
is *reported*, one without is *silent* and listed as file:line, the line of the fixed copy
(``--keep DIR`` keeps the fixed copies in DIR). A fixed file that no longer parses is listed too
(an original file that does not parse is not counted, and listed apart). Exit status 1 when a
reference is silent or a fixed file does not parse.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

NAMES = ("jax.pmap", "jax.device_put_replicated", "jax.device_put_sharded")
# where the same functions were reachable too
PREFIXES = ("jax.api.", "jax._src.api.")
ROOT = Path(__file__).resolve().parent.parent

# a reference: (line, last line, name); in a notebook, lines of the joined code cells
Ref = Tuple[int, int, str]


def _canonical(dotted: str) -> Optional[str]:
    for prefix in PREFIXES:
        if dotted.startswith(prefix):
            dotted = "jax." + dotted[len(prefix):]
    return dotted if dotted in NAMES else None


def _import_aliases(stmts: List[ast.stmt]) -> Dict[str, str]:
    """Local names the jax imports among these statements bind (not inside nested functions or
    classes, which are scopes of their own), to dotted names."""
    out: Dict[str, str] = {}
    stack: List[ast.AST] = list(stmts)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "jax" or a.name.startswith("jax."):
                    if a.asname:
                        out[a.asname] = a.name
                    else:
                        out["jax"] = "jax"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "jax" or node.module.startswith("jax.")):
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
        else:
            stack.extend(ast.iter_child_nodes(node))
    return out


def _bound_names(fn: ast.AST) -> Set[str]:
    """Names a function or lambda binds itself: its parameters, the names it stores, the
    functions and classes it defines, the names it imports."""
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
            stack.extend(node.decorator_list)  # evaluated in this scope
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((n.asname or n.name).split(".")[0] for n in node.names)
        elif isinstance(node, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


def _dotted(node: ast.expr) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def references(tree: ast.Module) -> List[Ref]:
    found: List[Ref] = []

    def visit(node: ast.AST, aliases: Dict[str, str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            outside: List[ast.AST] = [*node.decorator_list, *node.args.defaults, *filter(None, node.args.kw_defaults)]
            for child in outside:
                visit(child, aliases)  # evaluated where the function is defined
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                if arg.annotation:
                    visit(arg.annotation, aliases)
            if node.returns:
                visit(node.returns, aliases)
            inner = _scope(node, aliases, node.body)
            for stmt in node.body:
                visit(stmt, inner)
            return
        if isinstance(node, ast.Lambda):
            for child in [*node.args.defaults, *filter(None, node.args.kw_defaults)]:
                visit(child, aliases)
            visit(node.body, _scope(node, aliases, []))
            return
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            parts = _dotted(node)
            if parts is not None and parts[0] in aliases:
                name = _canonical(".".join([aliases[parts[0]], *parts[1:]]))
                if name:
                    found.append((node.lineno, node.end_lineno or node.lineno, name))
                    return
        for child in ast.iter_child_nodes(node):
            visit(child, aliases)

    visit(tree, _import_aliases(tree.body))
    return sorted(found)


def _scope(fn: ast.AST, outer: Dict[str, str], body: List[ast.stmt]) -> Dict[str, str]:
    shadowed: FrozenSet[str] = frozenset(_bound_names(fn))
    inner = {k: v for k, v in outer.items() if k not in shadowed}
    inner.update(_import_aliases(body))
    return inner


# ---------------------------------------------------------------------------------------- files

def _notebook_code(path: Path) -> Tuple[str, List[Tuple[int, int]]]:
    """The code cells of a notebook joined, and for each joined line its (cell number, line in
    the cell), cells counted from 1 among all cells as jaxmigrate's findings count them. A cell
    that does not parse on its own (``np.sum?``) is left out, as a ``%%`` cell is."""
    nb = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    lines: List[str] = []
    where: List[Tuple[int, int]] = []
    for number, cell in enumerate(nb.get("cells", []), 1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        cell_lines = []
        for line in text.split("\n"):
            stripped = line.lstrip()
            if stripped.startswith(("%", "!")):  # an IPython magic or shell line: a statement
                line = line[:len(line) - len(stripped)] + "pass"
            cell_lines.append(line)
        try:
            ast.parse("\n".join(cell_lines))
            usable = not text.lstrip().startswith("%%")
        except SyntaxError:
            usable = False
        for i, line in enumerate(cell_lines, 1):
            lines.append(line if usable else "")
            where.append((number, i))
    return "\n".join(lines), where


Located = Tuple[int, int, int, str]  # (cell or 0, line, last line, name)


def file_references(path: Path) -> Optional[List[Located]]:
    """The references of a file, None when it does not parse."""
    try:
        if path.suffix == ".ipynb":
            code, where = _notebook_code(path)
            refs = references(ast.parse(code))
            out: List[Located] = []
            for line, last, name in refs:
                cell, cell_line = where[line - 1]
                last_cell, last_line = where[last - 1]
                out.append((cell, cell_line, last_line if last_cell == cell else cell_line, name))
            return out
        return [(0, line, last, name) for line, last, name in
                references(ast.parse(path.read_text(encoding="utf-8", errors="replace")))]
    except (SyntaxError, ValueError, KeyError, IndexError, AttributeError, json.JSONDecodeError):
        return None


def files(root: Path) -> List[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file() and not any(
        part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts[:-1]))


# ------------------------------------------------------------------------------------ measuring

def _jaxmigrate(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "jaxmigrate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1, 2):  # 2: a file jaxmigrate cannot parse (JM000), the others done
        raise RuntimeError(f"jaxmigrate {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc


def _findings(report: str, cwd: Path) -> Set[Tuple[Path, int, int]]:
    """(file, cell or 0, line) of each finding of a check JSON."""
    out: Set[Tuple[Path, int, int]] = set()
    for f in json.loads(report):
        path = (cwd / f["path"]).resolve()
        match = re.match(r"cell (\d+): ", f.get("message", ""))
        cell = int(match.group(1)) if match else 0
        for line in range(f["line"], (f.get("end_line") or f["line"]) + 1):
            out.add((path, cell, line))
    return out


def measure(tree: Path, select: Optional[str] = None, keep: Optional[Path] = None) -> dict:
    tree = tree.resolve()
    with tempfile.TemporaryDirectory(prefix="pmap-coverage-") as tmp:
        work = Path(tmp) if keep is None else keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
        return _measure(tree, work, select)


def _measure(tree: Path, tmp: Path, select: Optional[str]) -> dict:
    counts = {name: {"original": 0, "migrated": 0, "reported": 0, "silent": 0} for name in NAMES}
    silent: List[str] = []
    unparsable: List[str] = []
    skipped: List[str] = []
    copy = Path(tmp) / (tree.name or "tree")
    if copy.exists():
        raise SystemExit(f"{copy} exists: give --keep an empty folder")
    if tree.is_file():
        shutil.copy2(tree, copy)
    else:
        shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    extra = ["--select", select] if select else []
    _jaxmigrate(["fix", "--unsafe-fixes", "--target-jax", "latest", "--no-cache", *extra, str(copy)], Path(tmp))
    report = _jaxmigrate(["check", "--target-jax", "latest", "--format", "json", "--no-cache", *extra, str(copy)],
                         Path(tmp))
    found = _findings(report.stdout, Path(tmp))
    for original in files(tree):
        rel = original.relative_to(tree) if tree.is_dir() else Path(original.name)
        fixed = copy / rel if tree.is_dir() else copy
        before = file_references(original)
        if before is None:  # nothing to count, nothing a fix could do
            skipped.append(str(rel))
            continue
        after = file_references(fixed) if fixed.exists() else []
        if after is None:
            unparsable.append(str(rel))
            after = []
        for name in NAMES:
            n_before = sum(1 for r in before if r[3] == name)
            left = [r for r in after if r[3] == name]
            counts[name]["original"] += n_before
            counts[name]["migrated"] += max(0, n_before - len(left))
            for cell, line, last, _ in left:
                fixed_path = fixed.resolve()
                if any((fixed_path, cell, n) in found for n in range(line, last + 1)):
                    counts[name]["reported"] += 1
                else:
                    counts[name]["silent"] += 1
                    silent.append(f"{rel}:{f'cell {cell}:' if cell else ''}{line}: {name}")
    return {"counts": counts, "silent": silent, "unparsable": unparsable, "original_unparsable": skipped}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--select", help="rule codes passed to `jaxmigrate fix` and `check` (default: all)")
    parser.add_argument("--json", type=Path, help="also write the counts here as JSON")
    parser.add_argument("--keep", type=Path, help="fix the copies in this folder and keep them")
    args = parser.parse_args(argv)
    results = {str(tree): measure(tree, args.select, args.keep) for tree in args.trees}
    columns = ("original", "migrated", "reported", "silent")
    print(f"{'tree':<28} {'name':<27} " + " ".join(f"{c:>9}" for c in columns))
    bad = False
    for tree, result in results.items():
        for name in NAMES:
            row = result["counts"][name]
            print(f"{tree:<28} {name:<27} " + " ".join(f"{row[c]:>9}" for c in columns))
        for entry in result["silent"]:
            print(f"  silent: {entry}")
        for entry in result["unparsable"]:
            print(f"  the fixed file does not parse: {entry}")
        if result["original_unparsable"]:
            print(f"  {len(result['original_unparsable'])} original file(s) do not parse, not counted: "
                  + ", ".join(result["original_unparsable"][:5]))
        bad = bad or bool(result["silent"] or result["unparsable"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
