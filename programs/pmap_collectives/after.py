"""The Pmap Cookbook's collectives (JAX 0.3/0.4, cloud_tpu_colabs/Pmap_Cookbook.ipynb): `pmap` of a
lambda and of a module function called as `pmap(f, axis_name='i')(x)`, random matrices made per
device from mapped keys, normalization with `psum` (a lambda and a `partial` decorator), `pmean`,
`pmax`, `psum(1, ...)` for the device count, `all_gather`, `axis_index`, a `ppermute` ring, and the
cookbook's 1-D cellular automaton whose board slices trade edges with their neighbours through
`ppermute`. Each process maps its own devices (`jax.local_device_count()` of them); the
collectives and the ring span every device of every process. 1 process x 8 CPU devices or 2 x 4."""
from functools import partial, wraps

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, pmap, random
from jax.experimental import multihost_utils


def host_local_call(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

    @wraps(f)
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


device_count = jax.device_count()  # every device, of every process: the ring's size
n = jax.local_device_count()  # this process's devices: the leading axis of what it maps

squares = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda x: x ** 2)(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(jnp.arange(n))
print(squares / 2)
added = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), jnp.add(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(jnp.arange(float(n)), 2 * jnp.arange(float(n)))

keys = random.split(random.PRNGKey(0), n)
mats = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda key: random.normal(key, (5, 6)))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(keys)
products = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda m: jnp.dot(m, m.T))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(mats)
means = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), jnp.mean(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(products)
print(mats.shape, products.shape, means)

normalize = lambda x: x / lax.psum(x, axis_name="i")  # noqa: E731
normalized = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), normalize(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(jnp.arange(float(n)))


@partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))
@jax.jit
@partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)
def normalize_decorated(x):
    x = jax.tree.map(lambda a: a[0], x)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), x / lax.psum(x, "i"))


print(normalized, normalize_decorated(jnp.arange(float(n))))


def statistics(x):
    """Collectives of this device's row: the mean, max, device count, index and every row."""
    return {
        "mean": lax.pmean(x, "i"),
        "max": lax.pmax(x.max(), "i"),
        "count": lax.psum(1, "i"),
        "index": lax.axis_index("i"),
        "gathered": lax.all_gather(x, "i"),
    }


stats = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), statistics(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(np.arange(n * 2, dtype=np.float32).reshape(n, 2))
print(stats["mean"][0], stats["max"], stats["count"], stats["index"], stats["gathered"].shape)


def send_right(x, axis_name):
    right_perm = [(i, (i + 1) % device_count) for i in range(device_count)]
    return lax.ppermute(x, perm=right_perm, axis_name=axis_name)


def send_left(x, axis_name):
    left_perm = [((i + 1) % device_count, i) for i in range(device_count)]
    return lax.ppermute(x, perm=left_perm, axis_name=axis_name)


ring = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda x: send_right(x, "i"))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(np.arange(n))
print(ring)


def update_board(board):
    left = board[:-2]
    right = board[2:]
    center = board[1:-1]
    return lax.bitwise_xor(left, lax.bitwise_or(center, right))


@partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))
@jax.jit
@partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)
def step(board_slice):
    board_slice = jax.tree.map(lambda a: a[0], board_slice)
    left, right = board_slice[:1], board_slice[-1:]
    right, left = send_left(left, "i"), send_right(right, "i")
    enlarged_board_slice = jnp.concatenate([left, board_slice, right])
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), update_board(enlarged_board_slice))


def print_board(board):
    print("".join("*" if x else " " for x in np.asarray(board).ravel()))


board = np.zeros(40, dtype=bool)
board[board.shape[0] // 2] = True
reshaped_board = board.reshape((n, -1))
print_board(reshaped_board)
for _ in range(12):
    reshaped_board = step(reshaped_board)
    print_board(reshaped_board)
