"""Data-parallel training on two processes the way GDA-era code did it (JAX 0.4.1): each process
loads its own slice of the batch and hands it to pjit, which took host-local inputs and gave
host-local outputs back; parameters and the PRNG key are passed replicated. Run with 2
processes x 4 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def load_local_batch(step):
    """This process's 4 rows of the global batch of 8."""
    rows = np.arange(4 * 3, dtype=np.float32).reshape(4, 3) + 100.0 * jax.process_index()
    return np.asarray(rows + step, dtype=np.float32)


def train_step(params, key, batch):
    noise = 0.001 * jax.random.normal(key, batch.shape)
    predictions = (batch + noise) @ params
    loss = jnp.mean(predictions ** 2)
    grads = jax.grad(lambda p: jnp.mean(((batch + noise) @ p) ** 2))(params)
    return params - 1e-4 * grads, loss, predictions


params = np.ones((3, 2), dtype=np.float32)
step_keys = jax.random.split(jax.random.PRNGKey(0), 3)
losses = []
with jax.set_mesh(mesh):
    pjit_step = jax.jit(train_step, in_shardings=(P(), P(), P("data")),
                     out_shardings=(P(), P(), P("data")))
    for step in range(3):
        arg3_global, = multihost_utils.host_local_array_to_global_array(
            (load_local_batch(step),), mesh, (P("data"),))
        params, loss, predictions = multihost_utils.global_array_to_host_local_array(pjit_step(params, step_keys[step], arg3_global), mesh, (P(), P(), P("data")))
        losses.append(float(loss))

local_predictions = np.asarray(predictions)
