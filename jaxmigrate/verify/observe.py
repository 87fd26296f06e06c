"""Observations: what a side computed, as plain picklable data (numpy arrays and Python values).

Runs in the child processes. An array becomes its shape, dtype, sharding (device position in
``jax.devices()`` -> index, so ``P('x')`` and ``P('x', None)`` look the same and swapped mesh axes
do not) and values: the whole value when this process can address all of it, else the data of
its addressable shards. A GlobalDeviceArray of the legacy runtime is observed as its global array.
A registered pytree node (a dataclass registered with ``jax.tree_util``, ``eqx.Module``, flax's
boxes, ...) is observed through its children, each under its key path, and its auxiliary data
(static fields): a changed leaf is a difference at its path, not an opaque object equal to any
other of its type. Only what JAX's tree utilities of every version since 0.4.6 give is used, so
the observation is the same whichever JAX a side runs.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

MAX_ITEMS = 1000  # containers larger than this are observed by their length only
MAX_DEPTH = 6

_positions: Optional[Dict[Any, int]] = None
RENAMED: List[Tuple[str, str]] = []  # (path, name) of the program's temporary folders (``_written``)


def _device_position(device) -> int:
    global _positions
    if _positions is None:
        import jax

        _positions = {d: i for i, d in enumerate(jax.devices())}
    return _positions.get(device, -1)


def _index(index, shape):
    """Each dimension's (start, stop); an integer (a pmap sharding's index of one device's slice,
    JAX 0.4.x) is the slice it stands for."""
    return tuple((s, s + 1) if isinstance(s, int) else s.indices(n)[:2] for s, n in zip(index, shape))


def _jax_array_type():
    import sys

    jax = sys.modules.get("jax")
    return jax.Array if jax is not None else None


def _underlying(value):
    """The array a value stands for (a GDA's global array), or None if it is not an array."""
    inner = getattr(type(value), "_jaxmigrate_array", None)
    if inner is not None:
        return value._jaxmigrate_array
    array_type = _jax_array_type()
    if isinstance(value, (np.ndarray, np.generic)) or (array_type is not None and isinstance(value, array_type)):
        return value
    return None


def _numpy(value) -> Dict[str, Any]:
    array = np.asarray(value)
    if array.dtype == object:
        return {"kind": "array", "shape": array.shape, "dtype": "object", "sharding": None,
                "data": np.vectorize(_object_leaf, otypes=[object])(array) if array.size else array}
    return {"kind": "array", "shape": array.shape, "dtype": str(array.dtype), "sharding": None, "data": array}


def _object_leaf(value) -> str:
    if type(value).__name__.endswith("Device") and hasattr(value, "process_index"):
        return f"device#{_device_position(value)}"
    return repr(value) if isinstance(value, (str, numbers.Number, type(None))) else type(value).__name__


def spec_text(spec) -> str:
    """``P('x', None)``, the same text on every JAX version (their reprs differ)."""
    return "P(" + ", ".join(repr(entry) for entry in spec) + ")"


def _layout(sharding) -> str:
    """How a sharding was asked for, for people: ``NamedSharding(mesh x=4 y=2, P('x', None))``,
    with the mesh's axis types when some are not Auto; other shardings by their type. Shown, never
    compared (the device map is)."""
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None or not hasattr(mesh, "shape"):
        return type(sharding).__name__
    return f"{type(sharding).__name__}(mesh {mesh_text(mesh)}, {spec_text(spec)})"


def mesh_text(mesh) -> str:
    """A mesh's axes for people: ``x=4 y=2``, with their types when some are not Auto."""
    axes = " ".join(f"{name}={size}" for name, size in dict(mesh.shape).items())
    types = [getattr(t, "name", str(t)) for t in getattr(mesh, "axis_types", None) or ()]
    if any(t != "Auto" for t in types):
        axes += " (" + ", ".join(f"{n}: {t}" for n, t in zip(dict(mesh.shape), types)) + ")"
    return axes


def _unseen_copy(array):
    """A copy of ``array`` to read: reading an array's data or shards makes JAX (0.10) keep a
    single-device array per shard alive with it, which the program's own ``jax.live_arrays()``
    would then count; the copy's go with the copy."""
    import jax

    try:
        return jax.device_put(array, array.sharding, may_alias=False)
    except Exception:  # noqa: BLE001 - a sharding device_put cannot copy to: the array itself
        return array


def _jax(array) -> Dict[str, Any]:
    obs: Dict[str, Any] = {"kind": "array", "shape": tuple(array.shape), "dtype": str(array.dtype)}
    if obs["dtype"].startswith("key<"):  # typed PRNG keys (key<fry>): their data is what they hold
        import jax

        obs.update(_jax(jax.random.key_data(array)), shape=obs["shape"], dtype=obs["dtype"])
        return obs
    if array.is_deleted():
        obs.update(deleted=True, sharding=None, data=None)
        return obs
    array = _unseen_copy(array)
    shape = tuple(array.shape)
    indices = array.sharding.devices_indices_map(shape)
    obs["sharding"] = tuple(sorted((_device_position(d), _index(i, shape)) for d, i in indices.items()))
    try:
        obs["layout"] = _layout(array.sharding)
    except Exception:  # noqa: BLE001 - only shown
        obs["layout"] = type(array.sharding).__name__
    if array.is_fully_addressable:
        obs["data"] = np.asarray(array)
    else:
        shards: Dict[Any, Any] = {}
        for shard in array.addressable_shards:
            shards.setdefault(_index(shard.index, shape), np.asarray(shard.data))
        obs["data"] = None
        obs["shards"] = tuple(sorted(shards.items(), key=lambda item: item[0]))
    return obs


def _sharding_object(value) -> Optional[Dict[str, Any]]:
    """A PartitionSpec, Mesh or NamedSharding as plain data (the same classes on both sides)."""
    sharding = sys.modules.get("jax.sharding")
    if sharding is None:
        return None
    if isinstance(value, sharding.PartitionSpec):
        return {"kind": "str", "value": f"PartitionSpec{tuple(value)!r}"}  # compared: kept as it was
    if isinstance(value, sharding.Mesh):
        positions = [_device_position(d) for d in value.devices.flat]
        return {"kind": "str", "value": f"Mesh({dict(value.shape)!r}, devices={positions})"}
    if isinstance(value, sharding.NamedSharding):
        mesh, spec = _sharding_object(value.mesh), _sharding_object(value.spec)
        # the mesh and the spec of a NamedSharding always give a dict (the ignore: _sharding_object can return None)
        return {"kind": "str", "value": f"NamedSharding({mesh['value']}, {spec['value']})"}  # type: ignore[index]
    return None


def _pytree_children(value) -> Optional[tuple]:
    """``(children, aux)`` of a registered pytree node: its children as ``(key path, child)``
    and its auxiliary data; None for a leaf (an object no pytree registry knows)."""
    tree_util = sys.modules.get("jax.tree_util")
    if tree_util is None:
        return None
    children, treedef = tree_util.tree_flatten_with_path(value, is_leaf=lambda x: x is not value)
    if len(children) == 1 and children[0][1] is value:
        return None
    aux = treedef.node_data()[1] if hasattr(treedef, "node_data") else None
    return tuple((tree_util.keystr(path), child) for path, child in children), aux


def _pytree(value, children, aux, depth: int) -> Dict[str, Any]:
    return {"kind": "pytree", "type": type(value).__name__, "aux": observe(aux, depth + 1),
            "items": tuple((key, observe(child, depth + 1)) for key, child in children)}


def _prng_impl(value) -> Optional[Dict[str, Any]]:
    """A PRNG implementation, as JAX 0.4's ``PRNGImpl`` (a NamedTuple of functions) and as
    ``define_prng_impl``'s opaque result that wraps one: its key shape and tag."""
    impl = getattr(value, "_impl", value) if type(value).__name__ == "PRNGSpec" else value
    if type(impl).__name__ != "PRNGImpl" or not type(impl).__module__.startswith("jax."):
        return None
    return {"kind": "str", "value": f"PRNG implementation {tuple(impl.key_shape)!r} {impl.tag!r}"}


def observe(value, depth: int = 0) -> Dict[str, Any]:
    """The observation of any value (an opaque object is only its type name)."""
    try:
        impl = _prng_impl(value)
        if impl is not None:
            return impl
        array = _underlying(value)
        if array is not None:
            return _numpy(array) if isinstance(array, (np.ndarray, np.generic)) else _jax(array)
        if isinstance(value, (bool, numbers.Number)) and not isinstance(value, np.generic):
            return {"kind": "number", "type": type(value).__name__, "value": value}
        if isinstance(value, str):
            for path, name in RENAMED:
                value = value.replace(path, name)
            return {"kind": "str", "value": value}
        if value is None:
            return {"kind": "none"}
        sharding_obs = _sharding_object(value)
        if sharding_obs is not None:
            return sharding_obs
        if isinstance(value, (tuple, list, dict)) and depth < MAX_DEPTH:
            if len(value) > MAX_ITEMS:
                return {"kind": "seq", "type": type(value).__name__, "length": len(value), "items": ()}
            if isinstance(value, dict):
                items = sorted(((repr(k), observe(v, depth + 1)) for k, v in value.items()), key=lambda kv: kv[0])
                return {"kind": "dict", "items": tuple(items)}
            kind = "list" if isinstance(value, list) else "tuple"
            return {"kind": "seq", "type": kind, "items": tuple(observe(v, depth + 1) for v in value)}
        node = _pytree_children(value) if depth < MAX_DEPTH else None
        if node is not None:
            return _pytree(value, node[0], node[1], depth)
        return {"kind": "object", "type": type(value).__name__}
    except Exception as exc:  # noqa: BLE001 - an unobservable value is an observation too
        return {"kind": "unobservable", "error": f"{type(exc).__name__}: {exc}"}


def is_observable(value, depth: int = 0) -> bool:
    """Module globals worth comparing: arrays, numbers, strings, or containers holding some."""
    if _underlying(value) is not None:
        return True
    if isinstance(value, (bool, numbers.Number, str)) or _sharding_object(value) is not None:
        return True
    if _prng_impl(value) is not None:
        return True
    if isinstance(value, (tuple, list, dict)) and depth < MAX_DEPTH and len(value) <= MAX_ITEMS:
        items = value.values() if isinstance(value, dict) else value
        return any(is_observable(v, depth + 1) for v in items)
    if depth < MAX_DEPTH:
        try:
            node = _pytree_children(value)
        except Exception:  # noqa: BLE001 - a node whose flatten fails is not worth comparing
            return False
        return node is not None and any(is_observable(child, depth + 1) for _, child in node[0])
    return False


def by_value(obs: Dict[str, Any]) -> bool:
    """Whether an observation holds something compared by value (an array, number, string or
    file's bytes, also inside a container or pytree): opaque objects and None are not."""
    kind = obs["kind"]
    if kind in ("array", "number", "str", "bytes"):
        return True
    if kind == "seq":
        return any(by_value(item) for item in obs["items"])
    if kind in ("dict", "pytree"):
        return any(by_value(item) for _, item in obs["items"])
    return False


def observe_globals(namespace: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {name: observe(value) for name, value in namespace.items()
            if not name.startswith("__") and is_observable(value)}
