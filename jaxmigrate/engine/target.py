"""`--target-jax auto`: the JAX the project declares it runs on, else the installed JAX, else the newest.

The project's declared requirement on `jax` is read from, in this order, `[project] dependencies`
of its pyproject.toml, its requirements*.txt, setup.cfg's `install_requires` and setup.py's
`install_requires=[...]` (string literals only; setup.py is read, never run). The first that names
jax decides: `jax==X` gives X, a range its floor (the oldest JAX release it admits, from the API
history's list of releases: `jax>=0.4.20,<0.5` gives 0.4.20, `jax>0.4.20` the release after it,
`jax~=0.4.20` 0.4.20). A requirement with no floor (`jax`, `jax<0.5`) leaves the choice to the
installed jax. `packaging` is not a dependency of jaxmigrate, so the requirement is parsed here:
PEP 508 name, extras, version clauses and markers (markers are not evaluated).
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Version = Tuple[int, ...]
PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
REQUIREMENT = re.compile(r"""^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*
                             (?P<rest>[^;]*?)\s*(?:;.*)?$""", re.VERBOSE)
CLAUSE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*([0-9][0-9A-Za-z.*+!_-]*)\s*$")


def installed() -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


# requirements ------------------------------------------------------------------------------------
def _release(text: str) -> Version:
    """The release part of a version: `0.4.20rc1` -> (0, 4, 20); `1!2.0` -> (2, 0) (epochs ignored)."""
    text = text.split("!")[-1]
    match = re.match(r"\d+(?:\.\d+)*", text)
    return tuple(int(p) for p in match.group(0).split(".")) if match else ()


def _pad(v: Version, n: int) -> Version:
    return v + (0,) * (n - len(v))


def _compare(a: Version, b: Version) -> int:
    n = max(len(a), len(b))
    a, b = _pad(a, n), _pad(b, n)
    return (a > b) - (a < b)


def _admits(op: str, spec: str, version: Version) -> bool:
    """Whether `version` (a final release) satisfies one clause `op spec` (PEP 440, release parts)."""
    if op in ("==", "!=") and spec.endswith(".*"):
        prefix = _release(spec[:-2])
        same = _pad(version, len(prefix))[: len(prefix)] == prefix
        return same if op == "==" else not same
    wanted = _release(spec)
    cmp = _compare(version, wanted)
    if op in ("==", "==="):
        return cmp == 0
    if op == "!=":
        return cmp != 0
    if op == ">=":
        return cmp >= 0
    if op == "<=":
        return cmp <= 0
    if op == ">":
        return cmp > 0
    if op == "<":
        return cmp < 0
    # ~=X.Y.Z: >= X.Y.Z and == X.Y.*
    prefix = wanted[:-1] if len(wanted) > 1 else wanted
    return cmp >= 0 and _pad(version, len(prefix))[: len(prefix)] == prefix


def jax_clauses(requirement: str) -> Optional[List[Tuple[str, str]]]:
    """The version clauses of a requirement on `jax` (`[]` for a bare `jax`), None for any other
    project, a URL requirement or text that is not a requirement."""
    match = REQUIREMENT.match(requirement)
    if not match or re.sub(r"[-_.]+", "-", match.group("name")).lower() != "jax":
        return None
    rest = match.group("rest").strip()
    if rest.startswith("@"):
        return None  # jax @ URL: no version to read
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    clauses = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        clause = CLAUSE.match(part)
        if not clause:
            return None
        clauses.append((clause.group(1), clause.group(2)))
    return clauses


def floor(clauses: Sequence[Tuple[str, str]], releases: Sequence[Version]) -> Optional[str]:
    """The JAX version a requirement's clauses stand for: an exact pin's version, else the oldest
    of `releases` they admit, else (a range beyond the known releases) its own lower bound."""
    for op, spec in clauses:
        if op in ("==", "===") and not spec.endswith(".*"):
            return ".".join(map(str, _release(spec)))
    lower = [(op, spec) for op, spec in clauses if op in (">=", ">", "~=", "==")]
    if not lower:
        return None
    admitted = [r for r in sorted(releases) if all(_admits(op, spec, r) for op, spec in clauses)]
    if admitted:
        return ".".join(map(str, admitted[0]))
    floors: List[Version] = [_release(spec.rstrip(".*")) for _, spec in lower]
    highest = max(floors, key=lambda v: _pad(v, 4))
    return ".".join(map(str, highest))


# where projects declare them --------------------------------------------------------------------
def _pyproject(path: Path) -> List[str]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    deps = data.get("project", {}).get("dependencies", [])
    return [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []


def _requirements_txt(path: Path) -> List[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    text = re.sub(r"\\\r?\n", " ", text)  # line continuations
    lines = []
    for line in text.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line).strip()  # comments (a `#` after a space or at the start)
        if line and not line.startswith("-"):  # -r, -c, -e, --index-url ...: not requirements
            lines.append(line)
    return lines


def _setup_cfg(path: Path) -> List[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return []
    value = parser.get("options", "install_requires", fallback="")
    return [line.strip() for line in value.splitlines() if line.strip()]


def _setup_py(path: Path) -> List[str]:
    """String literals of `install_requires=[...]` in a call, or of the list a module-level name it
    passes is assigned (setup.py is parsed, never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    lists = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            lists[stmt.targets[0].id] = stmt.value
    found: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            value = lists.get(node.value.id, node.value) if isinstance(node.value, ast.Name) else node.value
            if isinstance(value, (ast.List, ast.Tuple)):
                found += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return found


def _sources(root: Path) -> List[Tuple[str, Callable[[Path], List[str]], Path]]:
    """(shown name, reader, path), in the order they are consulted."""
    sources = [("pyproject.toml", _pyproject, root / "pyproject.toml")]
    sources += [(p.name, _requirements_txt, p) for p in sorted(root.glob("requirements*.txt"))]
    sources += [("setup.cfg", _setup_cfg, root / "setup.cfg"), ("setup.py", _setup_py, root / "setup.py")]
    return [s for s in sources if s[2].is_file()]


def declared(root: Path) -> Optional[Tuple[str, List[Tuple[str, str]], str]]:
    """The project's first requirement on jax: (the requirement as written, its clauses, the file)."""
    for name, read, path in _sources(root):
        for requirement in read(path):
            clauses = jax_clauses(requirement)
            if clauses is not None:
                return requirement.split(";")[0].strip(), clauses, name
    return None


def project_root(start: Optional[Path]) -> Path:
    """The nearest folder, from `start` (a path given on the command line) upwards, that holds a
    pyproject.toml, setup.cfg, setup.py or requirements*.txt; else the working directory."""
    start = (start or Path.cwd()).resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in [folder, *folder.parents]:
        if any((candidate / f).is_file() for f in PROJECT_FILES) or any(candidate.glob("requirements*.txt")):
            return candidate
    return Path.cwd()


def _releases() -> List[Version]:
    from jaxmigrate.catalog.api_history import table

    return [_release(v) for v in table(False).versions]


def auto(root: Optional[Path], start: Optional[Path] = None) -> Tuple[Optional[str], str]:
    """(version or None for the newest, where it came from). `root`: the folder of the pyproject.toml
    with [tool.jaxmigrate], if any; else the project is found from `start` upwards."""
    folder = root or project_root(start)
    found = declared(folder)
    why_not = "no jax requirement in the project's pyproject.toml, requirements*.txt, setup.cfg or setup.py"
    if found:
        requirement, clauses, where = found
        version = floor(clauses, _releases())
        if version:
            exact = any(op in ("==", "===") and not spec.endswith(".*") for op, spec in clauses)
            return version, (f"`{requirement}` in {where}" if exact else f"the floor of `{requirement}` in {where}")
        why_not = f"`{requirement}` in {where} has no lower bound"
    version = installed()
    if version:
        return re.match(r"\d+(?:\.\d+){0,2}", version).group(0), f"the installed jax; {why_not}"  # type: ignore[union-attr]  # an installed version starts with its release
    return None, f"the newest; {why_not} and no installed jax"
