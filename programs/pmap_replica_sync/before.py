"""Keeping replicas in sync across hosts, as 2021-23 haiku/ViT-era multi-host code did (JAX 0.4):
each process first draws its own parameters (a key folded with `jax.process_index()`, as a
careless init would), then takes process 0's with `multihost_utils.broadcast_one_to_all`; a
pmapped check (`lax.pmax` minus `lax.pmin` over the `i` axis of every device) proves every replica
equal before and after training. Per-device keys come from `jax.random.split(key,
jax.local_device_count())` put with `jax.device_put_sharded`; the step's optimizer is chosen by a
static string and its learning rate by a static float (`static_broadcasted_argnums=(3, 4)`),
gradients are clipped by their global norm (`psum` of squared norms is not needed: the norm is of
the `pmean`ed gradient) and the backend is read with `jax.lib.xla_bridge.get_backend().platform`."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils

FEATURES = 5
GLOBAL_BATCH = 16
STEPS = 4
MAX_NORM = 0.5


def init(key):
    return {"w": jax.random.normal(key, (FEATURES,)), "b": jnp.zeros(())}


@functools.partial(jax.pmap, axis_name="i")
def spread(tree):
    """Largest difference between replicas, per leaf (0 when in sync)."""
    return jax.tree_map(lambda x: jnp.max(jax.lax.pmax(x, "i") - jax.lax.pmin(x, "i")), tree)


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in jax.tree_util.tree_leaves(grads)))
    scale = jnp.minimum(1.0, max_norm / (norm + 1e-6))
    return jax.tree_map(lambda g: g * scale, grads), norm


@functools.partial(jax.pmap, axis_name="i", static_broadcasted_argnums=(3, 4))
def train_step(params, batch, key, optimizer, lr):
    noise = 0.01 * jax.random.normal(key, batch["x"].shape)

    def loss_fn(p):
        pred = (batch["x"] + noise) @ p["w"] + p["b"]
        return jnp.mean((pred - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "i")
    grads, norm = clip_by_global_norm(grads, MAX_NORM)
    if optimizer == "sgd":
        params = jax.tree_map(lambda p, g: p - lr * g, params, grads)
    elif optimizer == "sign":
        params = jax.tree_map(lambda p, g: p - lr * jnp.sign(g), params, grads)
    else:
        raise ValueError(optimizer)
    return params, jax.lax.pmean(loss, "i"), norm


def local_batch(step):
    rng = np.random.RandomState(step)
    x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
    y = (x @ np.arange(1, FEATURES + 1) / FEATURES).astype(np.float32)
    per_host = GLOBAL_BATCH // jax.process_count()
    lo = jax.process_index() * per_host
    n = jax.local_device_count()
    return {"x": x[lo:lo + per_host].reshape(n, -1, FEATURES), "y": y[lo:lo + per_host].reshape(n, -1)}


print("backend", jax.lib.xla_bridge.get_backend().platform, "process", jax.process_index())
own = jax.device_get(init(jax.random.fold_in(jax.random.PRNGKey(0), jax.process_index())))
params = multihost_utils.broadcast_one_to_all(own)
params = jax.device_put_replicated(params, jax.local_devices())
print("in sync after broadcast:", {k: float(v[0]) for k, v in spread(params).items()})

key = jax.random.PRNGKey(1)
for step in range(STEPS):
    key, sub = jax.random.split(key)
    device_keys = jax.device_put_sharded(list(jax.random.split(jax.random.fold_in(sub, jax.process_index()),
                                                               jax.local_device_count())), jax.local_devices())
    optimizer, lr = ("sgd", 0.2) if step % 2 == 0 else ("sign", 0.05)
    params, loss, norm = train_step(params, local_batch(step), device_keys, optimizer, lr)
    if jax.process_index() == 0:
        print(f"step {step} {optimizer} lr={lr} loss {float(loss[0]):.5f} grad norm {float(norm[0]):.5f}")

print("in sync after training:", {k: float(v[0]) for k, v in spread(params).items()})
print("w", np.round(np.asarray(params["w"][0]), 5))
