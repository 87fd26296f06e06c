"""A GDA built from a callback; the migration renames the global (`gda` -> `arr`)."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0, dtype=np.float32).reshape(8, 4)
gda = GlobalDeviceArray.from_callback((8, 4), mesh, P("x", "y"), lambda index: data[index])
