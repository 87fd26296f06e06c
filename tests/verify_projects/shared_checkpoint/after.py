"""A wrong migration: the same files, each process's shards saved in the reverse order."""
import json
import os

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

CKPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ckpt")
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(16.0).reshape(8, 2)
params = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x")), lambda idx: data[idx])

os.makedirs(CKPT, exist_ok=True)
shards = sorted((s for s in params.addressable_shards if s.replica_id == 0), key=lambda s: s.index[0].start)
for i, shard in enumerate(reversed(shards)):
    np.save(os.path.join(CKPT, f"shard_{jax.process_index()}_{i}.npy"), np.asarray(shard.data))
if jax.process_index() == 0:
    with open(os.path.join(CKPT, "meta.json"), "w") as f:
        json.dump({"shape": list(params.shape), "processes": jax.process_count()}, f)
