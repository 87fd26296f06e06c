"""Left as it was: on JAX 0.9+ make_mesh's axes are Explicit and the constraint raises."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("x", "y"))


@jax.jit
def layer(w, a):
    out = jnp.tanh(a @ w)
    return jax.lax.with_sharding_constraint(out, NamedSharding(mesh, P("x")))


w = jax.device_put(np.linspace(-1.0, 1.0, 16).reshape(4, 4), NamedSharding(mesh, P()))
a = jax.device_put(np.arange(32.0).reshape(8, 4) / 32, NamedSharding(mesh, P("x", "y")))
out = layer(w, a)
