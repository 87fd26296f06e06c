"""JAX 101's data-parallel training loop (JAX 0.3/0.4, "Parallel Evaluation in JAX"): linear
regression whose update step is pmapped over the devices with `axis_name='num_devices'`, the
gradients and the loss averaged with `jax.lax.pmean`, the parameters replicated on every device
(with a stack, the tutorial's way, and with `jax.device_put_replicated`), a dropout-like mask from
per-device PRNG keys (`jax.random.split` mapped, `fold_in` of the device's `axis_index`), the batch
split over the devices (a reshape, and `jax.device_put_sharded`), each step's loss printed, and the
parameters taken back from the first device. One process, 8 CPU devices."""
import functools
from typing import NamedTuple, Tuple

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


LEARNING_RATE = 0.05
KEEP = 0.75


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


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("num_devices",)), in_specs=jax.sharding.PartitionSpec("num_devices"), out_specs=jax.sharding.PartitionSpec("num_devices"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("num_devices",)), in_specs=jax.sharding.PartitionSpec("num_devices"), out_specs=jax.sharding.PartitionSpec("num_devices"), check_vma=False)
def update(params: Params, xs: jnp.ndarray, ys: jnp.ndarray, key) -> Tuple[Params, jnp.ndarray]:
    """One SGD step on this device's sub-batch, the gradient averaged over the devices."""
    params, xs, ys, key = jax.tree.map(lambda a: a[0], (params, xs, ys, key))
    device_key = jax.random.fold_in(key, jax.lax.axis_index("num_devices"))
    mask = jax.random.bernoulli(device_key, KEEP, xs.shape).astype(xs.dtype)
    loss, grads = jax.value_and_grad(loss_fn)(params, xs, ys, mask)
    grads = jax.lax.pmean(grads, axis_name="num_devices")
    loss = jax.lax.pmean(loss, axis_name="num_devices")
    new_params = jax.tree.map(lambda param, g: param - g * LEARNING_RATE, params, grads)
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), (new_params, loss))


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("num_devices",)), in_specs=jax.sharding.PartitionSpec("num_devices"), out_specs=jax.sharding.PartitionSpec("num_devices"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("num_devices",)), in_specs=jax.sharding.PartitionSpec("num_devices"), out_specs=jax.sharding.PartitionSpec("num_devices"), check_vma=False)
def evaluate(params: Params, xs: jnp.ndarray, ys: jnp.ndarray) -> jnp.ndarray:
    """The mean squared error over the whole batch, the same on every device."""
    params, xs, ys = jax.tree.map(lambda a: a[0], (params, xs, ys))
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), jax.lax.pmean(jnp.mean((params.weight * xs + params.bias - ys) ** 2), "num_devices"))


# data from y = 2x - 1 + noise
rng = np.random.default_rng(0)
xs = rng.normal(size=(128, 1)).astype(np.float32)
ys = (2 * xs - 1 + 0.5 * rng.normal(size=(128, 1))).astype(np.float32)

n_devices = jax.local_device_count()
params = init(jax.random.PRNGKey(123))
replicated_params = jax.tree.map(lambda x: jnp.array([x] * n_devices), params)
also_replicated = jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(jax.local_devices())), params), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))


def split(arr):
    """The leading axis of `arr` split evenly over the devices."""
    return arr.reshape(n_devices, arr.shape[0] // n_devices, *arr.shape[1:])


x_split = split(xs)
y_split = split(ys)
x_sharded = jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *list(x_split)), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))
y_sharded = jax.device_put(jax.tree.map(lambda *s: (np if isinstance(s[0], np.ndarray) else jnp).stack(s), *list(y_split)), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))

key = jax.random.PRNGKey(0)
losses = []
for i in range(6):
    key, step_key = jax.random.split(key)
    step_keys = jax.random.split(step_key, n_devices)
    if i % 2 == 0:
        replicated_params, loss = update(replicated_params, x_split, y_split, step_keys)
    else:
        replicated_params, loss = update(replicated_params, x_sharded, y_sharded, step_keys)
    losses.append(float(loss[0]))
    print(f"Step {i:3d}, loss: {loss[0]:.3f}")

# the first step again from the parameters device_put_replicated placed: step 0's loss (up to the
# order in which the CPU devices' pmean adds, which varies from run to run)
first_keys = jax.random.split(jax.random.split(jax.random.PRNGKey(0))[1], n_devices)
_, first_loss = update(also_replicated, x_sharded, y_sharded, first_keys)
assert abs(float(first_loss[0]) - losses[0]) < 1e-5, (float(first_loss[0]), losses[0])

mse = evaluate(replicated_params, x_sharded, y_sharded)
params = jax.device_get(jax.tree.map(lambda x: x[0], replicated_params))
print(f"weight {params.weight:.4f}, bias {params.bias:.4f}, mse {mse[0]:.4f}")
print("loss on every device:", np.asarray(loss))
