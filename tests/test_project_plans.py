"""The plans that span modules: JM701/JM702 change together over modules linked by imports, or not
at all; JM502 knows the GDAs other modules' helpers make."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxmigrate.analysis.module_graph import ModuleGraph, imported_names, linked_groups
from jaxmigrate.engine import runner
from jaxmigrate.engine.cache import Cache
from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import Settings
from jaxmigrate.rules import ALL_RULES

ALL = tuple(r.code for r in ALL_RULES)

KWARGS_PJIT = """\
from jax.experimental.pjit import pjit


def make_step(**options):
    return pjit(lambda a: a * 2, **options)
"""
PLAIN_PJIT = """\
from jax.experimental.pjit import pjit
from jax.sharding import PartitionSpec as P

step = pjit(lambda a: a * 2, P("x"), P("x"))


def make_step(**options):
    return step
"""
MAIN = """\
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from model import make_step

mesh = Mesh(np.array(jax.devices()), ("x",))
step = make_step(in_shardings=P("x"), out_shardings=P("x"))
with mesh:
    out = step(np.arange(8.0))
"""


def _tree(tmp_path: Path, **modules: str) -> list:
    for name, text in modules.items():
        (tmp_path / f"{name}.py").write_text(text)
    return [SourceFile(tmp_path / f"{name}.py", f"{name}.py") for name in sorted(modules)]


def _run(files, cache=None, **options):
    settings = Settings(options.pop("codes", ALL), unsafe_fixes=True, **options)
    return {f.display: r for f, r in zip(files, runner.run(files, settings, jobs=1, cache=cache))}


def _graph(tmp_path: Path, **modules: str) -> ModuleGraph:
    paths = []
    for name, text in modules.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    graph = ModuleGraph(paths)
    for i, path in enumerate(paths):
        graph.add_names(i, imported_names(Path(path).read_bytes()))
    return graph


def test_import_statements_are_read_from_bytes():
    data = b"import a.b as c, d\nfrom ..m import (x,\n    y as z)\nfrom . import k\nfrom p.q import r  # note\n"
    assert imported_names(data) == [(0, "a.b", []), (0, "d", []), (2, "m", ["x", "y"]), (1, "", ["k"]),
                                    (0, "p.q", ["r"])]


def test_imports_resolve_to_the_trees_files(tmp_path):
    graph = _graph(tmp_path, **{
        "pkg/__init__.py": "",
        "pkg/model.py": "from .layers import dense\n",
        "pkg/layers.py": "",
        "pkg/train.py": "from pkg import model\n",
        "scripts/run.py": "import utils\nimport pkg.train\n",
        "scripts/utils.py": "",
        "other/utils.py": "",
    })
    names = [Path(p).relative_to(tmp_path).as_posix() for p in graph.paths]
    edges = {names[i]: sorted(names[j] for j in e) for i, e in enumerate(graph.edges)}
    assert edges["pkg/model.py"] == ["pkg/layers.py"]  # relative
    assert edges["pkg/train.py"] == ["pkg/__init__.py", "pkg/model.py"]  # `from pkg import module`
    # a top-level name: the script's sibling, not every utils.py; a dotted one runs the package too
    assert edges["scripts/run.py"] == ["pkg/__init__.py", "pkg/train.py", "scripts/utils.py"]
    assert sorted(names[j] for j in graph.reachable(names.index("scripts/run.py"))) == [
        "pkg/__init__.py", "pkg/layers.py", "pkg/model.py", "pkg/train.py", "scripts/utils.py"]


def test_a_shared_dependency_links_nothing(tmp_path):
    graph = _graph(tmp_path, **{"a.py": "import common\n", "b.py": "import common\n", "common.py": "",
                                "c.py": "import a\n"})
    names = [Path(p).name for p in graph.paths]
    groups = linked_groups(graph, [names.index("a.py"), names.index("b.py"), names.index("c.py")])
    assert [[names[i] for i in g] for g in groups] == [["a.py", "c.py"], ["b.py"]]


def test_a_mesh_held_in_one_module_holds_the_pjit_it_imports(tmp_path):
    files = _tree(tmp_path, main=MAIN, model=KWARGS_PJIT)
    results = _run(files, fix=True, write=False)
    assert not results["main.py"].changed
    (held,) = [f for f in results["main.py"].findings if f.code == "JM702"]
    assert held.fix is None and "model.py:5 keeps its pjit (JM701)" in held.message


def test_modules_that_can_both_change_change_together(tmp_path):
    files = _tree(tmp_path, main=MAIN, model=PLAIN_PJIT)
    results = _run(files, fix=True, write=False)
    assert "jax.set_mesh(mesh)" in results["main.py"].new_bytes.decode()
    assert "jax.jit(" in results["model.py"].new_bytes.decode()


def test_unlinked_modules_plan_alone(tmp_path):
    files = _tree(tmp_path, main=MAIN.replace("from model import make_step", "make_step = jax.jit"),
                  model=KWARGS_PJIT)
    results = _run(files, fix=True, write=False)
    assert "jax.set_mesh(mesh)" in results["main.py"].new_bytes.decode()


def test_one_rule_of_the_pair_selected_holds_the_other(tmp_path):
    """--select JM702 alone: converting `with mesh:` around a pjit that stays would break it."""
    text = PLAIN_PJIT + "\nimport numpy as np\nfrom jax.sharding import Mesh\nimport jax\n" \
        "with Mesh(np.array(jax.devices()), ('x',)):\n    step(np.arange(8.0))\n"
    files = _tree(tmp_path, model=text)
    results = _run(files, codes=("JM702",), fix=True, write=False)
    assert not results["model.py"].changed
    (held,) = results["model.py"].findings
    assert "keeps its pjit (its rewrite is not selected there)" in held.message


def test_check_and_fix_agree_and_the_cache_follows_the_other_module(tmp_path):
    files = _tree(tmp_path, main=MAIN, model=PLAIN_PJIT)
    cache = Cache(tmp_path)
    checked = _run(files, cache=cache)
    assert [f.fix_safety for f in checked["main.py"].findings if f.code == "JM702"] == ["unsafe"]
    (tmp_path / "model.py").write_text(KWARGS_PJIT)  # main.py itself untouched: its hold changes
    checked = _run(files, cache=cache)
    assert [f.fix_safety for f in checked["main.py"].findings if f.code == "JM702"] == [None]


def test_a_warm_run_plans_without_reading_or_fixing(tmp_path, monkeypatch):
    from tests.test_cache import _age, _count_reads

    files = _tree(tmp_path, main=MAIN, model=KWARGS_PJIT)
    _age(*(f.path for f in files))
    cache = Cache(tmp_path)
    first = _run(files, cache=cache)
    reads = _count_reads(monkeypatch)
    monkeypatch.setattr("jaxmigrate.engine.pipeline.transform", None)  # any analysis fails
    second = _run(files, cache=Cache(tmp_path))
    assert [r for r in reads if r.suffix == ".py"] == []
    assert [f.message for f in second["main.py"].findings] == [f.message for f in first["main.py"].findings]
    assert "model.py:5 keeps its pjit" in second["main.py"].findings[0].message


def test_the_plan_fixes_nothing(tmp_path, monkeypatch):
    """The plan is decided from each module's own findings: ``check`` applies no fix at all, and
    ``fix`` analyses each member once before the one fix run."""
    from jaxmigrate.engine import pipeline

    files = _tree(tmp_path, main=MAIN, model=KWARGS_PJIT)
    monkeypatch.setattr("jaxmigrate.engine.pipeline.apply_round", None)  # any fix fails
    checked = _run(files)
    assert "model.py:5 keeps its pjit" in checked["main.py"].findings[0].message
    monkeypatch.undo()
    calls = []
    real = pipeline.transform

    def counted(data, display, settings, *rest):
        calls.append((display, settings.fix))
        return real(data, display, settings)

    monkeypatch.setattr("jaxmigrate.engine.pipeline.transform", counted)
    _run(files, fix=True, write=False)
    assert sorted(calls) == [("main.py", False), ("main.py", True), ("model.py", False), ("model.py", True)]


HELPERS = """\
import numpy as np
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.sharding import PartitionSpec as P


def make_params(mesh) -> GlobalDeviceArray:
    return build(mesh)


def build(mesh):
    return GlobalDeviceArray.from_callback((8,), mesh, P("x"), lambda idx: np.zeros(8)[idx])


def not_a_gda(mesh):
    return mesh
"""


@pytest.mark.parametrize("imports,call", [
    ("from model import make_params", "make_params(mesh)"),
    ("from model import build as make", "make(mesh)"),
    ("import model", "model.make_params(mesh)"),
    ("from pkg import model", "model.build(mesh)"),
])
def test_gdas_made_by_another_modules_helpers_are_known(tmp_path, imports, call):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    folder = tmp_path / "pkg" if "pkg" in imports else tmp_path
    (folder / "model.py").write_text(HELPERS)
    (tmp_path / "main.py").write_text(f"{imports}\n\nparams = {call}\naxes = params.mesh_axes\n")
    files = [SourceFile(p, p.name) for p in sorted(tmp_path.rglob("*.py"))]
    results = _run(files, fix=True, write=False, target=(0, 4, 14))
    assert "axes = params.sharding.spec" in results["main.py"].new_bytes.decode()


def test_a_helper_that_makes_no_gda_says_nothing(tmp_path):
    files = _tree(tmp_path, model=HELPERS, main="from model import not_a_gda\n\nx = not_a_gda(1)\ny = x.mesh_axes\n")
    assert _run(files, fix=False, target=(0, 4, 14))["main.py"].findings == []


# issue 28, item 9: a checkout whose files sit in one package, and a run over part of a project -----------------
def test_a_run_over_the_files_of_one_package_resolves_imports_of_that_package(tmp_path):
    """Modules were named relative to the common folder of the files: with every file inside
    ``pkg/``, ``from pkg.model import ...`` resolved to nothing and the two modules planned apart."""
    graph = _graph(tmp_path, **{"pkg/__init__.py": "", "pkg/model.py": "",
                                "pkg/main.py": "from pkg.model import make_step\nfrom pkg import model\n"})
    names = [Path(p).name for p in graph.paths]
    assert sorted(names[j] for j in graph.edges[names.index("main.py")]) == ["__init__.py", "model.py"]


def test_a_mesh_held_in_a_package_holds_the_pjit_of_the_module_it_calls(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(KWARGS_PJIT)
    (tmp_path / "pkg" / "main.py").write_text(MAIN.replace("from model import", "from pkg.model import"))
    files = [SourceFile(tmp_path / "pkg" / n, f"pkg/{n}") for n in ("__init__.py", "main.py", "model.py")]
    results = _run(files, fix=True, write=False)
    assert not results["pkg/main.py"].changed  # was: `with jax.set_mesh(mesh):` around the pjit model.py keeps
    (held,) = [f for f in results["pkg/main.py"].findings if f.code == "JM702"]
    assert "pkg/model.py:5 keeps its pjit (JM701)" in held.message


def _project(tmp_path: Path, model: str, marker: str = "pyproject.toml") -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    if marker:
        (root / marker).write_text("[project]\nname = 'proj'\n" if marker == "pyproject.toml" else "")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(model)
    (root / "pkg" / "train").mkdir()  # a folder of scripts inside the package, no __init__.py
    (root / "pkg" / "train" / "main.py").write_text(MAIN.replace("from model import", "from pkg.model import"))
    return root


def _cli(root: Path, *args: str):
    import os

    from click.testing import CliRunner

    from jaxmigrate.cli import main

    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.cfg", ""])
def test_a_run_over_one_file_plans_with_the_rest_of_its_project(tmp_path, marker):
    """`fix pkg/train/main.py` reads the imports of the whole project (the folder of its
    pyproject.toml or setup.cfg, else the top of its package chain) and fixes only that file: its
    `with mesh:` stays while model.py, which it calls, keeps its pjit."""
    root = _project(tmp_path, KWARGS_PJIT, marker)
    before = {p: p.read_text() for p in root.rglob("*.py")}
    result = _cli(root, "fix", "--no-cache", "--unsafe-fixes", "pkg/train/main.py")
    assert {p: p.read_text() for p in root.rglob("*.py")} == before
    assert "pkg/model.py:5 keeps its pjit (it is not among the paths given: fix them together), and that module and " \
           "this one are linked by imports" in result.output
    assert "model.py:5:" not in result.output  # read for the plan, not reported
    checked = _cli(root / "pkg" / "train", "check", "--no-cache", "main.py")
    assert "keeps its pjit (it is not among the paths given" in checked.output


def test_a_module_outside_the_paths_given_holds_the_ones_given(tmp_path):
    """model.py could change with main.py, but the run was not given it: it keeps its pjit, so
    main.py keeps `with mesh:`; given both, both change."""
    root = _project(tmp_path, PLAIN_PJIT)
    alone = _cli(root, "fix", "--diff", "--no-cache", "--unsafe-fixes", "pkg/train/main.py")
    assert "+with jax.set_mesh" not in alone.output
    assert "pkg/model.py:4 keeps its pjit (it is not among the paths given: fix them together)" in alone.output
    both = _cli(root, "fix", "--diff", "--no-cache", "--unsafe-fixes", "pkg/train/main.py", "pkg/model.py")
    assert "+with jax.set_mesh(mesh):" in both.output and "+step = jax.jit(" in both.output
    whole = _cli(root, "fix", "--diff", "--no-cache", "--unsafe-fixes", ".")
    assert whole.output == both.output


def test_the_project_root(tmp_path, monkeypatch):
    from jaxmigrate.engine.project import Roots

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    deep = tmp_path / "home" / "co" / "src" / "pkg" / "sub" / "scripts"
    deep.mkdir(parents=True)
    for folder in (deep.parent.parent, deep.parent):  # pkg/ and pkg/sub/ are packages, scripts/ is not
        (folder / "__init__.py").write_text("")
    assert Roots().root(str(deep)) == str(tmp_path / "home" / "co" / "src")  # the top of the package chain
    (tmp_path / "home" / "co" / "setup.py").write_text("")
    assert Roots().root(str(deep)) == str(tmp_path / "home" / "co")  # the nearest marker
    (tmp_path / "home" / "co" / "setup.py").unlink()
    (tmp_path / "home" / "pyproject.toml").write_text("")  # above the checkout's top: not this project's
    (tmp_path / "home" / "co" / ".git").mkdir()
    assert Roots().root(str(deep)) == str(tmp_path / "home" / "co" / "src")
    (tmp_path / "home" / "co" / ".git").rmdir()
    assert Roots().root(str(deep)) is None  # the home folder: no project wider than the files given
    assert Roots().root(str(tmp_path / "home")) is None


def test_gdas_made_by_a_helper_outside_the_paths_given_are_known(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(HELPERS)
    (tmp_path / "main.py").write_text("from model import make_params\n\nparams = make_params(mesh)\naxes = params.mesh_axes\n")
    result = _cli(tmp_path, "fix", "--diff", "--no-cache", "--target-jax", "0.4.14", "main.py")
    assert "+axes = params.sharding.spec" in result.output and "model.py" not in result.output


def test_a_script_outside_any_project_reads_nothing_else(tmp_path, monkeypatch):
    """A script in a folder that is no package and has no marker above it (a download folder,
    /tmp) has no project beyond itself: the run does not walk its folder's other trees, where a
    broken configuration of someone else's (here: an unknown key) must not stop it either."""
    from jaxmigrate.engine.project import Roots

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    loose = tmp_path / "downloads"
    loose.mkdir()
    (loose / "script.py").write_text(PLAIN_PJIT.replace("from model import", "from nowhere import"))
    other = loose / "someone_else"
    other.mkdir()
    (other / "pyproject.toml").write_text("[tool.jaxmigrate]\nselectt = ['JM']\n")
    (other / "model.py").write_text(PLAIN_PJIT)
    assert Roots().root(str(loose)) is None
    result = _cli(loose, "check", "--no-cache", "script.py")
    assert result.exit_code in (0, 1) and "selectt" not in result.output


# issue 36, item 5: the projects of one run -------------------------------------------------------------------
def test_projects_beside_each_other_are_not_linked_through_a_name_both_have(tmp_path):
    """Each project resolves `shared.utils` to its own module; a script in no project that imports
    `jax` is not linked to the `jax` package of a project beside it (the installed one is what runs);
    a project nested in another is linked to it where the importer's own project has no such module."""
    from jaxmigrate.engine.project import Roots

    modules = {
        "alpha/pyproject.toml": "", "alpha/train.py": "from shared.utils import double\n",
        "alpha/shared/__init__.py": "", "alpha/shared/utils.py": "",
        "beta/setup.py": "", "beta/train.py": "from shared.utils import triple\nimport lib.core\n",
        "beta/shared/__init__.py": "", "beta/shared/utils.py": "",
        "beta/lib/setup.cfg": "", "beta/lib/lib/__init__.py": "", "beta/lib/lib/core.py": "",
        "jax041/setup.py": "", "jax041/jax/__init__.py": "", "loose/example.py": "import jax\n",
    }
    for name, text in modules.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / n) for n in modules if n.endswith(".py")]
    graph = ModuleGraph(paths, project_of=Roots().root)
    for i, path in enumerate(paths):
        graph.add_names(i, imported_names(Path(path).read_bytes()))
    names = [Path(p).relative_to(tmp_path).as_posix() for p in graph.paths]
    edges = {names[i]: sorted(names[j] for j in e) for i, e in enumerate(graph.edges)}
    assert edges["alpha/train.py"] == ["alpha/shared/__init__.py", "alpha/shared/utils.py"]
    assert edges["beta/train.py"] == ["beta/lib/lib/__init__.py", "beta/lib/lib/core.py", "beta/shared/__init__.py",
                                      "beta/shared/utils.py"]
    assert edges["loose/example.py"] == []
    unscoped = ModuleGraph(paths)  # one project: every module of that name
    unscoped.add_names(names.index("alpha/train.py"), imported_names(b"from shared.utils import double\n"))
    assert len(unscoped.edges[names.index("alpha/train.py")]) == 4


# issue 36, item 6: the plan reads the modules linked to the files given, not the whole project --------------
KEPT_MESH = MAIN.replace("mesh = Mesh(np.array(jax.devices()), (\"x\",))\n", "").replace(
    "with mesh:", "with open(__file__) as f, Mesh(np.array(jax.devices()), (\"x\",)) as mesh:")


def _linked_project(tmp_path: Path) -> Path:
    """model.py is imported by glue.py (no pjit, no mesh), which run.py imports: run.py keeps a
    `with mesh:` it cannot lose (`as` on a `with` of two items), so model.py keeps its pjit.
    other.py has a pjit and is linked to nothing."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (root / "model.py").write_text(PLAIN_PJIT)
    (root / "glue.py").write_text("from model import make_step\n")
    (root / "run.py").write_text(KEPT_MESH.replace("from model import", "from glue import"))
    (root / "other.py").write_text(PLAIN_PJIT)
    for i in range(20):
        (root / f"unrelated_{i}.py").write_text(f"import os\nVALUE = {i}\n")
    return root


@pytest.mark.parametrize("cached", [False, True])
def test_one_file_reads_the_modules_linked_to_it_and_no_other(tmp_path, cached):
    from jaxmigrate.engine.discovery import discover, walk_files
    from jaxmigrate.engine.project import declared, scan

    root = _linked_project(tmp_path)
    files, _ = discover([str(root / "model.py")])
    cache = Cache(tmp_path / "cache") if cached else None
    for _ in range(2 if cached else 1):  # with a cache: the second scan takes the imports from it
        found = scan(files, declared(ALL), cache, lambda: walk_files([str(root)]))
    read = sorted(Path(found.graph.paths[i]).name for i in found.graph.read)
    assert read == ["glue.py", "model.py", "run.py"]  # what imports it, through any file; not other.py


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_a_module_is_held_by_a_module_that_imports_it_outside_the_paths_given(tmp_path, cache):
    """`fix model.py`: run.py, which imports it through glue.py, keeps its `with mesh:`, under which
    model.py's pjit runs: model.py keeps it (a jax.jit there would find no mesh). As when the run is
    given the whole project."""
    root = _linked_project(tmp_path)
    one = _cli(root, "check", *cache, "model.py")
    assert "run.py:8 keeps its `with mesh:` (it is not among the paths given: fix them together)" in one.output
    again = _cli(root, "check", *cache, "model.py")
    assert again.output == one.output
    whole = _cli(root, "check", "--no-cache", "--format", "json", ".")
    import json

    found, _ = json.JSONDecoder().raw_decode(whole.output)  # the summary follows (on stderr, mixed here)
    held = [f["message"] for f in found if f["path"] == "model.py"]
    assert held and all("run.py:8 keeps its `with mesh:` (JM702)" in m for m in held)


def test_a_search_for_importers_finds_every_form_of_import(tmp_path):
    """The files that may import a module are found from their import lines: each form
    ``imported_names`` reads (a name in brackets on a later line, a relative import of the package
    itself), in a file read without the cache and from the cache alike."""
    from jaxmigrate.engine.discovery import discover, walk_files
    from jaxmigrate.engine.project import _import_lines, declared, scan

    assert _import_lines(b"x = 1\nfrom m import (a,\n    train)\ny = (train)\nimport os\n") == \
        b"from m import (a,\n    train)\nimport os"
    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "pkg" / "__init__.py").write_text("from pkg.model import step\n")
    (root / "pkg" / "model.py").write_text(PLAIN_PJIT)
    importers = {
        "bracket.py": "from pkg import (\n    other,\n    model,\n)\n",
        "pkg/sub/relative.py": "from .. import step\n",  # pkg/__init__.py, which imports model.py
        "dotted.py": "def main():\n    import pkg.model\n",
        "text.py": "model = 1\nprint(model)\n",  # the name, in no import statement
    }
    for name, text in importers.items():
        (root / name).write_text(text)
    files, _ = discover([str(root / "pkg" / "model.py")])
    for cache in (None, Cache(tmp_path / "cache"), Cache(tmp_path / "cache")):
        found = scan(files, declared(ALL), cache, lambda: walk_files([str(root)]))
        if cache is not None:
            cache.save()
        read = sorted(Path(found.graph.paths[i]).relative_to(root).as_posix() for i in found.graph.read)
        assert read == ["bracket.py", "dotted.py", "pkg/__init__.py", "pkg/model.py", "pkg/sub/relative.py"]
