"""A migration that kept `Device.live_buffers()`: on today's JAX it lists nothing."""
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)
params = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x", "y")), lambda idx: data[idx])
total = jax.jit(lambda a: a.sum())(params)
live_before_step = len(jax.devices()[0].live_buffers())
grads = jax.jit(lambda a: a * 2)(params)
live_after_step = len(jax.devices()[0].live_buffers())
leaked = live_after_step - live_before_step
