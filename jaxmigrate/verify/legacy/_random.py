"""``jax.random.KeyArray`` and ``jax.random.PRNGKeyArray`` as JAX 0.4.13 had them; 0.4.x's random streams.

In 0.4.13 (``jax/random.py``) both names were bound to ``jax._src.prng.PRNGKeyArray``, the class of
typed key arrays (a raw ``PRNGKey(0)``, a uint32 array, never was one). Later releases removed the
names (``jax.Array`` in annotations, ``jax.dtypes.prng_key`` in tests); the class itself is still
there (``jax._src.random.prng`` since 0.9, ``jax._src.prng`` before), so the names are given back
bound to it: an annotation works and an ``isinstance`` test answers as it did.

``use_old_streams`` (an era default: the before side's own process only) draws as 0.4.x did.
"""

from __future__ import annotations

import importlib


def key_array_class():
    """The installed JAX's class of typed key arrays."""
    for name in ("jax._src.random.prng", "jax._src.prng"):
        try:
            return importlib.import_module(name).PRNGKeyArray
        except (ImportError, AttributeError):
            continue
    return None


def install() -> None:
    import jax.random

    cls = key_array_class()
    if cls is not None:
        for name in ("KeyArray", "PRNGKeyArray"):
            if name not in vars(jax.random):
                setattr(jax.random, name, cls)


def use_old_streams() -> None:
    """Random numbers drawn as in 0.4.x: ``jax_threefry_partitionable`` False (JAX 0.5.0 made it
    True, so the same key draws other numbers). Left alone where the environment sets it
    (``JAX_THREEFRY_PARTITIONABLE``, read by JAX as the option's default); the program's own
    ``jax.config.update`` comes later and wins."""
    import os

    import jax

    from jaxmigrate.catalog.changed_defaults import STREAMS_FLAG

    if STREAMS_FLAG.upper() not in os.environ and hasattr(jax.config, STREAMS_FLAG):
        jax.config.update(STREAMS_FLAG, False)
