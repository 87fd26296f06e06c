"""Input prefetching to the devices, an EMA of the params and a padded, gathered evaluation, as
2021-22 ViT/haiku-era code wrote them (JAX 0.3/0.4): the host's batches are split per device and
put on this host's devices with `jax.device_put_sharded` (what flax's `prefetch_to_device` did),
two steps ahead (a deque); the hosts are named the 2021 way (`jax.host_id()`, `jax.host_count()`,
`jax.local_devices(host_id=...)`); the pmapped step (in-axes `(0, 0, 0, None)`: the EMA decay
unmapped) trains with SGD and keeps a Polyak average of the params; evaluation pads the last
batch to the device count with a mask, `lax.all_gather`s every device's predictions and mask, and
each process keeps the unpadded rows of the global batch (`tiled=True` gathers). Pytrees are
walked with `jax.tree_leaves`, `jax.tree_flatten`/`jax.tree_unflatten` and `jax.tree_map`."""
import collections
import functools
import itertools

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


GLOBAL_BATCH = 32
FEATURES = 4
CLASSES = 3
STEPS = 6
LR = 0.4
EMA_DECAY = 0.5
EVAL_EXAMPLES = 21  # not a multiple of the device count: padded


def prefetch(iterator, size=2):
    """The iterator's host batches, each leaf split over this host's devices with
    `jax.device_put_sharded` while up to `size` batches wait on the devices."""
    devices = jax.local_devices(process_index=jax.host_id())
    on_device = (jax.tree.map(lambda xs: jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *list(xs)), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devices), ("x",)), jax.sharding.PartitionSpec("x"))), batch) for batch in iterator)
    waiting = collections.deque(itertools.islice(on_device, size))
    while waiting:
        ready = waiting.popleft()
        waiting.extend(itertools.islice(on_device, 1))
        yield ready


def shard(x):
    n = jax.local_device_count()
    return x.reshape((n, -1) + x.shape[1:])


def train_batches():
    rng = np.random.RandomState(0)
    w = np.random.RandomState(1).normal(size=(FEATURES, CLASSES))
    per_host = GLOBAL_BATCH // jax.host_count()
    lo = jax.host_id() * per_host
    for _ in range(STEPS):
        x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
        y = np.argmax(x @ w, 1).astype(np.int32)
        yield {"x": shard(x[lo:lo + per_host]), "y": shard(y[lo:lo + per_host])}


def init_params():
    rng = np.random.RandomState(2)
    return {"w": jnp.asarray(rng.normal(size=(FEATURES, CLASSES)).astype(np.float32)), "b": jnp.zeros(CLASSES)}


def logits_fn(params, x):
    return x @ params["w"] + params["b"]


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec()), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec()), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def train_step(params, ema_params, batch, decay):
    params, ema_params, batch = jax.tree.map(lambda a: a[0], (params, ema_params, batch))

    def loss_fn(p):
        logp = jax.nn.log_softmax(logits_fn(p, batch["x"]))
        return -jnp.mean(jnp.take_along_axis(logp, batch["y"][:, None], axis=1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "batch")
    leaves, treedef = jax.tree.flatten(params)
    new_leaves = [p - LR * g for p, g in zip(leaves, jax.tree.leaves(grads))]
    params = jax.tree.unflatten(treedef, new_leaves)
    ema_params = jax.tree.map(lambda e, p: decay * e + (1 - decay) * p, ema_params, params)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), (params, ema_params, jax.lax.pmean(loss, "batch")))


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def predict_step(params, batch):
    params, batch = jax.tree.map(lambda a: a[0], (params, batch))
    preds = jnp.argmax(logits_fn(params, batch["x"]), -1)
    gathered = jax.lax.all_gather({"pred": preds, "y": batch["y"], "mask": batch["mask"]}, "batch", tiled=True)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), gathered)


def eval_batch():
    """The whole eval set as one global batch, padded to a multiple of the global device count
    with masked rows; this process's block of it."""
    rng = np.random.RandomState(5)
    w = np.random.RandomState(1).normal(size=(FEATURES, CLASSES))
    x = rng.normal(size=(EVAL_EXAMPLES, FEATURES)).astype(np.float32)
    y = np.argmax(x @ w, 1).astype(np.int32)
    total = -(-EVAL_EXAMPLES // jax.device_count()) * jax.device_count()
    pad = total - EVAL_EXAMPLES
    x, y = np.pad(x, ((0, pad), (0, 0))), np.pad(y, (0, pad))
    mask = np.pad(np.ones(EVAL_EXAMPLES, np.float32), (0, pad))
    per_host = total // jax.host_count()
    lo = jax.host_id() * per_host
    return {k: shard(v[lo:lo + per_host]) for k, v in (("x", x), ("y", y), ("mask", mask))}


params = jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(jax.local_devices())), init_params()), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))
ema_params = jax.tree.map(lambda x: x, params)
for step, batch in enumerate(prefetch(train_batches())):
    params, ema_params, loss = train_step(params, ema_params, batch, EMA_DECAY)
    if jax.host_id() == 0:
        print(f"step {step} loss {float(loss[0]):.5f}")

for name, tree in (("params", params), ("ema", ema_params)):
    out = jax.device_get(jax.tree.map(lambda x: x[0], predict_step(tree, eval_batch())))
    keep = out["mask"] > 0
    accuracy = float(np.mean(out["pred"][keep] == out["y"][keep]))
    print(name, "examples", int(keep.sum()), "of", len(keep), "accuracy", round(accuracy, 5))
print("host", jax.host_id(), "of", jax.host_count(), "leaves", len(jax.tree.leaves(params)))
