"""``Device.live_buffers()`` and ``Client.live_buffers()`` as in JAX 0.4.1, and
``jax.Array.device_buffers``/``device_buffer`` as in 0.4.21 (removed in 0.4.27).

0.4.1 listed the device buffers alive on a device (a device for each shard of a sharded array)
and, on a backend client, on all of its devices. A buffer here is the single-device array
holding one array's data on that device: the array itself when it lives on that one device only,
else its shard there; arrays sharing one buffer (a shard and its ``shard.data`` view) count once.
"""

from __future__ import annotations

from typing import Any, Dict, List

import jax


def _buffer_key(array):
    try:
        return array.unsafe_buffer_pointer()
    except Exception:  # noqa: BLE001 - no pointer on this backend: the object itself
        return id(array)


def _buffers_on(device) -> List[jax.Array]:
    """One entry per distinct device buffer on ``device``. A sharded array's shard and the
    single-device array that views it (``shard.data``, kept alive by the program, e.g. a list
    an earlier ``live_buffers()`` returned) are one buffer, as they were in 0.4.1."""
    seen: Dict[Any, Any] = {}
    for array in jax.live_arrays():
        if array.is_deleted():
            continue
        if len(array.devices()) == 1:
            candidates = [array] if device in array.devices() else []
        else:
            candidates = [shard.data for shard in array.addressable_shards if shard.device == device]
        for buffer in candidates:
            seen.setdefault(_buffer_key(buffer), buffer)
    return list(seen.values())


def device_live_buffers(self) -> List[jax.Array]:
    return _buffers_on(self)


def client_live_buffers(self) -> List[jax.Array]:
    return [buffer for device in self.local_devices() for buffer in _buffers_on(device)]


def array_device_buffers(self) -> List[jax.Array]:
    """``jax.Array.device_buffers`` as in JAX 0.4.21: the array's single-device arrays."""
    return list(self._arrays)


def array_device_buffer(self) -> jax.Array:
    """``jax.Array.device_buffer`` as in JAX 0.4.21: the one single-device array (else an error)."""
    if len(self._arrays) == 1:
        return self._arrays[0]
    raise ValueError("Length of buffers is greater than 1. Please use `.device_buffers` instead.")


def install() -> None:
    device = jax.devices()[0]
    type(device).live_buffers = device_live_buffers
    type(device.client).live_buffers = client_live_buffers
    array_type = type(jax.numpy.zeros(()))
    array_type.device_buffers = property(array_device_buffers)
    array_type.device_buffer = property(array_device_buffer)
