"""Every dotted name a rule can emit exists in the installed JAX (as TensorFlow's upgrade script
checks its rewrite targets). Targets older than the installed JAX are covered by the moves
table's `since`/`until` versions and their own fixtures."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.rules import gda, gda_construction, live_buffers, positional_sharding, shard_map, sharding_constraint  # noqa: E402
from jaxmigrate.rules.moves import MOVES, applies  # noqa: E402

EMITTED = sorted({
    *(m.new for m in MOVES if applies(m, None)),
    *(m.prefer for m in MOVES if m.prefer),
    gda_construction.MAKE_FROM_CALLBACK, gda_construction.MAKE_FROM_ARRAYS,
    gda.NAMED_SHARDING, gda.PARTITION_SPEC,
    f"{gda.MULTIHOST_UTILS}.host_local_array_to_global_array",
    f"{gda.MULTIHOST_UTILS}.global_array_to_host_local_array",
    "jax.live_arrays", sharding_constraint.MODERN, "jax.Array", "jax.Shard", shard_map.MODERN,
    positional_sharding.MESH,
})


def _resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("dotted", EMITTED)
def test_emitted_name_exists(dotted):
    assert _resolve(dotted) is not None


def test_the_sweep_covers_the_live_buffers_target():
    assert live_buffers.GET_BACKEND not in EMITTED  # a legacy name is never emitted
