"""pmap on a list of devices given by the program (JAX 0.3/0.4, `devices=`): every device, in an
order chosen by the program (reversed, and interleaved), so the i-th row of the result lives on the
i-th device of the list; the output of one such pmap fed to another. Each process maps its own
devices of the list (`jax.local_device_count()` rows): 1 process x 8 CPU devices or 2 x 4."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

reversed_devices = jax.devices()[::-1]
interleaved = jax.devices()[::2] + jax.devices()[1::2]


def where_am_i(x):
    return x * 10 + jax.lax.axis_index("d")


x = np.arange(jax.local_device_count(), dtype=np.float32)  # a row for each of this process's devices
on_reversed = jax.pmap(where_am_i, axis_name="d", devices=reversed_devices)(x)
print([shard.device.id for shard in on_reversed.addressable_shards], on_reversed)


@functools.partial(jax.pmap, axis_name="d", devices=interleaved)
def centred(x):
    return x - jax.lax.pmean(x, "d")


out = centred(on_reversed)
print([shard.device.id for shard in out.addressable_shards], out)
