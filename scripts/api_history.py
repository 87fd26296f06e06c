"""Generate jaxmigrate's API history of JAX from JAX's own source, statically.

    python scripts/api_history.py JAX_GIT_DIR [--out jaxmigrate/catalog/data] [--since 0.2.0]

JAX_GIT_DIR is a clone of jax-ml/jax with its release tags (a bare one will do). At every release
tag ``jax-vX.Y.Z`` (release candidates left out) from ``--since`` on, each ``jax/**/*.py`` file
(tests left out) is parsed with ``ast``, nothing is imported or installed, and every name a user
can reach is recorded: the modules, and the names each binds at module level (defs, classes,
assignments, imports re-exported, ``from m import *`` through ``__all__``, the names a lazy
loader's ``attach(package, [names])`` gives), minus what ``del`` removes and what only exists
``if TYPE_CHECKING``. A file the running Python cannot parse stops the script (JAX 0.11.0 on
needs Python >= 3.12): read as absent, its module's names would look removed. A name in a module's ``_deprecations`` table
is deprecated while it maps to an object and removed once it maps to None; a function whose body
warns that it is deprecated is deprecated wherever it is re-exported. The replacement is the
first JAX name a deprecation message names that the history knows (``jnp.x`` read as
``jax.numpy.x``): a qualified name, never the message. Names under ``jax._src`` or with a part
starting with ``_`` are private.

Writes ``triggers.tsv`` (the prefilter's words: a last part, then the module paths it was removed
or deprecated under), ``public.tsv`` and ``private.tsv``: the release versions, tab-separated, on the first line,
then a line a name: ``qualname``, its intervals as version indexes ``start,end,start,end...``
(``end`` is the first release without it; -1: still in the newest), its kind (``m`` a module,
``i`` a name a non-package module imported for its own use, ``o`` an option or attribute of the
``jax.config`` object, ``n`` another name; ``=`` after it when the replacement was the very same object, a pure
rename), the index of the release that deprecated it (-1: none) and its replacement (a qualified
name, or nothing). jaxmigrate/catalog/api_history.py reads them.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's jaxmigrate, not an installed one
from jaxmigrate.catalog.signatures import Signature  # noqa: E402 - needs the path above; no dependency beyond the stdlib

ROOTS = ("jax", "jaxlib")  # imports from other packages (numpy, functools) are not JAX's API
_REFERENCE = re.compile(r"\b((?:jax|jnp)(?:\.[A-Za-z_]\w*)+)")
_DEPRECATED_WORDS = re.compile(r"deprecat", re.IGNORECASE)
_PARAMETER_GOING = re.compile(r"deprecat|renamed|will (?:eventually |soon )?be removed", re.IGNORECASE)
_RENAMED_FROM = re.compile(r"renamed from [`'\"]?(\w+)")
_QUOTED = re.compile(r"[`'\"](\w+)=?[`'\"]|\b(?<![.\w])(\w+)=")


def version_key(text: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


# one module's source, summarised ------------------------------------------------------------
@dataclass
class Summary:
    """What one module file binds at module level, read from its ``ast``."""

    bindings: Dict[str, Tuple[str, str]] = field(default_factory=dict)  # name -> (kind, target)
    stars: List[str] = field(default_factory=list)  # modules imported with `*`
    all: Optional[List[str]] = None  # a literal __all__
    # name -> (message, the object it still maps to: a dotted name, "?" for another expression, "" for None)
    deprecations: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    warns: Dict[str, str] = field(default_factory=dict)  # def name -> its deprecation message
    deleted: Dict[str, Tuple[str, str]] = field(default_factory=dict)  # bindings `del` removed
    options: List[str] = field(default_factory=list)  # attributes of the `jax.config` object defined here
    # name -> "set", "dict" or "list" where an assignment shows a builtin container (a literal, a
    # call of the type, or an annotation), "" where its annotation names another type
    containers: Dict[str, str] = field(default_factory=dict)
    signatures: Dict[str, str] = field(default_factory=dict)  # def name -> its parameters (``signature``)


def _is_type_checking(test: ast.expr) -> Optional[bool]:
    """True for `if TYPE_CHECKING`, False for `if not TYPE_CHECKING`, None for other tests."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test  # type: ignore[attr-defined]  # negated: a UnaryOp
    name = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else None
    if name != "TYPE_CHECKING":
        return None
    return not negated


def _is_main(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _absolute(module: str, package: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _strings(node: ast.AST) -> str:
    """The text of string constants in an expression (messages are often concatenated)."""
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _warning(name: str, body: List[ast.stmt]) -> Optional[str]:
    """The message of a deprecation warning the function ``name`` gives on every call: a
    ``warn(...)`` statement among its first, outside any ``if`` (one inside warns of a deprecated
    argument), whose message names the function."""
    for stmt in body[:4]:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        message = _strings(call.args[0])
        if "warn" in called and name in message and _DEPRECATED_WORDS.search(message):
            return message
    return None


def _is_overload(stmt: ast.stmt) -> bool:
    return any((d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) == "overload"
               for d in getattr(stmt, "decorator_list", ()))


def _deprecated_params(func: ast.AST, names: Set[str]) -> Set[str]:
    """The parameters a function's body says are deprecated: quoted (``'a_min'``, `` `a_min` ``,
    ``a_min=``) before "deprecated", "renamed" or "will be removed" in the message of a ``warn``
    call, or named right after "renamed from" (``local_devices``: "has been renamed from
    `host_id` to `process_index`")."""
    out: Set[str] = set()
    for call in (n for n in ast.walk(func) if isinstance(n, ast.Call)):
        f = call.func
        called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if "warn" not in called or not call.args:
            continue
        message = _strings(call.args[0])
        found = _PARAMETER_GOING.search(message)
        if found is not None:
            out |= {m.group(1) or m.group(2) for m in _QUOTED.finditer(message[:found.start()])} & names
            out |= set(_RENAMED_FROM.findall(message)) & names
    return out


def signature(func: ast.AST) -> str:
    """A def's parameters as one line: ``name`` (``=`` when it has a default, ``!`` when it is
    deprecated: a default that says so, like ``DeprecatedArg()``, or a warning in the body),
    ``/`` after the positional-only ones, ``*name`` and ``**name``, ``*`` before keyword-only
    ones when there is no ``*name``; comma-separated."""
    args: ast.arguments = func.args  # type: ignore[attr-defined]  # a FunctionDef or AsyncFunctionDef
    every = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    deprecated = _deprecated_params(func, set(every))
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)

    def one(arg: ast.arg, default: Optional[ast.expr]) -> str:
        text = arg.arg
        if default is not None:
            text += "="
            if arg.arg in deprecated or _DEPRECATED_WORDS.search(ast.unparse(default)):
                text += "!"
        elif arg.arg in deprecated:
            text += "!"
        return text

    parts = [one(a, d) for a, d in zip(positional, defaults)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        parts.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        parts.append("*")
    parts += [one(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        parts.append("**" + args.kwarg.arg)
    return ",".join(parts)


# wrappers that keep the signature of the function they wrap (``functools.wraps`` inside)
_SIGNATURE_KEEPING = frozenset({"api_boundary"})


def _keeps_signature(value: Optional[ast.expr], name: str) -> bool:
    """``name = api_boundary(name, ...)``: the wrapped function's parameters stay."""
    if not isinstance(value, ast.Call) or not value.args:
        return False
    func = value.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = value.args[0]
    return called in _SIGNATURE_KEEPING and isinstance(first, ast.Name) and first.id == name


def _constructor(cls: ast.ClassDef) -> Optional[str]:
    """What calling the class takes: its own ``__init__``'s parameters but the first, when that
    is all there is to it (no ``__new__``, no dataclass or other class decorator, no metaclass)."""
    if cls.decorator_list or cls.keywords:
        return None
    inits = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__new__")]
    if not inits or any(s.name == "__new__" for s in inits) or _is_overload(inits[-1]):
        return None
    init = inits[-1]
    text = signature(init)
    parts = text.split(",")
    if not parts or parts[0].startswith("*") or parts[0] == "/":
        return None
    rest = parts[1:]
    if rest[:1] == ["/"]:
        rest = rest[1:]
    return ",".join(rest)


def summarise(source: bytes, module: str, is_package: bool) -> Summary:
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    out = Summary()

    def bind(name: str, kind: str, target: str = "") -> None:
        out.bindings[name] = (kind, target)
        out.containers.pop(name, None)
        out.signatures.pop(name, None)

    def targets(node: ast.AST) -> Iterable[str]:
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                yield from targets(elt)
        elif isinstance(node, ast.Starred):
            yield from targets(node.value)

    def visit(body: List[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if _is_overload(stmt):
                    continue  # a typing stub: the implementation that follows binds the name
                bind(stmt.name, "def")
                if not isinstance(stmt, ast.ClassDef):
                    message = _warning(stmt.name, stmt.body)
                    if message is not None:
                        out.warns[stmt.name] = message
                    out.signatures[stmt.name] = signature(stmt)
                else:
                    init = _constructor(stmt)
                    if init is not None:
                        out.signatures[stmt.name] = init
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        bind(alias.asname, "module", alias.name)
                    else:
                        root = alias.name.split(".")[0]
                        bind(root, "module", root)
            elif isinstance(stmt, ast.ImportFrom):
                source_module = _absolute(module, package, stmt)
                for alias in stmt.names:
                    if alias.name == "*":
                        out.stars.append(source_module)
                    else:
                        # `from numpy import pi as pi` re-exports on purpose: it is this module's API
                        kind = "export" if alias.asname == alias.name else "import"
                        bind(alias.asname or alias.name, kind, f"{source_module}.{alias.name}")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                nodes = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                value = stmt.value
                lazy = _lazy_names(stmt, module)
                if lazy is not None:  # `__getattr__, __dir__, __all__ = _lazy.attach("pkg", [...])`
                    for name, loaded in lazy:
                        bind(name, "export", loaded)
                    out.all = [name for name, _ in lazy]
                    continue
                for target in nodes:
                    for name in targets(target):
                        if name == "__all__" and value is not None:
                            _read_all(out, stmt, value)
                        elif name == "_deprecations" and isinstance(value, ast.Dict):
                            _read_deprecations(out, value)
                        elif isinstance(value, (ast.Name, ast.Attribute)) and isinstance(stmt, ast.Assign):
                            dotted = _dotted(value)
                            bind(name, "alias", dotted or "")
                        else:
                            kept = out.signatures.get(name) if _keeps_signature(value, name) else None
                            bind(name, "def")
                            if isinstance(value, ast.Lambda) and isinstance(target, ast.Name):
                                out.signatures[name] = signature(value)  # `gensym = lambda: Var`
                            elif kept is not None:
                                out.signatures[name] = kept  # `jit = api_boundary(jit, ...)`
                        container = _container(stmt)
                        if container is not None and isinstance(target, ast.Name):
                            out.containers[name] = container
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    for name in targets(target):
                        if name in out.bindings:
                            out.deleted[name] = out.bindings.pop(name)
            elif isinstance(stmt, ast.If):
                checking = _is_type_checking(stmt.test)
                if _is_main(stmt.test):
                    continue  # a script's own names, never bound on import
                if checking is None:
                    visit(stmt.body)
                    visit(stmt.orelse)
                elif checking:
                    visit(stmt.orelse)
                else:
                    visit(stmt.body)
            elif isinstance(stmt, ast.Try) or stmt.__class__.__name__ == "TryStar":
                visit(stmt.body)  # type: ignore[attr-defined]  # a Try or TryStar
                tried = dict(out.bindings)
                for handler in stmt.handlers:  # type: ignore[attr-defined]  # a Try or TryStar
                    visit(handler.body)
                # a handler's fallback from another package (`except ImportError: from
                # jax_cuda12_plugin import _mosaic_gpu_ext`) does not hide what the try imported
                for name, binding in tried.items():
                    now = out.bindings.get(name)
                    if now is not None and now != binding and _foreign(now):
                        out.bindings[name] = binding
                visit(stmt.orelse)  # type: ignore[attr-defined]  # a Try or TryStar
                visit(stmt.finalbody)  # type: ignore[attr-defined]  # a Try or TryStar
            elif isinstance(stmt, (ast.With, ast.For)):
                if isinstance(stmt, ast.For):
                    for name in targets(stmt.target):
                        bind(name, "def")
                visit(stmt.body)

    visit(tree.body)
    out.options = _config_options(tree)
    return out


def _foreign(binding: Tuple[str, str]) -> bool:
    """Whether a binding imports from a package other than JAX (``import numpy as np``)."""
    kind, target = binding
    return kind in ("import", "export", "module") and target.split(".")[0] not in ROOTS


def _lazy_names(stmt: ast.stmt, module: str) -> Optional[List[Tuple[str, str]]]:
    """(name, what it loads) for each name a lazy loader gives the module: an assignment to
    ``__getattr__`` (and ``__dir__``, ``__all__``) from a call of ``attach(package, [names])``,
    which loads ``package.name`` on first access. None for any other statement."""
    value = getattr(stmt, "value", None)
    nodes = stmt.targets if isinstance(stmt, ast.Assign) else []
    names = {n.id for target in nodes for n in ast.walk(target) if isinstance(n, ast.Name)}
    if "__getattr__" not in names or not isinstance(value, ast.Call) or len(value.args) < 2:
        return None
    func = value.func
    if (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") != "attach":
        return None
    package, listed = value.args[:2]
    if isinstance(package, ast.Name) and package.id == "__name__":
        base = module
    elif isinstance(package, ast.Constant) and isinstance(package.value, str):
        base = package.value
    else:
        return None
    if not isinstance(listed, (ast.List, ast.Tuple)):
        return None
    return [(e.value, f"{base}.{e.value}") for e in listed.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.isidentifier()]


#: the builtin containers whose methods a module-level registry offers (`mlir.lowerable_effects.add(...)`)
CONTAINER_METHODS = {
    "set": ("add", "clear", "difference_update", "discard", "intersection_update", "pop", "remove",
            "symmetric_difference_update", "update"),
    "dict": ("clear", "get", "items", "keys", "pop", "popitem", "setdefault", "update", "values"),
    "list": ("append", "clear", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort"),
}
_CONTAINER_ANNOTATIONS = {"set": "set", "Set": "set", "MutableSet": "set", "dict": "dict", "Dict": "dict",
                          "MutableMapping": "dict", "list": "list", "List": "list", "MutableSequence": "list"}


def _container(stmt: ast.stmt) -> Optional[str]:
    """The builtin container an assignment binds ("set", "dict", "list"), "" when its annotation
    names another type, None when the statement does not tell."""
    if isinstance(stmt, ast.AugAssign):
        return None
    value = getattr(stmt, "value", None)  # the value first: `_tolerance: ToleranceDict = {...}`
    if isinstance(value, (ast.Set, ast.SetComp)):
        return "set"
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(value, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in CONTAINER_METHODS:
        return value.func.id
    annotation = getattr(stmt, "annotation", None)
    if annotation is not None:
        head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
        name = head.attr if isinstance(head, ast.Attribute) else head.id if isinstance(head, ast.Name) else ""
        return _CONTAINER_ANNOTATIONS.get(name, "")
    return None


def _defines_option(called: str) -> bool:
    """Whether a call of this name defines an option of `jax.config` (read as `jax.config.<name>`),
    across releases: `define_bool_state`, `bool_state`, `string_or_object_state`, `DEFINE_bool`,
    `bool_flag` and the like."""
    return called.endswith(("_state", "_flag")) or called.startswith("DEFINE_")


def _config_options(tree: ast.Module) -> List[str]:
    """Names the `jax.config` object has because of this module: options it defines (by name, as
    the first argument or `name=`), and the public methods and attributes of a class `Config`
    (also those `setattr` adds to it)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if _defines_option(called):
                named = [k.value for k in node.keywords if k.arg == "name"] + node.args[:1]
                if named and isinstance(named[0], ast.Constant) and isinstance(named[0].value, str):
                    found.append(named[0].value)
            elif called == "setattr" and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and \
                    node.args[0].id == "Config" and isinstance(node.args[1], ast.Constant):
                found.append(str(node.args[1].value))  # `setattr(Config, "x64_enabled", property(...))`
        elif isinstance(node, ast.ClassDef) and node.name == "Config":
            for item in ast.walk(node):
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item is not node:
                    found.append(item.name)
                elif isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store) and \
                        isinstance(item.value, ast.Name) and item.value.id == "self":
                    found.append(item.attr)
    return [name for name in found if name.isidentifier() and not name.startswith("_")]


def _dotted(node: ast.expr) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _read_all(out: Summary, stmt: ast.stmt, value: ast.expr) -> None:
    names = [e.value for e in getattr(value, "elts", []) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(stmt, ast.AugAssign):
        out.all = (out.all or []) + names
    elif isinstance(value, (ast.List, ast.Tuple)):
        out.all = names


def _read_deprecations(out: Summary, table: ast.Dict) -> None:
    for key, value in zip(table.keys, table.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if isinstance(value, ast.Tuple) and len(value.elts) == 2:
            message, obj = value.elts
            target = "" if isinstance(obj, ast.Constant) and obj.value is None else _dotted(obj) or "?"
            out.deprecations[key.value] = (_strings(message), target)


# one release tag ----------------------------------------------------------------------------
class Git:
    """Blobs of a JAX clone, read through one ``git cat-file --batch``."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self._batch = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, *args: str) -> str:
        return subprocess.run(["git", f"--git-dir={self.git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout

    def blob(self, sha: str) -> bytes:
        assert self._batch.stdin and self._batch.stdout
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        return data

    def tags(self, since: str) -> List[Tuple[str, str]]:
        """(version, tag) of every release tag from ``since`` on, oldest first."""
        found = []
        for tag in self.run("tag", "-l", "jax-v*").split():
            version = tag[len("jax-v"):]
            if re.fullmatch(r"\d+(\.\d+)+", version) and version_key(version) >= version_key(since):
                found.append((version, tag))
        return sorted(found, key=lambda vt: version_key(vt[0]))

    def modules(self, tag: str) -> Dict[str, Tuple[str, bool]]:
        """module name -> (blob sha, is a package) for the tag's ``jax/**/*.py`` (no tests)."""
        out = {}
        for line in self.run("ls-tree", "-r", tag, "jax/").splitlines():
            meta, path = line.split("\t", 1)
            if not path.endswith(".py") or "/tests/" in path or path.endswith("_test.py"):
                continue
            parts = path[:-3].split("/")
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            if not all(p.isidentifier() for p in parts):
                continue
            out[".".join(parts)] = (meta.split()[2], is_package)
        return out


class Release:
    """Every name one release binds, resolved through re-exports and ``*`` imports."""

    def __init__(self, summaries: Dict[str, Summary], packages: Iterable[str] = ()) -> None:
        self.summaries = summaries
        self.packages = set(packages)
        self._namespaces: Dict[str, Dict[str, Tuple[str, str]]] = {}

    def namespace(self, module: str, seen: Tuple[str, ...] = ()) -> Dict[str, Tuple[str, str]]:
        if module in self._namespaces:
            return self._namespaces[module]
        summary = self.summaries.get(module)
        if summary is None or module in seen:
            return {}
        names: Dict[str, Tuple[str, str]] = {}
        for star in summary.stars:
            source = self.namespace(star, seen + (module,))
            exported = self.summaries[star].all if star in self.summaries else None
            for name, binding in source.items():
                if (name in exported) if exported is not None else not name.startswith("_"):
                    names[name] = binding if binding[0] != "def" else ("import", f"{star}.{name}")
        names.update(summary.bindings)
        for name, (_message, obj) in summary.deprecations.items():
            if obj and name not in names:
                names[name] = ("alias", obj) if obj != "?" else ("def", "")
        self._namespaces[module] = names
        return names

    def definition(self, qualname: str, depth: int = 0) -> Optional[Tuple[str, str]]:
        """(module, name) where an imported name is defined, following re-exports."""
        module, _, name = qualname.rpartition(".")
        if depth > 20 or module not in self.summaries:
            return None
        binding = self.namespace(module).get(name)
        if binding is None:
            return None
        kind, target = binding
        if kind in ("import", "export") and target.split(".")[0] in ROOTS:
            return self.definition(target, depth + 1) or (module, name)
        if kind == "alias" and target:  # `prod` or `_src_core.pp_var`, in this module's names
            head, _, rest = target.partition(".")
            bound = self.namespace(module).get(head) or self.summaries[module].deleted.get(head)
            if bound is None or bound == binding:
                return module, name
            base = bound[1] if bound[0] in ("import", "export", "module") else f"{module}.{head}"
            found = self.definition(f"{base}.{rest}" if rest else base, depth + 1)
            return found or (module, name)
        return module, name

    def names(self) -> Dict[str, Tuple[str, Optional[str]]]:
        """qualname -> (kind, deprecation message or None) of every reachable name."""
        out: Dict[str, Tuple[str, Optional[str]]] = {}
        for module, summary in self.summaries.items():
            out[module] = ("m", None)
            for name, (kind, target) in self.namespace(module).items():
                if name.startswith("__"):
                    continue
                exported = summary.all is not None and name in summary.all
                if kind in ("import", "module") and target.split(".")[0] not in ROOTS and not exported:
                    continue  # `import numpy as np`, `from functools import partial`
                qualname = f"{module}.{name}"
                message = None
                deprecation = summary.deprecations.get(name)
                if deprecation is not None:
                    if not deprecation[1]:
                        continue  # in the table with None: removed, raises AttributeError
                    message = deprecation[0]
                elif kind in ("import", "export"):
                    found = self.definition(qualname)
                    if found is not None and found[0] in self.summaries:
                        message = self.summaries[found[0]].warns.get(found[1])
                else:
                    message = summary.warns.get(name)
                if kind == "module" and target != qualname and not exported or (
                        kind == "import" and not exported and module not in self.packages):
                    letter = "i"  # `import jax` in a module, or a helper it imported: not its API
                elif kind in ("module", "import", "export") and target in self.summaries:
                    letter = "m"
                else:
                    letter = "n"
                out[qualname] = (letter, message)
        return out


def removal_messages(summaries: Dict[str, Summary]) -> Dict[str, str]:
    """qualname -> message for names a ``_deprecations`` table maps to None (removed, with advice)."""
    return {f"{m}.{n}": msg for m, s in summaries.items() for n, (msg, obj) in s.deprecations.items() if not obj}


# the whole history ----------------------------------------------------------------------------
class Unparsable(Exception):
    """A release's file that this Python cannot parse: its names would look removed."""


def mentioned(message: str) -> List[str]:
    """The JAX names a message mentions, ``jnp.x`` read as ``jax.numpy.x``."""
    out = []
    for match in _REFERENCE.finditer(message):
        candidate = match.group(1).rstrip(".")
        out.append("jax.numpy." + candidate[4:] if candidate.startswith("jnp.") else candidate)
    return out


def build(git_dir: str, since: str, log=print) -> Tuple[List[str], Dict[str, list], Dict[str, Dict[int, str]]]:
    git = Git(git_dir)
    cache: Dict[Tuple[str, str], Summary] = {}
    versions: List[str] = []
    presence: Dict[str, List[int]] = {}  # qualname -> version indexes where it exists
    kinds: Dict[str, str] = {}
    deprecated: Dict[str, int] = {}
    messages: Dict[str, str] = {}
    # qualname -> the names its message mentions that were the very same object, at the last
    # release that had both (a pure rename: the replacement is a drop-in)
    same: Dict[str, Dict[str, bool]] = {}
    containers: Dict[str, Dict[int, str]] = {}  # qualname -> release index -> its container type
    signatures: Dict[str, Dict[int, str]] = {}  # function or class -> release index -> its parameters
    for version, tag in git.tags(since):
        index = len(versions)
        versions.append(version)
        summaries: Dict[str, Summary] = {}
        packages: Set[str] = set()
        for module, (sha, is_package) in git.modules(tag).items():
            if is_package:
                packages.add(module)
            key = (sha, module)
            if key not in cache:
                try:
                    cache[key] = summarise(git.blob(sha), module, is_package)
                except (SyntaxError, ValueError) as exc:  # never read as a module the release lacks
                    path = module.replace(".", "/") + ("/__init__.py" if is_package else ".py")
                    raise Unparsable(
                        f"{tag}: Python {sys.version_info[0]}.{sys.version_info[1]} cannot parse {path} ({exc}); "
                        "the release may use syntax newer than this Python: run the script under a newer one") from exc
            summaries[module] = cache[key]
        release = Release(summaries, packages)
        reachable = release.names()
        for qualname, (kind, message) in reachable.items():
            presence.setdefault(qualname, []).append(index)
            kinds[qualname] = kind
            if message is not None:
                deprecated.setdefault(qualname, index)
                messages[qualname] = message
                origin = release.definition(qualname)
                same[qualname] = {c: origin is not None and release.definition(c) == origin for c in mentioned(message)}
        for qualname, message in removal_messages(summaries).items():
            messages.setdefault(qualname, message)
        held = {name for summary in summaries.values() for name in summary.containers}
        for qualname, (kind, _) in reachable.items():
            if kind == "n" and qualname.rpartition(".")[2] in held:
                found = release.definition(qualname)
                if found is not None and found[0] in summaries and found[1] in summaries[found[0]].containers:
                    containers.setdefault(qualname, {})[index] = summaries[found[0]].containers[found[1]]
        for qualname, (kind, _) in reachable.items():
            if kind == "n":
                found = release.definition(qualname)
                if found is not None and found[0] in summaries:
                    params = summaries[found[0]].signatures.get(found[1])
                    if params is not None:
                        signatures.setdefault(qualname, {})[index] = params
        for option in {o for summary in summaries.values() for o in summary.options}:
            qualname = f"jax.config.{option}"
            if index not in presence.get(qualname, ())[-1:]:
                presence.setdefault(qualname, []).append(index)
            kinds[qualname] = "o"
        log(f"{tag}: {len(summaries)} modules, {len(presence)} names so far")
    for qualname, kinds_at in containers.items():  # registries whose type changed: their methods
        for member, indexes in container_members(presence[qualname], kinds_at).items():
            presence[f"{qualname}.{member}"] = indexes
            kinds[f"{qualname}.{member}"] = "o"
    names: Dict[str, list] = {}
    for qualname, indexes in presence.items():
        intervals: List[int] = []
        for i in indexes:
            if intervals and intervals[-1] == i:
                intervals[-1] = i + 1
            else:
                intervals += [i, i + 1]
        if intervals[-1] == len(versions):
            intervals[-1] = -1
        names[qualname] = [intervals, kinds[qualname], deprecated.get(qualname, -1), "", False]
    for qualname, message in messages.items():
        if qualname in names:
            new = replacement(qualname, message, names)
            names[qualname][3] = new
            names[qualname][4] = bool(new) and same.get(qualname, {}).get(new, False)
    return versions, names, signatures


def container_members(present: List[int], kinds_at: Dict[int, str]) -> Dict[str, List[int]]:
    """The releases in which a module-level registry's container methods exist (``.add`` of a
    set), where it stopped being that container in a release that still had it
    (``lowerable_effects`` became an ``EffectTypeSet``); {} where it never did.
    A release whose source does not tell keeps the type before it."""
    current, has = "", {}  # type: Tuple[str, Dict[str, List[int]]]
    for index in present:
        current = kinds_at.get(index, current)
        for method in CONTAINER_METHODS.get(current, ()):
            has.setdefault(method, []).append(index)
    if not any(indexes[-1] < present[-1] for indexes in has.values()):
        return {}  # never stopped being the container while the registry itself was there
    return has


def replacement(qualname: str, message: str, names: Dict[str, list]) -> str:
    """The JAX name a deprecation message points to: of the names it mentions that the history
    knows (other than ``qualname`` and its parents), the first still in the newest release, else
    the first that outlived ``qualname`` (a message also names the old spelling's other paths)."""
    candidates = []
    for candidate in mentioned(message):
        while candidate and candidate not in names:  # "jax.Array." / "jax.tree.map(...)"
            candidate = candidate.rpartition(".")[0]
        if candidate and candidate != qualname and candidate.count(".") >= 1 and not qualname.startswith(candidate + "."):
            candidates.append(candidate)
    end = names[qualname][0][-1]
    for candidate in candidates:
        if names[candidate][0][-1] == -1:
            return candidate
    for candidate in candidates:
        last = names[candidate][0][-1]
        if end != -1 and last > end:
            return candidate
    return ""


def private(qualname: str) -> bool:
    return any(part.startswith("_") for part in qualname.split("."))


def breaking_words(signatures: Dict[str, Dict[int, str]]) -> Tuple[Set[str], Set[str], Set[str]]:
    """The breaking changes, for JM804's prefilter: ``qualname:keyword`` for each keyword some
    release stopped taking or deprecated, and ``qualname:n:r`` for each function that came to
    take fewer positional arguments, ``n`` the fewest it came down to (a call with more may
    break), or a parameter without a default, ``r`` the leading positional parameters without a
    default since (a call with fewer positional arguments may leave one unbound); either may be
    empty. Third, the functions that stopped taking ``**kwargs`` (any keyword they took that way
    may break)."""
    keywords: Set[str] = set()
    functions: Set[str] = set()
    any_keyword: Set[str] = set()
    for qualname, by_release in signatures.items():
        seen: Set[str] = set()
        took_any = False
        most: Optional[int] = 0
        fewest: Optional[int] = None  # the fewest positional arguments it came down to
        previous: Optional[Set[str]] = None  # the parameters without a default of the run before
        least_needed: Optional[int] = None  # positional arguments a call needs since a required one came
        for index in sorted(by_release):
            sig = Signature.parse(by_release[index])  # read as JM804 reads the table
            if sig.var_keywords:
                took_any = True
            elif took_any:
                any_keyword.add(qualname)
            keywords |= {f"{qualname}:{k}" for k in seen if k not in sig.plain_keywords}
            seen |= {p.name for p in sig.params if sig.keyword(p.name) is not None}
            now = sig.most_positional
            if now is not None and (most is None or now < most):
                fewest = now if fewest is None else min(fewest, now)
            most = now if most is not None and (now is None or now > most) else most
            required = {p.name for p in sig.params if p.kind not in ("varargs", "varkw") and not p.default}
            if previous is not None and not required <= previous:
                # a parameter without a default came: a call with fewer positional arguments than
                # the leading ones without a default may now leave one unbound
                needed = sig.fewest_positional
                least_needed = needed if least_needed is None else max(least_needed, needed)
            previous = required
        if fewest is not None or least_needed is not None:
            functions.add(f"{qualname}:{'' if fewest is None else fewest}:{'' if least_needed is None else least_needed}")
    return keywords, functions, any_keyword


def write_signatures(out_dir: Path, versions: List[str], signatures: Dict[str, Dict[int, str]]) -> None:
    """``signatures.tsv`` (public names) and ``signatures_private.tsv`` (private names whose calls
    some release broke: a keyword dropped or deprecated, fewer positional arguments): the versions on the first
    line, then a function or class a line: its qualified name, then for each run of releases with
    the same parameters ``start,end:params`` (release indexes; ``end`` is the first release after
    the run, -1: the newest has it). The public table's second to fourth lines: the words of
    breaking changes of both tables (``breaking_words``), for JM804's prefilter."""
    keywords, functions, any_keyword = breaking_words(signatures)
    for name, keep in (("signatures", False), ("signatures_private", True)):
        lines = ["\t".join(versions)]
        if not keep:
            lines += ["#keywords\t" + " ".join(sorted(keywords)), "#functions\t" + " ".join(sorted(functions)),
                      "#anykeyword\t" + " ".join(sorted(any_keyword))]
        for qualname, by_release in sorted(signatures.items()):
            if private(qualname) != keep or keep and not any(breaking_words({qualname: by_release})):
                continue  # a private function that never broke a call is left out: few projects call one
            runs: List[List] = []
            for index in sorted(by_release):
                params = by_release[index]
                if runs and runs[-1][1] == index and runs[-1][2] == params:
                    runs[-1][1] = index + 1
                else:
                    runs.append([index, index + 1, params])
            cells = [f"{start},{-1 if end == len(versions) else end}:{params}" for start, end, params in runs]
            lines.append("\t".join([qualname, *cells]))
        (out_dir / f"{name}.tsv").write_text("\n".join(lines) + "\n")


def write(out_dir: Path, versions: List[str], names: Dict[str, list]) -> None:
    """``public.tsv`` and ``private.tsv``: the versions on the first line, then one name a line."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for label, keep in (("public", False), ("private", True)):
        lines = ["\t".join(versions)]
        for qualname, (intervals, kind, dep, new, alias) in sorted(names.items()):
            if private(qualname) == keep:
                lines.append("\t".join([qualname, ",".join(map(str, intervals)), kind + ("=" if alias else ""),
                                        str(dep), new]))
        (out_dir / f"{label}.tsv").write_text("\n".join(lines) + "\n")
    # the prefilter's words: for each name some release removed or deprecated, its last part and
    # the module path before it (every spelling of `jax.numpy.product` holds each of its parts)
    parents: Dict[str, set] = {}
    for qualname, (intervals, kind, dep, _, _) in names.items():
        if kind != "i" and (intervals[-1] != -1 or len(intervals) > 2 or dep != -1):
            parent, _, last = qualname.rpartition(".")
            # an attribute of what is now an object (`jax.config.config`) is never judged, but the
            # `jax.config` object's options are
            if parent and (parent == "jax" or kind == "o" or names.get(parent, [None, "n"])[1] == "m"):
                parents.setdefault(last, set()).add(parent)
    rows = [f"{last}\t{' '.join(sorted(paths))}" for last, paths in sorted(parents.items())]
    (out_dir / "triggers.tsv").write_text("\n".join(rows) + "\n")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("git_dir", help="a clone of jax-ml/jax with its tags (bare is fine)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "jaxmigrate" / "catalog" / "data"))
    parser.add_argument("--since", default="0.2.0", help="the oldest release to read (default 0.2.0)")
    args = parser.parse_args(argv)
    try:
        versions, names, signatures = build(args.git_dir, args.since, log=lambda m: print(m, file=sys.stderr))
    except Unparsable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write(Path(args.out), versions, names)
    write_signatures(Path(args.out), versions, signatures)
    public = sum(1 for q in names if not private(q))
    print(f"{len(versions)} releases ({versions[0]} to {versions[-1]}), {public} public and "
          f"{len(names) - public} private names -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
