"""``jax.device_put_sharded`` and ``jax.device_put_replicated`` (removed in JAX 0.10.0).

In JAX 0.4.x both returned arrays for pmap: ``device_put_sharded(shards, devices)`` stacked a list
of equally shaped pytrees along a new leading axis and put slice ``i`` on ``devices[i]``;
``device_put_replicated(x, devices)`` did the same with ``len(devices)`` copies of ``x``. The
placement (one leading-axis slice per device, in the order given) is what is kept here; the
pmap-specific ``PmapSharding`` is gone from the installed JAX, so the arrays carry a
``NamedSharding`` over a one-axis mesh of those devices. Each leaf goes to its device through
``jax.device_put``, as in 0.4.x, so a Python scalar gives a weakly typed array (``0.5`` a weak
float32, which ``* bfloat16`` keeps bfloat16) and a typed PRNG key array stays one.
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
    pieces = [jax.device_put(leaf, device)[None] for leaf, device in zip(leaves, devices)]
    out = jax.make_array_from_single_device_arrays((len(devices),) + pieces[0].shape[1:], sharding, pieces)
    if getattr(pieces[0], "weak_type", False):  # make_array_from_single_device_arrays drops it
        from jax._src.lax.lax import _convert_element_type

        out = _convert_element_type(out, weak_type=True)
    return out


def device_put_sharded(shards: Sequence[Any], devices: Sequence[Any]):
    import jax

    return jax.tree_util.tree_map(lambda *leaves: _stacked_on(devices, leaves), *shards)


def device_put_replicated(x: Any, devices: Sequence[Any]):
    import jax

    return jax.tree_util.tree_map(lambda leaf: _stacked_on(devices, [leaf] * len(devices)), x)
