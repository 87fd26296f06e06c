import jax
import jax.numpy as jnp
import pytest

import tracelib


def shifted_sin(x):
    return jnp.sin(x) + 1.0


def test_a_plain_function_is_wrapped():
    out = jax.jit(tracelib.refuse_jitted(shifted_sin))(jnp.ones(3))
    assert out.shape == (3,)


def test_a_jitted_function_is_refused():
    with pytest.raises(ValueError, match="function itself"):
        tracelib.refuse_jitted(jax.jit(shifted_sin))


def test_raw_keys_are_two_words():
    assert tuple(tracelib.KEY_SHAPE) == (2,)
    key = tracelib.check_key(jax.random.PRNGKey(0))
    assert jax.jit(lambda k: jax.random.uniform(k, (3,)).shape)(key) == (3,)
    with pytest.raises(ValueError, match="raw key"):
        tracelib.check_key(jnp.zeros((3,), jnp.uint32))


def test_the_trace_level_changes_under_jit_and_comes_back():
    outside = tracelib.TraceLevel.current()
    inside = []

    @jax.jit
    def double(x):
        inside.append(tracelib.TraceLevel.current() == outside)
        return x * 2

    assert double(1.0) == 2.0
    assert inside == [False]
    assert tracelib.TraceLevel.current() == outside
