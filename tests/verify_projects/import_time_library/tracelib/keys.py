"""Raw PRNG keys: their shape, read once from the default implementation when the module loads."""
import jax
import jax.numpy as jnp

KEY_SHAPE = jax.random.default_prng_impl().key_shape


def check_key(key):
    if key.shape != KEY_SHAPE or key.dtype != jnp.uint32:
        raise ValueError(f"expected a raw key of shape {KEY_SHAPE}, got {key.shape}")
    return key
