"""Round-trip properties of `fix`: its output compiles, a second fix changes nothing, and a file
without legacy names comes back byte for byte. Over programs hypothesis generates from legacy and
clean statements, and (``pytest -m corpus``) over every file of ``$JAXMIGRATE_CORPUS``.
The fixtures have the same properties in tests/test_fixtures.py."""

from __future__ import annotations

import keyword
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jaxmigrate.engine.pipeline import Settings, active_rules, transform
from jaxmigrate.rules import ALL_RULES
from tests.conftest import assert_parses

CODES = tuple(r.code for r in ALL_RULES)
IMPORTS = [
    "import jax", "import numpy as np", "from functools import partial",
    "from jax.experimental.pjit import pjit", "from jax.experimental import PartitionSpec as P",
    "from jax.experimental.maps import Mesh", "from jax.experimental import maps",
    "from jax.sharding import NamedSharding", "from jax.experimental.shard_map import shard_map",
    "from jax.experimental.global_device_array import GlobalDeviceArray",
    "from jax.config import config", "import jax.numpy as jnp",
]
STATEMENTS = [
    "mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ('x', 'y'))",
    "f = pjit(lambda a: a * 2, in_axis_resources=P('x'), out_axis_resources=None)",
    "g = pjit({name}, P('x'), None, static_argnums=(1,))",
    "with mesh:\n    out = f(np.arange(8.0))",
    "with maps.mesh(np.array(jax.devices()), ('x',)):\n    pass",
    "config.update('jax_array', True)",
    "if config.jax_array:\n    {name} = 1\nelse:\n    {name} = 2",
    "n = len(jax.lib.xla_bridge.get_backend().live_buffers())",
    "t = jax.tree_map(lambda v: v + 1, {{'{name}': 1}})",
    "s = shard_map({name}, mesh, in_specs=P('x'), out_specs=P(), check_rep=False)",
    "a = GlobalDeviceArray.from_callback((8,), mesh, ['x'], lambda i: np.zeros(1))",
    "x = jax.lax.with_sharding_constraint(jnp.ones(4), P('x'))  # {name}",
    "def {name}(a, b=None):\n    return a",
    "@partial(pjit, in_axis_resources=None, out_axis_resources=None)\ndef {name}_step(x):\n    return x",
    "class {name}Model:\n    mesh = None\n\n    def run(self, x):\n        with self.mesh:\n            return x",
    "print({name!r})",
    "'''in_axis_resources in a string, not code'''",
    "# pjit(f, in_axis_resources=P('x')) in a comment",
]
# current JAX and plain Python, with legacy names only in strings and comments: nothing to report or fix
CLEAN = [
    "def {name}(a, b=None):\n    return a",
    "print({name!r})",
    "'''in_axis_resources in a string, not code'''",
    "# pjit(f, in_axis_resources=P('x')) in a comment",
    "{name} = jax.jit(lambda a: a * 2)(jnp.arange(8.0))",
    "key = jax.random.key(0)",
    "t = jax.tree_util.tree_map(lambda v: v + 1, {{'{name}': 1}})",
    "mesh = jax.sharding.Mesh(np.array(jax.devices()), ('x',))",
    "y = jax.numpy.sum(jnp.ones(4))  # {name}",
    "class {name}Model:\n    def run(self, x):\n        return jnp.asarray(x)",
    "if {name}:\n    z = np.zeros(3)\nelse:\n    z = None",
]
CLEAN_IMPORTS = ["import jax", "import numpy as np", "import jax.numpy as jnp"]
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))


@st.composite
def programs(draw, statements=STATEMENTS, imports=IMPORTS):
    head = draw(st.lists(st.sampled_from(imports), max_size=6))
    body = [s.format(name=draw(NAMES)) for s in draw(st.lists(st.sampled_from(statements), min_size=1, max_size=8))]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.booleans())
    if indent:  # the same statements inside a function
        body = ["def _wrapped():", "    pass"] + ["\n".join("    " + line for line in s.split("\n")) for s in body]
    return newline.join(head + [""] + body) + newline


def _fix(text: str, unsafe: bool):
    data = text.encode()
    return transform(data, "p.py", Settings(CODES, fix=True, write=False, unsafe_fixes=unsafe))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.booleans())
def test_fix_output_compiles_and_is_idempotent(text, unsafe):
    first = _fix(text, unsafe)
    out = first.text if first.changed else text
    assert_parses(out)
    second = _fix(out, unsafe)
    assert not second.changed and second.fixes_applied == 0, f"second fix changed:\n{out}"


@pytest.mark.parametrize("statement", CLEAN)
def test_each_clean_statement_is_clean(statement):
    """The clean programs are built of statements that are each code with nothing to report."""
    text = "\n".join(CLEAN_IMPORTS + ["", statement.format(name="value")]) + "\n"
    compile(text, "<clean>", "exec", dont_inherit=True)
    out = _fix(text, True)
    assert not out.changed and out.findings == []


@settings(max_examples=30, deadline=None)
@given(programs(statements=CLEAN, imports=CLEAN_IMPORTS))
def test_a_file_without_legacy_names_is_untouched(text):
    out = _fix(text, True)
    assert not out.changed and out.findings == [], out.findings


@pytest.mark.corpus
def test_corpus_round_trip():
    """Every file of a local tree: ``JAXMIGRATE_CORPUS=/path pytest -m corpus``."""
    root = os.environ.get("JAXMIGRATE_CORPUS")
    if not root:
        pytest.skip("set JAXMIGRATE_CORPUS=/path/to/a/tree to run this")
    rules = list(ALL_RULES)
    failures, files = [], 0
    for path in sorted(Path(root).rglob("*.py")):
        data = path.read_bytes()
        try:
            compile(data, str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue  # not Python 3 here: reported as JM000, never fixed
        files += 1
        out = transform(data, str(path), Settings(CODES, fix=True, write=False, unsafe_fixes=True))
        if not active_rules(data, rules) and out.changed:
            failures.append(f"{path}: changed without a trigger")
        if out.changed:
            try:
                compile(out.text, str(path), "exec", dont_inherit=True)
            except SyntaxError as exc:
                failures.append(f"{path}: fix does not compile: {exc}")
                continue
            again = transform(out.text.encode(out.encoding), str(path), Settings(CODES, fix=True, write=False,
                                                                                unsafe_fixes=True))
            if again.changed:
                failures.append(f"{path}: a second fix changes it")
    assert files and not failures, "\n".join(failures[:20])
