"""scripts/missing_names.py: the independent count of references to JAX names the installed JAX lacks.

Names that can never exist (`jax.numpy.no_such_name_xyz`) keep the cases independent of the JAX
version; the real names used (`jax.numpy.product`, `jax.tree_multimap`, `jax.random.KeyArray`) are
long gone. Deprecation tables and modules that fail to import are stood in for by fake `jax.*`
modules put in `sys.modules` / `sys.meta_path` for the test's duration."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import sys
import textwrap
import types
import warnings
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "missing_names.py"
_spec = importlib.util.spec_from_file_location("missing_names", SCRIPT)
missing_names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(missing_names)

COUNTED = '''\
import jax
import jax.numpy as jnp
from jax.interpreters import pxla
from jax.numpy import no_such_name_xyz as gone
import jax.no_such_module_xyz
from jax import no_such_module_xyz as nsm

jax.tree_multimap(f, x)                      # 8
jnp.product(x)                               # 9
y: jax.random.KeyArray = None                # 10
pxla.NoSuchSpecXyz(1)                        # 11
gone(1)                                      # 12  (and 4, the import)
nsm.Thing.method()                           # 13  jax.no_such_module_xyz
jnp.no_such_name_xyz.__doc__                 # 14  the dunder is cut, the name is not

def f(x):
    import jax.numpy as jnp2
    return jnp2.no_such_name_xyz(x)          # 18

class C:
    jnp = None                               # a class attribute is not seen from methods
    def m(self):
        return jnp.no_such_name_xyz          # 23  the module's binding

lam = lambda: jnp.no_such_name_xyz          # 25
comp = [jnp.no_such_name_xyz for _ in ()]   # 26
try:
    from jax.numpy import no_such_name_xyz   # 28  guarded, still counted
except ImportError:
    no_such_name_xyz = None

def maybe():
    return no_such_name_xyz(1)               # not counted: the module binds it to None too

def rebound_later():
    import jax.numpy as jnp3
    jnp3.no_such_name_xyz                    # 37  counted: the rebinding comes after
    jnp3 = None
    jnp3.no_such_name_xyz                    # not counted
'''

EXPECTED = {
    (4, "jax.numpy.no_such_name_xyz"), (5, "jax.no_such_module_xyz"), (6, "jax.no_such_module_xyz"),
    (8, "jax.tree_multimap"), (9, "jax.numpy.product"), (10, "jax.random.KeyArray"),
    (11, "jax.interpreters.pxla.NoSuchSpecXyz"), (12, "jax.numpy.no_such_name_xyz"),
    (13, "jax.no_such_module_xyz"), (14, "jax.numpy.no_such_name_xyz"),
    (18, "jax.numpy.no_such_name_xyz"), (23, "jax.numpy.no_such_name_xyz"),
    (25, "jax.numpy.no_such_name_xyz"), (26, "jax.numpy.no_such_name_xyz"), (28, "jax.numpy.no_such_name_xyz"),
    (37, "jax.numpy.no_such_name_xyz"),
}

NOT_COUNTED = '''\
import jax
import jax.numpy as jnp
import numpy as np
from jax.fake_deprecations_xyz import old_but_there  # deprecated, still there: present
from jax import config
from jax._src import no_such_private_xyz     # private: counted apart

jnp.zeros(3).sum()
jax.jit(f)
old_but_there(f)
config.brand_new_option_xyz = 1              # assigning an attribute is not a reference to it
jnp.zeros.__no_such_dunder_xyz__
"jnp.no_such_name_xyz"                       # a string
# jnp.no_such_name_xyz                       (a comment)

def shadowed_by_parameter(jnp):
    return jnp.no_such_name_xyz

def shadowed_by_assignment():
    import jax.numpy as jnp
    jnp = np
    return jnp.no_such_name_xyz

def shadowed_by_loop():
    for jax in range(3):
        jax.no_such_name_xyz

class K:
    jnp = np
    x = jnp.no_such_name_xyz                 # the class attribute, not the module

np.no_such_name_xyz
other = object()
other.jnp.no_such_name_xyz
[jnp.no_such_name_xyz for jnp in ()]
from . import jax as local_jax               # relative: not JAX
local_jax.no_such_name_xyz
'''


def _deprecations_getattr(name):
    if name == "old_but_there":
        warnings.warn("old_but_there is deprecated", DeprecationWarning, stacklevel=2)
        return len
    if name == "removed_xyz":
        raise AttributeError("removed_xyz was removed in JAX v0.0.0; use len")
    raise AttributeError(name)


class _Failing(MetaPathFinder, Loader):
    """jax.broken_xyz raises ImportError when imported; jax.needs_dep_xyz needs an absent package."""

    def find_spec(self, fullname, path, target=None):
        if fullname in ("jax.broken_xyz", "jax.needs_dep_xyz"):
            return ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == "jax.broken_xyz":
            raise ImportError("cannot import name 'gone' from 'jax._src.somewhere'")
        raise ModuleNotFoundError("No module named 'tensorflow_xyz'", name="tensorflow_xyz")


@pytest.fixture(autouse=True)
def fake_modules(monkeypatch):
    fake = types.ModuleType("jax.fake_deprecations_xyz")
    fake.__getattr__ = _deprecations_getattr
    monkeypatch.setitem(sys.modules, "jax.fake_deprecations_xyz", fake)
    monkeypatch.setattr(sys, "meta_path", [_Failing(), *sys.meta_path])
    missing_names._imports.clear()
    missing_names._checks.clear()
    # a verifier test in this process may have installed the legacy runtime, which gives back
    # renamed names (jax.numpy.product): the installed JAX is what this script measures
    from jaxmigrate.verify.legacy import _renamed

    monkeypatch.setattr(_renamed, "ACTIVE", False)
    # ...and binds jax.random.KeyArray / PRNGKeyArray to the installed key class: take those away too
    import jax.random

    from jaxmigrate.verify.legacy import _random

    given_back = _random.key_array_class()
    for name in ("KeyArray", "PRNGKeyArray"):
        if given_back is not None and vars(jax.random).get(name) is given_back:
            monkeypatch.delattr(jax.random, name)
    yield
    for name in ("jax.broken_xyz", "jax.needs_dep_xyz"):
        sys.modules.pop(name, None)
    missing_names._imports.clear()
    missing_names._checks.clear()


def run(*args: str, cwd: Path) -> str:
    """The script's main() in this process (JAX imported once), from `cwd`; its stdout. Warnings are
    errors here: a deprecated name that still exists must count as present all the same."""
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("error")
            assert missing_names.main(list(args)) == 0
    finally:
        os.chdir(old)
    return out.getvalue()


def totals(stdout: str) -> dict[str, int]:
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("TOTAL ")
    return {k: int(v) for k, v in (kv.split("=") for kv in last.split()[1:])}


def test_counts_every_missing_reference_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "counted.py").write_text(COUNTED)
    (tmp_path / "pkg" / "not_counted.py").write_text(NOT_COUNTED)
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")
    out = run("pkg", "--json", cwd=tmp_path)
    data = json.loads(out)
    got = {(r["line"], r["name"]) for r in data["missing"]}
    assert got == EXPECTED
    assert {r["path"] for r in data["missing"]} == {"pkg/counted.py"}
    assert [r["line"] for r in data["missing"] if r["guarded"]] == [28]
    assert data["totals"]["missing_refs"] == len(EXPECTED)
    assert data["totals"]["distinct_names"] == 6
    assert data["totals"]["files"] == 1
    assert data["totals"]["files_scanned"] == 3
    assert data["totals"]["parse_errors"] == 1
    assert data["totals"]["private_refs"] == 1 and data["totals"]["private_missing"] == 1
    assert data["names"]["jax.numpy.no_such_name_xyz"] == 9


def test_text_output_and_reported_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        x = jax.tree_multimap(
            f, y)
        z = jnp.product(x)
        w = jnp.no_such_name_xyz
    '''))
    # a finding covering lines 3-4 and one on line 6 (as `jaxmigrate check --format json` prints them)
    findings = [{"path": "a.py", "line": 3, "column": 5, "end_line": 4, "end_column": 10, "code": "JM999"},
                {"path": str(tmp_path / "a.py"), "line": 6, "column": 1, "end_line": 6, "end_column": 2,
                 "code": "JM999"}]
    (tmp_path / "check.json").write_text(json.dumps(findings))
    out = run("a.py", "--reported", "check.json", "--names", cwd=tmp_path)
    lines = out.splitlines()
    assert lines[:3] == ["a.py:3: jax.tree_multimap", "a.py:5: jax.numpy.product", "a.py:6: jax.numpy.no_such_name_xyz"]
    assert "unreported a.py:5: jax.numpy.product" in lines
    t = totals(out)
    assert (t["missing_refs"], t["distinct_names"], t["files"], t["unreported"]) == (3, 3, 1, 1)


def test_repo_local_folders_of_jax_are_not_jax_names(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("from jax.tests.filecheck import helpers\nhelpers.print_ir\n"
                                   "from jax.examples import datasets\n")
    t = totals(run("t.py", cwd=tmp_path))
    assert t["missing_refs"] == 0 and t["repo_local"] == 3


def test_deprecation_getattr_and_failing_imports(tmp_path: Path) -> None:
    (tmp_path / "d.py").write_text(textwrap.dedent('''\
        from jax import fake_deprecations_xyz as dep
        dep.old_but_there(1)
        dep.removed_xyz(1)
        import jax.broken_xyz
        from jax.needs_dep_xyz import thing
        thing(1)
    '''))
    data = json.loads(run("d.py", "--json", cwd=tmp_path))
    assert [(r["line"], r["name"], r["status"]) for r in data["missing"]] == [
        (3, "jax.fake_deprecations_xyz.removed_xyz", "missing"), (4, "jax.broken_xyz", "missing")]
    assert "removed in JAX v0.0.0" in data["missing"][0]["detail"]
    assert "ImportError" in data["missing"][1]["detail"]
    # a module that needs a package that is not installed is not missing from JAX: unverified
    assert [(r["line"], r["name"], r["detail"]) for r in data["unverified"]] == [
        (5, "jax.needs_dep_xyz", "needs tensorflow_xyz"), (6, "jax.needs_dep_xyz", "needs tensorflow_xyz")]
    assert data["totals"]["unverified"] == 2 and data["totals"]["checked_refs"] == 6
