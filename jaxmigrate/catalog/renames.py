"""Replacements the API history cannot show as the same object, chosen by hand from JAX's
changelog, and call transforms for names whose call changes shape. Facts only: names, versions.

``DROP_INS``: old name -> new name that takes the same arguments, or is the type an annotation
means; a rewrite of an ``isinstance``/``issubclass`` test to ``jax.Array`` is unsafe (every array
is one now). ``CALLS``: old callable -> how its calls become the new one (see
``jaxmigrate/patterns/renames.py``).
"""

from __future__ import annotations

from typing import Dict

DROP_INS: Dict[str, str] = {
    "jax.random.KeyArray": "jax.Array",
    "jax.numpy.DeviceArray": "jax.Array",
    "jax.interpreters.xla.DeviceArray": "jax.Array",
    "jax.interpreters.xla._DeviceArray": "jax.Array",
    "jax._src.device_array.DeviceArray": "jax.Array",
    "jax.interpreters.pxla.ShardedDeviceArray": "jax.Array",
    "jax.tree_multimap": "jax.tree_util.tree_map",  # tree_multimap(f, tree, *rest): tree_map's signature
    "jax.tree_util.tree_multimap": "jax.tree_util.tree_map",
    "jax.numpy.trapz": "jax.scipy.integrate.trapezoid",  # trapz(y, x=None, dx=1.0, axis=-1): the same
}

#: call transforms: ``tie_in(x, y)`` returned ``y`` (a no-op since JAX 0.2.0's omnistaging);
#: ``shuffle(key, x, axis)`` was removed in favour of ``permutation(key, x, axis, independent=True)``;
#: ``with jax.experimental.enable_x64(v):`` / ``disable_x64()`` became the ``jax.enable_x64``
#: option's own context manager, ``with jax.enable_x64(v):`` / ``jax.enable_x64(False)``
CALLS: Dict[str, str] = {
    "jax.lax.tie_in": "second-argument",
    "jax.random.shuffle": "jax.random.permutation/independent",
    "jax.experimental.enable_x64": "jax.enable_x64/with",
    "jax.experimental.disable_x64": "jax.enable_x64/with-False",
}
