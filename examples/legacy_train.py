"""A small pjit-era training step, written against JAX APIs that no longer exist.

Try: jaxmigrate check examples/    then    jaxmigrate fix --diff examples/
"""
from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jax.config import config
from jax.experimental import PartitionSpec as PS
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit, with_sharding_constraint

config.update("jax_array", True)


def make_mesh():
    devices = np.array(jax.devices()).reshape(-1, 1)
    return Mesh(devices, ("dp", "mp"))


@partial(pjit, in_axis_resources=(PS(), PS("dp")), out_axis_resources=PS())
def train_step(params, batch):
    batch = with_sharding_constraint(batch, axis_resources=PS("dp"))
    loss = jnp.mean((batch @ params) ** 2)
    return params - 0.1 * loss


def live_buffer_count():
    backend = jax.lib.xla_bridge.get_backend()
    if hasattr(backend, "live_buffers"):
        return len(backend.live_buffers())
    return 0


if __name__ == "__main__":
    with make_mesh():
        params = train_step(np.ones((4, 4)), np.ones((8, 4)))
    if config.jax_array:
        print("done", params.shape, live_buffer_count())
