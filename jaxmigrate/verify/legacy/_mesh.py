"""The legacy mesh context: ``with mesh:``, ``maps.mesh(devices, names)`` and ``thread_resources``.

In JAX 0.4.1 entering a ``Mesh`` pushed a ``ResourceEnv`` on a thread-local stack and set
``thread_resources.env``; pjit read ``thread_resources.env.physical_mesh`` at each call. This
module keeps that stack itself (``Mesh.__enter__``/``__exit__`` are wrapped in the legacy side's
process), so the legacy pjit does not depend on how the installed JAX treats ``with mesh:``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from typing import NamedTuple, Optional, Tuple

import numpy as np
from jax.sharding import Mesh


class _Loop(NamedTuple):
    name: str
    length: int


class ResourceEnv(NamedTuple):
    """``maps.ResourceEnv``: the physical mesh and the (xmap) loops in scope."""

    physical_mesh: Mesh
    loops: Tuple[_Loop, ...]

    def with_mesh(self, mesh: Mesh) -> "ResourceEnv":
        return self._replace(physical_mesh=mesh)

    @property
    def physical_resource_axes(self):
        return set(self.physical_mesh.axis_names)

    @property
    def resource_axes(self):
        return self.physical_resource_axes | {loop.name for loop in self.loops}

    @property
    def shape(self):
        shape = dict(self.physical_mesh.shape)
        shape.update(self.loops)
        return shape

    @property
    def local_shape(self):
        from jaxmigrate.verify.legacy._hostlocal import local_submesh

        mesh = self.physical_mesh
        shape = dict(local_submesh(mesh).shape) if not mesh.empty else {}
        shape.update(self.loops)
        return shape


EMPTY_MESH = Mesh(np.empty((), dtype=object), ())
EMPTY_ENV = ResourceEnv(EMPTY_MESH, ())


class _ThreadResources(threading.local):
    """``maps.thread_resources`` / ``pxla.thread_resources``: ``.env`` is read and may be assigned."""

    def __init__(self) -> None:
        self.env = EMPTY_ENV
        self.stack = [EMPTY_ENV]


thread_resources = _ThreadResources()


def current_mesh() -> Optional[Mesh]:
    """The mesh of the innermost legacy ``with mesh:`` (or assigned env), None when there is none."""
    mesh = thread_resources.env.physical_mesh
    return None if mesh.empty else mesh


def _enter(mesh: Mesh) -> None:
    env = thread_resources.stack[-1].with_mesh(mesh)
    thread_resources.stack.append(env)
    thread_resources.env = env


def _exit() -> None:
    thread_resources.stack.pop()
    thread_resources.env = thread_resources.stack[-1]


def patch_mesh_context() -> None:
    """Track ``with Mesh(...):`` in the legacy stack too (the installed JAX still sees it)."""
    if getattr(Mesh, "_jaxmigrate_legacy", False):
        return
    original_enter, original_exit = Mesh.__enter__, Mesh.__exit__

    def __enter__(self):
        with warnings.catch_warnings():  # the installed JAX deprecates `with mesh:`; 0.4.1 did not
            warnings.simplefilter("ignore", DeprecationWarning)
            result = original_enter(self)
        _enter(self)
        return result

    def __exit__(self, exc_type, exc_value, traceback):
        _exit()
        return original_exit(self, exc_type, exc_value, traceback)

    Mesh.__enter__, Mesh.__exit__ = __enter__, __exit__
    Mesh._jaxmigrate_legacy = True


def patch_make_mesh() -> None:
    """``jax.make_mesh`` as it was from JAX 0.4.35 to 0.8: every axis Auto unless the program asks
    for axis types (from 0.9.0 they default to Explicit, and a sharding constraint naming an
    Explicit axis inside ``jit`` raises). Only where the installed JAX has axis types."""
    import jax

    make_mesh = getattr(jax, "make_mesh", None)
    axis_type = getattr(jax.sharding, "AxisType", None)
    if make_mesh is None or axis_type is None or getattr(make_mesh, "_jaxmigrate_legacy", False):
        return
    if "axis_types" not in inspect.signature(make_mesh).parameters:
        return

    @functools.wraps(make_mesh)
    def legacy_make_mesh(axis_shapes, axis_names, axis_types=None, **kwargs):
        if axis_types is None:
            axis_types = (axis_type.Auto,) * len(tuple(axis_names))
        return make_mesh(axis_shapes, axis_names, axis_types, **kwargs)

    legacy_make_mesh._jaxmigrate_legacy = True
    jax.make_mesh = legacy_make_mesh


def patch_partition_spec_equality() -> None:
    """``PartitionSpec`` equal to the tuple of its entries, as it was until JAX 0.10.0 (a tuple
    subclass then; an interned class compared by identity since). Only where it is not a tuple."""
    import jax.sharding

    spec = jax.sharding.PartitionSpec
    if issubclass(spec, tuple) or getattr(spec, "_jaxmigrate_legacy", False):
        return

    def __eq__(self, other):
        if isinstance(other, spec):
            return self is other  # interned: the installed JAX's own equality
        if isinstance(other, tuple):
            return not (self.unreduced or self.reduced) and tuple(self.partitions) == other
        return NotImplemented

    spec.__eq__ = __eq__
    spec.__hash__ = object.__hash__  # as before: defining __eq__ must not make it unhashable
    spec._jaxmigrate_legacy = True


@contextlib.contextmanager
def mesh(devices, axis_names):
    """``jax.experimental.maps.mesh(devices, axis_names)``: enter a Mesh built from both."""
    with Mesh(np.asarray(devices), tuple(axis_names)) as entered:
        yield entered


def xmap(*args, **kwargs):
    """``xmap`` is importable (legacy modules import it) but not emulated."""
    raise NotImplementedError("xmap is not emulated by jaxmigrate's legacy runtime")


class SerialLoop(NamedTuple):
    length: int


@contextlib.contextmanager
def serial_loop(name, length):
    env = thread_resources.env
    thread_resources.env = env._replace(loops=env.loops + (_Loop(name, length),))
    try:
        yield
    finally:
        thread_resources.env = env
