"""A multi-host test: every process passes its own host-local block to pjit (GDA era)."""
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def test_host_local_batch():
    assert jax.process_count() == 2
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))
    local = np.arange(16.0, dtype=np.float32).reshape(4, 4) + 100 * jax.process_index()
    with mesh:
        out = pjit(lambda a: a * 2, in_axis_resources=P("dp"), out_axis_resources=P("dp"))(local)
    assert out.shape == (4, 4)
