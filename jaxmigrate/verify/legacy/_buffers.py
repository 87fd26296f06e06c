"""``Device.live_buffers()`` and ``Client.live_buffers()`` as in JAX 0.4.1.

0.4.1 listed the device buffers alive on a device (a device for each shard of a sharded array)
and, on a backend client, on all of its devices. A buffer here is the single-device array
holding one array's data on that device: the array itself when it lives on that one device only,
else its shard there.
"""

from __future__ import annotations

from typing import List

import jax


def _buffers_on(device) -> List[jax.Array]:
    out = []
    for array in jax.live_arrays():
        if array.is_deleted():
            continue
        if len(array.devices()) == 1:
            if device in array.devices():
                out.append(array)
            continue
        out.extend(shard.data for shard in array.addressable_shards if shard.device == device)
    return out


def device_live_buffers(self) -> List[jax.Array]:
    return _buffers_on(self)


def client_live_buffers(self) -> List[jax.Array]:
    return [buffer for device in self.local_devices() for buffer in _buffers_on(device)]


def install() -> None:
    device = jax.devices()[0]
    type(device).live_buffers = device_live_buffers
    type(device.client).live_buffers = client_live_buffers
