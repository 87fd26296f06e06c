import numpy as np

from mylib.sharded import make_mesh, scaled_sum


def test_scaled_sum_shape():
    out = scaled_sum(np.arange(32.0, dtype=np.float32).reshape(8, 4), make_mesh())
    assert out.shape == (4,)
