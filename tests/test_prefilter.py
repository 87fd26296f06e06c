"""The byte prefilter (``Rule.triggers`` and ``Rule.requires``) never hides a finding, and is precise.

Every fixture (before and after the fix) and every rule example is analysed with all rules and
no prefilter; each finding's rule must want the file's bytes, so check and fix, which run behind
the prefilter, see everything the rules would report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxmigrate.engine.pipeline import active_rules, analyse
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules import ALL_RULES, BY_CODE
from tests.conftest import run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TEXTS = [pytest.param(p.read_text(), id=f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
         for p in sorted(FIXTURES.glob("*/*/*.py"))]
TEXTS += [pytest.param(ex.before, id=f"{rule.code}-example-{i}")
          for rule in ALL_RULES for i, ex in enumerate(rule.examples)]


@pytest.mark.parametrize("text", TEXTS)
def test_prefilter_keeps_every_finding(text):
    for target in (None, (0, 4, 20)):
        unfiltered = analyse(text, "example.py", ALL_RULES, target)
        data = text.encode()
        for finding in unfiltered:
            assert BY_CODE[finding.code].wants(data), finding
        assert run(text, fix=False, target=target).findings == unfiltered


def test_name_triggers_cover_canonical_spellings():
    triggers, requires = name_triggers(["jax.experimental.pjit.with_sharding_constraint"])
    assert triggers == (b"with_sharding_constraint",)
    assert set(requires) == {b"pjit"}  # jax._src.pjit.with_sharding_constraint resolves to it too
    assert name_triggers(["jax.sharding.MeshPspecSharding"]) == ((b"MeshPspecSharding",), (b"MeshPspecSharding",))


CLEAN = '''\
# Licensed under the Apache License, Version 2.0; distributed on an "AS IS" BASIS.
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard(x, mesh: Mesh):
    if jax.process_index() == 0:
        print("sharding over", mesh.axis_names)
    return jax.device_put(x, NamedSharding(mesh, P("data")))
'''


def test_modern_code_is_decided_from_bytes():
    assert active_rules(CLEAN.encode(), ALL_RULES) == []


@pytest.mark.parametrize("code,text", [
    ("JM504", BY_CODE["JM504"].examples[0].before),
    ("JM201", "from jax.experimental import PartitionSpec\n"),
    ("JM201", "from jax._src.pjit import with_sharding_constraint\n"),
    ("JM203", "from jax.experimental.maps import xmap\n"),
    ("JM102", "from jax.experimental.pjit import with_sharding_constraint as wsc\ny = wsc(x, axis_resources=s)\n"),
])
def test_legacy_code_passes(code, text):
    assert BY_CODE[code].wants(text.encode())
    assert code in {f.code for f in analyse(text, "example.py", ALL_RULES)}


TREE_SPELLINGS = [
    "import jax\nx = jax.tree_map(f, y)\n",
    "from jax import (\n    random,  # keys\n    tree_map,\n)\nx = tree_map(f, y)\n",
    "from jax import random, \\\n    tree_leaves\nx = tree_leaves(y)\n",
    "import os, jax as J\nx = J.tree_leaves(y)\n",
    "import jax\nj = (jax)\nx = j.tree_map(f, y)\n",
    "import jax\nx = (jax  # c\n     .  # d\n     tree_map)(f, y)\n",
    "import jax\nx = jax.\\\n    tree_map(f, y)\n",
]
CURRENT_TREE = [
    "import jax\nx = jax.tree_util.tree_map(f, y)\n",
    "from jax.tree_util import tree_map\nfrom jax import random\ntree_map(f, x)\n",
    "import jax.tree_util as jtu\nx = jtu.tree_map(f, y)\n",
]


@pytest.mark.parametrize("text", TREE_SPELLINGS)
def test_every_spelling_of_a_tree_alias_passes(text):
    assert BY_CODE["JM601"].wants(text.encode())
    assert "JM601" in {f.code for f in analyse(text, "example.py", ALL_RULES)}


@pytest.mark.parametrize("text", CURRENT_TREE)
def test_current_tree_util_is_decided_from_bytes(text):
    assert not BY_CODE["JM601"].wants(text.encode())
    assert analyse(text, "example.py", ALL_RULES) == []


MORE_SPELLINGS = [
    "from jax.config import config\nconfig.update('jax_enable_x64', True)\n",
    "import jax.config\n",
    "import jax\nfrom jax.sharding import Mesh\nmesh = Mesh(jax.devices(), ('x',))\nwith mesh:\n    pass\n",
    "import jax\nfrom jax.sharding import Mesh\n\nasync def f(mesh: Mesh):\n    async with mesh:\n        pass\n",
]


@pytest.mark.parametrize("text", MORE_SPELLINGS)
def test_prefilter_keeps_the_findings_of_other_spellings(text):
    unfiltered = analyse(text, "example.py", ALL_RULES)
    assert unfiltered
    for finding in unfiltered:
        assert BY_CODE[finding.code].wants(text.encode()), finding


def test_a_notebook_is_prefiltered_on_its_code_cells():
    import json

    from jaxmigrate.engine.pipeline import Settings, transform

    code = MORE_SPELLINGS[2]
    nb = {"cells": [{"cell_type": "code", "source": code.splitlines(keepends=True), "metadata": {}, "outputs": [],
                     "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(nb, indent=1).encode()
    assert not BY_CODE["JM702"].wants(data)  # in the JSON no line starts with `with`
    out = transform(data, "demo.ipynb", Settings(tuple(BY_CODE)))
    assert "JM702" in {f.code for f in out.findings}


@pytest.mark.parametrize("text, found", [
    ("with mesh:\n    pass\n", True),
    ("def f():\n    with mesh:\n        pass\n", True),
    ("async def f():\r\n\tasync  with mesh:\r\n        pass\r\n", True),
    ("x = 1\rwith mesh:\r    pass\r", True),  # old Mac line endings
    ("without = 1\nwithin(mesh)\n", False),
    ("# with mesh:\nx = 'with mesh'\n", False),
    ("x = 1; y = with_mesh\n", False),
])
def test_with_statement_search(text, found):
    from jaxmigrate.prefilter import has_with_statement

    assert has_with_statement(text.encode()) is found


# The module-attribute searches answer as their regexes do, in one pass from the module word;
# the forms that start before the word (`from`, `import`, `=`) are read backwards from it.
JAX_TREE_FORMS = [
    ("x = jax.tree_map(f)\n", True),
    ("x = jax  .  \\\n  tree_leaves(y)\n", True),
    ("x = (jax)\n.tree_map\n", True),
    ("x = jax.tree_util.tree_map(f)\n", False),
    ("from jax import tree_map\n", True),
    ("from \\\n  jax \\\n import \\\n tree_map\n", True),
    ("from jax import (\n    random,  # keys\n    tree_map)\n", True),
    ("from jax.tree_util import tree_map\n", False),
    ("from jax import random\ntree_map(f)\n", False),
    ("myfrom jax import tree_map\n", True),  # as the regex: no word boundary before `from`
    ("import jax as J\n", True),
    ("j = jax\n", True),
    ("j=jax\n", True),
    ("j = (\\\n  jax)\n", True),
    ("j == jax\n", True),
    ("j = jax.numpy\n", False),
    ("j = (jax).numpy\n", False),
    ("j = jax_utils\n", False),
    ("f(jax)\n", False),
    ("import jax\n# jax\n", False),
]
CONFIG_FORMS = [
    ("from jax.config import config\n", True),
    ("from jax . \\\n config import flags\n", True),
    ("import jax.config\n", True),
    ("import (jax.config)\n", True),
    ("import os, jax.config\n", True),
    ("import os,\\\n    jax.config as c\n", True),
    ("c = jax.config\n", True),
    ("c = (\n  jax. config)\n", True),
    ("c = jax.config.flags\n", False),
    ("jax.config.update('jax_array', True)\n", False),
    ("f(a, jax.config)\n", False),
    ("c = config\n", True),
    ("import config as c\n", True),
    ("x = config.config\n", True),
    ("x = self.config\n", False),
    ("from config import config\n", True),
    ("from config import flags\n", False),
]


def _config_patterns(data: bytes) -> bool:
    from jaxmigrate.rules.moved_name_base import (
        CONFIG_ATTRIBUTE as _CONFIG_ATTRIBUTE,
        JAX_CONFIG_PATTERNS as _JAX_CONFIG_PATTERNS,
    )

    return any(p.search(data) for p in _CONFIG_ATTRIBUTE.patterns + _JAX_CONFIG_PATTERNS)


@pytest.mark.parametrize("text, found", JAX_TREE_FORMS)
def test_jax_attribute_search(text, found):
    search = BY_CODE["JM601"]._spelled
    data = text.encode()
    assert any(p.search(data) for p in search.patterns) is found
    assert search(data) is found


@pytest.mark.parametrize("text, found", CONFIG_FORMS)
def test_config_module_search(text, found):
    from jaxmigrate.rules.moved_name_base import config_module_use as _config_module_use

    data = text.encode()
    assert _config_patterns(data) is found
    assert _config_module_use(data) is found
    assert BY_CODE["JM201"].wants(data) is found


def test_module_word_searches_answer_as_their_patterns():
    """Random texts made of the pieces the patterns look at, many of them near misses."""
    import random

    from jaxmigrate.rules.moved_name_base import config_module_use as _config_module_use

    pieces = ["jax", "config", "tree_map", ".", " ", "\\\n", "\n", "(", ")", "=", ",", "from", "import", "as",
              "# c\n", "x", "_", "\t", "jax.config", "tree_util"]
    rng = random.Random(20261124)
    search = BY_CODE["JM601"]._spelled
    seen = set()
    for _ in range(20000):
        data = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))).encode()
        tree = any(p.search(data) for p in search.patterns)
        assert search(data) is tree, data
        config = _config_patterns(data)
        assert _config_module_use(data) is config, data
        seen.add((tree, config))
    assert seen == {(False, False), (False, True), (True, False), (True, True)}


@pytest.mark.parametrize("source,wanted", [
    (b"import jax.numpy as jnp\nx = jnp.product(a)\n", True),
    (b"from jax.numpy import product\n", True),
    (b"from jax.numpy import (\n    ones,\n    product,\n)\n", True),
    (b"import jax.numpy as jnp\nx = jnp. \\\n  product(a)\n", True),
    (b"import jax.numpy as jnp\nx = (jnp.  # why\n     product(a))\n", True),
    (b"from jax.numpy import *\nx = product(a)\n", True),
    (b"import jax\njax.config.update('jax_enable_mlir', True)\n", True),  # an option, quoted
    (b"import jax\n# jax_enable_mlir is on by default in jax.config\n", False),
    # the words are there, but `product` is never read as a name's last part
    (b"import jax.numpy as jnp\n# the product of numpy arrays\nx = jnp.ones(3)\n", False),
    (b"import jax.numpy as jnp\nproduct = 3\nprint(product, jnp.ones(2))\n", False),
])
def test_the_history_prefilter_wants_a_last_part_read_as_a_name(source, wanted):
    """`jax.numpy.product` (removed): its words in a file are not enough, `product` must be read as
    an attribute, an imported name, a quoted option, or hide behind a star import or a comment."""
    from jaxmigrate.prefilter import history_wants

    assert history_wants(source) is wanted
