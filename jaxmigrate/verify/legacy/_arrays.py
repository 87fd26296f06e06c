"""Arrays as legacy code used them (JAX 0.4.1).

- A GlobalDeviceArray is an array to JAX: ``jax.jit``, ``jax.eval_shape`` and ``jnp`` functions
  take it (0.4.1 registered GDAs with abstractification, dtype canonicalization and argument
  sharding), as its global ``jax.Array``.
- ``jax._src.device_array.DeviceArray`` (and ``_DeviceArray``) and ``jax.interpreters.pxla.
  ShardedDeviceArray``: every array is one for ``isinstance`` (0.4.1 arrays are ``jax.Array``s,
  which the old names were aliases or bases of).
- ``array.device_buffers``: the single-device arrays of its addressable shards, in shard order;
  ``array.device_buffer`` of a single-device array.
"""

from __future__ import annotations

import sys
import types

import jax


def _register_gda() -> None:
    from jax._src import core, dtypes
    from jax._src.interpreters import pxla

    from jaxmigrate.verify.legacy.gda import GlobalDeviceArray

    def aval(x):
        return core.shaped_abstractify(x._jaxmigrate_array)

    core.pytype_aval_mappings[GlobalDeviceArray] = aval
    register = getattr(dtypes, "register_canonicalize_value_handler", None)
    if register is not None:
        register(GlobalDeviceArray, lambda x: x._jaxmigrate_array)
    else:
        dtypes.canonicalize_value_handlers[GlobalDeviceArray] = lambda x: x._jaxmigrate_array
    array_handler = pxla.shard_arg_handlers[type(jax.numpy.zeros(()))]
    pxla.shard_arg_handlers[GlobalDeviceArray] = (
        lambda xs, *args, **kwargs: array_handler([x._jaxmigrate_array for x in xs], *args, **kwargs))


def _device_buffers(self):
    return [shard.data for shard in self.addressable_shards]


def _device_buffer(self):
    if len(self.addressable_shards) != 1:
        raise ValueError("Length of buffers is greater than 1. Please use `.device_buffers` instead.")
    return self.addressable_shards[0].data


def install() -> None:
    _register_gda()
    module = types.ModuleType("jax._src.device_array", "Legacy alias: DeviceArray is jax.Array.")
    module.DeviceArray = module._DeviceArray = jax.Array
    sys.modules["jax._src.device_array"] = module
    from jax import _src as jax_src
    from jax.interpreters import pxla

    jax_src.device_array = module
    pxla.ShardedDeviceArray = jax.Array
    array_type = type(jax.numpy.zeros(()))  # current JAX keeps both names, raising "deprecated"
    array_type.device_buffers = property(_device_buffers)
    array_type.device_buffer = property(_device_buffer)
