"""A leak check that keeps what live_buffers() returned, then counts again."""
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
params = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
extra = jax.device_put(np.ones(3), jax.devices()[3])
kept = [d.live_buffers() for d in jax.devices()]
counts = [len(d.live_buffers()) for d in jax.devices()]
del kept  # held until counted
