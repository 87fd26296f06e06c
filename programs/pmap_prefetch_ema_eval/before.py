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
    devices = jax.local_devices(host_id=jax.host_id())
    on_device = (jax.tree_map(lambda xs: jax.device_put_sharded(list(xs), devices), batch) for batch in iterator)
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


@functools.partial(jax.pmap, axis_name="batch", in_axes=(0, 0, 0, None))
def train_step(params, ema_params, batch, decay):
    def loss_fn(p):
        logp = jax.nn.log_softmax(logits_fn(p, batch["x"]))
        return -jnp.mean(jnp.take_along_axis(logp, batch["y"][:, None], axis=1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "batch")
    leaves, treedef = jax.tree_flatten(params)
    new_leaves = [p - LR * g for p, g in zip(leaves, jax.tree_leaves(grads))]
    params = jax.tree_unflatten(treedef, new_leaves)
    ema_params = jax.tree_map(lambda e, p: decay * e + (1 - decay) * p, ema_params, params)
    return params, ema_params, jax.lax.pmean(loss, "batch")


@functools.partial(jax.pmap, axis_name="batch")
def predict_step(params, batch):
    preds = jnp.argmax(logits_fn(params, batch["x"]), -1)
    gathered = jax.lax.all_gather({"pred": preds, "y": batch["y"], "mask": batch["mask"]}, "batch", tiled=True)
    return gathered


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


params = jax.device_put_replicated(init_params(), jax.local_devices())
ema_params = jax.tree_map(lambda x: x, params)
for step, batch in enumerate(prefetch(train_batches())):
    params, ema_params, loss = train_step(params, ema_params, batch, EMA_DECAY)
    if jax.host_id() == 0:
        print(f"step {step} loss {float(loss[0]):.5f}")

for name, tree in (("params", params), ("ema", ema_params)):
    out = jax.device_get(jax.tree_map(lambda x: x[0], predict_step(tree, eval_batch())))
    keep = out["mask"] > 0
    accuracy = float(np.mean(out["pred"][keep] == out["y"][keep]))
    print(name, "examples", int(keep.sum()), "of", len(keep), "accuracy", round(accuracy, 5))
print("host", jax.host_id(), "of", jax.host_count(), "leaves", len(jax.tree_leaves(params)))
