"""Host-local <-> global arrays, written from the GDA-era contract of pjit (JAX 0.4.1).

A non-GDA input to the GDA-era pjit was *host-local*: each process passed the block of the global
value that its own devices hold. The process's devices form a contiguous sub-mesh of the global
mesh (the smallest box of mesh coordinates holding them); every dimension partitioned over mesh
axes is that many times larger globally (global axis sizes / local axis sizes), and the local
block is laid out on the local sub-mesh with the same PartitionSpec. Outputs came back the same
way. Only ``Mesh``/``NamedSharding`` index maps and ``make_array_from_single_device_arrays`` are
used as building blocks; ``multihost_utils`` is not (the verifier must not prove a migration
with the code the migration calls).
"""

from __future__ import annotations

import math
from typing import Tuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def local_submesh(mesh: Mesh) -> Mesh:
    """This process's contiguous box of ``mesh`` (JAX 0.4.1 ``Mesh.local_mesh``)."""
    here = jax.process_index()
    is_local = np.vectorize(lambda d: d.process_index == here, otypes=[bool])(mesh.devices)
    box = []
    for axis in range(mesh.devices.ndim):
        others = tuple(a for a in range(mesh.devices.ndim) if a != axis)
        present = np.flatnonzero(is_local.any(axis=others))
        if present.size == 0:
            raise ValueError("the mesh holds none of this process's devices")
        box.append(slice(int(present.min()), int(present.max()) + 1))
    index = tuple(box)
    if not is_local[index].all():
        raise ValueError(
            "When passing non-GlobalDeviceArray inputs to pjit or xmap, devices connected to a "
            "single host must form a contiguous subcube of the global device mesh"
        )
    return Mesh(mesh.devices[index], mesh.axis_names)


def _axes(entry) -> Tuple[str, ...]:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _scale(shape, spec: PartitionSpec, num: Mesh, den: Mesh, what: str):
    """Each dimension times prod(num axis sizes) / prod(den axis sizes) over its spec's axes."""
    if len(spec) > len(shape):
        raise ValueError(f"PartitionSpec {spec} has {len(spec)} entries for a {len(shape)}-dim {what}")
    out = list(shape)
    for dim, entry in enumerate(spec):
        axes = _axes(entry)
        n = math.prod(num.shape[a] for a in axes)
        d = math.prod(den.shape[a] for a in axes)
        if out[dim] % d:
            raise ValueError(
                f"One of pjit arguments was given the sharding of {spec}, which implies that the "
                f"size of its dimension {dim} should be divisible by {d}, but it is equal to {out[dim]}"
            )
        out[dim] = out[dim] // d * n
    return tuple(out)


def host_local_to_global(value, mesh: Mesh, spec: PartitionSpec):
    """Assemble each process's host-local block of ``value`` into one global ``jax.Array``."""
    target = NamedSharding(mesh, spec)
    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        return value  # already global: the caller checks its sharding
    if jax.process_count() == 1:
        if isinstance(value, jax.Array) and value.sharding.is_equivalent_to(target, value.ndim):
            return value  # already laid out so: used as is (and donated as is)
        return jax.device_put(value, target)
    local = np.asarray(value)
    sub = local_submesh(mesh)
    global_shape = _scale(local.shape, spec, mesh, sub, "host-local input")
    local_indices = NamedSharding(sub, spec).devices_indices_map(local.shape)
    buffers = [jax.device_put(local[local_indices[d]], d) for d in sub.devices.flat]
    return jax.make_array_from_single_device_arrays(global_shape, target, buffers)


def global_to_host_local(array: jax.Array, mesh: Mesh, spec: PartitionSpec):
    """This process's block of a global array, laid out on its local sub-mesh."""
    if jax.process_count() == 1 or array.is_fully_addressable:
        return array
    sub = local_submesh(mesh)
    local_shape = _scale(array.shape, spec, sub, mesh, "output")
    by_device = {s.device: s.data for s in array.addressable_shards}
    buffers = [by_device[d] for d in sub.devices.flat]
    return jax.make_array_from_single_device_arrays(local_shape, NamedSharding(sub, spec), buffers)
