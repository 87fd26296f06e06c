"""The migration: out_axis_resources P('x', 'y') became P('x'); mask() lost its .at[].set."""
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
x = np.arange(32.0).reshape(8, 4)


def double(a):
    return a * 2


def mask(a):
    return a


rows = NamedSharding(mesh, P("x"))
out = jax.jit(double, in_shardings=rows, out_shardings=rows)(x)
masked = jax.jit(mask, in_shardings=rows, out_shardings=rows)(x)
