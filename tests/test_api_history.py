"""The API history: the generator on a made-up JAX, the shipped data's pinned facts (checked by hand
against the release tags), what it says of the installed JAX, and its size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jaxmigrate.catalog.api_history import DATA, History, is_private, status, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import api_history as generator  # noqa: E402  (scripts/api_history.py)

# the generator, on a made-up JAX with three releases ------------------------------------------
#: a module jaxlib provides, else a plugin: the fallback does not hide what the try imports
_PLUGIN = ("try:\n    from jaxlib.gpu import _gpu_ext\nexcept ImportError:\n"
           "    from jax_cuda_plugin import _gpu_ext\nimport numpy as np\n")
#: JAX's lazy loader: the names exist, though their imports are only seen by a type checker
_LAZY = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from jaxlib.mlir.dialects import arith as arith\n"
         "else:\n    from jax._src import lazy_loader as _lazy\n"
         "    __getattr__, __dir__, __all__ = _lazy.attach('jaxlib.mlir.dialects', ['arith'])\n    del _lazy\n")

RELEASES = {
    "0.1.0": {
        "jax/__init__.py": "from jax._src.core import thing, old_fn\nfrom jax import numpy as numpy\nimport os\n",
        "jax/_src/__init__.py": "",
        "jax/_src/core.py": "def thing(): pass\ndef old_fn(): pass\n",
        "jax/numpy/__init__.py": "from jax.numpy._impl import *\ndef product(): pass\ndef prod(): pass\n",
        "jax/numpy/_impl.py": "__all__ = ['mean']\ndef mean(): pass\ndef hidden(): pass\n",
        "jax/_src/config.py": ("class Config:\n    def __init__(self):\n        self.FLAGS = None\n"
                               "    def update(self, name, value): pass\n"
                               "config = Config()\nold_option = config.define_bool_state(name='jax_old', default=False)\n"),
        "jax/tool.py": "import jax\nfrom jax._src import core\nx = 1\nif __name__ == '__main__':\n    script_only = 1\n",
        "jax/effects.py": "registry: set = set()\ntolerance = {}\nnone_yet = make()\n",
        "jax/_src/lib/__init__.py": _PLUGIN,
        "jax/_src/lib/dialects/__init__.py": "from jaxlib.mlir.dialects import arith as arith\n",
    },
    "0.2.0": {
        "jax/__init__.py": "from jax._src.core import thing\nfrom jax import numpy as numpy\n",
        "jax/_src/__init__.py": "",
        "jax/_src/core.py": ("import warnings\ndef thing(): pass\n"
                              "def old_fn():\n"
                              "    warnings.warn('jax.old_fn is deprecated: use jax.thing', DeprecationWarning)\n"),
        "jax/numpy/__init__.py": (
            "from jax._src.core import old_fn as old_fn\n"
            "def prod(): pass\n"
            "_deprecations = {'product': ('jnp.product is deprecated, use jnp.prod', prod)}\n"
            "import typing\nif typing.TYPE_CHECKING:\n    product = prod\n"
            "else:\n    __getattr__ = None\ndel typing\n"),
        "jax/effects.py": "registry = set()\ntolerance: ToleranceDict = {1: 2}\nnone_yet = make()\n",
        "jax/_src/lib/__init__.py": _PLUGIN,
        "jax/_src/lib/dialects/__init__.py": _LAZY,
    },
    "0.3.0": {
        "jax/__init__.py": "from jax._src.core import thing\nfrom jax import numpy as numpy\n",
        "jax/_src/__init__.py": "",
        "jax/_src/core.py": "def thing(): pass\n",
        "jax/numpy/__init__.py": "def prod(): pass\n_deprecations = {'product': ('gone: use jax.numpy.prod', None)}\n",
        "jax/effects.py": "registry: EffectTypeSet = make()\ntolerance = make()\nnone_yet: set = set()\n",
        "jax/_src/lib/__init__.py": _PLUGIN,
        "jax/_src/lib/dialects/__init__.py": _LAZY,
    },
}


def _made_up_repo(repo: Path, releases) -> list:
    """A git repository with one commit and tag ``jax-v<version>`` a release; its git command."""
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for version, files in releases.items():
        for old in repo.glob("jax"):
            subprocess.run(["rm", "-rf", str(old)], check=True)
        for path, text in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", version], check=True)
        subprocess.run([*git, "tag", f"jax-v{version}"], check=True)
    return git


@pytest.fixture(scope="module")
def made_up_history(tmp_path_factory):
    repo = tmp_path_factory.mktemp("jax")
    git = _made_up_repo(repo, RELEASES)
    subprocess.run([*git, "tag", "jax-v0.2.0-rc"], check=True)  # release candidates are left out
    out = tmp_path_factory.mktemp("data")
    assert generator.main([str(repo / ".git"), "--out", str(out), "--since", "0.1.0"]) == 0
    return History.load(out / "public.tsv"), History.load(out / "private.tsv"), out


def test_generator_records_releases_names_and_modules(made_up_history):
    public, private, _ = made_up_history
    assert public.versions == ["0.1.0", "0.2.0", "0.3.0"]
    assert public.entry("jax.numpy").module and public.entry("jax.numpy").intervals == ((0, -1),)
    assert public.entry("jax.numpy.mean").intervals == ((0, 1),)  # through `*` and `__all__`
    assert public.entry("jax.numpy.hidden") is None  # not in `__all__`
    assert public.entry("jax.os") is None  # not a JAX module
    assert public.entry("jax.tool.script_only") is None  # only under `if __name__ == "__main__"`
    # imports for the module's own use: reachable, so kept, but the prefilter does not look for them
    assert public.entry("jax.tool.core").intervals == public.entry("jax.tool.jax").intervals == ((0, 1),)
    assert private.entry("jax._src.core.thing").intervals == ((0, -1),)
    # what jaxlib provides: a lazily loaded dialect, a module imported in a try (not its fallback)
    assert private.entry("jax._src.lib.dialects.arith").intervals == ((0, -1),)
    assert private.entry("jax._src.lib._gpu_ext").intervals == ((0, -1),)
    assert private.entry("jax._src.lib.np") is None  # still not JAX's


def test_generator_refuses_a_release_it_cannot_parse(tmp_path, capsys):
    """A file this Python cannot parse (a newer Python's syntax) is never read as a module the
    release lacks, which would make all its names look removed: the generator stops and says so."""
    releases = {"0.1.0": {"jax/__init__.py": "", "jax/new.py": "def f(): pass\n"},
                "0.2.0": {"jax/__init__.py": "", "jax/new.py": "def f(:\n    pass\n"}}
    _made_up_repo(tmp_path / "jax", releases)
    out = tmp_path / "data"
    assert generator.main([str(tmp_path / "jax" / ".git"), "--out", str(out), "--since", "0.1.0"]) == 2
    error = capsys.readouterr().err
    assert "jax-v0.2.0" in error and "jax/new.py" in error and "newer" in error
    assert not out.exists()


def test_generator_reads_deprecation_tables_and_warnings(made_up_history):
    public, _, out = made_up_history
    product = public.entry("jax.numpy.product")
    assert product.intervals == ((0, 2),)  # in the table with an object at 0.2.0, with None at 0.3.0
    assert (product.deprecated, product.replacement, product.alias) == (1, "jax.numpy.prod", True)
    old = public.entry("jax.old_fn")
    assert old.intervals == ((0, 1),)
    moved = public.entry("jax.numpy.old_fn")  # re-exported: the warning in its definition counts
    assert (moved.deprecated, moved.replacement, moved.alias) == (1, "jax.thing", False)
    option = public.entry("jax.config.jax_old")  # defined by name: an attribute of the config object
    assert option.option and option.intervals == ((0, 1),)
    assert public.entry("jax.config.FLAGS").intervals == public.entry("jax.config.update").intervals == ((0, 1),)
    # a registry that stopped being a set while it still exists: its set methods end there
    assert public.entry("jax.effects.registry").intervals == ((0, -1),)
    assert public.entry("jax.effects.registry.add").intervals == ((0, 2),)
    assert public.entry("jax.effects.registry.add").option
    assert public.entry("jax.effects.tolerance.get") is None  # a dict until a release that does not tell
    assert public.entry("jax.effects.none_yet.add") is None  # a set only from the last release
    triggers = (out / "triggers.tsv").read_text()
    assert "\nadd\tjax.effects.registry\n" in triggers
    assert "product\tjax.numpy\n" in triggers and "\nprod\t" not in triggers
    assert "\ncore\t" not in triggers and "\njax\t" not in triggers


# the shipped data ---------------------------------------------------------------------------
# (name, deprecated in, removed in, replacement): each read by hand from the release tags
PINNED = [
    ("jax.tree_map", "0.4.26", "0.6.0", "jax.tree.map"),
    ("jax.numpy.product", "0.4.12", "0.4.16", "jax.numpy.prod"),
    ("jax.random.KeyArray", "0.4.16", "0.4.24", "jax.Array"),
    ("jax.experimental.host_callback", None, "0.8.0", ""),
    ("jax.lib.xla_bridge.get_backend", "0.4.32", "0.8.0", "jax.extend.backend.get_backend"),
    ("jax.core.Primitive", "0.4.38", "0.6.0", "jax.extend.core.Primitive"),
    ("jax.experimental.maps", None, "0.4.31", ""),
    ("jax.tree_multimap", "0.3.5", "0.3.16", "jax.tree_util.tree_map"),
    ("jax.config.jax_array", None, "0.4.14", ""),  # an option of the config object
    ("jax.config.FLAGS", None, "0.4.20", ""),
    ("jax.interpreters.mlir.lowerable_effects.add", None, "0.4.5", ""),  # became an EffectTypeSet
]


@pytest.mark.parametrize("name,deprecated,removed,replacement", PINNED, ids=[p[0] for p in PINNED])
def test_pinned_facts(name, deprecated, removed, replacement):
    history = table(is_private(name))
    found = history.entry(name)
    assert (history.versions[found.deprecated] if found.deprecated != -1 else None) == deprecated
    assert history.versions[found.intervals[-1][1]] == removed
    assert found.replacement == replacement


def test_status_follows_the_target():
    assert status("jax.numpy.product", (0, 4, 11)) is None
    st = status("jax.numpy.product", (0, 4, 14))
    assert (st.state, st.version) == ("deprecated", "0.4.12")
    st = status("jax.numpy.product", None)
    assert (st.state, st.version, st.replacement, st.rename) == ("removed", "0.4.16", "jax.numpy.prod", True)
    assert status("jax.tree.map", (0, 4, 14)) is None  # newer than the target: not legacy
    through = status("jax.lib.xla_client.NoSuchName", None)  # an attribute of a removed module
    assert (through.qualname, through.version) == ("jax.lib.xla_client", "0.9.0")
    assert status("jax.numpy.ndarray.at", None) is None
    assert status("jax._src.device_array.DeviceArray", None).private


def test_what_jaxlib_provides_and_python_3_12_source_are_not_removed():
    """jaxlib's MLIR dialects (lazily loaded by jax._src.lib.mlir.dialects since 0.4.32), a
    module imported in a try with a plugin fallback, and modules JAX wrote in Python 3.12 syntax
    from 0.11.0 on are all in the newest release (each read by hand from jax-v0.11.0)."""
    for name in ("jax._src.lib.mlir.dialects.arith", "jax._src.lib.mlir.dialects.gpu.LaunchOp",
                 "jax._src.lib.mlir.dialects.cf", "jax._src.lib.mosaic_gpu._mosaic_gpu_ext._sync_all_devices",
                 "jax.experimental.mosaic.gpu.fragmented_array.WGMMA_LAYOUT",
                 "jax.experimental.mosaic.gpu.core.TMABarrier", "jax._src.pallas.mosaic_gpu.pipeline.emit_pipeline"):
        assert status(name, None) is None, name
    assert status("jax._src.lib.mlir.dialects.arith", (0, 4, 31)) is None
    assert status("jax._src.lib.xla_extension", None).version == "0.6.1"  # jaxlib's module, no longer bound


def test_history_is_lazy_and_small():
    """A check that needs no history never loads it; the data stays a few MB."""
    code = ("from jaxmigrate.engine.pipeline import transform, Settings\n"
            "from jaxmigrate.rules import ALL_RULES\n"
            "from jaxmigrate.catalog import api_history, signatures\n"
            "transform(b'import os\\nprint(os.sep)\\n', 'a.py', Settings(tuple(r.code for r in ALL_RULES)))\n"
            "print(api_history.table.cache_info().currsize, signatures.history.cache_info().currsize)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "0 0"
    # the names (2.4 MB) and the signatures (0.8 MB, the private ones read only when asked for)
    assert sum(p.stat().st_size for p in DATA.iterdir()) < 4_000_000


# the installed JAX agrees -------------------------------------------------------------------
_AGREES = r"""
import importlib, warnings
import jax
from jaxmigrate.catalog import api_history
from jaxmigrate.catalog.api_history import status, table


def reachable(name):
    # True/False: whether the installed JAX has it; None: a module fails to import for another
    # reason (an optional dependency that is missing)
    parts = name.split(".")
    for size in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:size]))
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] == "jax":
                continue
            return None
        except Exception:
            return None
        for part in parts[size:]:
            try:
                obj = getattr(obj, part)
            except AttributeError:
                return False
            except Exception:
                return None
        return True
    return False


version = api_history.parse_version(jax.__version__.split("+")[0].split(".dev")[0])
warnings.simplefilter("ignore")
for name in table(False).names():
    st = status(name, version)
    if st is not None and st.state == "removed" and st.qualname == name and reachable(name):
        print(name)
"""


def test_installed_jax_lacks_what_the_history_says_it_removed():
    """Every public name the history says the installed release lacks is missing from it (a
    release newer than the history's newest keeps what the history says it removed). In a
    fresh process: other tests install the legacy runtime's emulation into JAX's modules."""
    pytest.importorskip("jax")  # the verify extra, which CI installs
    out = subprocess.run([sys.executable, "-c", _AGREES], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    wrong = out.stdout.split()
    assert wrong == [], f"{len(wrong)} names the history says the installed jax lacks, that it has: {wrong[:20]}"
