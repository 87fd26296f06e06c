"""pmap with static arguments (JAX 0.3/0.4, `static_broadcasted_argnums`): a Python int and a
string, broadcast to every device and fixed at compile time, in the call form
`jax.pmap(f, static_broadcasted_argnums=(1,))(x, 3)` and in a `functools.partial` decorator, each
called with two different static values (two compilations). Each process maps its own devices
(`jax.local_device_count()`): 1 process x 8 CPU devices or 2 x 4."""
import functools

import jax
import jax.numpy as jnp
import numpy as np


def power(x, n):
    """x to the n-th power by repeated multiplication: n must be a Python int."""
    out = jnp.ones_like(x)
    for _ in range(n):
        out = out * x
    return out


@functools.partial(jax.pmap, axis_name="i", static_broadcasted_argnums=(1, 2))
def normalize(x, how, eps):
    """This device's row scaled by the total over the devices, the norm chosen by `how`."""
    if how == "l1":
        total = jax.lax.psum(jnp.abs(x).sum(), "i")
    else:
        total = jnp.sqrt(jax.lax.psum((x * x).sum(), "i"))
    return x / (total + eps)


n = jax.local_device_count()  # this process's devices
x = np.arange(n * 3, dtype=np.float32).reshape(n, 3) / 10
cubes = jax.pmap(power, static_broadcasted_argnums=(1,))(x, 3)
squares = jax.pmap(power, static_broadcasted_argnums=1)(x, 2)
print(cubes[1], squares[1])

l1 = normalize(x, "l1", 1e-6)
l2 = normalize(x, "l2", 0.5)
print(float(jnp.abs(l1).sum()), l2[0])
