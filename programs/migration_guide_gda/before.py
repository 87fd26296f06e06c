"""A GDA-era training step, written the way JAX 0.4.1's jax.Array migration guide describes the code
it migrates: GlobalDeviceArray parameters, pjit with FROM_GDA mixed with specs for numpy inputs,
GDA outputs (jax_parallel_functions_output_gda), their shards read back, and a leak check on the
backend's live buffers. One process, 8 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.pjit import FROM_GDA, pjit

jax.config.update("jax_parallel_functions_output_gda", True)

mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def live_buffer_count():
    backend = jax.lib.xla_bridge.get_backend()
    return len(backend.live_buffers())


def make_gda(shape, spec, scale):
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * scale
    return GlobalDeviceArray.from_callback(shape, mesh, spec, lambda index: values[index])


def step(w1, x, w2, bias):
    hidden = jnp.tanh(x @ w1)
    return hidden @ w2 + bias


start = live_buffer_count()
w1 = make_gda((4, 8), P(None, "y"), 0.01)
w2 = make_gda((8, 2), P("y", None), 0.02)
inputs = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4)
bias = np.ones((2,), dtype=np.float32)

with mesh:
    pjitted_step = pjit(step, in_axis_resources=(FROM_GDA, P("x"), FROM_GDA, P(None)),
                        out_axis_resources=P("x"))
    out = pjitted_step(w1, inputs, w2, bias)

first_rows = np.asarray(out.local_shards[0].data)
layout = out.mesh_axes
total = float(jnp.sum(out))
del out
created = live_buffer_count() - start
