"""References to JAX names that the installed JAX does not have, found independently of jaxmigrate.

    python scripts/missing_names.py PATH [PATH...] [--json] [--names] [--private]
                                    [--reported CHECK_JSON]

The measurement behind issue 15's "Done when". It uses only the standard library's `ast` and
`importlib` against the JAX installed in the running interpreter; nothing from jaxmigrate (not its
resolver, not its history data).

What counts as a reference, for every `.py` file under the given paths:
  - each name an import statement names: `import jax.x.y [as z]` (must import as a module),
    `from jax.x import y [as z]` (module `jax.x`, then `y` as an attribute or a submodule),
    `from jax.x import *` (the module);
  - each use of a name bound by such an import, with its attribute chain: after
    `import jax.numpy as jnp`, `jnp.product(x)` is `jax.numpy.product`; after
    `from jax.interpreters import pxla`, `pxla.ShardingSpec` is `jax.interpreters.pxla.ShardingSpec`;
    after `from jax.numpy import product`, a bare `product` is `jax.numpy.product`. A chain stops at
    a call or subscript and before a dunder (`jnp.zeros.__doc__` is `jax.numpy.zeros`); the attribute
    being assigned or deleted is not a reference (`jax.config.foo = 1` checks `jax.config`).

Scoping: module, class, function, lambda and comprehension scopes, with Python's rules (a class
body is not visible from its methods; parameters, assignments, loop targets, `with ... as`,
`except ... as`, defs, classes and imports all bind). In the scope of the use, the binding is the
last one before the use in source order (so `jnp = np` after `import jax.numpy as jnp` shadows it
from there on); a name from an enclosing scope is a JAX name only if every binding of it there is
a JAX import (then it is present if any of them is). `global`/`nonlocal` names are not local.

Deciding "the installed JAX has it": walk the dotted name from `jax`; at each step, while the
object is a module, first import `prefix.part` as a module (importlib; the longest module prefix),
else `getattr` the part. An AttributeError (including a deprecation `__getattr__` that raises) makes
the name missing from that part on; a name that exists but warns is present (warnings are
silenced); a jax module whose own import fails (ImportError raised in it, a jax module it needs
missing) is missing; a module that fails because a third-party package is absent (tensorflow,
absl, ...) is counted as "unverified", not missing. The name reported is the chain cut after its
first missing part (`hcb.call` with `jax.experimental.host_callback` gone reports
`jax.experimental.host_callback`); `--json` also carries the full chain.

Public = no part of the name starts with `_` (so no `jax._src`); private references are counted
separately (listed with `--private`). `jax.tests.*`, `jax.examples.*` (jax-ml/jax's own folders
beside the package, imported by its tests) are no JAX names: counted as `repo_local` only.
A reference inside a `try:` whose handler catches ImportError/AttributeError/Exception (or everything)
is still counted, and marked "guarded".

Output: one line per missing public reference, `path:line: qualified.name` (sorted), then (with
`--reported`) the unreported ones, then one last line of `key=value` totals:
    TOTAL missing_refs=N distinct_names=N files=N checked_refs=N files_scanned=N ...
`--names` prints the distinct missing names with their counts before the totals.

`--reported CHECK_JSON`: the output of `jaxmigrate check --format json` on the same tree, run from
the same working directory (paths are compared after resolving both against the current one). A
missing reference is "reported" when some finding of the same file has `line <= ref line <=
end_line`; the others are listed and counted as `unreported`.

Limits: `.py` files only (no notebooks), no `.gitignore`; names bound by a star import, by
assignment aliases (`P = jax.sharding.PartitionSpec`), by `importlib`/`__import__` or passed
through other modules are not followed; flow is approximated by source order (both branches of an
`if`/`try` count, the later one wins within a scope); attributes of objects are checked on the
object that `getattr` returns (a class attribute that only instances have would be missing).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import sys
import types
import warnings
from collections import Counter, defaultdict

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env", ".tox", ".nox", "node_modules",
             "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxmigrate_cache"}
# jax-ml/jax's own top-level folders beside the `jax` package: importable as `jax.tests` from a
# checkout, never part of an installed JAX; counted apart as `repo_local`, not as JAX names
REPO_LOCAL = ("jax.tests", "jax.examples", "jax.benchmarks", "jax.docs", "jax.build")
GUARDING = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}


# ---------------------------------------------------------------------------------------------
# Collecting references


class Scope:
    __slots__ = ("kind", "parent", "bindings", "nonlocal_names")

    def __init__(self, kind: str, parent: Scope | None):
        self.kind = kind
        self.parent = parent
        self.bindings: dict[str, list[tuple[tuple[int, int], str | None]]] = defaultdict(list)
        self.nonlocal_names: set[str] = set()

    def bind(self, name: str, pos: tuple[int, int], qual: str | None) -> None:
        if name not in self.nonlocal_names:
            self.bindings[name].append((pos, qual))


def _end(node: ast.stmt | ast.expr) -> tuple[int, int]:
    """Where a parsed node ends (set on every node ``ast.parse`` makes)."""
    return node.end_lineno, node.end_col_offset  # type: ignore[return-value]  # never None after ast.parse


def _is_dunder(part: str) -> bool:
    return len(part) > 4 and part.startswith("__") and part.endswith("__")


def _catches(handler: ast.ExceptHandler) -> bool:
    def one(t: ast.expr) -> bool:
        if isinstance(t, ast.Name):
            return t.id in GUARDING
        if isinstance(t, ast.Attribute):
            return t.attr in GUARDING
        if isinstance(t, ast.Tuple):
            return any(one(e) for e in t.elts)
        return False
    return handler.type is None or one(handler.type)


def _declared_nonlocal(body: list[ast.stmt]) -> set[str]:
    """Names declared `global`/`nonlocal` in this function body (not in nested scopes)."""
    out: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out


class Collector(ast.NodeVisitor):
    """One pass over a module: the bindings of every scope, the uses of names, the import refs."""

    def __init__(self) -> None:
        self.module = Scope("module", None)
        self.scope = self.module
        self.uses: list[tuple] = []     # (scope, pos, name, attrs, line, col, guarded)
        self.imports: list[tuple] = []  # (kind, module, full name, line, col, guarded)
        self.guard = 0
        self.assign_end: tuple[int, int] | None = None

    # -- helpers
    def _bind_pos(self, node: ast.expr) -> tuple[int, int]:
        return self.assign_end or (node.lineno, node.col_offset)

    def _enter(self, kind: str) -> Scope:
        self.scope = Scope(kind, self.scope)
        return self.scope

    def _leave(self) -> None:
        self.scope = self.scope.parent  # type: ignore[assignment]  # the module scope is never left

    # -- imports
    def visit_Import(self, node: ast.Import) -> None:
        pos = _end(node)
        for alias in node.names:
            top = alias.name.split(".")[0]
            is_jax = top == "jax"
            if is_jax:
                self.imports.append(("import", alias.name, alias.name, alias.lineno, alias.col_offset, self.guard > 0))
            if alias.asname:
                self.scope.bind(alias.asname, pos, alias.name if is_jax else None)
            else:
                self.scope.bind(top, pos, "jax" if is_jax else None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        pos = _end(node)
        module = node.module or ""
        is_jax = node.level == 0 and module.split(".")[0] == "jax"
        for alias in node.names:
            if alias.name == "*":
                if is_jax:
                    self.imports.append(("import", module, module, alias.lineno, alias.col_offset, self.guard > 0))
                continue
            full = f"{module}.{alias.name}" if is_jax else None
            if is_jax:
                self.imports.append(("from", module, full, alias.lineno, alias.col_offset, self.guard > 0))
            self.scope.bind(alias.asname or alias.name, pos, full)

    # -- scopes
    def _function(self, node, args: ast.arguments, body, is_lambda: bool) -> None:
        if not is_lambda:
            for d in node.decorator_list:
                self.visit(d)
            if node.returns:
                self.visit(node.returns)
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)
        all_args = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
        if not is_lambda:
            for a in all_args:
                if a.annotation:
                    self.visit(a.annotation)
            self.scope.bind(node.name, (node.lineno, node.col_offset), None)
        scope = self._enter("function")
        if not is_lambda:
            scope.nonlocal_names = _declared_nonlocal(body)
        for a in all_args:
            scope.bind(a.arg, (0, 0), None)
        if is_lambda:
            self.visit(body)
        else:
            for stmt in body:
                self.visit(stmt)
        self._leave()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node, node.args, node.body, False)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # one visit for both kinds of def

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node, node.args, node.body, True)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for e in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(e)
        self.scope.bind(node.name, (node.lineno, node.col_offset), None)
        self._enter("class")
        for stmt in node.body:
            self.visit(stmt)
        self._leave()

    def _comprehension(self, node, parts: list[ast.expr]) -> None:
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        self._enter("comp")
        for i, gen in enumerate(node.generators):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        for p in parts:
            self.visit(p)
        self._leave()

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comprehension(node, [node.key, node.value])

    # -- bindings by statement
    def _assign(self, node, targets: list[ast.expr], value: ast.expr | None) -> None:
        if value is not None:
            self.visit(value)
        if getattr(node, "annotation", None) is not None:
            self.visit(node.annotation)
        saved = self.assign_end
        self.assign_end = (node.end_lineno, node.end_col_offset)
        for t in targets:
            self.visit(t)
        self.assign_end = saved

    def visit_Assign(self, node: ast.Assign) -> None:
        self._assign(node, node.targets, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):  # x += 1 reads x too
            self._use(node.target, node.target.id, [])
        self._assign(node, [node.target], node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assign(node, [node.target], node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comp":
            scope = scope.parent  # type: ignore[assignment]  # a comprehension is always inside another scope
        scope.bind(node.target.id, _end(node), None)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type:
            self.visit(node.type)
        if node.name:
            self.scope.bind(node.name, (node.lineno, node.col_offset), None)
        for stmt in node.body:
            self.visit(stmt)

    def _match_name(self, node, name: str | None) -> None:
        if name:
            self.scope.bind(name, (node.lineno, node.col_offset), None)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        self._match_name(node, node.name)

    def visit_MatchStar(self, node):
        self._match_name(node, node.name)

    def visit_MatchMapping(self, node):
        self._match_name(node, node.rest)

    def visit_Try(self, node) -> None:
        guarded = any(_catches(h) for h in node.handlers)
        self.guard += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guard -= guarded
        for part in (node.handlers, node.orelse, node.finalbody):
            for n in part:
                self.visit(n)

    visit_TryStar = visit_Try

    # -- uses
    def _use(self, node: ast.Name, name: str, attrs: list[str]) -> None:
        self.uses.append((self.scope, (node.lineno, node.col_offset), name, attrs, node.lineno, node.col_offset,
                          self.guard > 0))

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._use(node, node.id, [])
        else:
            self.scope.bind(node.id, self._bind_pos(node), None)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attrs: list[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            attrs.append(cur.attr)
            cur = cur.value
        attrs.reverse()
        if isinstance(cur, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                attrs = attrs[:-1]  # the attribute being set or deleted is not a reference
            self._use(cur, cur.id, attrs)
        else:
            self.visit(cur)


def resolve(scope: Scope, pos: tuple[int, int], name: str) -> list[str | None]:
    """The bindings a use of `name` at `pos` may see: [] if none (builtin, undefined)."""
    first = True
    s: Scope | None = scope
    while s is not None:
        if s.kind == "class" and not first:
            s = s.parent
            continue
        bindings = s.bindings.get(name)
        if bindings:
            if first:
                before = [b for b in bindings if b[0] <= pos]
                if before:
                    return [max(before, key=lambda b: b[0])[1]]
            return [q for _, q in bindings]
        first = False
        s = s.parent
    return []


# ---------------------------------------------------------------------------------------------
# Checking names against the installed JAX

_imports: dict[str, tuple[str, object]] = {}
_checks: dict[tuple[str, str], tuple[str, str | None, str]] = {}


def import_status(modname: str) -> tuple[str, object]:
    """('ok', module) | ('absent', None) | ('error', why) | ('dep', missing package)."""
    if modname not in _imports:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result: tuple[str, object] = ("ok", importlib.import_module(modname))
        except ModuleNotFoundError as e:
            name = e.name or ""
            if name == modname or modname.startswith(name + ".") and name:
                result = ("absent", None)
            elif name.split(".")[0] == "jax":
                result = ("error", f"ModuleNotFoundError: {e}")
            else:
                result = ("dep", name)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001 - a module that fails to import is missing
            result = ("error", f"{type(e).__name__}: {e}")
        _imports[modname] = result
    return _imports[modname]


def check(full: str, as_module: bool = False) -> tuple[str, str | None, str]:
    """(status, missing name, detail); status 'present', 'missing' or 'unverified'.

    as_module: every part must import as a module (an `import a.b.c` statement)."""
    key = (full, "module" if as_module else "name")
    if key in _checks:
        return _checks[key]
    parts = full.split(".")
    result: tuple[str, str | None, str] = ("present", None, "")
    status, obj = import_status(parts[0])
    if status != "ok":
        result = ("missing", parts[0], str(obj))
    else:
        for i in range(1, len(parts)):
            prefix = ".".join(parts[: i + 1])
            if isinstance(obj, types.ModuleType):
                status, mod = import_status(prefix)
                if status == "ok":
                    obj = mod
                    continue
                if status == "error":
                    result = ("missing", prefix, str(mod))
                    break
                if status == "dep":
                    result = ("unverified", prefix, f"needs {mod}")
                    break
            if as_module:
                result = ("missing", prefix, "not a module")
                break
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj = getattr(obj, parts[i])
            except AttributeError as e:
                result = ("missing", prefix, f"AttributeError: {e}")
                break
            except (KeyboardInterrupt, SystemExit):
                raise
            except ModuleNotFoundError as e:  # a lazy attribute importing a package that is absent
                result = ("unverified", prefix, f"needs {e.name}") if (e.name or "").split(".")[0] != "jax" \
                    else ("missing", prefix, f"ModuleNotFoundError: {e}")
                break
            except BaseException as e:  # noqa: BLE001
                result = ("missing", prefix, f"{type(e).__name__}: {e}")
                break
    _checks[key] = result
    return result


# ---------------------------------------------------------------------------------------------
# Files


def iter_files(paths: list[str]):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for f in sorted(files):
                if f.endswith(".py"):
                    yield os.path.join(root, f)


def references(tree: ast.Module):
    """(line, col, full name, candidate names, kind, guarded) for every JAX reference of a module."""
    c = Collector()
    c.visit(tree)
    out = []
    for kind, module, full, line, col, guarded in c.imports:
        out.append((line, col, full, [full], kind, module, guarded))
    for scope, pos, name, attrs, line, col, guarded in c.uses:
        quals = resolve(scope, pos, name)
        if not quals or any(q is None for q in quals):  # (past here every q is a str)
            continue
        cut = []
        for a in attrs:
            if _is_dunder(a):
                break
            cut.append(a)
        suffix = "." + ".".join(cut) if cut else ""
        fulls = [q + suffix for q in quals]  # type: ignore[operator]  # no None: checked above
        out.append((line, col, fulls[-1], fulls, "use", None, guarded))
    return out


def decide(kind: str, module: str | None, candidates: list[str]) -> tuple[str, str | None, str]:
    if kind == "import":
        return check(candidates[0], as_module=True)
    if kind == "from":
        r = check(module, as_module=True)  # type: ignore[arg-type]  # a `from` import's module: the caller gives one
        if r[0] != "present":
            return r
        return check(candidates[0])
    results = [check(c) for c in candidates]
    for r in results:
        if r[0] == "present":
            return r
    return results[-1]


def scan(paths: list[str]) -> dict:
    refs = []          # dicts for every public/private reference that is not present
    counts: Counter[str] = Counter()
    parse_errors = []
    for path in iter_files(paths):
        counts["files_scanned"] += 1
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=path)
        except (SyntaxError, ValueError, UnicodeDecodeError) as e:
            parse_errors.append({"path": path, "error": f"{type(e).__name__}: {e}"})
            continue
        for line, col, full, candidates, kind, module, guarded in references(tree):
            if any(full == p or full.startswith(p + ".") for p in REPO_LOCAL):
                counts["repo_local"] += 1
                continue
            private = any(part.startswith("_") for part in full.split("."))
            counts["private_refs" if private else "checked_refs"] += 1
            status, missing, detail = decide(kind, module, candidates)
            if status == "present":
                continue
            refs.append({"path": path, "line": line, "column": col + 1, "name": missing, "chain": full,
                         "kind": kind, "status": status, "private": private, "guarded": guarded,
                         "detail": detail})
    refs.sort(key=lambda r: (r["path"], r["line"], r["column"]))
    return {"refs": refs, "counts": counts, "parse_errors": parse_errors}


def unreported(missing: list[dict], check_json: str) -> list[dict]:
    with open(check_json) as f:
        findings = json.load(f)
    spans = defaultdict(list)
    for fd in findings:
        path = os.path.realpath(fd["path"])
        spans[path].append((fd["line"], fd.get("end_line") or fd["line"]))
    out = []
    for r in missing:
        covered = spans.get(os.path.realpath(r["path"]), [])
        if not any(lo <= r["line"] <= hi for lo, hi in covered):
            out.append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text")
    ap.add_argument("--names", action="store_true", help="also print the distinct missing names with counts")
    ap.add_argument("--private", action="store_true", help="also list missing private (jax._src...) references")
    ap.add_argument("--reported", metavar="CHECK_JSON", help="output of `jaxmigrate check --format json`")
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    result = scan(args.paths)
    refs, counts = result["refs"], result["counts"]
    missing = [r for r in refs if r["status"] == "missing" and not r["private"]]
    private_missing = [r for r in refs if r["status"] == "missing" and r["private"]]
    unverified = [r for r in refs if r["status"] == "unverified"]
    names = Counter(r["name"] for r in missing)
    totals = {
        "missing_refs": len(missing),
        "distinct_names": len(names),
        "files": len({r["path"] for r in missing}),
        "checked_refs": counts["checked_refs"],
        "files_scanned": counts["files_scanned"],
        "guarded": sum(r["guarded"] for r in missing),
        "private_refs": counts["private_refs"],
        "private_missing": len(private_missing),
        "unverified": sum(not r["private"] for r in unverified),
        "repo_local": counts["repo_local"],
        "parse_errors": len(result["parse_errors"]),
    }
    not_reported = None
    if args.reported:
        not_reported = unreported(missing, args.reported)
        totals["unreported"] = len(not_reported)

    if args.json:
        json.dump({"totals": totals, "missing": missing, "names": dict(names.most_common()),
                   "unreported": not_reported, "private_missing": private_missing, "unverified": unverified,
                   "parse_errors": result["parse_errors"]}, sys.stdout, indent=1)
        print()
        return 0

    def show(r: dict) -> str:
        return f"{r['path']}:{r['line']}: {r['name']}" + (" (guarded)" if r["guarded"] else "")

    for r in missing:
        print(show(r))
    if args.private:
        for r in private_missing:
            print("private " + show(r))
    for r in unverified:
        if r["private"] and not args.private:
            continue
        print(f"unverified {r['path']}:{r['line']}: {r['name']} ({r['detail']})")
    for e in result["parse_errors"]:
        print(f"parse error {e['path']}: {e['error']}")
    if not_reported is not None:
        print(f"-- {len(not_reported)} missing references not on a line that a finding covers:")
        for r in not_reported:
            print("unreported " + show(r))
    if args.names:
        print(f"-- {len(names)} distinct missing names:")
        for name, n in names.most_common():
            print(f"{n:6d} {name}")
    print("TOTAL " + " ".join(f"{k}={v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
