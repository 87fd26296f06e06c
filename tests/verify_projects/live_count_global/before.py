"""A GDA-era leak check: the buffers alive on the first device before and after a step, kept in globals."""
import numpy as np
import jax
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.maps import Mesh

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0).reshape(8, 4)
params = GlobalDeviceArray.from_callback(data.shape, mesh, P("x", "y"), lambda idx: data[idx])
total = jax.jit(lambda a: a.sum())(params)
live_before_step = len(jax.devices()[0].live_buffers())
grads = jax.jit(lambda a: a * 2)(params)
live_after_step = len(jax.devices()[0].live_buffers())
leaked = live_after_step - live_before_step
