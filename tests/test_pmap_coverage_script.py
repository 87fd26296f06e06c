"""scripts/pmap_coverage.py, the independent count of pmap-era references a fix leaves unreported."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "pmap_coverage.py"
spec = importlib.util.spec_from_file_location("pmap_coverage", SCRIPT)
pmap_coverage = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pmap_coverage)  # type: ignore[union-attr]

ALIASES = '''\
import functools
from functools import partial

import jax
import jax as j
import jax.api
from jax import pmap
from jax import pmap as pm
from jax._src.api import pmap as private_pmap


@jax.pmap
def f(x):
    return x


@partial(jax.pmap, axis_name="i")
def g(x):
    return x


h = functools.partial(j.pmap, axis_name="i")
k = pm(pmap(lambda x: x))
n = private_pmap(lambda x: x) or jax.api.pmap


def shadowed(pmap, xs):
    return pmap(xs)  # the parameter, not jax.pmap


def local():
    from jax import device_put_replicated as rep
    return rep, jax.device_put_sharded
'''

PLACEMENT = '''\
import jax
import numpy as np
from jax import pmap

devices = jax.local_devices()
rows = jax.device_put_sharded([np.ones(2)] * len(devices), devices)


def replicate_on(x, pick):
    return jax.device_put_replicated(x, pick(devices))


step = pmap(lambda x: x * 2)
'''


def test_references_through_every_alias(tmp_path):
    path = tmp_path / "aliases.py"
    path.write_text(ALIASES)
    assert [(line, name) for _, line, _, name in pmap_coverage.file_references(path)] == [
        (12, "jax.pmap"), (17, "jax.pmap"), (22, "jax.pmap"), (23, "jax.pmap"), (23, "jax.pmap"),
        (24, "jax.pmap"), (24, "jax.pmap"), (33, "jax.device_put_replicated"), (33, "jax.device_put_sharded")]


def test_notebook_references_by_cell(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["# jax.pmap"]},
        {"cell_type": "code", "source": ["!pip install jax\n", "from jax import pmap\n"]},
        {"cell_type": "code", "source": ["%%time\n", "jax.pmap\n"]},
        {"cell_type": "code", "source": ["help(pmap)?\n"]},
        {"cell_type": "code", "source": ["if True:\n", "    %time y = 1\n", "    f = pmap(abs)\n"]},
    ]
    path = tmp_path / "book.ipynb"
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    assert pmap_coverage.file_references(path) == [(5, 3, 3, "jax.pmap")]


def test_migrated_reported_and_silent(tmp_path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "placement.py").write_text(PLACEMENT)
    out = tmp_path / "counts.json"
    # only JM704 runs: it migrates device_put_sharded, reports the computed device list and says
    # nothing of pmap, which is silent whatever other rule may report it
    kept = tmp_path / "fixed"
    assert pmap_coverage.main([str(tree), "--select", "JM704", "--json", str(out), "--keep", str(kept)]) == 1
    counts = json.loads(out.read_text())[str(tree)]
    assert counts["counts"] == {
        "jax.pmap": {"original": 1, "migrated": 0, "reported": 0, "silent": 1},
        "jax.device_put_replicated": {"original": 1, "migrated": 0, "reported": 1, "silent": 0},
        "jax.device_put_sharded": {"original": 1, "migrated": 1, "reported": 0, "silent": 0},
    }
    assert counts["silent"] == ["placement.py:14: jax.pmap"]  # a line of the fixed copy (an import was added)
    assert "silent: placement.py:14: jax.pmap" in capsys.readouterr().out
    assert (kept / "tree" / "placement.py").read_text().splitlines()[13] == "step = pmap(lambda x: x * 2)"
    assert (tree / "placement.py").read_text() == PLACEMENT  # the tree itself is not fixed


def test_a_file_jaxmigrate_cannot_parse_is_set_apart(tmp_path, capsys):
    # jaxmigrate exits 2 on it (JM000) and still fixes the rest
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "broken.py").write_text("import jax\nrows = jax.device_put_sharded(\n")  # parsed: a trigger word
    (tree / "placement.py").write_text(PLACEMENT)
    out = tmp_path / "counts.json"
    assert pmap_coverage.main([str(tree), "--select", "JM704", "--json", str(out)]) == 1
    result = json.loads(out.read_text())[str(tree)]
    assert result["original_unparsable"] == ["broken.py"]
    assert result["counts"]["jax.device_put_sharded"]["migrated"] == 1
    assert "1 original file(s) do not parse, not counted: broken.py" in capsys.readouterr().out
