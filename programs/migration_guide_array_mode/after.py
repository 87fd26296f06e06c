"""The jax.Array migration guide's own jax.Array-mode code (JAX 0.4.1): jax.Array switched on,
sharded arrays made with device_put, jit and pjit over them, a PRNG key passed replicated with
`in_axis_resources=None`, host-local inputs converted with multihost_utils, and the array type
checks the guide tells readers to rewrite. One process, 8 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P

use_array = True

mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
sharding = jax.sharding.NamedSharding(mesh, P("x"))

x = jnp.arange(8.0 * 4).reshape(8, 4)
sharded_x = jax.device_put(x, sharding)
mul_sharded_x = sharded_x @ sharded_x.T
sin_sharded_x = jnp.sin(sharded_x)
copy_sharded_x = jnp.copy(sharded_x)
double_out = jax.jit(lambda v: v * 2)(sharded_x)


def is_array(value):
    return isinstance(value, jax.Array)


def noisy(key, batch):
    return batch + 0.01 * jax.random.normal(key, batch.shape)


key = jax.random.PRNGKey(1)
with jax.set_mesh(mesh):
    replicated_noise = jax.jit(lambda k: jax.random.normal(k, (4,)), in_shardings=P(),
                            out_shardings=P())(key)
    local_inp = np.arange(8.0 * 3, dtype=np.float32).reshape(8, 3)
    global_inp = multihost_utils.host_local_array_to_global_array(local_inp, mesh, P("x"))
    global_out = jax.jit(noisy, in_shardings=(P(None), P("x")), out_shardings=P("x"))(key, global_inp)
    local_out = multihost_utils.global_array_to_host_local_array(global_out, mesh, P("x"))

checks = (use_array, is_array(double_out), local_out.shape, float(jnp.sum(mul_sharded_x)),
          float(jnp.sum(sin_sharded_x) + jnp.sum(copy_sharded_x)))
