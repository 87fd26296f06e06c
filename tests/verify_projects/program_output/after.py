"""Its migration; it prints other words (the output is shown, not compared)."""
import sys

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
out = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")),
              out_shardings=NamedSharding(mesh, P("x", "y")))(np.arange(32.0).reshape(8, 4))
jax.debug.visualize_array_sharding(out)
print("after: sum", float(out.sum()))
print("after: to stderr", file=sys.stderr)
