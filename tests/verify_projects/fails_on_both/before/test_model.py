"""Two tests pass; two fail on both sides (0.4.1 internals no JAX here has, a wrong expectation)."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def _mesh():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def test_double():
    with _mesh():
        out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x"))(np.arange(8.0))
    assert float(out.sum()) == 56.0


def test_shape():
    assert jax.jit(lambda a: a + 1)(np.zeros((2, 3))).shape == (2, 3)


def test_internals_fails():
    from jax._src import dispatch_internals_of_0_4_1  # noqa: F401


def test_expectation_fails():
    assert float(jax.jit(lambda a: a.sum())(np.ones(4))) == 5.0
