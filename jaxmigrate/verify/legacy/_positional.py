"""``jax.sharding.PositionalSharding`` (deprecated in JAX 0.6.0, removed in 0.7.0), emulated.

As documented in JAX 0.4.x: ``PositionalSharding(devices)`` keeps the devices in order and, per
position of a grid shaped like ``np.shape(devices)``, the set of devices there (one device each
at first). A value of rank r takes a sharding of rank r: dim i is split into ``shape[i]`` chunks
and the chunk at a position lives on every device of that position's set. ``reshape`` and
``transpose``/``.T`` act on the grid of sets like numpy; ``replicate(axis=None, keepdims=True)``
merges the sets along ``axis`` (all axes when None) by union, keeping a size-1 dim unless
``keepdims=False``. Every set has the same size s; XLA saw the grid with a trailing replicated
tile dim of size s, or, where every dim has size 1, a replicated sharding, which fits a value of
any rank (``replicate()`` of a 2-D grid placed a vector).

The installed JAX has no such class, and JAX needs every sharding of one computation to list
the same devices in the same order (0.4.x's ``_device_assignment`` was the original device order,
whatever the grid became), so the emulation keeps the device grid in its original order as a
mesh, with one axis per grid dim, and a sharding as the mesh axis each of its dims is split along
(None for a dim merged by ``replicate``; ``P()`` where every dim has size 1): ``replicate`` sets
a dim to None (or drops it with ``keepdims=False``), ``transpose`` permutes the dims, and
``reshape`` reshapes the mesh, which
covers the documented uses (reshape first, then replicate or transpose). A reshape after a
replicate or transpose, which 0.4.x allowed, raises NotImplementedError here. Where JAX takes a
sharding, it becomes ``NamedSharding(mesh, P(*dims))``: ``install()`` patches ``jax.device_put``,
``jax.jit`` (``in_shardings``, ``out_shardings``), ``jax.lax.with_sharding_constraint``,
``jax.make_array_from_callback`` and ``jax.make_array_from_single_device_arrays`` to convert
(the child's recorder wraps ``jax.jit`` after this, so both compose), and makes
``jax.sharding.PositionalSharding``, ``jax._src.sharding_impls.PositionalSharding`` and
``jax.experimental.sharding.PositionalSharding`` resolve to it. ``is_equivalent_to(other, ndim)``
is 0.4.13's: the same HLO sharding for rank ``ndim`` and the same device order, either way round
with a ``NamedSharding``. Not emulated either:
``memory_kind`` other than None, and 0.4.x's rank promotion (a sharding of higher rank than the
value whose leading dims are all 1).
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence, Tuple

import numpy as np


class PositionalSharding:
    """The legacy positional sharding: the device grid (original order) and its dims' mesh axes."""

    def __init__(self, devices: "Sequence[Any] | np.ndarray", *, memory_kind=None) -> None:
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices, dtype=object)
        if not devices.size:
            raise ValueError(f"{type(self).__name__}.__init__ requires at least one device, got {devices}")
        if memory_kind is not None:
            raise NotImplementedError("PositionalSharding(memory_kind=...) is not emulated by the legacy runtime")
        self._grid = np.array(devices, dtype=object)
        self._dims: Tuple[Optional[int], ...] = tuple(range(self._grid.ndim))

    def _remake(self, grid: np.ndarray, dims: Tuple[Optional[int], ...]) -> "PositionalSharding":
        new = type(self).__new__(type(self))
        new._grid, new._dims = grid, dims
        return new

    # the grid -----------------------------------------------------------------------------
    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(1 if d is None else self._grid.shape[d] for d in self._dims)

    @property
    def ndim(self) -> int:
        return len(self._dims)

    def reshape(self, *shape) -> "PositionalSharding":
        if self._dims != tuple(range(self._grid.ndim)):
            raise NotImplementedError("the legacy runtime emulates PositionalSharding.reshape only before "
                                      "replicate() and transpose()")
        grid = self._grid.reshape(*shape)
        return self._remake(grid, tuple(range(grid.ndim)))

    def transpose(self, *axes) -> "PositionalSharding":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        order = [a % self.ndim for a in axes] if axes else list(range(self.ndim))[::-1]
        if sorted(order) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return self._remake(self._grid, tuple(self._dims[i] for i in order))

    T = property(transpose)

    def replicate(self, axis=None, keepdims=True) -> "PositionalSharding":
        if axis is None:
            merged = set(range(self.ndim))
        else:
            merged = {a % self.ndim if -self.ndim <= a < self.ndim else _axis_error(a, self.ndim)
                      for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        dims = tuple(None if i in merged else d for i, d in enumerate(self._dims) if keepdims or i not in merged)
        return self._remake(self._grid, dims)

    # the Sharding side ----------------------------------------------------------------------
    @property
    def device_set(self) -> set:
        return set(self._grid.flat)

    @property
    def memory_kind(self):  # 0.4.13 had none: the NamedSharding's, so that they compare equivalent
        return self.to_named_sharding().memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return all(d is None for d in self._dims)

    def to_named_sharding(self, rank: Optional[int] = None):
        """The equivalent ``NamedSharding`` over the mesh of the device grid; for a value of
        ``rank`` lower than the sharding's, whose leading dims have size 1, the sharding of its
        trailing dims (0.4.x aligned them so)."""
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        names = tuple(f"p{i}" for i in range(self._grid.ndim))
        if self.shape == (1,) * self.ndim:  # 0.4.x gave XLA a replicated sharding: valid for a value of any rank
            return NamedSharding(Mesh(self._grid, names), PartitionSpec())
        dims = self._dims
        if rank is not None and rank < len(dims) and all(s == 1 for s in self.shape[:len(dims) - rank]):
            dims = dims[len(dims) - rank:]
        return NamedSharding(Mesh(self._grid, names), PartitionSpec(*(None if d is None else names[d] for d in dims)))

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """As in 0.4.13 (``XLACompatibleSharding.is_equivalent_to``): the same HLO sharding for a
        value of rank ``ndim`` and the same device assignment (the devices in their original order)."""
        theirs = other.to_named_sharding(ndim) if isinstance(other, PositionalSharding) else other
        return bool(self.to_named_sharding(ndim).is_equivalent_to(theirs, ndim))

    def _to_xla_hlo_sharding(self, ndim: int):  # for a jax sharding's is_equivalent_to(this, ndim)
        return self.to_named_sharding(ndim)._to_xla_hlo_sharding(ndim)

    @property
    def _internal_device_list(self):  # the devices in their original order, as the mesh keeps them
        return self.to_named_sharding()._internal_device_list

    def __getattr__(self, name):  # devices_indices_map, shard_shape, addressable_devices, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.to_named_sharding(), name)

    def __eq__(self, other) -> bool:
        return (isinstance(other, PositionalSharding) and self._dims == other._dims
                and self._grid.shape == other._grid.shape and tuple(self._grid.flat) == tuple(other._grid.flat))

    def __hash__(self) -> int:
        return hash((tuple(self._grid.flat), self._dims))

    def __repr__(self) -> str:
        """The device ids at each position, as 0.4.x printed them (``{CPU 0, 1}``)."""
        sets: dict = {}
        for index in np.ndindex(self._grid.shape):
            position = tuple(0 if d is None else index[d] for d in self._dims)
            sets.setdefault(position, []).append(self._grid[index].id)
        cells = np.empty(self.shape, dtype=object)
        for position, ids in sets.items():
            cells[position] = "{" + ", ".join(map(str, sorted(ids))) + "}"
        return f"PositionalSharding({np.array2string(cells, separator=', ', formatter={'all': str})})"


def _axis_error(axis, ndim):
    raise np.exceptions.AxisError(axis, ndim)


def convert(tree):
    """Every PositionalSharding leaf of a pytree (or the value itself) as its NamedSharding."""
    import jax

    if isinstance(tree, PositionalSharding):
        return tree.to_named_sharding()
    return jax.tree_util.tree_map(lambda leaf: leaf.to_named_sharding() if isinstance(leaf, PositionalSharding) else leaf,
                                  tree, is_leaf=lambda leaf: isinstance(leaf, PositionalSharding))


def _convert_for(sharding, value):
    """``sharding`` for placing ``value`` (a pytree): a PositionalSharding as each leaf's own
    NamedSharding where a leaf's rank is lower than the sharding's."""
    import jax

    if not isinstance(sharding, PositionalSharding):
        return convert(sharding)
    ranks = [np.ndim(leaf) for leaf in jax.tree_util.tree_leaves(value)]
    if all(r >= sharding.ndim for r in ranks):
        return sharding.to_named_sharding()
    return jax.tree_util.tree_map(lambda leaf: sharding.to_named_sharding(np.ndim(leaf)), value)


def _placing(fn, keyword: str):
    """``fn(value, sharding)`` with a PositionalSharding converted for the value it places."""

    @functools.wraps(fn)
    def wrapper(value, *args, **kwargs):
        if args:
            args = (_convert_for(args[0], value), *args[1:])
        elif keyword in kwargs:
            kwargs[keyword] = _convert_for(kwargs[keyword], value)
        return fn(value, *args, **kwargs)

    return wrapper


def _converting(fn, positions: Tuple[int, ...], keywords: Tuple[str, ...]):
    """``fn`` with its arguments at ``positions`` and ``keywords`` converted first."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = tuple(convert(a) if i in positions else a for i, a in enumerate(args))
        kwargs = {k: convert(v) if k in keywords else v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return wrapper


def install() -> None:
    import sys
    import types

    import jax
    import jax.lax
    import jax.sharding
    from jax._src import sharding_impls

    jax.device_put = _placing(jax.device_put, "device")
    jax.jit = _converting(jax.jit, (), ("in_shardings", "out_shardings"))  # the values are not known yet: full rank
    jax.lax.with_sharding_constraint = _placing(jax.lax.with_sharding_constraint, "shardings")
    jax.make_array_from_callback = _converting(jax.make_array_from_callback, (1,), ("sharding",))
    jax.make_array_from_single_device_arrays = _converting(jax.make_array_from_single_device_arrays, (1,), ("sharding",))
    jax.sharding.PositionalSharding = PositionalSharding
    sharding_impls.PositionalSharding = PositionalSharding
    import jax.experimental

    if "jax.experimental.sharding" not in sys.modules:  # the 0.4.0-era path of jax.sharding
        module = types.ModuleType("jax.experimental.sharding", "jax.experimental.sharding (legacy runtime)")
        module.__dict__.update({k: v for k, v in vars(jax.sharding).items() if not k.startswith("__")})
        sys.modules[module.__name__] = jax.experimental.sharding = module
