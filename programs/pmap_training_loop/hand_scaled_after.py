"""A hand migration of before.py with the classic mistake (kept for tests/test_pmap_programs.py, not
a snapshot of `fix`): the update step becomes a jit of shard_map with the parameters passed once,
replicated as `P()`, instead of with pmap's device axis, and keeps `jax.lax.pmean` of the
gradients. Inside shard_map the gradient of a replicated value is already summed over the devices,
so the mean of it stays the sum: each step moves the parameters 8 times too far. `verify` finds it
at update's first call."""
from functools import partial
from typing import NamedTuple, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

LEARNING_RATE = 0.05
KEEP = 0.75
mesh = Mesh(np.array(jax.devices()), ("num_devices",))


class Params(NamedTuple):
    weight: jnp.ndarray
    bias: jnp.ndarray


def init(rng) -> Params:
    """The model's initial parameters."""
    weight_key, bias_key = jax.random.split(rng)
    return Params(jax.random.normal(weight_key, ()), jax.random.normal(bias_key, ()))


def loss_fn(params: Params, xs: jnp.ndarray, ys: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """Least squares error of the predictions on the examples the mask keeps."""
    pred = params.weight * xs + params.bias
    return jnp.sum(mask * (pred - ys) ** 2) / jnp.sum(mask)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=(P(), P("num_devices"), P("num_devices"), P("num_devices")),
         out_specs=P("num_devices"))
def update(params: Params, xs: jnp.ndarray, ys: jnp.ndarray, key) -> Tuple[Params, jnp.ndarray]:
    """One SGD step on this device's sub-batch; the parameters are the same on every device."""
    xs, ys, key = xs[0], ys[0], key[0]
    device_key = jax.random.fold_in(key, jax.lax.axis_index("num_devices"))
    mask = jax.random.bernoulli(device_key, KEEP, xs.shape).astype(xs.dtype)
    loss, grads = jax.value_and_grad(loss_fn)(params, xs, ys, mask)
    grads = jax.lax.pmean(grads, axis_name="num_devices")  # already summed: the mistake
    loss = jax.lax.pmean(loss, axis_name="num_devices")
    new_params = jax.tree.map(lambda param, g: param - g * LEARNING_RATE, params, grads)
    return jax.tree.map(lambda o: o[None], (new_params, loss))


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P("num_devices"), out_specs=P("num_devices"))
def evaluate(params: Params, xs: jnp.ndarray, ys: jnp.ndarray) -> jnp.ndarray:
    """The mean squared error over the whole batch, the same on every device."""
    params, xs, ys = jax.tree.map(lambda a: a[0], (params, xs, ys))
    return jax.lax.pmean(jnp.mean((params.weight * xs + params.bias - ys) ** 2), "num_devices")[None]


# data from y = 2x - 1 + noise
rng = np.random.default_rng(0)
xs = rng.normal(size=(128, 1)).astype(np.float32)
ys = (2 * xs - 1 + 0.5 * rng.normal(size=(128, 1))).astype(np.float32)

n_devices = jax.local_device_count()
params = init(jax.random.PRNGKey(123))
by_device = NamedSharding(mesh, P("num_devices"))
also_params = jax.device_put(params, NamedSharding(mesh, P()))


def split(arr):
    """The leading axis of `arr` split evenly over the devices."""
    return arr.reshape(n_devices, arr.shape[0] // n_devices, *arr.shape[1:])


x_split = split(xs)
y_split = split(ys)
x_sharded = jax.device_put(x_split, by_device)
y_sharded = jax.device_put(y_split, by_device)

key = jax.random.PRNGKey(0)
losses = []
first_params = params
for i in range(6):
    key, step_key = jax.random.split(key)
    step_keys = jax.random.split(step_key, n_devices)
    if i % 2 == 0:
        replicated_params, loss = update(params, x_split, y_split, step_keys)
    else:
        replicated_params, loss = update(params, x_sharded, y_sharded, step_keys)
    params = jax.tree.map(lambda x: x[0], replicated_params)
    losses.append(float(loss[0]))
    print(f"Step {i:3d}, loss: {loss[0]:.3f}")

# the first step again from the parameters placed on every device: step 0's loss
first_keys = jax.random.split(jax.random.split(jax.random.PRNGKey(0))[1], n_devices)
_, first_loss = update(also_params, x_sharded, y_sharded, first_keys)
assert abs(float(first_loss[0]) - losses[0]) < 1e-5, (float(first_loss[0]), losses[0])

mse = evaluate(replicated_params, x_sharded, y_sharded)
params = jax.device_get(params)
print(f"weight {params.weight:.4f}, bias {params.bias:.4f}, mse {mse[0]:.4f}")
print("loss on every device:", np.asarray(loss))
