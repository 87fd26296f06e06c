"""A scenic-style classification trainer (JAX 0.4, 2022), model and optimizer written out: the
train state is a NamedTuple (global step, params, optimizer state, model state with batch
statistics, rng); `train_step` and `eval_step` take keyword-only pieces bound by
`functools.partial` and are pmapped with `axis_name='batch'`, the train step donating its state
and its batch, the eval step its batch. Metrics are `(sum, normalizer)` pairs summed with
`lax.psum` over every device (`psum_metric_normalizer`), weighted by the batch mask so that the
padded rows of the last eval batch count for nothing; the rng is bound to the device
(`bind_rng_to_host_device`), the learning rate is a compound schedule string
("constant * linear_warmup * cosine_decay"), the batch statistics are averaged across replicas
before evaluation (`sync_model_state_across_replicas`, a pmapped `pmean`), and the summaries are
normalized on the host (`normalize_metrics_summary`) from `stack_forest` of every step's metrics.
Each process gets `batch_size // jax.process_count()` rows per step, split over its devices."""
import functools
from typing import Any, NamedTuple

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


BATCH_SIZE = 32
EVAL_BATCH_SIZE = 32
NUM_EVAL_EXAMPLES = 40  # not a multiple of the eval batch: the last batch is padded
FEATURES = 5
CLASSES = 4
TOTAL_STEPS = 8
BASE_LR = 0.8
WARMUP_STEPS = 2
MOMENTUM = 0.9
BN_MOMENTUM = 0.8


class TrainState(NamedTuple):
    global_step: Any
    params: Any
    opt_state: Any
    model_state: Any
    rng: Any


def get_learning_rate_fn(factors, base_learning_rate, warmup_steps, total_steps):
    """A schedule named by a product of factors, "constant * linear_warmup * cosine_decay"."""
    def constant(step):
        return base_learning_rate

    def linear_warmup(step):
        return jnp.minimum(1.0, step / warmup_steps)

    def cosine_decay(step):
        frac = jnp.maximum(0.0, (step - warmup_steps) / float(total_steps - warmup_steps))
        return jnp.maximum(0.0, 0.5 * (1.0 + jnp.cos(jnp.pi * (frac % 1.0))))

    known = {"constant": constant, "linear_warmup": linear_warmup, "cosine_decay": cosine_decay}
    chosen = []
    for name in (part.strip() for part in factors.split("*")):
        if name not in known:
            raise ValueError(f"Unknown factor {name}.")
        chosen.append(known[name])

    def step_fn(step):
        value = 1.0
        for factor in chosen:
            value = value * factor(step)
        return jnp.asarray(value, dtype=jnp.float32)

    return step_fn


def bind_rng_to_host_device(rng, axis_name, bind_to=None):
    """A key specific to this host (`process_index`) or to this device (`axis_index`, which
    differs on every device of every host), for use inside the pmapped step."""
    binders = {None: lambda: rng,
               "host": lambda: jax.random.fold_in(rng, jax.process_index()),
               "device": lambda: jax.random.fold_in(rng, jax.lax.axis_index(axis_name))}
    if bind_to not in binders:
        raise ValueError(f"bind_to={bind_to!r}: expected None, 'host' or 'device'")
    return binders[bind_to]()


def psum_metric_normalizer(metrics):
    """(value, normalizer) pairs summed over every device of every process."""
    return jax.tree.map(lambda x: jax.lax.psum(x, "batch"), metrics)


def metrics_fn(logits, batch):
    weights = batch["batch_mask"]
    onehot = jax.nn.one_hot(batch["label"], CLASSES)
    loss = -jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1)
    correct = (jnp.argmax(logits, -1) == batch["label"]).astype(jnp.float32)
    n = jnp.sum(weights)
    return psum_metric_normalizer({"loss": (jnp.sum(loss * weights), n),
                                   "accuracy": (jnp.sum(correct * weights), n)})


def model_apply(params, model_state, x, *, train, dropout_rng=None):
    """Dense, batch normalization (statistics over the whole global batch in training), relu,
    dropout in training, dense."""
    h = x @ params["dense1"]["kernel"] + params["dense1"]["bias"]
    if train:
        mean = jax.lax.pmean(jnp.mean(h, axis=0), "batch")
        var = jax.lax.pmean(jnp.mean(jnp.square(h - mean), axis=0), "batch")
        stats = model_state["batch_stats"]
        new_state = {"batch_stats": {"mean": BN_MOMENTUM * stats["mean"] + (1 - BN_MOMENTUM) * mean,
                                     "var": BN_MOMENTUM * stats["var"] + (1 - BN_MOMENTUM) * var}}
    else:
        mean, var = model_state["batch_stats"]["mean"], model_state["batch_stats"]["var"]
        new_state = model_state
    h = (h - mean) / jnp.sqrt(var + 1e-5) * params["bn"]["scale"] + params["bn"]["bias"]
    h = jax.nn.relu(h)
    if train:
        h = h * jax.random.bernoulli(dropout_rng, 0.9, h.shape) / 0.9
    return h @ params["dense2"]["kernel"] + params["dense2"]["bias"], new_state


def train_step(train_state, batch, *, lr_fn):
    new_rng, rng = jax.random.split(train_state.rng)
    dropout_rng = bind_rng_to_host_device(rng, axis_name="batch", bind_to="device")

    def training_loss_fn(params):
        logits, new_model_state = model_apply(params, train_state.model_state, batch["inputs"], train=True,
                                              dropout_rng=dropout_rng)
        onehot = jax.nn.one_hot(batch["label"], CLASSES)
        loss = -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))
        return loss, (new_model_state, logits)

    (_, (new_model_state, logits)), grad = jax.value_and_grad(training_loss_fn, has_aux=True)(train_state.params)
    grad = jax.lax.pmean(grad, axis_name="batch")
    lr = lr_fn(train_state.global_step)
    new_opt_state = jax.tree.map(lambda m, g: MOMENTUM * m + g, train_state.opt_state, grad)
    new_params = jax.tree.map(lambda p, m: p - lr * m, train_state.params, new_opt_state)
    training_logs = {
        "l2_grads": jnp.sqrt(sum([jnp.vdot(g, g) for g in jax.tree_util.tree_leaves(grad)])),
        "l2_params": jnp.sqrt(sum([jnp.vdot(p, p) for p in jax.tree_util.tree_leaves(new_params)])),
        "learning_rate": lr,
    }
    metrics = metrics_fn(logits, batch)
    new_train_state = train_state._replace(global_step=train_state.global_step + 1, opt_state=new_opt_state,
                                           params=new_params, model_state=new_model_state, rng=new_rng)
    return new_train_state, metrics, training_logs


def eval_step(train_state, batch):
    logits, _ = model_apply(train_state.params, train_state.model_state, batch["inputs"], train=False)
    return metrics_fn(logits, batch), logits


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("x",)), in_specs=jax.sharding.PartitionSpec("x"), out_specs=jax.sharding.PartitionSpec("x"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("x",)), in_specs=jax.sharding.PartitionSpec("x"), out_specs=jax.sharding.PartitionSpec("x"), check_vma=False)
def pmap_mean(x):
    x = jax.tree.map(lambda a: a[0], x)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), jax.lax.pmean(x, "x"))


def sync_model_state_across_replicas(train_state):
    if jax.tree_util.tree_leaves(train_state.model_state):
        return train_state._replace(model_state={"batch_stats": pmap_mean(train_state.model_state["batch_stats"])})
    return train_state


def normalize_metrics_summary(metrics_summary, split):
    """Each metric's summed value over its summed normalizer; a NaN stops the run."""
    out = {name: total / (count + 1e-9) for name, (total, count) in metrics_summary.items()}
    bad = sorted(name for name, value in out.items() if np.isnan(value))
    if bad:
        raise RuntimeError(f"NaN in {split} metrics {bad}")
    return out


def stack_forest(forest):
    """A list of same-shaped trees as one tree of stacked leaves."""
    return jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *forest) if forest else {}


def unreplicate_and_get(x):
    return jax.device_get(jax.tree.map(lambda y: y[0], x))


def shard(xs):
    local_device_count = jax.local_device_count()
    return jax.tree.map(lambda x: x.reshape((local_device_count, -1) + x.shape[1:]), xs)


def get_dataset(seed):
    """Train and eval iterators of this process's rows, with a batch mask; the eval split is
    padded (mask 0) to whole batches."""
    rng = np.random.RandomState(seed)
    w = rng.normal(size=(FEATURES, CLASSES))
    local_batch_size = BATCH_SIZE // jax.process_count()
    eval_local_batch_size = EVAL_BATCH_SIZE // jax.process_count()
    host = jax.process_index()

    def make(n):
        x = rng.normal(size=(n, FEATURES)).astype(np.float32)
        return x, np.argmax(x @ w, axis=1).astype(np.int32)

    def train_iter():
        while True:
            x, y = make(BATCH_SIZE)
            lo = host * local_batch_size
            yield shard({"inputs": x[lo:lo + local_batch_size], "label": y[lo:lo + local_batch_size],
                         "batch_mask": np.ones(local_batch_size, np.float32)})

    eval_x, eval_y = make(NUM_EVAL_EXAMPLES)

    def eval_iter():
        for start in range(0, NUM_EVAL_EXAMPLES, EVAL_BATCH_SIZE):
            x, y = eval_x[start:start + EVAL_BATCH_SIZE], eval_y[start:start + EVAL_BATCH_SIZE]
            mask = np.ones(len(x), np.float32)
            pad = EVAL_BATCH_SIZE - len(x)
            x = np.concatenate([x, np.zeros((pad, FEATURES), np.float32)])
            y = np.concatenate([y, np.zeros(pad, np.int32)])
            mask = np.concatenate([mask, np.zeros(pad, np.float32)])
            lo = host * eval_local_batch_size
            yield shard({"inputs": x[lo:lo + eval_local_batch_size], "label": y[lo:lo + eval_local_batch_size],
                         "batch_mask": mask[lo:lo + eval_local_batch_size]})

    return train_iter(), eval_iter


def initialize_model(rng):
    k1, k2 = jax.random.split(rng)
    params = {"dense1": {"kernel": jax.random.normal(k1, (FEATURES, 8)) / np.sqrt(FEATURES), "bias": jnp.zeros(8)},
              "bn": {"scale": jnp.ones(8), "bias": jnp.zeros(8)},
              "dense2": {"kernel": jax.random.normal(k2, (8, CLASSES)) / np.sqrt(8), "bias": jnp.zeros(CLASSES)}}
    model_state = {"batch_stats": {"mean": jnp.zeros(8), "var": jnp.ones(8)}}
    return params, model_state


rng, init_rng = jax.random.split(jax.random.PRNGKey(0))
params, model_state = initialize_model(init_rng)
train_state = TrainState(global_step=0, params=params, opt_state=jax.tree.map(jnp.zeros_like, params),
                         model_state=model_state, rng=rng)
train_state = jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(jax.local_devices())), train_state), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))

lr_fn = get_learning_rate_fn("constant * linear_warmup * cosine_decay", BASE_LR, WARMUP_STEPS, TOTAL_STEPS)
train_step_pmapped = (lambda pmapped: host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), pmapped(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False), donate_argnums=(0, 1)), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), donate_argnums=(0, 1)))(functools.partial(train_step, lr_fn=lr_fn))
eval_step_pmapped = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), eval_step(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False), donate_argnums=(1,)), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), donate_argnums=(1,))

train_iter, eval_iter = get_dataset(seed=3)
train_metrics, extra_training_logs = [], []
for step in range(1, TOTAL_STEPS + 1):
    train_batch = next(train_iter)
    train_state, t_metrics, t_logs = train_step_pmapped(train_state, train_batch)
    train_metrics.append(unreplicate_and_get(t_metrics))
    extra_training_logs.append(unreplicate_and_get(t_logs))

train_summary = normalize_metrics_summary(jax.tree_util.tree_map(lambda x: x.sum(), stack_forest(train_metrics)),
                                          "train")
for step, logs in enumerate(extra_training_logs, 1):
    if jax.process_index() == 0:
        print(f"step {step} lr {logs['learning_rate']:.4f} l2_grads {logs['l2_grads']:.5f}")
print("train", {k: round(float(v), 5) for k, v in train_summary.items()})

train_state = sync_model_state_across_replicas(train_state)
eval_metrics = []
for eval_batch in eval_iter():
    e_metrics, _ = eval_step_pmapped(train_state, eval_batch)
    eval_metrics.append(unreplicate_and_get(e_metrics))
eval_summary = normalize_metrics_summary(jax.tree_util.tree_map(lambda x: x.sum(), stack_forest(eval_metrics)),
                                         "valid")
print("process", jax.process_index(), "valid", {k: round(float(v), 5) for k, v in eval_summary.items()},
      "examples", int(sum(m["loss"][1] for m in eval_metrics)))
print("global step", int(unreplicate_and_get(train_state.global_step)))
