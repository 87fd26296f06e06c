"""GDAs passed to jax.jit, jax.eval_shape and jnp functions (JAX 0.4.1 took them), DeviceArray
and ShardedDeviceArray in isinstance checks, `.device_buffers`."""
import numpy as np
import jax
import jax.numpy as jnp
from jax._src.device_array import DeviceArray
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.maps import Mesh
from jax.experimental import PartitionSpec as P
from jax.interpreters.pxla import ShardedDeviceArray

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(32.0, dtype=np.float32).reshape(8, 4)
gda = GlobalDeviceArray.from_callback((8, 4), mesh, P("x"), lambda index: data[index])
doubled = jax.jit(lambda a: a * 2)(gda)
shape = jax.eval_shape(lambda a: a.sum(axis=0), gda).shape
total = jnp.sum(gda)
means = jnp.mean(gda, axis=0)
kinds = (isinstance(doubled, DeviceArray), isinstance(doubled, ShardedDeviceArray))
buffer_shapes = [b.shape for b in doubled.device_buffers]
