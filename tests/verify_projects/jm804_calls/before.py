"""Calls written for JAX 0.4.13 that JAX 0.10 rejects (JM804 fixes them): numpy-era keywords."""
import jax
import jax.numpy as jnp

x = jnp.linspace(-3.0, 3.0, 12)
clipped = jnp.clip(x, a_min=-1.0, a_max=1.0)
floor = jnp.clip(a=x, a_min=0.0)
grid = jnp.reshape(x, newshape=(3, 4))
median = jnp.percentile(x, 50, interpolation="nearest")
positive_total = jax.jit(lambda v: jnp.clip(v, a_min=0.0).sum())(x)
first_process_devices = len(jax.local_devices(host_id=0))
