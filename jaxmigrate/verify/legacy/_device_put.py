"""``jax.device_put_sharded`` and ``jax.device_put_replicated`` (removed in JAX 0.10.0).

In JAX 0.4.x both returned arrays for pmap: ``device_put_sharded(shards, devices)`` stacked a list
of equally shaped pytrees along a new leading axis and put slice ``i`` on ``devices[i]``;
``device_put_replicated(x, devices)`` did the same with ``len(devices)`` copies of ``x``. The
placement (one leading-axis slice per device, in the order given) is what is kept here; the
pmap-specific ``PmapSharding`` is gone from the installed JAX, so the arrays carry a
``NamedSharding`` over a one-axis mesh of those devices.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def _stacked_on(devices: Sequence[Any], leaves: Sequence[Any]):
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    if len(leaves) != len(devices):
        raise ValueError(f"len(shards) = {len(leaves)} must equal len(devices) = {len(devices)}.")
    sharding = NamedSharding(Mesh(np.array(list(devices)), ("_legacy_pmap",)), PartitionSpec("_legacy_pmap"))
    first = np.asarray(leaves[0])
    pieces = [jax.device_put(np.asarray(leaf)[None], device) for leaf, device in zip(leaves, devices)]
    return jax.make_array_from_single_device_arrays((len(devices),) + first.shape, sharding, pieces)


def device_put_sharded(shards: Sequence[Any], devices: Sequence[Any]):
    import jax

    return jax.tree_util.tree_map(lambda *leaves: _stacked_on(devices, leaves), *shards)


def device_put_replicated(x: Any, devices: Sequence[Any]):
    import jax

    return jax.tree_util.tree_map(lambda leaf: _stacked_on(devices, [leaf] * len(devices)), x)
