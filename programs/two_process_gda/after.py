"""A GDA pipeline on two processes (JAX 0.4.1): each process builds its part of a global
GlobalDeviceArray from a callback, pjit takes it FROM_GDA and returns GDAs
(jax_parallel_functions_output_gda), and each process reads its own shards. Run with 2
processes x 4 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

global_shape = (8, 2)
mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
global_data = np.arange(16, dtype=np.float32).reshape(global_shape)
gda = jax.make_array_from_callback(global_shape, jax.sharding.NamedSharding(mesh, P("x", "y")), lambda index: global_data[index])

with jax.set_mesh(mesh):
    scaled = jax.jit(lambda a: a * 2 + 1, out_shardings=P("x", None))(gda)

local_sum = float(sum(np.asarray(shard.data).sum() for shard in scaled.addressable_shards))
local_count = len(scaled.addressable_shards)
