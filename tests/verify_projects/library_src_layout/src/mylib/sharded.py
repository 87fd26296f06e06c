"""Library code: definitions only, verified through the project's tests."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def make_mesh():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))


def scaled_sum(batch, mesh):
    with mesh:
        return pjit(lambda a: (a * 2).sum(axis=0), in_axis_resources=P("dp"), out_axis_resources=None)(batch)
