"""``jax.checkpoint`` (``jax.remat``) as the legacy era called it: with ``concrete=False``."""

from __future__ import annotations

import functools
from typing import Any, Callable

#: where JAX exposes it (one function under each name)
NAMES = (("jax", "checkpoint"), ("jax", "remat"), ("jax.ad_checkpoint", "checkpoint"))


def patch_checkpoint_concrete() -> None:
    """Until JAX 0.8.2 ``jax.checkpoint`` took ``concrete=False`` silently (its default; ``True``
    raised NotImplementedError from 0.3.17, JEP 11830); since 0.10.0 any ``concrete`` raises.
    A call or a ``functools.partial`` that passes ``concrete=False`` gets the function as if it
    had not passed it."""
    import importlib

    for module_name, name in NAMES:
        module = importlib.import_module(module_name)
        original = module.__dict__.get(name)  # not through a module's __getattr__ (``_renamed`` serves old names)
        if original is None or getattr(original, "_jaxmigrate_legacy", False):
            continue
        setattr(module, name, _legacy(original))


def _legacy(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def checkpoint(*args: Any, concrete: bool = False, **kwargs: Any) -> Any:
        if concrete:
            raise NotImplementedError("The 'concrete' option to jax.checkpoint / jax.remat is deprecated; in its "
                                      "place, you can use its `static_argnums` option")
        return original(*args, **kwargs)

    checkpoint._jaxmigrate_legacy = True
    return checkpoint
