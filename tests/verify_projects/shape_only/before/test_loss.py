"""A suite that asserts shapes only: a changed reduction passes on both sides."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def _mesh():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))


def test_loss_shape():
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    with _mesh():
        loss = pjit(lambda a: jnp.mean(a ** 2), in_axis_resources=P("dp"), out_axis_resources=None)(x)
    assert loss.shape == ()


def test_logits_shape():
    x = np.ones((8, 4), np.float32)
    with _mesh():
        out = pjit(lambda a: a * 3, in_axis_resources=P("dp"), out_axis_resources=P("dp", "mp"))(x)
    assert out.shape == (8, 4)
