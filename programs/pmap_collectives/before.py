"""The Pmap Cookbook's collectives (JAX 0.3/0.4, cloud_tpu_colabs/Pmap_Cookbook.ipynb): `pmap` of a
lambda and of a module function called as `pmap(f, axis_name='i')(x)`, random matrices made per
device from mapped keys, normalization with `psum` (a lambda and a `partial` decorator), `pmean`,
`pmax`, `psum(1, ...)` for the device count, `all_gather`, `axis_index`, a `ppermute` ring, and the
cookbook's 1-D cellular automaton whose board slices trade edges with their neighbours through
`ppermute`. Each process maps its own devices (`jax.local_device_count()` of them); the
collectives and the ring span every device of every process. 1 process x 8 CPU devices or 2 x 4."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, pmap, random

device_count = jax.device_count()  # every device, of every process: the ring's size
n = jax.local_device_count()  # this process's devices: the leading axis of what it maps

squares = pmap(lambda x: x ** 2)(jnp.arange(n))
print(squares / 2)
added = pmap(jnp.add)(jnp.arange(float(n)), 2 * jnp.arange(float(n)))

keys = random.split(random.PRNGKey(0), n)
mats = pmap(lambda key: random.normal(key, (5, 6)))(keys)
products = pmap(lambda m: jnp.dot(m, m.T))(mats)
means = pmap(jnp.mean)(products)
print(mats.shape, products.shape, means)

normalize = lambda x: x / lax.psum(x, axis_name="i")  # noqa: E731
normalized = pmap(normalize, axis_name="i")(jnp.arange(float(n)))


@partial(pmap, axis_name="i")
def normalize_decorated(x):
    return x / lax.psum(x, "i")


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


stats = jax.pmap(statistics, axis_name="i")(np.arange(n * 2, dtype=np.float32).reshape(n, 2))
print(stats["mean"][0], stats["max"], stats["count"], stats["index"], stats["gathered"].shape)


def send_right(x, axis_name):
    right_perm = [(i, (i + 1) % device_count) for i in range(device_count)]
    return lax.ppermute(x, perm=right_perm, axis_name=axis_name)


def send_left(x, axis_name):
    left_perm = [((i + 1) % device_count, i) for i in range(device_count)]
    return lax.ppermute(x, perm=left_perm, axis_name=axis_name)


ring = jax.pmap(lambda x: send_right(x, "i"), axis_name="i")(np.arange(n))
print(ring)


def update_board(board):
    left = board[:-2]
    right = board[2:]
    center = board[1:-1]
    return lax.bitwise_xor(left, lax.bitwise_or(center, right))


@partial(pmap, axis_name="i")
def step(board_slice):
    left, right = board_slice[:1], board_slice[-1:]
    right, left = send_left(left, "i"), send_right(right, "i")
    enlarged_board_slice = jnp.concatenate([left, board_slice, right])
    return update_board(enlarged_board_slice)


def print_board(board):
    print("".join("*" if x else " " for x in np.asarray(board).ravel()))


board = np.zeros(40, dtype=bool)
board[board.shape[0] // 2] = True
reshaped_board = board.reshape((n, -1))
print_board(reshaped_board)
for _ in range(12):
    reshaped_board = step(reshaped_board)
    print_board(reshaped_board)
