"""pmap on a list of devices given by the program (JAX 0.3/0.4, `devices=`): every device, in an
order chosen by the program (reversed, and interleaved), so the i-th row of the result lives on the
i-th device of the list; the output of one such pmap fed to another. Each process maps its own
devices of the list (`jax.local_device_count()` rows): 1 process x 8 CPU devices or 2 x 4."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils


def host_local_call(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

    @functools.wraps(f)
    def call(*args):
        if jax.process_count() == 1:
            return f(*args)
        dynamic = [i for i in range(len(args)) if i not in static]
        specs = dict(zip(dynamic, in_specs if type(in_specs) is tuple else [in_specs] * len(dynamic)))

        def to_global(i, a):  # a Python number stays one (weakly typed), as pmap passed it
            if i not in specs or isinstance(a, (int, float, complex)):
                return a
            a = jax.tree.map(lambda x: x if isinstance(x, jax.Array) else np.asarray(x), a)
            return multihost_utils.host_local_array_to_global_array(a, mesh, specs[i])

        out = f(*(to_global(i, a) for i, a in enumerate(args)))
        for leaf in jax.tree.leaves([args[i] for i in donated]):
            if isinstance(leaf, jax.Array) and not leaf.is_deleted():
                leaf.delete()
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
