"""``jax.numpy`` functions as the legacy era called them."""

from __future__ import annotations

import functools
from typing import Any, Callable

#: functions of a sequence of arrays, and of arrays one by one, that took lists until JAX 0.10.0
SEQUENCE_OF_ARRAYS = ("hstack", "vstack", "dstack", "column_stack")
EACH_AN_ARRAY = ("atleast_1d", "atleast_2d", "atleast_3d")


def patch_list_inputs() -> None:
    """``jnp.hstack([[1, 2], [3, 4]])`` and ``jnp.atleast_1d([1, 2])``: until JAX 0.10.0 these
    turned each list or tuple into an array (``asarray``); since, they raise TypeError."""
    import jax.numpy as jnp

    for name in (*SEQUENCE_OF_ARRAYS, *EACH_AN_ARRAY):
        original = getattr(jnp, name, None)
        if original is None or getattr(original, "_jaxmigrate_legacy", False):
            continue
        legacy = functools.wraps(original)(_sequence(original) if name in SEQUENCE_OF_ARRAYS else _each(original))
        legacy._jaxmigrate_legacy = True
        setattr(jnp, name, legacy)


def _lists_to_arrays(value: Any) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(value) if isinstance(value, (list, tuple)) else value


def _sequence(original: Callable[..., Any]) -> Callable[..., Any]:
    def legacy(tup: Any, *args: Any, **kwargs: Any) -> Any:
        return original([_lists_to_arrays(t) for t in tup], *args, **kwargs)
    return legacy


def _each(original: Callable[..., Any]) -> Callable[..., Any]:
    def legacy(*arys: Any, **kwargs: Any) -> Any:
        return original(*map(_lists_to_arrays, arys), **kwargs)
    return legacy
