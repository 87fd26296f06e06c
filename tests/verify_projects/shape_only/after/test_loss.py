"""The migration, with `mean` turned into `sum` by mistake: every test still passes."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def _mesh():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))


def test_loss_shape():
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    mesh = _mesh()
    loss = jax.jit(lambda a: jnp.sum(a ** 2), in_shardings=NamedSharding(mesh, P("dp")),
                   out_shardings=NamedSharding(mesh, P()))(x)
    assert loss.shape == ()


def test_logits_shape():
    x = np.ones((8, 4), np.float32)
    mesh = _mesh()
    out = jax.jit(lambda a: a * 3, in_shardings=NamedSharding(mesh, P("dp")),
                  out_shardings=NamedSharding(mesh, P("dp", "mp")))(x)
    assert out.shape == (8, 4)
