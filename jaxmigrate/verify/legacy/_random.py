"""``jax.random.KeyArray`` and ``jax.random.PRNGKeyArray`` as JAX 0.4.13 had them; 0.4.x's random streams.

In 0.4.13 (``jax/random.py``) both names were bound to ``jax._src.prng.PRNGKeyArray``, the class of
typed key arrays (a raw ``PRNGKey(0)``, a uint32 array, never was one). Later releases removed the
names (``jax.Array`` in annotations, ``jax.dtypes.prng_key`` in tests); the class itself is still
there (``jax._src.random.prng`` since 0.9, ``jax._src.prng`` before), so the names are given back
as a class whose ``isinstance`` test answers as 0.4.13's did (typed keys and their tracers).

``use_old_streams`` (an era default: the before side's own process only) draws as 0.4.x did.
"""

from __future__ import annotations

import abc
import functools
import importlib


def _installed_key_class():
    for name in ("jax._src.random.prng", "jax._src.prng"):
        try:
            return importlib.import_module(name).PRNGKeyArray
        except (ImportError, AttributeError):
            continue
    return None


@functools.lru_cache(maxsize=None)
def key_array_class():
    """``PRNGKeyArray`` as 0.4.13 had it: the installed JAX's class of typed key arrays, whose
    ``isinstance`` test is also True for a tracer of typed keys (0.4.13's metaclass read the
    tracer's abstract value), as it is not for the installed class."""
    installed = _installed_key_class()
    if installed is None:
        return None

    class _Meta(abc.ABCMeta):
        def __instancecheck__(cls, instance):
            if isinstance(instance, installed):
                return True
            aval = getattr(instance, "aval", None)
            try:
                import jax

                return aval is not None and jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key)
            except (AttributeError, TypeError):
                return False

        def __subclasscheck__(cls, subclass):
            return issubclass(subclass, installed)

    return _Meta("PRNGKeyArray", (abc.ABC,), {"__doc__": "An array whose elements are PRNG keys (JAX 0.4.13)",
                                              "__module__": "jax.random"})


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
