"""The GDA-era ``pjit``, ``FROM_GDA`` and ``with_sharding_constraint(x, axis_resources)`` (JAX 0.4.1).

Semantics, from the 0.4.1 source and documentation:

- ``pjit(fun, in_axis_resources, out_axis_resources, static_argnums=(), donate_argnums=())``;
  both spec arguments are pytree prefixes of the (dynamic) positional arguments / the outputs;
  a leaf is a ``PartitionSpec``, ``None`` (= replicated, ``PartitionSpec()``), ``FROM_GDA`` (input
  only) or a ``Sharding``. ``in_shardings``/``out_shardings`` are accepted as the same thing
  (0.4.13 spelling); giving both spellings is an error. Keyword arguments at the call are not.
- The mesh is the one of the enclosing ``with mesh:`` at each *call* (not at ``pjit()``). Called
  outside any mesh (jax.Array on), a ``None`` spec is unspecified, as JAX 0.4.13 ran it (0.4.1
  raised "pjit requires a non-empty mesh"): what the real 0.4.13 runs, the emulation runs;
  a ``PartitionSpec`` there still raises.
- A GlobalDeviceArray input is global: with ``FROM_GDA`` its own ``mesh_axes`` are used, with a
  spec the spec must match them. ``FROM_GDA`` for a non-GDA input is an error.
- Every other input is host-local (see ``_hostlocal``); outputs come back host-local, or as
  GlobalDeviceArrays when ``jax_parallel_functions_output_gda`` is set.
- Unless the program selected jax.Array mode (``jax.config.update("jax_array", True)`` or the
  ``jax_array(True)`` context): then inputs are global values (a numpy input is the same global
  array on every process) and outputs global ``jax.Array``s, as in 0.4.1 with jax.Array on.

The computation itself runs as a modern ``jax.jit`` with ``NamedSharding``s on the global arrays;
its global result is what the verifier records for the call.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Tuple

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec, Sharding

from jaxmigrate.verify import _hooks
from jaxmigrate.verify.legacy import _config
from jaxmigrate.verify.legacy._hostlocal import global_to_host_local, host_local_to_global
from jaxmigrate.verify.legacy._mesh import current_mesh
from jaxmigrate.verify.legacy.gda import GlobalDeviceArray


class _FromGdaSingleton:
    def __repr__(self) -> str:
        return "FROM_GDA"


class _UnspecifiedValue:
    def __repr__(self) -> str:
        return "UNSPECIFIED"


FROM_GDA = _FromGdaSingleton()
_UNSPECIFIED = _UnspecifiedValue()

_SHARED: Dict[Any, Any] = {}  # compiled functions shared by every pjit of the same function
_NO_MESH = "pjit requires a non-empty mesh! Are you sure that it's defined at the call site?"


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, (PartitionSpec, Sharding, _FromGdaSingleton, _UnspecifiedValue))


def _is_unspecified(x) -> bool:
    return isinstance(x, _UnspecifiedValue)


def _is_from_gda(x) -> bool:
    return isinstance(x, _FromGdaSingleton)


def to_sharding(spec, mesh, what: str = "in_axis_resources"):
    """A legacy leaf spec as a Sharding on ``mesh``: None is replicated."""
    if isinstance(spec, Sharding):
        return spec
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"{what} leaf specifications are expected to be PartitionSpec instances or None, but got {spec!r}")
    if mesh is None:
        raise RuntimeError(_NO_MESH)
    return NamedSharding(mesh, spec)


def _none_unspecified(spec):
    """``spec`` with each ``None`` leaf unspecified, as JAX 0.4.13 read ``None`` (called outside
    any mesh, its pjit ran such specs as ``jax.jit`` without shardings); all ``None``: unspecified."""
    if all(s is None for s in _leaves(spec)):
        return _UNSPECIFIED
    return jax.tree_util.tree_map(lambda s: _UNSPECIFIED if s is None else s, spec, is_leaf=_is_leaf)


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree, is_leaf=_is_leaf)


def _broadcast(prefix, tree, what: str):
    """One spec per leaf of ``tree``, ``prefix`` being a tree prefix of it (a leaf broadcasts)."""
    out = []
    try:
        jax.tree_util.tree_map(lambda spec, sub: out.extend([spec] * len(jax.tree_util.tree_leaves(sub))),
                               prefix, tree, is_leaf=_is_leaf)
    except ValueError as exc:
        raise ValueError(
            f"pjit {what} specification must be a tree prefix of the positional arguments tuple "
            f"passed to the `pjit`-decorated function. In particular, pjit {what} must either be a "
            f"None, a PartitionSpec, or a tuple of length equal to the number of positional arguments. ({exc})"
        ) from None
    return out


def _index_tuple(value) -> Tuple[int, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, int) else tuple(value)


def _is_tracer(x) -> bool:
    """A value with no data to place: a tracer (nested pjit) or a ShapeDtypeStruct (``.lower``)."""
    return isinstance(x, (jax.core.Tracer, jax.ShapeDtypeStruct))


def _global_input(x, spec, mesh):
    """(global value, in_sharding for jit) of one input leaf under the GDA-era contract."""
    if isinstance(x, GlobalDeviceArray):
        own = x.sharding
        if not (_is_from_gda(spec) or _is_unspecified(spec)):
            target = to_sharding(spec, mesh)
            if not own.is_equivalent_to(target, x.ndim):
                raise ValueError(
                    "Got an input GDA to pjit with different partitioning than specified in the "
                    "in_axis_resources argument to pjit. The partitioning must match, or use "
                    "`jax.experimental.pjit.FROM_GDA` in `in_axis_resources` for GDA. Got GDA "
                    f"sharding: {own} and pjit sharding: {target}"
                )
        return x._jaxmigrate_array, own
    if _config.jax_array_selected() and not (_is_from_gda(spec) and not isinstance(x, jax.Array)):
        return _global_value(x, spec, mesh)  # jax.Array mode: every input is a global value
    if _is_from_gda(spec):
        raise ValueError("For a non-GDA input, the corresponding resource in in_axis_resources cannot be `pjit.FROM_GDA`.")
    if _is_unspecified(spec):
        if jax.process_count() > 1 and mesh is not None and not _is_tracer(x):
            return host_local_to_global(x, mesh, PartitionSpec()), None
        return x, None
    target = to_sharding(spec, mesh)
    if _is_tracer(x) or isinstance(x, (bool, int, float, complex)):
        return x, target  # nested pjit (global already) / weakly typed Python scalar
    if not isinstance(target, NamedSharding):
        if jax.process_count() > 1:
            raise ValueError(f"a host-local input needs a PartitionSpec or NamedSharding, got {target}")
        return jax.device_put(x, target), target
    value = host_local_to_global(x, target.mesh, target.spec)
    if value is x and not x.sharding.is_equivalent_to(target, x.ndim):
        raise ValueError(
            "Sharding passed to pjit does not match the sharding on the respective arg. "
            f"Got pjit sharding: {target},\narg sharding: {x.sharding} for arg shape: {x.shape}"
        )
    return value, target


def _global_value(x, spec, mesh):
    """(value, in_sharding) of a non-GDA input in jax.Array mode: a jax.Array as it is (jit
    checks its sharding; with ``FROM_GDA`` its own sharding), any other value the same global
    value on every process."""
    if _is_unspecified(spec) or _is_from_gda(spec):
        return x, None
    target = to_sharding(spec, mesh)
    if _is_tracer(x) or isinstance(x, (bool, int, float, complex, jax.Array)) or jax.process_count() == 1:
        return x, target
    value = np.asarray(x)
    return jax.make_array_from_callback(value.shape, target, lambda index: value[index]), target


def _local_output(x):
    if not isinstance(x, jax.Array) or not isinstance(x.sharding, NamedSharding) or _config.jax_array_selected():
        return x
    sharding = x.sharding
    if _config.output_gda():
        return GlobalDeviceArray._from_array(x, sharding.mesh, sharding.spec)
    return global_to_host_local(x, sharding.mesh, sharding.spec)


class LegacyPjitFunction:
    """What the legacy ``pjit(...)`` returns: call it under ``with mesh:``."""

    _jaxmigrate_legacy = True

    def __init__(self, fun, in_spec, out_spec, static_argnums, donate_argnums, jit_kwargs):
        self._fun = fun
        self._in_spec = in_spec
        self._out_spec = out_spec
        self._static = static_argnums
        self._donate = donate_argnums
        self._jit_kwargs = jit_kwargs
        self._cache: Dict[Any, Any] = {}
        functools.update_wrapper(self, fun)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def _prepare(self, args, kwargs):
        if kwargs and not _is_unspecified(self._in_spec):
            raise NotImplementedError("pjit does not support kwargs")
        if max(self._static + self._donate, default=-1) >= len(args):
            raise ValueError(f"jitted function has static_argnums={self._static}, donate_argnums={self._donate} "
                             f"but was called with only {len(args)} positional arguments.")
        mesh = current_mesh()
        in_spec, out_spec = self._in_spec, self._out_spec
        if mesh is None and _config.jax_array_enabled():  # as 0.4.13 ran it: None is unspecified there
            in_spec, out_spec = _none_unspecified(in_spec), _none_unspecified(out_spec)
        needs_mesh = any(s is None or isinstance(s, PartitionSpec) for s in _leaves(in_spec) + _leaves(out_spec))
        if mesh is None and (needs_mesh or not _config.jax_array_enabled()):
            raise RuntimeError(_NO_MESH)
        static = tuple((i, args[i]) for i in self._static)
        dyn_positions = [i for i in range(len(args)) if i not in self._static]
        dyn_args = tuple(args[i] for i in dyn_positions)
        flat, treedef = jax.tree_util.tree_flatten(dyn_args)
        specs = ([in_spec] * len(flat) if _is_unspecified(in_spec) else _broadcast(in_spec, dyn_args, "in_axis_resources"))
        converted = [_global_input(x, s, mesh) for x, s in zip(flat, specs)]
        values = [v for v, _ in converted]
        in_shardings = tuple(s for _, s in converted)
        donated: List[int] = []
        offset = 0
        for position, arg in zip(dyn_positions, dyn_args):
            count = len(jax.tree_util.tree_leaves(arg))
            if position in self._donate:
                donated.extend(range(offset, offset + count))
            offset += count
        key: Tuple[Any, ...] = (treedef, static, in_shardings, tuple(donated), mesh, tuple(sorted(kwargs)))
        out_leaves, out_tree = jax.tree_util.tree_flatten(out_spec, is_leaf=_is_leaf)
        shared_key = (self._fun, key, tuple(out_leaves), out_tree, tuple(sorted(self._jit_kwargs.items())))
        try:  # 0.4.1 cached by the function: a second pjit(f) of the same f did not trace again
            hash(shared_key)
            cache, key = _SHARED, shared_key
        except TypeError:  # an unhashable static argument or option: this object's own cache
            cache = self._cache
        jitted = cache.get(key)
        if jitted is None:
            jitted = self._build(treedef, static, dyn_positions, in_shardings, tuple(donated), mesh, out_spec)
            cache[key] = jitted
        return jitted, values, any(_is_tracer(x) for x in flat)

    def _build(self, treedef, static, dyn_positions, in_shardings, donated, mesh, out_spec):
        fun, n_args = self._fun, len(dyn_positions) + len(static)

        def flat_fun(*leaves, **kwargs):
            args = [None] * n_args
            for i, value in static:
                args[i] = value
            for i, value in zip(dyn_positions, jax.tree_util.tree_unflatten(treedef, leaves)):
                args[i] = value
            return fun(*args, **kwargs)

        options = dict(self._jit_kwargs)
        if not all(s is None for s in in_shardings):
            options["in_shardings"] = in_shardings
        if not _is_unspecified(out_spec):  # an unspecified leaf is None to jit: its choice
            options["out_shardings"] = jax.tree_util.tree_map(
                lambda s: None if _is_unspecified(s) else to_sharding(s, mesh, "out_axis_resources"), out_spec,
                is_leaf=_is_leaf)
        if donated:
            options["donate_argnums"] = donated
        return jax.jit(flat_fun, **options)

    def __call__(self, *args, **kwargs):
        from jaxmigrate.verify._recorder import deleted_inputs, live_inputs

        live = live_inputs((args, kwargs))
        jitted, values, tracing = self._prepare(args, kwargs)
        with _hooks.suppressed():
            out = jitted(*values, **kwargs)
        if tracing:
            return out
        _hooks.record(out, deleted_inputs(live), getattr(self._fun, "__name__", ""))
        return jax.tree_util.tree_map(_local_output, out)

    def lower(self, *args, **kwargs):
        jitted, values, _ = self._prepare(args, kwargs)
        return jitted.lower(*values, **kwargs)


def pjit(fun, in_axis_resources=_UNSPECIFIED, out_axis_resources=_UNSPECIFIED, static_argnums=(),
         donate_argnums=(), *, in_shardings=_UNSPECIFIED, out_shardings=_UNSPECIFIED, **jit_kwargs):
    """``jax.experimental.pjit.pjit`` of the GDA era (see the module docstring)."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if not _is_unspecified(in_shardings) and not _is_unspecified(in_axis_resources):
        raise ValueError("Setting both in_shardings and in_axis_resources is not allowed. "
                         "in_axis_resources is deprecated. Please use in_shardings.")
    if not _is_unspecified(out_shardings) and not _is_unspecified(out_axis_resources):
        raise ValueError("Setting both out_shardings and out_axis_resources is not allowed. "
                         "out_axis_resources is deprecated. Please use out_shardings.")
    in_spec = in_axis_resources if _is_unspecified(in_shardings) else in_shardings
    out_spec = out_axis_resources if _is_unspecified(out_shardings) else out_shardings
    if not _config.jax_array_enabled() and (_is_unspecified(in_spec) or _is_unspecified(out_spec)):
        raise ValueError(
            "in_axis_resources and out_axis_resouces should not be the unspecified singleton value. "
            "Please enable `jax.Array` to use this feature. You can use jax.config.update('jax_array', True) "
            "or set the environment variable  JAX_ARRAY=1 , or set the `jax_array` boolean flag to something true-like."
        )
    if isinstance(in_spec, list):
        in_spec = tuple(in_spec)
    for leaf in _leaves(in_spec) + _leaves(out_spec):
        if not _is_leaf(leaf):
            raise TypeError(f"pjit axis resources leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {leaf!r}")
    for leaf in _leaves(out_spec):
        if _is_from_gda(leaf):
            raise ValueError("FROM_GDA cannot be used in out_axis_resources")
    return LegacyPjitFunction(fun, in_spec, out_spec, _index_tuple(static_argnums),
                              _index_tuple(donate_argnums), jit_kwargs)


def with_sharding_constraint(x, axis_resources=_UNSPECIFIED, *, shardings=_UNSPECIFIED):
    """``with_sharding_constraint(x, axis_resources)``: specs resolved on the legacy mesh context."""
    spec = shardings if _is_unspecified(axis_resources) else axis_resources
    mesh = current_mesh()
    resolved = jax.tree_util.tree_map(lambda s: to_sharding(s, mesh, "axis_resources"), spec, is_leaf=_is_leaf)
    return jax.lax.with_sharding_constraint(x, resolved)


pjit._jaxmigrate_legacy = True  # the child's recorder leaves it alone: it records its own calls
