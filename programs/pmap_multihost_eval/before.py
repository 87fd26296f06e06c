"""A multi-host pmap trainer that evaluates with a module of its own (`evaluator.py`, imported),
as pmap-era training code was split (JAX 0.4): each process loads its part of every global train
and eval batch by `jax.process_index()`, split over its devices (`jax.local_device_count()`);
the parameters are replicated by stacking one copy per local device; the pmapped train step
averages its gradients over every device of every process with `lax.pmean`; every other step the
evaluator's pmapped `eval_step` sums metrics over all devices (the last eval batch padded, a mask
marking its real rows). The first process prints the loss and the eval metrics. The same values
on 1 process x 8 devices and 2 processes x 4 devices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

import evaluator

CLASSES = 3
FEATURES = 2
TRAIN_BATCH = 48  # global, over all processes
EVAL_BATCH = 24
EVAL_EXAMPLES = 40  # not a multiple of EVAL_BATCH: the last batch is padded
LEARNING_RATE = 0.5


def make_dataset(n, seed):
    """Three Gaussian blobs; every process makes the same examples."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, CLASSES, size=n).astype(np.int32)
    centers = np.array([[1.0, 0.0], [-1.0, 1.0], [0.0, -1.5]], np.float32)
    x = centers[labels] + 0.6 * rng.normal(size=(n, FEATURES)).astype(np.float32)
    return {"x": x, "label": labels}


def host_shard(batch):
    """This process's rows of a global batch, with a leading axis of its devices."""
    per_process = len(batch["x"]) // jax.process_count()
    start = jax.process_index() * per_process
    local = jax.tree_map(lambda v: v[start:start + per_process], batch)
    return jax.tree_map(lambda v: v.reshape((jax.local_device_count(), -1) + v.shape[1:]), local)


def eval_batches(data):
    """Global eval batches of EVAL_BATCH rows, the last padded with zeros and mask 0."""
    for start in range(0, EVAL_EXAMPLES, EVAL_BATCH):
        rows = jax.tree_map(lambda v: v[start:start + EVAL_BATCH], data)
        real = len(rows["x"])
        batch = jax.tree_map(lambda v: np.concatenate([v, np.zeros((EVAL_BATCH - real,) + v.shape[1:], v.dtype)]),
                             rows)
        batch["mask"] = (np.arange(EVAL_BATCH) < real).astype(np.float32)
        yield host_shard(batch)


@functools.partial(jax.pmap, axis_name="batch")
def train_step(params, batch):
    def loss_fn(p):
        return jnp.mean(evaluator.cross_entropy(evaluator.predict(p, batch["x"]), batch["label"]))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, axis_name="batch")
    params = jax.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return params, jax.lax.pmean(loss, axis_name="batch")


params = {"w": jnp.zeros((FEATURES, CLASSES)), "b": jnp.zeros(CLASSES)}
params_repl = jax.tree_map(lambda x: jnp.stack([x] * jax.local_device_count()), params)
eval_data = make_dataset(EVAL_EXAMPLES, seed=1)

history = []
for step in range(4):
    batch = host_shard(make_dataset(TRAIN_BATCH, seed=100 + step))
    params_repl, loss = train_step(params_repl, batch)
    if step % 2 == 1:
        metrics = evaluator.evaluate(params_repl, eval_batches(eval_data))
        history.append((step, float(loss[0]), metrics["loss"], metrics["accuracy"]))
        if jax.process_index() == 0:
            print(f"step {step}: train loss {loss[0]:.4f}, eval loss {metrics['loss']:.4f}, "
                  f"eval accuracy {metrics['accuracy']:.3f}")

final_w = np.asarray(jax.device_get(jax.tree_map(lambda x: x[0], params_repl))["w"])
print("process", jax.process_index(), "w[0]", " ".join(f"{v:.4f}" for v in final_w[0]))
