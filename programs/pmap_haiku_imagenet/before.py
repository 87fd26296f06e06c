"""A dm-haiku ImageNet-example-style trainer (JAX 0.4, 2022), its pieces written out: the train
state is a NamedTuple (params, network state, optimizer state, loss scale) made on every local
device by `jax.pmap(initial_state)` of a key broadcast to `(jax.local_device_count(), 2)` and a
first batch; `train_step` is `functools.partial(jax.pmap, axis_name='i', donate_argnums=(0,))`:
mixed precision (params float32, compute bfloat16, the gradient cast to the compute dtype for the
all-reduce `lax.pmean` and back), a static loss scale with the update skipped when a gradient is
not finite (a `select_tree`), SGD with Nesterov momentum scaled by a warm-up cosine schedule of
the step count, L2 weight decay of the non-batch-norm params, and the scalars averaged over all
hosts. Training data is sharded per process (`_shard(split, jax.process_index(),
jax.process_count())`); evaluation runs a `jax.jit` step on the first device's copy
(`tree_map(lambda x: x[0], ...)`) over all the eval data."""
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

TRAIN_EXAMPLES = 256
EVAL_EXAMPLES = 48
EVAL_BATCH = 16
DEVICE_BATCH = 4
FEATURES = 6
CLASSES = 3
EPOCHS = 1
LR_INIT = 0.1
WARMUP_EPOCHS = 0.25
WEIGHT_DECAY = 1e-4
MOMENTUM = 0.9
LOSS_SCALE = 2.0 ** 10
COMPUTE_DTYPE = jnp.bfloat16


class TrainState(NamedTuple):
    params: Any
    state: Any
    opt_state: Any
    loss_scale: Any


def _shard(num_examples, shard_index, num_shards):
    """This shard's [start, end) of the examples, equal-sized shards."""
    size = num_examples // num_shards
    return size * shard_index, size * (shard_index + 1)


def load(split, *, is_training, batch_dims, seed=0):
    rng = np.random.RandomState(seed)
    w = rng.normal(size=(FEATURES, CLASSES))
    num = TRAIN_EXAMPLES if split == "train" else EVAL_EXAMPLES
    x = np.random.RandomState(seed + (split == "train")).normal(size=(num, FEATURES)).astype(np.float32)
    y = np.argmax(x @ w, axis=1).astype(np.int32)
    if is_training:
        start, end = _shard(num, jax.process_index(), jax.process_count())
    else:
        start, end = _shard(num, 0, 1)
    x, y = x[start:end], y[start:end]
    total = int(np.prod(batch_dims))
    order = np.random.RandomState(0).permutation(len(x)) if is_training else np.arange(len(x))
    while True:
        for i in range(0, len(x) - total + 1, total):
            idx = order[i:i + total]
            yield {"images": x[idx].reshape(tuple(batch_dims) + (FEATURES,)),
                   "labels": y[idx].reshape(tuple(batch_dims))}
        if not is_training:
            return


def lr_schedule(step):
    """Linear warm-up over the first epochs, then a half cosine to 0; the peak scales with the
    global batch (the linear scaling rule: LR_INIT per 256 examples)."""
    global_batch = DEVICE_BATCH * jax.device_count()
    per_epoch = TRAIN_EXAMPLES / global_batch
    warmup, total = WARMUP_EPOCHS * per_epoch, EPOCHS * per_epoch
    peak = LR_INIT * global_batch / 256
    after_warmup = jnp.maximum(step - warmup, 0) / (total - warmup)
    ramp = jnp.minimum(step / warmup, 1.0) if warmup else 1.0
    return peak * ramp * 0.5 * (1.0 + jnp.cos(jnp.pi * after_warmup))


def forward(params, state, images, *, is_training):
    """dense - batchnorm - relu - dense in the compute dtype; batch statistics as state."""
    p = jax.tree_map(lambda x: x.astype(COMPUTE_DTYPE), params)
    h = images.astype(COMPUTE_DTYPE) @ p["linear"]["w"] + p["linear"]["b"]
    if is_training:
        mean, var = jnp.mean(h.astype(jnp.float32), 0), jnp.var(h.astype(jnp.float32), 0)
        state = {"batchnorm": {"mean": 0.9 * state["batchnorm"]["mean"] + 0.1 * mean,
                               "var": 0.9 * state["batchnorm"]["var"] + 0.1 * var}}
    else:
        mean, var = state["batchnorm"]["mean"], state["batchnorm"]["var"]
    h = ((h.astype(jnp.float32) - mean) * jax.lax.rsqrt(var + 1e-5)).astype(COMPUTE_DTYPE)
    h = jax.nn.relu(h * p["batchnorm"]["scale"] + p["batchnorm"]["offset"])
    return (h @ p["logits"]["w"] + p["logits"]["b"]).astype(jnp.float32), state


def loss_fn(params, state, loss_scale, batch):
    logits, state = forward(params, state, batch["images"], is_training=True)
    labels = jax.nn.one_hot(batch["labels"], CLASSES)
    loss = -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), axis=-1))
    l2_params = [p for mod_name, mod in params.items() if "batchnorm" not in mod_name for p in mod.values()]
    loss = loss + WEIGHT_DECAY * 0.5 * sum(jnp.sum(jnp.square(p)) for p in l2_params)
    return loss * loss_scale, (loss, state)


def all_finite(tree):
    return jnp.all(jnp.array([jnp.all(jnp.isfinite(x)) for x in jax.tree_util.tree_leaves(tree)]))


def select_tree(pred, a, b):
    return jax.tree_map(lambda x, y: jax.lax.select(pred, x, y), a, b)


def optimizer_update(grads, opt_state, params):
    """Nesterov momentum, then the schedule, then the step down."""
    count, trace = opt_state["count"], opt_state["trace"]
    trace = jax.tree_map(lambda g, t: g + MOMENTUM * t, grads, trace)
    direction = jax.tree_map(lambda g, t: g + MOMENTUM * t, grads, trace)
    lr = lr_schedule(count)
    new_params = jax.tree_map(lambda p, d: p - lr * d, params, direction)
    return new_params, {"count": count + 1, "trace": trace}


@functools.partial(jax.pmap, axis_name="i", donate_argnums=(0,))
def train_step(train_state, batch):
    params, state, opt_state, loss_scale = train_state
    grads, (loss, new_state) = jax.grad(loss_fn, has_aux=True)(params, state, loss_scale, batch)
    grads = jax.tree_map(lambda g: g.astype(COMPUTE_DTYPE), grads)
    grads = jax.tree_map(lambda g: g / loss_scale.astype(g.dtype), grads)
    # the mean across all replicas keeps the params in sync; in the compute precision
    grads = jax.lax.pmean(grads, axis_name="i")
    grads = jax.tree_map(lambda g: g.astype(jnp.float32), grads)
    new_params, new_opt_state = optimizer_update(grads, opt_state, params)
    grads_finite = all_finite(grads)
    new_params, new_state, new_opt_state = select_tree(grads_finite, (new_params, new_state, new_opt_state),
                                                       (params, state, opt_state))
    scalars = {"train_loss": loss, "loss_scale": loss_scale, "grads_finite": grads_finite.astype(jnp.float32)}
    scalars = jax.lax.pmean(scalars, axis_name="i")
    return TrainState(new_params, new_state, new_opt_state, loss_scale), scalars


def initial_state(rng, batch):
    k1, k2 = jax.random.split(rng)
    params = {"linear": {"w": jax.random.truncated_normal(k1, -2.0, 2.0, (FEATURES, 16)) / np.sqrt(FEATURES),
                         "b": jnp.zeros(16)},
              "batchnorm": {"scale": jnp.ones(16), "offset": jnp.zeros(16)},
              "logits": {"w": jax.random.truncated_normal(k2, -2.0, 2.0, (16, CLASSES)) / 4.0,
                         "b": jnp.zeros(CLASSES)}}
    state = {"batchnorm": {"mean": jnp.zeros(16), "var": jnp.ones(16)}}
    del batch  # shapes only, in the original
    opt_state = {"count": jnp.zeros([], jnp.int32), "trace": jax.tree_map(jnp.zeros_like, params)}
    return TrainState(params, state, opt_state, jnp.asarray(LOSS_SCALE, jnp.float32))


@jax.jit
def eval_batch(params, state, batch):
    logits, _ = forward(params, state, batch["images"], is_training=False)
    return jnp.sum(jnp.equal(jnp.argmax(logits, axis=-1), batch["labels"])).astype(jnp.float32)


def evaluate(params, state):
    """Top-1 accuracy over the whole eval split, on the first device's copy of the (replicated)
    params and state: evaluation is jitted, not pmapped, so that every example is seen once."""
    params, state = jax.tree_util.tree_map(lambda x: x[0], (params, state))
    hits, seen = jnp.array(0.0), 0
    for batch in load("test", is_training=False, batch_dims=[EVAL_BATCH]):
        hits = hits + eval_batch(params, state, batch)
        seen += len(batch["labels"])
    if seen != EVAL_EXAMPLES:
        raise AssertionError(f"saw {seen} of {EVAL_EXAMPLES} eval examples")
    return {"top_1_acc": hits.item() / seen}


total_train_batch_size = DEVICE_BATCH * jax.device_count()
num_train_steps = (TRAIN_EXAMPLES * EPOCHS) // total_train_batch_size
local_device_count = jax.local_device_count()
train_dataset = load("train", is_training=True, batch_dims=[local_device_count, DEVICE_BATCH])

# the same random key on each device for initialization
rng = jax.random.PRNGKey(42)
rng = jnp.broadcast_to(rng, (local_device_count,) + rng.shape)
batch = next(train_dataset)
train_state = jax.pmap(initial_state)(rng, batch)

for step_num in range(num_train_steps):
    batch = next(train_dataset)
    train_state, train_scalars = train_step(train_state, batch)
    if step_num % 2 == 0 and jax.process_index() == 0:
        scalars = jax.device_get(jax.tree_util.tree_map(lambda x: x[0], train_scalars))
        print(f"step {step_num} " + " ".join(f"{k}={float(v):.5f}" for k, v in sorted(scalars.items())))

eval_scalars = evaluate(train_state.params, train_state.state)
print("process", jax.process_index(), "steps", num_train_steps, "eval", eval_scalars)
