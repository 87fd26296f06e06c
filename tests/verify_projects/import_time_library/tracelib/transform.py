"""Wrappers that want the plain function: jaxlib's jitted-function types, tested at import."""
import functools

import jax

COMPILED_TYPES = (jax.xla.xe.CompiledFunction, jax.xla.xe.PmapFunction)
if jax.__version_info__ >= (0, 3, 18):
    COMPILED_TYPES += (jax.xla.xe.PjitFunction,)


def refuse_jitted(f):
    """Decorator factory's guard: a jitted function has lost its Python source."""
    if isinstance(f, COMPILED_TYPES):
        raise ValueError("pass the function itself; jit what the wrapper returns")

    @functools.wraps(f)
    def wrapped(*args):
        return f(*args) * 2

    return wrapped
