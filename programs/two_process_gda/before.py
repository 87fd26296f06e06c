"""A GDA pipeline on two processes (JAX 0.4.1): each process builds its part of a global
GlobalDeviceArray from a callback, pjit takes it FROM_GDA and returns GDAs
(jax_parallel_functions_output_gda), and each process reads its own shards. Run with 2
processes x 4 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.pjit import FROM_GDA, pjit

jax.config.update("jax_parallel_functions_output_gda", True)

global_shape = (8, 2)
mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
global_data = np.arange(16, dtype=np.float32).reshape(global_shape)
gda = GlobalDeviceArray.from_callback(global_shape, mesh, P("x", "y"), lambda index: global_data[index])

with mesh:
    scaled = pjit(lambda a: a * 2 + 1, in_axis_resources=FROM_GDA, out_axis_resources=P("x", None))(gda)

local_sum = float(sum(np.asarray(shard.data).sum() for shard in scaled.local_shards))
local_count = len(scaled.local_shards)
