"""A GDA-era training step, written the way JAX 0.4.1's jax.Array migration guide describes the code
it migrates: GlobalDeviceArray parameters, pjit with FROM_GDA mixed with specs for numpy inputs,
GDA outputs (jax_parallel_functions_output_gda), their shards read back, and a leak check on the
backend's live buffers. One process, 8 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def live_buffer_count():
    return sum(len(a.sharding.addressable_devices) for a in jax.live_arrays())


def make_gda(shape, spec, scale):
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * scale
    return jax.make_array_from_callback(shape, jax.sharding.NamedSharding(mesh, P(*spec)), lambda index: values[index])


def step(w1, x, w2, bias):
    hidden = jnp.tanh(x @ w1)
    return hidden @ w2 + bias


start = live_buffer_count()
w1 = make_gda((4, 8), P(None, "y"), 0.01)
w2 = make_gda((8, 2), P("y", None), 0.02)
inputs = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4)
bias = np.ones((2,), dtype=np.float32)

with jax.set_mesh(mesh):
    pjitted_step = jax.jit(step, out_shardings=P("x"))
    array2, array3 = multihost_utils.host_local_array_to_global_array(
        (inputs, bias), mesh, (P("x"), P(None)))
    out = pjitted_step(w1, array2, w2, array3)

first_rows = np.asarray(out.addressable_shards[0].data)
layout = out.sharding.spec
total = float(jnp.sum(out))
del out
created = live_buffer_count() - start
