"""The migration: host-local blocks converted explicitly around jax.jit."""
import numpy as np
import jax
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def test_host_local_batch():
    assert jax.process_count() == 2
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("dp", "mp"))
    local = np.arange(16.0, dtype=np.float32).reshape(4, 4) + 100 * jax.process_index()
    batch = multihost_utils.host_local_array_to_global_array(local, mesh, P("dp"))
    out = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("dp")),
                  out_shardings=NamedSharding(mesh, P("dp")))(batch)
    out = multihost_utils.global_array_to_host_local_array(out, mesh, P("dp"))
    assert out.shape == (4, 4)
