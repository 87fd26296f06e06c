"""The house's floors (issue 17): each package imports only from its own floor or below, no rule
imports another rule, the layers above the rules reach them only through the registry, and no
module-level import cycle exists. Read from the source with ``ast``, nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

PACKAGE = Path(__file__).resolve().parent.parent / "jaxmigrate"

#: lowest first; a module may import modules of its own floor or a lower one
FLOORS = [
    {"jaxmigrate.core", "jaxmigrate.catalog"},
    {"jaxmigrate.analysis"},
    {"jaxmigrate.prefilter"},
    {"jaxmigrate.patterns"},
    {"jaxmigrate.rules"},
    {"jaxmigrate.engine", "jaxmigrate.reporting"},
    {"jaxmigrate.verify"},
    {"jaxmigrate.cli", "jaxmigrate.api", "jaxmigrate.server", "jaxmigrate.__main__", "jaxmigrate"},
]


def _defines_a_rule(path: Path) -> bool:
    """Whether a module defines a rule: a class that sets ``code = "JM..."``. The others under
    rules/ (``base``, ``moved_name_base``) hold base classes the rules share."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == "code" for t in stmt.targets)
                        and isinstance(stmt.value, ast.Constant) and str(stmt.value.value).startswith("JM")):
                    return True
    return False


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> List[Tuple[str, int, bool]]:
    """(imported jaxmigrate module, line, whether at module level) for each import in the file."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body} | {id(n) for stmt in tree.body if isinstance(stmt, (ast.If, ast.Try))
                                         for n in ast.walk(stmt)}
    guarded = {id(n) for stmt in tree.body if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.dump(stmt.test)
               for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name == "jaxmigrate" or name.startswith("jaxmigrate."):
                found.append((name, node.lineno, id(node) in top and id(node) not in guarded))
    return found


MODULES: Dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _existing(name: str, modules: Dict[str, Path] = MODULES) -> str:
    """The module an imported name lives in (``from m import f`` names ``m.f``, a function)."""
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def _floor(module: str) -> int:
    for level, packages in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in packages if p != "jaxmigrate") or module in packages:
            return level
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS")


def test_imports_only_go_down():
    wrong = []
    for module, path in MODULES.items():
        for name, line, _ in _imports(path):
            target = _existing(name)
            if target != "jaxmigrate" and _floor(target) > _floor(module):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target}, a higher floor")
    assert not wrong, "\n".join(dict.fromkeys(wrong))


def test_no_rule_imports_another_rule_and_the_rest_use_the_registry():
    wrong = []
    for module, path in MODULES.items():
        for name, line, _ in _imports(path):
            target = _existing(name)
            if not target.startswith("jaxmigrate.rules.") or target == module:
                continue
            if module.startswith("jaxmigrate.rules.") or module == "jaxmigrate.rules":
                if module != "jaxmigrate.rules" and _defines_a_rule(MODULES[target]):  # the registry imports every rule
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: rule module {module} imports {target}")
            else:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} reaches into {target}, "
                             "not through the registry")
    assert not wrong, "\n".join(dict.fromkeys(wrong))


def _cycle(modules: Dict[str, Path], local: bool) -> List[str]:
    """An import cycle among ``modules`` (through imports at module level, and with ``local``
    through those inside functions too, which only hide it), or []."""
    graph: Dict[str, Set[str]] = {}
    for module, path in modules.items():
        graph[module] = {t for t in (_existing(n, modules) for n, _, top in _imports(path) if top or local) if t != module}
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt.startswith(node + "."):
                continue  # a package importing its own submodules (the registry) is how packages work
            if state.get(nxt) == 1:
                raise _Found(stack[stack.index(nxt):] + [nxt])
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    try:
        for module in sorted(graph):
            if module not in state:
                visit(module)
    except _Found as found:
        return found.args[0]
    return []


class _Found(Exception):
    pass


def test_no_import_cycle_at_module_level():
    cycle = _cycle(MODULES, local=False)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_through_function_local_imports():
    """A cycle hidden in an import inside a function is still a cycle between the modules."""
    cycle = _cycle(MODULES, local=True)
    assert not cycle, "import cycle (through local imports): " + " -> ".join(cycle)


RULE_CODE = re.compile(r"\bJM[1-9][0-9]{2}\b")


def _rule_codes_in(path: Path) -> List[str]:
    """The rule codes a module's code names (string constants; docstrings and comments aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and RULE_CODE.search(node.value)]


def test_the_engine_knows_no_rule():
    """No rule code in engine/: what a rule needs of the project it declares (analysis/project.py)."""
    found = [hit for path in sorted((PACKAGE / "engine").rglob("*.py")) for hit in _rule_codes_in(path)]
    assert not found, "\n".join(found)


def test_the_cycle_and_rule_code_checks_would_see_an_injected_one(tmp_path):
    """The two checks above read what they claim to: a cycle made only of local imports, and a
    rule code in an engine module (not in its docstring)."""
    (tmp_path / "a.py").write_text("def f():\n    from jaxmigrate.engine.b import g\n")
    (tmp_path / "b.py").write_text("def g():\n    from jaxmigrate.engine.a import f\n")
    modules = {"jaxmigrate.engine.a": tmp_path / "a.py", "jaxmigrate.engine.b": tmp_path / "b.py"}
    assert _cycle(modules, local=False) == []
    assert _cycle(modules, local=True) == ["jaxmigrate.engine.a", "jaxmigrate.engine.b", "jaxmigrate.engine.a"]
    (tmp_path / "c.py").write_text('"""Mentions JM502 in a docstring."""\nRULE = "JM502"\n')
    assert _rule_codes_in(tmp_path / "c.py") == ["c.py:2: 'JM502'"]


def test_the_floor_check_would_see_an_upward_import(tmp_path):
    """The checks above read what they claim to: an engine module's import of a rule module is
    seen, with its line."""
    sample = tmp_path / "x.py"
    sample.write_text("import os\nfrom jaxmigrate.rules.base import Rule\n\ndef f():\n    from jaxmigrate.cli import main\n")
    found = _imports(sample)
    assert ("jaxmigrate.rules.base", 2, True) in found and ("jaxmigrate.cli", 5, False) in found
    assert _floor("jaxmigrate.engine.pipeline") > _floor("jaxmigrate.rules.base") > _floor("jaxmigrate.analysis.context")
    assert _defines_a_rule(MODULES["jaxmigrate.rules.tree_aliases"]) and not _defines_a_rule(MODULES["jaxmigrate.rules.base"])
    assert not _defines_a_rule(MODULES["jaxmigrate.rules.moved_name_base"])


# One rename machine (issue 25): the text of the import statements that move names -----------
#: the one renamer: the only module besides the shared import service that writes import statements
RENAMER = "jaxmigrate.patterns.renames"
#: the import service every rule's fix goes through (new imports, dropped names) and its renderers
IMPORT_SERVICE = {"jaxmigrate.analysis.import_text", "jaxmigrate.analysis.imports", "jaxmigrate.analysis.import_layout"}
#: import_text's renderers of import statements
_RENDERERS = {"render_import_from", "render_without_names", "alias_comments"}


def _writes_import_text(tree: ast.AST) -> List[int]:
    """The lines where source builds the text of an import statement: a call of import_text's
    renderers, or a string that starts one and is completed by code (``f"from {m} import {n}"``,
    ``"import " + names``, ``f"{new} as {alias.asname}"`` in an ``import`` alias)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in _RENDERERS:
                lines.append(node.lineno)
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            first = node.values[0]
            if isinstance(first, ast.Constant) and str(first.value) in ("from ", "import ", " as "):
                lines.append(node.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
            if str(node.left.value) in ("from ", "import "):
                lines.append(node.lineno)
    return sorted(lines)


def test_only_the_renamer_writes_the_import_statements_of_moved_names():
    """Outside the shared import service, the one renamer alone writes import statements: the
    moved-name rule (JM201, JM601) and the API-history rules (JM801-JM803) both get theirs from
    it. Before issue 25, ``rules/moved_name_base.py`` rendered its own (``render_import_from``,
    ``f"from {new_module} import {names}"``, ``f" as {alias.asname}"``)."""
    writers = {}
    for module, path in MODULES.items():
        lines = _writes_import_text(ast.parse(path.read_text()))
        if lines and module not in IMPORT_SERVICE:
            writers[module] = lines
    assert list(writers) == [RENAMER], f"modules that write import statements besides the renamer: {writers}"
    users = {m for m, p in MODULES.items() for name, _, _ in _imports(p) if _existing(name) == RENAMER}
    assert {"jaxmigrate.rules.moved_name_base", "jaxmigrate.patterns.history_findings"} <= users


def test_the_import_text_check_sees_each_form():
    """The check above would see the forms the moved-name rule used before the renamer."""
    sample = ast.parse(
        "edit = ctx.replace(node, f'from {new_module} import {names}')\n"
        "lines = [render_import_from(mod, items, True, prefix, nl)]\n"
        "text = new + (f' as {alias.asname}' if alias.asname else '')\n"
        "other = 'import ' + ', '.join(names)\n"
        "message = f'`{module}` moved to `{new}`'\n"
    )
    assert _writes_import_text(sample) == [1, 2, 3, 4]
