"""Collectives across every device of every process, the multi-host pmap way (JAX 0.4): each
process builds only its own rows of a global dataset, picked by `jax.process_index()`, with one
slice per local device (`jax.local_device_count()`); the pmapped functions reduce over the whole
axis, all processes' devices included: `psum`/`pmean`/`pmax` of per-device statistics, `psum(1)`
for the global device count, `all_gather` of per-device values (stacked and tiled), a global
normalization, the devices' global `axis_index`, and a `ppermute` ring over the global axis.
Each process checks the totals against NumPy on the global data. Same values on 1 process x 8
devices and 2 processes x 4 devices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

ROWS_PER_DEVICE = 3
COLUMNS = 2


def global_data():
    """The whole dataset, the same on every process (as a dataset's files are)."""
    rows = jax.device_count() * ROWS_PER_DEVICE
    return (np.arange(rows * COLUMNS, dtype=np.float32).reshape(rows, COLUMNS) % 7) - 2.5


def local_data():
    """This process's rows, split over its devices: (local devices, rows per device, columns)."""
    per_process = jax.local_device_count() * ROWS_PER_DEVICE
    start = jax.process_index() * per_process
    rows = global_data()[start:start + per_process]
    return rows.reshape(jax.local_device_count(), ROWS_PER_DEVICE, COLUMNS)


@functools.partial(jax.pmap, axis_name="devices")
def statistics(x):
    """Statistics over the global batch, the same on every device of every process."""
    total = jax.lax.psum(jnp.sum(x, axis=0), "devices")
    count = jax.lax.psum(x.shape[0], "devices")
    return {
        "sum": total,
        "mean": total / count,
        "mean_of_means": jax.lax.pmean(jnp.mean(x, axis=0), "devices"),
        "max": jax.lax.pmax(jnp.max(x, axis=0), "devices"),
        "devices": jax.lax.psum(1, "devices"),
        "index": jax.lax.axis_index("devices"),
    }


@functools.partial(jax.pmap, axis_name="devices")
def gather(x):
    """Every device's first row, from all devices of all processes, stacked and tiled."""
    first = x[0]
    return jax.lax.all_gather(first, "devices"), jax.lax.all_gather(x[:1], "devices", tiled=True)


def normalize(x):
    return x / jax.lax.psum(jnp.sum(jnp.abs(x)), "devices")


normalized = jax.pmap(normalize, axis_name="devices")


def ring(x, axis_size):
    """Each device receives its left neighbour's rows (the ring closes over all devices)."""
    return jax.lax.ppermute(x, "devices", perm=[(i, (i + 1) % axis_size) for i in range(axis_size)])


data = local_data()
stats = statistics(data)
stacked, tiled = gather(data)
weights = normalized(data)
shifted = jax.pmap(functools.partial(ring, axis_size=jax.device_count()), axis_name="devices")(data)

everything = global_data()
assert np.allclose(stats["sum"][0], everything.sum(axis=0)), (stats["sum"][0], everything.sum(axis=0))
assert np.allclose(stats["max"][0], everything.max(axis=0))
assert int(stats["devices"][0]) == jax.device_count()
assert np.allclose(stacked[0], everything[::ROWS_PER_DEVICE])
total_weight = float(np.abs(np.asarray(weights)).sum())

print("process", jax.process_index(), "devices", np.asarray(stats["index"]).tolist())
print("global sum", np.asarray(stats["sum"][0]).tolist(), "mean", np.asarray(stats["mean"][0]).round(4).tolist())
print("first rows of all devices", np.asarray(tiled[0]).shape, "this process's weight", round(total_weight, 4))
print("received from the left", np.asarray(shifted[:, 0, 0]).tolist())
