"""A program that draws its output's layout and prints a line on stdout and one on stderr."""
import sys

import numpy as np
import jax
from jax.experimental import PartitionSpec as P
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
with mesh:
    out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x", "y"))(np.arange(32.0).reshape(8, 4))
jax.debug.visualize_array_sharding(out)
print("before: sum", float(out.sum()))
print("before: to stderr", file=sys.stderr)
