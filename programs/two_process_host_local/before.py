"""Data-parallel training on two processes the way GDA-era code did it (JAX 0.4.1): each process
loads its own slice of the batch and hands it to pjit, which took host-local inputs and gave
host-local outputs back; parameters and the PRNG key are passed replicated. Run with 2
processes x 4 CPU devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental import PartitionSpec as P
from jax.experimental.pjit import pjit

mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


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
with mesh:
    pjit_step = pjit(train_step, in_axis_resources=(None, None, P("data")),
                     out_axis_resources=(None, None, P("data")))
    for step in range(3):
        params, loss, predictions = pjit_step(params, step_keys[step], load_local_batch(step))
        losses.append(float(loss))

local_predictions = np.asarray(predictions)
