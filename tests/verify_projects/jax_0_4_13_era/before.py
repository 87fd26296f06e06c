"""A program of the JAX 0.4.13 era: pjit with in_axis_resources, pmap with psum,
device_put_replicated, jax.tree_map, PositionalSharding, per-device live buffers."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P, PositionalSharding

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
with mesh:
    doubled = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x", "y"))(x)
summed = jax.pmap(lambda a: jax.lax.psum(a, "i"), axis_name="i")(jnp.arange(8.0).reshape(8, 1))
replicas = jax.device_put_replicated(jnp.ones(3), jax.devices())
tree = jax.tree_map(lambda a: a + 1, {"a": jnp.zeros(2), "b": (jnp.ones(1),)})
positional = jax.device_put(x, PositionalSharding(np.array(jax.devices())).reshape(4, 2).replicate(1))
on_first = len(jax.devices()[0].live_buffers())
