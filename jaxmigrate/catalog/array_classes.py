"""The removed array classes that became `jax.Array`, what a type test of each takes once rewritten,
and the test that still tells each apart (JM502, JM801). Facts only: names and code templates.

In JAX v0.4.1 a ShardedDeviceArray was a DeviceArray (pxla.py makes its base class extend
DeviceArray); a GlobalDeviceArray was neither, nor was a tracer; a KeyArray was a class of its own.
Every array is a `jax.Array` now, tracers included (`isinstance(tracer, jax.Array)` is true under
`jax.jit`), so `isinstance(x, jax.Array)` takes more than each class did. JAX's migration guide
(docs/jax_array_migration.md at jax-v0.4.1) tells them apart by `x.is_fully_addressable` and
`len(x.sharding.device_set)`; both raise on a tracer (ConcretizationTypeError, AttributeError), so
the tests below turn tracers away first.
"""

from __future__ import annotations

from typing import Dict, Tuple

GDA = "jax.experimental.global_device_array.GlobalDeviceArray"
DEVICE_ARRAYS = (
    "jax.numpy.DeviceArray",
    "jax.interpreters.xla.DeviceArray",
    "jax.interpreters.xla._DeviceArray",
    "jax._src.device_array.DeviceArray",
)
SHARDED_DEVICE_ARRAY = "jax.interpreters.pxla.ShardedDeviceArray"
KEY_ARRAYS = ("jax.random.KeyArray", "jax.random.PRNGKeyArray")

_DEVICE_ARRAY_GAINS = "the tracers of jit, grad and vmap, and arrays that span processes, which were GDAs"
#: what `isinstance(x, jax.Array)` takes that a test of the old class did not
GAINS: Dict[str, str] = {
    **{name: _DEVICE_ARRAY_GAINS for name in DEVICE_ARRAYS},
    SHARDED_DEVICE_ARRAY: "single-device arrays, which were DeviceArrays, arrays that span processes, and tracers",
    GDA: "single-device and pmap arrays, which were DeviceArrays and ShardedDeviceArrays, and tracers",
    **{name: "every other array, raw uint32 keys and data alike, and tracers" for name in KEY_ARRAYS},
}

_NOT_TRACER = "isinstance({0}, jax.Array) and not isinstance({0}, jax.core.Tracer)"
#: the test that still tells the class apart ({0}: the tested value), from the migration guide:
#: a DeviceArray (a ShardedDeviceArray was one) lived in this process, a ShardedDeviceArray on
#: several of its devices, a GDA spanned processes (in a one-process run a GDA was fully addressable:
#: no test tells it apart there)
DISTINGUISH: Dict[str, str] = {
    **{name: _NOT_TRACER + " and {0}.is_fully_addressable" for name in DEVICE_ARRAYS},
    SHARDED_DEVICE_ARRAY: _NOT_TRACER + " and {0}.is_fully_addressable and len({0}.sharding.device_set) > 1",
    GDA: _NOT_TRACER + " and not {0}.is_fully_addressable",
}
#: the names those tests need at the target
DISTINGUISH_NEEDS: Tuple[str, ...] = ("jax.Array", "jax.core.Tracer")

#: classes an isinstance test names to take arrays or tracers: a test of one of ``GAINS`` in a chain
#: of branches beside a test of the same value for one of these told its class from them
TRACERS = ("jax.core.Tracer", "jax._src.core.Tracer")
ARRAYS_OR_TRACERS = ("jax.Array", "jax.numpy.ndarray", "jax._src.array.ArrayImpl", *TRACERS, *GAINS)
#: one name for the spellings of a class (a test of ``jnp.DeviceArray`` beside one of
#: ``xla.DeviceArray`` tests the same class)
SAME_CLASS: Dict[str, str] = {**{name: DEVICE_ARRAYS[0] for name in DEVICE_ARRAYS},
                              **{name: KEY_ARRAYS[0] for name in KEY_ARRAYS}, **{t: TRACERS[0] for t in TRACERS}}
