"""jaxmigrate's legacy JAX runtime: the removed pjit-era APIs, on top of the installed JAX.

``install()`` is called in the BEFORE side's processes only (never in the parent, never on the
AFTER side). It makes importable, with the GDA era's semantics (JAX 0.4.1, jax.Array disabled for
pjit's input/output contract):

- ``jax.experimental.global_device_array`` (``GlobalDeviceArray``, ``Shard``, ``MeshAxes``,
  ``get_shard_indices``), ``jax.experimental.maps`` (``Mesh``, the lowercase ``mesh`` context
  manager, ``thread_resources``, ``ResourceEnv``; ``xmap`` imports but raises when called),
  ``jax.experimental.gda_serialization`` (an alias of ``array_serialization``),
  ``jax.lib.xla_bridge`` / ``jax._src.lib.xla_bridge`` and ``from jax.config import config``
  (a ``sys.meta_path`` finder);
- ``jax.experimental.pjit.{pjit, FROM_GDA, PartitionSpec, NamedSharding, with_sharding_constraint}``,
  ``jax._src.pjit.pjit``, ``jax.experimental.PartitionSpec``, ``jax.interpreters.pxla.{PartitionSpec,
  Mesh, thread_resources}``, ``jax.sharding.{MeshPspecSharding, OpShardingSharding, use_mesh}``
  (attributes);
- the options ``jax_array`` / ``jax_parallel_functions_output_gda`` and ``live_buffers()`` on
  devices and backends; ``jax.device_put_sharded`` / ``jax.device_put_replicated``;
- GDAs accepted by ``jax.jit``, ``jax.eval_shape`` and ``jnp``; ``jax._src.device_array.DeviceArray``,
  ``jax.interpreters.pxla.ShardedDeviceArray``, ``array.device_buffers`` (``_arrays``);
- ``jax.sharding.PositionalSharding`` (also ``jax.experimental.sharding`` and
  ``jax._src.sharding_impls``), converted to a ``NamedSharding`` where JAX takes a sharding, with
  0.4.13's ``is_equivalent_to`` (``_positional``); ``jax.random.KeyArray`` and ``PRNGKeyArray``,
  the class of typed key arrays, as 0.4.13 bound them (``_random``);
- with ``install_era_defaults()`` (the before side's process only): ``jax.make_mesh`` with Auto
  axes by default, as before 0.9.0; ``PartitionSpec`` equal to the tuple of its entries and
  CPU devices named ``TFRT_CPU_<n>`` by ``str``, lists taken as arrays by ``jnp.hstack`` and
  friends and ``jax.checkpoint(..., concrete=False)`` taken, as before 0.10.0;
- names JAX renamed where its API history shows the old one was the same object as a name the
  installed JAX has (``jax.numpy.product``, ``jax.core.Primitive``), taken on trust (``_renamed``).

It is written from the documented legacy behaviour, not from jaxmigrate's rules: the verifier
compares the legacy program run on this runtime with the migrated program run on plain JAX.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Callable, Dict

_installed = False


def _copy_module(name: str, source: types.ModuleType, doc: str) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("__")})
    return module


def _public(name: str, doc: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(attrs)
    return module


def _gda_module(name):
    from jaxmigrate.verify.legacy import gda

    return _public(name, gda.__doc__, **{n: getattr(gda, n) for n in gda.__all__ + ["_hashed_index"]})


def _maps_module(name):
    from jax.sharding import Mesh

    from jaxmigrate.verify.legacy import _mesh

    return _public(
        name, "jax.experimental.maps (legacy runtime)", Mesh=Mesh, mesh=_mesh.mesh,
        thread_resources=_mesh.thread_resources, ResourceEnv=_mesh.ResourceEnv, EMPTY_ENV=_mesh.EMPTY_ENV,
        xmap=_mesh.xmap, SerialLoop=_mesh.SerialLoop, serial_loop=_mesh.serial_loop,
    )


def _alias(target: str) -> Callable[[str], types.ModuleType]:
    def build(name):
        return _copy_module(name, importlib.import_module(target), f"legacy alias of {target}")

    return build


_PACKAGES = {"jax.experimental.gda_serialization"}
_MODULES: Dict[str, Callable[[str], types.ModuleType]] = {
    "jax.experimental.global_device_array": _gda_module,
    "jax.experimental.maps": _maps_module,
    "jax.experimental.gda_serialization": _alias("jax.experimental.array_serialization"),
    "jax.experimental.gda_serialization.serialization": _alias("jax.experimental.array_serialization.serialization"),
    "jax.lib.xla_bridge": _alias("jax._src.xla_bridge"),
    "jax._src.lib.xla_bridge": _alias("jax._src.xla_bridge"),
}


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return _MODULES[spec.name](spec.name)

    def exec_module(self, module):
        pass


class LegacyFinder(importlib.abc.MetaPathFinder):
    """Finds the removed legacy modules (only those, only in the legacy side's process)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=fullname in _PACKAGES)


def install_era_defaults() -> None:
    """Defaults of today's JAX set back to the legacy era's: ``jax.make_mesh`` with Auto axes, as
    before 0.9.0; ``PartitionSpec`` equal to tuples, CPU devices named ``TFRT_CPU_<n>``, lists
    taken by ``jnp.hstack`` and friends and ``concrete=False`` by ``jax.checkpoint``, as before
    0.10.0; the random streams of 0.4.x (``jax_threefry_partitionable`` False), as before 0.5.0. Apart from ``install()``: it
    changes what today's code gets from a name that still exists, so only the before side's own
    process takes it (``_child``), not a process that also runs today's code (the runtime's
    in-process tests)."""
    from jaxmigrate.verify.legacy import _devices, _mesh, _numpy, _random, _remat

    _mesh.patch_make_mesh()
    _mesh.patch_partition_spec_equality()
    _devices.patch_cpu_device_names()
    _numpy.patch_list_inputs()
    _remat.patch_checkpoint_concrete()
    _random.use_old_streams()


def install() -> None:
    """Install the legacy runtime into this process (idempotent). Imports jax."""
    global _installed
    if _installed:
        return
    import jax
    import jax._src.pjit
    import jax.experimental
    import jax.experimental.pjit
    import jax.interpreters.pxla
    import jax.sharding
    from jax._src import sharding_impls
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from jaxmigrate.verify.legacy import _aliases, _arrays, _buffers, _config, _mesh, _positional, _random, pjit

    _aliases.install()
    _config.install()
    _arrays.install()
    _positional.install()
    _random.install()
    _mesh.patch_mesh_context()
    _buffers.install()
    for module in (jax.experimental.pjit, jax._src.pjit):
        module.pjit = pjit.pjit
    legacy_pjit = jax.experimental.pjit
    legacy_pjit.FROM_GDA, legacy_pjit._UNSPECIFIED = pjit.FROM_GDA, pjit._UNSPECIFIED
    legacy_pjit.PartitionSpec, legacy_pjit.NamedSharding = PartitionSpec, NamedSharding
    legacy_pjit.with_sharding_constraint = pjit.with_sharding_constraint
    jax.experimental.PartitionSpec = PartitionSpec
    pxla = jax.interpreters.pxla
    pxla.PartitionSpec, pxla.Mesh, pxla.thread_resources = PartitionSpec, Mesh, _mesh.thread_resources
    jax.sharding.MeshPspecSharding = NamedSharding
    if not hasattr(jax.sharding, "use_mesh"):  # 0.5.0 to 0.7.0: the name set_mesh had before
        jax.sharding.use_mesh = jax.set_mesh
    if hasattr(sharding_impls, "GSPMDSharding"):
        jax.sharding.OpShardingSharding = sharding_impls.GSPMDSharding
    import jax._src.lib
    import jax.lib

    for parent in (jax.lib, jax._src.lib):  # 0.4.1 imported xla_bridge with jax: plain attribute access works
        name = f"{parent.__name__}.xla_bridge"
        sys.modules[name] = parent.xla_bridge = _MODULES[name](name)
    from jaxmigrate.verify.legacy import _device_put

    jax.device_put_sharded = _device_put.device_put_sharded
    jax.device_put_replicated = _device_put.device_put_replicated
    import jax.tree_util

    for name in ("tree_map", "tree_flatten", "tree_leaves", "tree_structure", "tree_unflatten", "tree_transpose",
                 "treedef_is_leaf"):  # the jax.tree_* aliases (removed in 0.6.0) were jax.tree_util's functions
        setattr(jax, name, getattr(jax.tree_util, name))
    sys.meta_path.insert(0, LegacyFinder())
    from jaxmigrate.verify.legacy import _renamed

    _renamed.install()  # after the finder: jax.lib.xla_bridge's renamed names go into the emulated module
    _installed = True
