"""Unseeded test data (NumPy's global generator, Python's random): the same migration must not flip."""
import random

import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def test_scaled_batch():
    batch = np.random.rand(8, 4).astype(np.float32)
    scale = random.random()
    with Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp")):
        out = pjit(lambda a: a * scale, in_axis_resources=P("dp"), out_axis_resources=P("dp"))(batch)
    assert out.shape == (8, 4)
