"""The migration: a jax.Array everywhere."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0, dtype=np.float32).reshape(8, 4)
gda = jax.make_array_from_callback((8, 4), NamedSharding(mesh, P("x")), lambda index: data[index])
doubled = jax.jit(lambda a: a * 2)(gda)
shape = jax.eval_shape(lambda a: a.sum(axis=0), gda).shape
total = jnp.sum(gda)
means = jnp.mean(gda, axis=0)
kinds = (isinstance(doubled, jax.Array), isinstance(doubled, jax.Array))
buffer_shapes = [s.data.shape for s in doubled.addressable_shards]
