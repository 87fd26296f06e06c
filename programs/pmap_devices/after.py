"""pmap on a list of devices given by the program (JAX 0.3/0.4, `devices=`): every device, in an
order chosen by the program (reversed, and interleaved), so the i-th row of the result lives on the
i-th device of the list; the output of one such pmap fed to another. Each process maps its own
devices of the list (`jax.local_device_count()` rows): 1 process x 8 CPU devices or 2 x 4."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils


def host_local_call(f, mesh, in_specs, out_specs, static_argnums=()):
    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
    aside) become global arrays over ``mesh`` and the outputs this process's part again. With one
    process, ``f`` is called as it is."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(f)
    def call(*args):
        if jax.process_count() == 1:
            return f(*args)
        dynamic = [a for i, a in enumerate(args) if i not in static]
        dynamic = jax.tree.map(lambda a: a if isinstance(a, jax.Array) else np.asarray(a), dynamic)
        dynamic = iter(multihost_utils.host_local_array_to_global_array(tuple(dynamic), mesh, in_specs))
        out = f(*(a if i in static else next(dynamic) for i, a in enumerate(args)))
        return multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)

    return call


reversed_devices = jax.devices()[::-1]
interleaved = jax.devices()[::2] + jax.devices()[1::2]


def where_am_i(x):
    return x * 10 + jax.lax.axis_index("d")


x = np.arange(jax.local_device_count(), dtype=np.float32)  # a row for each of this process's devices
on_reversed = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), where_am_i(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(reversed_devices, ("d",)), in_specs=jax.sharding.PartitionSpec("d"), out_specs=jax.sharding.PartitionSpec("d"), check_vma=False), in_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(reversed_devices, ("d",)), jax.sharding.PartitionSpec("d"))), mesh=jax.sharding.Mesh(reversed_devices, ("d",)), in_specs=jax.sharding.PartitionSpec("d"), out_specs=jax.sharding.PartitionSpec("d"))(x)
print([shard.device.id for shard in on_reversed.addressable_shards], on_reversed)


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(interleaved, ("d",)), in_specs=jax.sharding.PartitionSpec("d"), out_specs=jax.sharding.PartitionSpec("d"))
@functools.partial(jax.jit, in_shardings=jax.sharding.NamedSharding(jax.sharding.Mesh(interleaved, ("d",)), jax.sharding.PartitionSpec("d")))
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(interleaved, ("d",)), in_specs=jax.sharding.PartitionSpec("d"), out_specs=jax.sharding.PartitionSpec("d"), check_vma=False)
def centred(x):
    x = jax.tree.map(lambda a: a[0], x)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), x - jax.lax.pmean(x, "d"))


out = centred(on_reversed)
print([shard.device.id for shard in out.addressable_shards], out)
