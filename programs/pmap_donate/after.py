"""pmap donating its inputs (JAX 0.3/0.4, `donate_argnums`): a per-device state updated in place
step after step by a `functools.partial(jax.pmap, ..., donate_argnums=(0,))` step, the old state
deleted after each call (reading it raises), and a call form `jax.pmap(f, donate_argnums=0)`
that donates a buffer it returns updated. One process, 8 CPU devices."""
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


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), donate_argnums=(0,))
@functools.partial(jax.jit, donate_argnums=(0,))
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)
def step(state, x):
    """The state moved towards the mean of the inputs over the devices."""
    state, x = jax.tree.map(lambda a: a[0], (state, x))
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), state + 0.5 * (jax.lax.pmean(x, "i") - state))


n = jax.local_device_count()
x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
state = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), jnp.zeros_like(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(x)
for _ in range(3):
    old = state
    state = step(state, x)
    assert old.is_deleted()
    try:
        np.asarray(old)
    except RuntimeError as error:
        print("donated:", str(error).splitlines()[0][:40])
print(state[0])

counts = jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *[np.zeros(2, np.int32)] * n), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))
bumped = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda c: c + jnp.arange(2, dtype=np.int32))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False), donate_argnums=0), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), donate_argnums=0)(counts)
print(counts.is_deleted(), bumped.sum())
