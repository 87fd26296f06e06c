"""A pjit-era (JAX 0.3/0.4, 2022) data- and model-parallel trainer in the shape of the ViT/scenic
trainers, its model and optimizer written out: a 2 x 4 `maps.Mesh` over axes ("data", "model");
the MLP's hidden dimension is split over "model" by a tree of `PartitionSpec`s (imported from
`jax.experimental`), the batch over "data". The parameters are made by a pjit of the init
function (`in_axis_resources=None`, `out_axis_resources=` the spec tree); the train step is a pjit
donating params, momentum and EMA: gradient accumulation over micro-batches (`lax.scan`), a
`with_sharding_constraint` on the hidden activations, SGD with momentum and a warm-up/linear
schedule of the step, an exponential moving average of the params; evaluation is a pjit over
padded batches with a mask, of both the params and their EMA. Everything runs `with mesh:`."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.lax import with_sharding_constraint
from jax.sharding import PartitionSpec

FEATURES = 8
HIDDEN = 16
CLASSES = 4
BATCH = 32
ACCUM_STEPS = 4
STEPS = 6
EVAL_EXAMPLES = 20
EVAL_BATCH = 8
BASE_LR = 0.5
WARMUP = 2
MOMENTUM = 0.9
EMA_DECAY = 0.7

mesh = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(2, 4), ("data", "model"))

param_specs = {
    "hidden": {"kernel": PartitionSpec(None, "model"), "bias": PartitionSpec("model")},
    "out": {"kernel": PartitionSpec("model", None), "bias": None},
}
batch_spec = {"x": PartitionSpec("data"), "y": PartitionSpec("data")}
eval_spec = {"x": PartitionSpec("data"), "y": PartitionSpec("data"), "mask": PartitionSpec("data")}


def init_fn(key):
    k1, k2 = jax.random.split(key)
    return {"hidden": {"kernel": jax.random.normal(k1, (FEATURES, HIDDEN)) / np.sqrt(FEATURES),
                       "bias": jnp.zeros((HIDDEN,))},
            "out": {"kernel": jax.random.normal(k2, (HIDDEN, CLASSES)) / np.sqrt(HIDDEN),
                    "bias": jnp.zeros((CLASSES,))}}


def apply_fn(params, x):
    h = jnp.tanh(x @ params["hidden"]["kernel"] + params["hidden"]["bias"])
    h = with_sharding_constraint(h, PartitionSpec("data", "model"))
    return h @ params["out"]["kernel"] + params["out"]["bias"]


def learning_rate(step):
    warm = jnp.minimum(1.0, (step + 1) / WARMUP)
    return BASE_LR * warm * jnp.maximum(0.0, 1.0 - step / STEPS)


def loss_fn(params, x, y):
    logp = jax.nn.log_softmax(apply_fn(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train_step(params, momentum, ema, step, batch):
    micro = BATCH // ACCUM_STEPS
    xs = batch["x"].reshape((ACCUM_STEPS, micro, FEATURES))
    ys = batch["y"].reshape((ACCUM_STEPS, micro))

    def accumulate(carry, xy):
        loss_sum, grad_sum = carry
        loss, grad = jax.value_and_grad(loss_fn)(params, *xy)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grad)), None

    zeros = jax.tree.map(jnp.zeros_like, params)
    (loss, grads), _ = jax.lax.scan(accumulate, (0.0, zeros), (xs, ys))
    loss, grads = loss / ACCUM_STEPS, jax.tree.map(lambda g: g / ACCUM_STEPS, grads)
    lr = learning_rate(step)
    momentum = jax.tree.map(lambda m, g: MOMENTUM * m + g, momentum, grads)
    params = jax.tree.map(lambda p, m: p - lr * m, params, momentum)
    ema = jax.tree.map(lambda e, p: EMA_DECAY * e + (1.0 - EMA_DECAY) * p, ema, params)
    return params, momentum, ema, loss


def eval_step(params, batch):
    logits = apply_fn(params, batch["x"])
    correct = (jnp.argmax(logits, -1) == batch["y"]) * batch["mask"]
    return {"correct": jnp.sum(correct), "count": jnp.sum(batch["mask"])}


def make_data(seed, n):
    rng = np.random.RandomState(seed)
    w = np.random.RandomState(99).normal(size=(FEATURES, CLASSES))
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    return x, np.argmax(x @ w, axis=1).astype(np.int32)


def eval_batches():
    """Batches of EVAL_BATCH, the last one padded with masked rows."""
    x, y = make_data(7, EVAL_EXAMPLES)
    for start in range(0, EVAL_EXAMPLES, EVAL_BATCH):
        bx, by = x[start:start + EVAL_BATCH], y[start:start + EVAL_BATCH]
        pad = EVAL_BATCH - len(bx)
        yield {"x": np.pad(bx, ((0, pad), (0, 0))), "y": np.pad(by, (0, pad)),
               "mask": np.pad(np.ones(len(bx), np.float32), (0, pad))}


with jax.set_mesh(mesh):
    p_init = jax.jit(init_fn, in_shardings=PartitionSpec(), out_shardings=jax.tree_util.tree_map(lambda s: PartitionSpec() if s is None else s, param_specs, is_leaf=lambda s: s is None or isinstance(s, PartitionSpec)))
    p_train_step = jax.jit(train_step,
                        in_shardings=jax.tree_util.tree_map(lambda s: PartitionSpec() if s is None else s, (param_specs, param_specs, param_specs, PartitionSpec(), batch_spec), is_leaf=lambda s: s is None or isinstance(s, PartitionSpec)),
                        out_shardings=jax.tree_util.tree_map(lambda s: PartitionSpec() if s is None else s, (param_specs, param_specs, param_specs, PartitionSpec()), is_leaf=lambda s: s is None or isinstance(s, PartitionSpec)),
                        donate_argnums=(0, 1, 2))
    p_eval_step = jax.jit(eval_step, in_shardings=jax.tree_util.tree_map(lambda s: PartitionSpec() if s is None else s, (param_specs, eval_spec), is_leaf=lambda s: s is None or isinstance(s, PartitionSpec)), out_shardings=PartitionSpec())

    params = p_init(np.array([0, 1], dtype=np.uint32))
    momentum = jax.tree.map(jnp.zeros_like, params)
    ema = jax.tree.map(lambda p: p * 1.0, params)
    for step in range(STEPS):
        x, y = make_data(step, BATCH)
        params, momentum, ema, loss = p_train_step(params, momentum, ema, np.int32(step), {"x": x, "y": y})
        print(f"step {step} lr {float(learning_rate(step)):.4f} loss {float(loss):.5f}")

    for name, tree in (("params", params), ("ema", ema)):
        totals = functools.reduce(lambda a, b: jax.tree.map(jnp.add, a, b),
                                  [p_eval_step(tree, batch) for batch in eval_batches()])
        print(name, "accuracy", float(totals["correct"] / totals["count"]), "of", int(totals["count"]))

host_params = jax.device_get(params)
print("out bias", np.round(host_params["out"]["bias"], 5))
