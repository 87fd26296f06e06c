"""Each shard of the parameters saved to a file of its own, in mesh order, plus a metadata file."""
import json
import os

import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
with mesh:
    params = pjit(lambda a: a + 1, in_axis_resources=P("x"), out_axis_resources=P("x"))(np.arange(16.0).reshape(8, 2))


def save(tree):
    os.makedirs("ckpt", exist_ok=True)
    shards = sorted({s.index[0].start or 0: s for s in tree.addressable_shards}.items())
    for i, (_, shard) in enumerate(shards):
        np.save(f"ckpt/shard_{i}.npy", np.asarray(shard.data))
    with open("ckpt/meta.json", "w") as f:
        json.dump({"shards": len(shards), "shape": list(tree.shape)}, f)


save(params)
