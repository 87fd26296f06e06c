"""Multi-host data-parallel training the way pmap-era training scripts did it (JAX 0.4): every
process runs this same script, its input pipeline loads only its own part of each global batch
(chosen by `jax.process_index()`) and reshapes it to `(jax.local_device_count(), per_device, ...)`;
the parameters and the momentum are replicated on this process's devices by hand-written
`replicate`/`unreplicate` helpers (what `flax.jax_utils` had), the pmapped step averages the
gradients over every device of every process with `lax.pmean`, a per-device dropout key is
`fold_in` of the (global) `axis_index`, and the loss is printed by the first process. Runs the same
on 1 process x 8 devices and 2 processes x 4 devices: the global batch does not depend on it."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

GLOBAL_BATCH = 32
FEATURES = 4
HIDDEN = 8
LEARNING_RATE = 0.1
MOMENTUM = 0.9
KEEP = 0.9
STEPS = 5


def replicate(tree, devices=None):
    """One copy of every leaf on each of this process's devices (a new leading axis)."""
    devices = jax.local_devices() if devices is None else devices
    return jax.device_put_replicated(tree, devices)


def unreplicate(tree):
    """The first device's copy of every leaf."""
    return jax.tree_map(lambda x: x[0], tree)


def shard(batch):
    """This process's batch with a leading axis of its devices: (local devices, per device, ...)."""
    n = jax.local_device_count()
    return jax.tree_map(lambda x: x.reshape((n, -1) + x.shape[1:]), batch)


def input_pipeline(seed):
    """Yields this process's rows of each global batch: every process draws the same global
    batch and keeps its own contiguous block, as a per-host file shard would give it."""
    rng = np.random.RandomState(seed)
    true_w = rng.normal(size=(FEATURES, 1)).astype(np.float32)
    per_host = GLOBAL_BATCH // jax.process_count()
    start = jax.process_index() * per_host
    while True:
        x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
        y = np.tanh(x @ true_w) + 0.1 * rng.normal(size=(GLOBAL_BATCH, 1)).astype(np.float32)
        yield {"x": x[start:start + per_host], "y": y[start:start + per_host]}


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {"hidden": {"w": jax.random.normal(k1, (FEATURES, HIDDEN)) / np.sqrt(FEATURES), "b": jnp.zeros(HIDDEN)},
            "out": {"w": jax.random.normal(k2, (HIDDEN, 1)) / np.sqrt(HIDDEN), "b": jnp.zeros(1)}}


def apply_model(params, x, dropout_key=None):
    h = jnp.tanh(x @ params["hidden"]["w"] + params["hidden"]["b"])
    if dropout_key is not None:
        h = h * jax.random.bernoulli(dropout_key, KEEP, h.shape) / KEEP
    return h @ params["out"]["w"] + params["out"]["b"]


@functools.partial(jax.pmap, axis_name="batch")
def train_step(params, momentum, batch, key):
    """One step of SGD with momentum on this device's rows, gradients averaged over all devices."""
    # the device index is unique across hosts, so every device of every process drops other units
    dropout_key = jax.random.fold_in(key, jax.lax.axis_index("batch"))

    def loss_fn(p):
        return jnp.mean((apply_model(p, batch["x"], dropout_key) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, axis_name="batch")
    momentum = jax.tree_map(lambda m, g: MOMENTUM * m + g, momentum, grads)
    params = jax.tree_map(lambda p, m: p - LEARNING_RATE * m, params, momentum)
    return params, momentum, jax.lax.pmean(loss, axis_name="batch")


params = init_params(jax.random.PRNGKey(0))
params_repl = replicate(params)
momentum_repl = replicate(jax.tree_map(jnp.zeros_like, params))
base_key = jax.random.PRNGKey(42)

batches = input_pipeline(seed=7)
losses = []
for step in range(STEPS):
    batch = shard(next(batches))
    step_keys = replicate(jax.random.fold_in(base_key, step))
    params_repl, momentum_repl, loss_repl = train_step(params_repl, momentum_repl, batch, step_keys)
    losses.append(float(unreplicate(loss_repl)))
    if jax.process_index() == 0:
        print(f"step {step} loss {losses[-1]:.5f}")

final_params = jax.device_get(unreplicate(params_repl))
print("process", jax.process_index(), "of", jax.process_count(), "final out.b", final_params["out"]["b"])
