"""A wrong migration with a value difference (hidden in the third call) and layout-only ones."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0).reshape(8, 4)


def double(a):
    return a * 2


def mask(a):
    return a.at[3, 1].set(-1.0)


with mesh:
    out = pjit(double, in_axis_resources=P("x"), out_axis_resources=P("x", "y"))(x)
    masked = pjit(mask, in_axis_resources=P("x"), out_axis_resources=P("x"))(x)
