"""A program of the JAX 0.4.13 era: pjit with in_axis_resources, pmap with psum,
device_put_replicated, jax.tree_map, PositionalSharding, per-device live buffers."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
with jax.set_mesh(mesh):
    doubled = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x", "y"))(x)
summed = jax.pmap(lambda a: jax.lax.psum(a, "i"), axis_name="i")(jnp.arange(8.0).reshape(8, 1))
replicas = jax.device_put(jax.tree.map(lambda v: jnp.stack([v] * len(jax.devices())), jnp.ones(3)), jax.sharding.NamedSharding(Mesh(np.array(jax.devices()), ("x",)), P("x")))
tree = jax.tree.map(lambda a: a + 1, {"a": jnp.zeros(2), "b": (jnp.ones(1),)})
positional = jax.device_put(x, jax.sharding.NamedSharding(Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")), P("x", None)))
on_first = len([s.data for a in jax.live_arrays() for s in a.addressable_shards if s.device == jax.devices()[0]])
