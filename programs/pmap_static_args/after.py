"""pmap with static arguments (JAX 0.3/0.4, `static_broadcasted_argnums`): a Python int and a
string, broadcast to every device and fixed at compile time, in the call form
`jax.pmap(f, static_broadcasted_argnums=(1,))(x, 3)` and in a `functools.partial` decorator, each
called with two different static values (two compilations). Each process maps its own devices
(`jax.local_device_count()`): 1 process x 8 CPU devices or 2 x 4."""
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


def power(x, n):
    """x to the n-th power by repeated multiplication: n must be a Python int."""
    out = jnp.ones_like(x)
    for _ in range(n):
        out = out * x
    return out


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), static_argnums=(1, 2))
@functools.partial(jax.jit, static_argnums=(1, 2))
def normalize(x, how, eps):
    """This device's row scaled by the total over the devices, the norm chosen by `how`."""
    @functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)
    def per_device(x):
        x = jax.tree.map(lambda a: a[0], x)
        if how == "l1":
            total = jax.lax.psum(jnp.abs(x).sum(), "i")
        else:
            total = jnp.sqrt(jax.lax.psum((x * x).sum(), "i"))
        return jax.tree.map(lambda o: jnp.expand_dims(o, 0), x / (total + eps))
    return per_device(x)


n = jax.local_device_count()  # this process's devices
x = np.arange(n * 3, dtype=np.float32).reshape(n, 3) / 10
cubes = host_local_call(jax.jit(lambda a0, a1: jax.shard_map(lambda a0: jax.tree.map(lambda o: jnp.expand_dims(o, 0), power(jax.tree.map(lambda a: a[0], a0), a1)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)(a0), static_argnums=(1,)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), static_argnums=(1,))(x, 3)
squares = host_local_call(jax.jit(lambda a0, a1: jax.shard_map(lambda a0: jax.tree.map(lambda o: jnp.expand_dims(o, 0), power(jax.tree.map(lambda a: a[0], a0), a1)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)(a0), static_argnums=1), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), static_argnums=1)(x, 2)
print(cubes[1], squares[1])

l1 = normalize(x, "l1", 1e-6)
l2 = normalize(x, "l2", 0.5)
print(float(jnp.abs(l1).sum()), l2[0])
