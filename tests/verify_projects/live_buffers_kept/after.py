"""The migration: the arrays on each device, from jax.live_arrays()."""
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
params = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
extra = jax.device_put(np.ones(3), jax.devices()[3])
kept = [[a for a in jax.live_arrays() if d in a.devices()] for d in jax.devices()]
counts = [len([a for a in jax.live_arrays() if d in a.devices()]) for d in jax.devices()]
del kept  # held until counted
