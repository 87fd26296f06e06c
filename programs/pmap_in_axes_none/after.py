"""pmap with an unmapped argument (JAX 0.3/0.4: JAX 101 "Parallel Evaluation in JAX", Specifying
`in_axes`): the tutorial's batched convolution with the kernel broadcast to every device by
`in_axes=(0, None)` instead of stacked by hand, the two giving the same result, and a model's
parameters (a dict) passed unmapped with `in_axes=(None, 0)` in the decorator. One process, 8 CPU
devices."""
import functools

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


def convolve(x, w):
    output = []
    for i in range(1, len(x) - 1):
        output.append(jnp.dot(x[i - 1:i + 2], w))
    return jnp.array(output)


n_devices = jax.local_device_count()
xs = np.arange(5 * n_devices, dtype=np.float32).reshape(-1, 5)
w = np.array([2.0, 3.0, 4.0], dtype=np.float32)
ws = np.stack([w] * n_devices)

stacked = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), convolve(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=jax.sharding.PartitionSpec("i"), out_specs=jax.sharding.PartitionSpec("i"))(xs, ws)
broadcast = host_local_call(jax.jit(jax.shard_map(lambda a0, a1: jax.tree.map(lambda o: jnp.expand_dims(o, 0), convolve(jax.tree.map(lambda a: a[0], a0), a1)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=(jax.sharding.PartitionSpec("i"), jax.sharding.PartitionSpec()), out_specs=jax.sharding.PartitionSpec("i"), check_vma=False)), mesh=jax.sharding.Mesh(jax.devices(), ("i",)), in_specs=(jax.sharding.PartitionSpec("i"), jax.sharding.PartitionSpec()), out_specs=jax.sharding.PartitionSpec("i"))(xs, w)
print(broadcast)
assert np.array_equal(np.asarray(stacked), np.asarray(broadcast))


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("batch")), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("batch")), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def predict(params, inputs):
    """A dense layer on this device's inputs, and its share of the batch's total."""
    inputs = jax.tree.map(lambda a: a[0], inputs)
    hidden = jnp.tanh(inputs @ params["w"] + params["b"])
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), (hidden, hidden.sum() / jax.lax.psum(hidden.sum(), "batch")))


params = {"w": np.linspace(-1.0, 1.0, 5 * 3, dtype=np.float32).reshape(5, 3), "b": np.float32(0.25)}
hidden, share = predict(params, xs.reshape(n_devices, 1, 5) / 40)
print(hidden.shape, share)


def loss_fn(params, inputs, targets):
    return jnp.mean((inputs @ params["w"] + params["b"] - targets) ** 2)


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch")), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=(jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("batch"), jax.sharding.PartitionSpec("batch")), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def grad_step(params, inputs, targets):
    """The gradient of the parameters, passed unmapped, averaged over the devices: each device
    differentiates its own loss, and pmean averages the 8 gradients."""
    inputs, targets = jax.tree.map(lambda a: a[0], (inputs, targets))
    grads = jax.lax.pmean(jax.grad(loss_fn)(params, inputs, targets), "batch")
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads))


targets = np.ones((n_devices, 1, 3), np.float32)
stepped = grad_step(params, xs.reshape(n_devices, 1, 5) / 40, targets)
print(stepped["b"])
