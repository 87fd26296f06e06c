"""Host-side utilities of a scenic-style trainer (JAX 0.4, 2022): `barrier_across_hosts` (a
`jax.pmap(lambda x: jax.lax.psum(x, 'i'), 'i')` with the axis name passed positionally),
`get_num_training_steps` from the dataset's metadata, a `Chrono` that counts the examples seen by
every process, an unreplicate that reads the first device's buffer of a pmap output the fast way
(`x.device_buffers[0]`, for `pxla.ShardedDeviceArray`s, else `x[0]`), `isinstance` checks on
`jnp.DeviceArray`, key annotations with `jax.random.KeyArray`, and `log_train_summary`, which
sums each step's `(sum, normalizer)` metrics from `stack_forest` on the host. A short data-parallel
training loop of a linear regressor exercises them on every process."""
import functools
from typing import Any, Dict

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.interpreters import pxla


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


GLOBAL_BATCH = 16
FEATURES = 3
NUM_TRAIN_EXAMPLES = 64
NUM_EPOCHS = 2
LR = 0.1


def barrier_across_hosts():
    """All hosts reach this point (a psum over every device)."""
    x = jnp.ones([jax.local_device_count()])
    x = jax.device_get(host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), (lambda x: jax.lax.psum(x, "i"))(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(x))
    assert x[0] == jax.device_count(), x
    return int(x[0])


def get_num_training_steps(config: Dict[str, Any], meta_data: Dict[str, Any]):
    steps_per_epoch = meta_data["num_train_examples"] // config["batch_size"]
    return config["num_training_epochs"] * steps_per_epoch, steps_per_epoch


def first_copy(x):
    """Device 0's copy of a replicated pmap output, without gathering the others."""
    if isinstance(x, pxla.ShardedDeviceArray):
        return np.asarray([s.data for s in x.addressable_shards][0])
    return np.asarray(x[0])


def unreplicate_and_get(tree):
    return jax.tree.map(first_copy, tree)


def is_device_value(x):
    return isinstance(x, jax.Array)


def stack_forest(forest):
    if not forest:
        return {}
    return jax.tree_util.tree_map(lambda *args: np.stack(args), *forest)


def log_train_summary(step, *, train_metrics, prefix="train"):
    summary = jax.tree_util.tree_map(lambda x: x.sum(), stack_forest(train_metrics))
    scalars = {f"{prefix}_{key}": float(val[0] / val[1]) for key, val in summary.items()}
    if jax.process_index() == 0:
        print("step", step, {k: round(v, 6) for k, v in sorted(scalars.items())})
    return scalars


class Chrono:
    def __init__(self):
        self.accum_examples_seen = 0

    def tick(self, step, global_batch):
        self.accum_examples_seen += global_batch
        return self.accum_examples_seen / (step * global_batch)


def make_rng(seed: int) -> jax.Array:
    return jax.random.PRNGKey(seed)


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def train_step(params, batch):
    params, batch = jax.tree.map(lambda a: a[0], (params, batch))

    def loss_fn(p):
        return jnp.mean((batch["x"] @ p["w"] + p["b"] - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "batch")
    params = jax.tree.map(lambda p, g: p - LR * g, params, grads)
    n = jnp.asarray(batch["y"].shape[0], jnp.float32)
    metrics = {"loss": (loss * n, n), "abs_err": (jnp.sum(jnp.abs(batch["x"] @ p_w(params) - batch["y"])), n)}
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), (params, jax.lax.psum(metrics, "batch")))


def p_w(params):
    return params["w"]


def dataset(rng_seed):
    rng = np.random.RandomState(rng_seed)
    true_w = np.array([1.0, -2.0, 0.5], np.float32)
    per_host = GLOBAL_BATCH // jax.process_count()
    lo = jax.process_index() * per_host
    n = jax.local_device_count()
    while True:
        x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
        y = x @ true_w + 0.3
        yield {"x": x[lo:lo + per_host].reshape(n, -1, FEATURES), "y": y[lo:lo + per_host].reshape(n, -1)}


config = {"batch_size": GLOBAL_BATCH, "num_training_epochs": NUM_EPOCHS}
total_steps, steps_per_epoch = get_num_training_steps(config, {"num_train_examples": NUM_TRAIN_EXAMPLES})
key = make_rng(0)
params = {"w": jax.random.normal(key, (FEATURES,)) * 0.1, "b": jnp.zeros(())}
print("params are device values:", all(is_device_value(x) for x in jax.tree_util.tree_leaves(params)))
params = jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(jax.local_devices())), params), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))
chrono = Chrono()
train_metrics = []
data = dataset(1)
for step in range(1, total_steps + 1):
    params, metrics = train_step(params, next(data))
    train_metrics.append(unreplicate_and_get(metrics))
    seen = chrono.tick(step, GLOBAL_BATCH)
    if step % steps_per_epoch == 0:
        log_train_summary(step, train_metrics=train_metrics)
        train_metrics = []
print("hosts in barrier:", barrier_across_hosts(), "examples seen", chrono.accum_examples_seen, seen)
final = unreplicate_and_get(params)
print("w", np.round(final["w"], 4), "b", np.round(final["b"], 4))
