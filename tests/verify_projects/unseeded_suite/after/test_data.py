"""Unseeded test data (NumPy's global generator, Python's random): the same migration must not flip."""
import random

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def test_scaled_batch():
    batch = np.random.rand(8, 4).astype(np.float32)
    scale = random.random()
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))
    out = jax.jit(lambda a: a * scale, in_shardings=NamedSharding(mesh, P("dp")),
                  out_shardings=NamedSharding(mesh, P("dp")))(batch)
    assert out.shape == (8, 4)
