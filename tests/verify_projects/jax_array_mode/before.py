"""Two processes, jax.Array mode selected (0.4.1 had it): pjit takes the global value and
returns a global array, not host-local blocks."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P

jax.config.update("jax_array", True)
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
batch = np.arange(32.0, dtype=np.float32).reshape(8, 4)  # the same global batch on every process
with mesh:
    out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x"))(batch)
