"""GlobalDeviceArray's attributes and module members, and what a jax.Array has instead (JM502's tables)."""

from __future__ import annotations

import re
from typing import Dict

# GDA attribute → its jax.Array spelling, rewritten where the receiver is known to be a GDA
ATTRIBUTE_RENAMES: Dict[str, str] = {
    "local_shards": "addressable_shards",
    "local_data": "addressable_data",
    "mesh_axes": "sharding.spec",
    "mesh": "sharding.mesh",
    "_global_mesh": "sharding.mesh",
    "_mesh_axes": "sharding.spec",
    "_global_shape": "shape",
}
# private GDA state with no one-name jax.Array spelling: reported on a known GDA ({x} = receiver)
PRIVATE_REPORTED: Dict[str, str] = {
    "_device_buffers": "[s.data for s in {x}.addressable_shards]",
    "_create_local_shards": "{x}.addressable_shards",
    "_local_devices": "[s.device for s in {x}.addressable_shards]",
}
# names only a GDA had: reported on any receiver (`.mesh`/`.mesh_axes` are common elsewhere)
GDA_ONLY = ("local_shards", "local_data")
# how an unknown receiver that is named like a GDA (`gda`, `out_gda`, `gda1`) is still reported
GDA_NAME = re.compile(r"(?:^|_)gdas?(?:$|_|\d)", re.IGNORECASE)

# names of the removed module other than GlobalDeviceArray: rewritten, or reported with advice
MEMBER_MOVES = {"MeshAxes": "jax.sharding.PartitionSpec", "PartitionSpec": "jax.sharding.PartitionSpec"}
ADVICE: Dict[str, str] = {
    "get_shard_indices": "NamedSharding(global_mesh, P(*mesh_axes)).devices_indices_map(global_shape)",
    "get_shard_shape": "NamedSharding(global_mesh, P(*mesh_axes)).shard_shape(global_shape)",
    "get_shard_indices_replica_ids": "NamedSharding(global_mesh, P(*mesh_axes)).devices_indices_map(global_shape) "
                                     "for the indices; replica ids: `s.replica_id` of `arr.global_shards`",
    "_get_shard_indices_replica_ids_uncached": "NamedSharding(global_mesh, P(*mesh_axes)).devices_indices_map("
                                               "global_shape) for the indices; replica ids: `s.replica_id` of "
                                               "`arr.global_shards`",
    "_get_indices": "tuple(NamedSharding(global_mesh, P(*mesh_axes)).devices_indices_map(global_shape).values())",
    "_get_sharding_spec": "NamedSharding(global_mesh, P(*mesh_axes))  # ShardingSpec no longer exists",
    "Shape": "Tuple[int, ...]",
    "Index": "Tuple[slice, ...]",
    "Device": "jax.Device",
    "DeviceArray": "jax.Array",
    "ArrayLike": "jax.typing.ArrayLike",
    "Shard": "jax.Shard(device, sharding, global_shape, data)",
}
# classes every array is an instance of, before jax.Array (DeviceArray, GDA: jnp.ndarray) and after
EVERY_ARRAY = ("jax.Array", "jax.numpy.ndarray")
