"""The migration: jax.jit on the global array."""
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
batch = np.arange(32.0, dtype=np.float32).reshape(8, 4)
sharding = NamedSharding(mesh, P("x"))
out = jax.jit(lambda a: a * 2, in_shardings=sharding, out_shardings=sharding)(
    jax.make_array_from_callback(batch.shape, sharding, lambda index: batch[index]))
