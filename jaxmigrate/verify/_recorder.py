"""Per-process set-up shared by script mode (``_child``) and pytest mode (``_plugin``).

- ``seed()``: Python's ``random``, NumPy's global generator (and torch / tensorflow when already
  imported) seeded identically on both sides, before each script and each test.
- ``install_recorder(sink)``: every compiled call the user's code makes (``jax.jit``, the
  modern pjit entry points and ``jax.pmap``; the legacy pjit records itself) is observed: its
  value, and which of its array inputs the call deleted (donation), and where it was made
  (``site``: the function's name and the user's file and line of the call; shown, not compared).
  A pmap call is a compiled call like a jit call, and calls pair by their order: its output,
  an array whose leading axis is the device axis (one slice per device; with several processes,
  this process's devices only), is observed as any array is, so the ``jax.jit(jax.shard_map(...))``
  that replaced it, keeping that axis (``in_specs=P("i")``, ``out_specs=P("i")``), records the
  same value and device map in its place. JAX's own jit inside pmap (0.10: pmap is jit of
  shard_map) is not the user's and is not recorded.
"""

from __future__ import annotations

import functools
import os
import random
import sys
from types import FrameType
from typing import Any, Callable, Dict, Optional, Tuple

SEED = 0
_SELF = os.path.abspath(__file__)
_PASS_THROUGH = ("functools.py", "contextlib.py")
SITE_BASE: Optional[str] = None  # call sites are shown relative to this folder (the side's root)
_library: tuple = ()


def seed() -> None:
    """Seed every global generator we know of (the same seed on both sides)."""
    random.seed(SEED)
    import numpy as np

    np.random.seed(SEED)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        torch.manual_seed(SEED)
    tf = sys.modules.get("tensorflow")
    if tf is not None and hasattr(getattr(tf, "random", None), "set_seed"):
        tf.random.set_seed(SEED)


#: id of a global array ``host_local_array_to_global_array`` made in the user's code -> (that
#: array, the value it was made from): a call's donation is told of the values the user's code
#: holds. Emptied by the next compiled call, which takes the arrays converted for it.
_converted: Dict[int, Tuple[Any, Any]] = {}


def live_inputs(args) -> list:
    """(leaf position, array) of the inputs that are alive arrays: donation deletes some of them.
    An input converted from this process's data stands for the value it was converted from: a
    NumPy array, which no call deletes, is left out; an array the user's code holds is deleted
    with its donated conversion (they share buffers, or the program deletes the original of a
    donated copy, as JAX's pmap and JM706's helper do)."""
    import jax

    out = []
    converted = dict(_converted)
    _converted.clear()
    for i, leaf in enumerate(jax.tree_util.tree_leaves(args)):
        made, source = converted.get(id(leaf), (None, None))
        if made is leaf and not isinstance(source, jax.Array):
            continue
        is_deleted = getattr(leaf, "is_deleted", None)
        if callable(is_deleted) and (isinstance(leaf, jax.Array) or hasattr(type(leaf), "_jaxmigrate_array")):
            try:
                if not is_deleted():
                    out.append((i, leaf))
            except Exception:  # noqa: BLE001 - not an array after all
                pass
    return out


def deleted_inputs(live) -> tuple:
    """The positions of ``live`` inputs that are deleted now."""
    return tuple(i for i, leaf in live if leaf.is_deleted())


def _library_dirs():
    """JAX, jaxlib and the verifier itself (the legacy runtime's own jit is not the user's)."""
    import jax
    import jaxlib

    verify_dir = os.path.dirname(_SELF)
    return tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, jaxlib)) + (verify_dir + os.sep,)


def _created_by_user(library_dirs) -> bool:
    """Whether the nearest caller outside the recorder is the user's code (not JAX itself)."""
    frame: Optional[FrameType] = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename == _SELF or filename.endswith(_PASS_THROUGH)):
            return not filename.startswith(library_dirs)
        frame = frame.f_back
    return False


class Recorded:
    """A compiled function made by the user's code: each call's value is recorded."""

    def __init__(self, fn):
        self._fn = fn
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(self, name, getattr(fn, name))
            except AttributeError:
                pass
        self.__wrapped__ = getattr(fn, "__wrapped__", fn)

    def __call__(self, *args, **kwargs):
        from jaxmigrate.verify import _hooks

        if _hooks.is_suppressed():
            return self._fn(*args, **kwargs)
        live = live_inputs((args, kwargs))
        out = self._fn(*args, **kwargs)
        if not _has_tracer(out):
            _hooks.record(self._observed(out), deleted_inputs(live), getattr(self, "__name__", ""))
        return out

    def _observed(self, out):
        """What is recorded of the output ``out``."""
        return out

    def __getattr__(self, name):
        return getattr(self._fn, name)

    @property  # type: ignore[misc]
    def __class__(self):
        """The compiled function's own class, which ``isinstance`` reads when ``type`` is not it: a
        program's test ``isinstance(f, jax.xla.xe.PjitFunction)`` answers as without the recorder."""
        return type(self._fn)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)


def _has_tracer(tree) -> bool:
    import jax

    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(tree))


def _recording(factory, library_dirs):
    @functools.wraps(factory)
    def make(*args, **kwargs):
        if not args:  # jax.jit(static_argnums=...) used as a decorator factory
            return functools.partial(make, **kwargs)
        compiled = factory(*args, **kwargs)
        return Recorded(compiled) if _created_by_user(library_dirs) else compiled

    make._jaxmigrate_recording = True  # type: ignore[attr-defined]  # a marker on the wrapper function
    return make


class RecordedPmap(Recorded):
    """A pmapped function of the user's: with several processes its output (this process's part)
    is recorded as the global array of every process's parts, over a mesh of the devices grouped
    by process (or its ``devices=``, in their order) and named as pmap's axis (``"i"`` when
    unnamed, as JM706 names it), each output at its ``out_axes`` (an int, None, or a tuple of them):
    the value a ``jax.jit(jax.shard_map(...))`` over all devices computes before its output goes
    back to this process's part. Recorded as it is: with one process, with other trees of
    ``out_axes``, with ``devices=`` of this process only, or devices that make no global array."""

    def __init__(self, fn, axis_name, out_axes, devices) -> None:
        super().__init__(fn)
        self._axis_name, self._out_axes, self._devices = axis_name, out_axes, devices

    def _observed(self, out):
        import jax

        axes = self._out_axes
        plain = axes is None or isinstance(axes, int)
        if jax.process_count() == 1 or not (plain or isinstance(axes, tuple) and all(
                a is None or isinstance(a, int) for a in axes)):
            return out
        if self._devices is not None and all(d.process_index == jax.process_index() for d in self._devices):
            return out  # a pmap over this process's devices only: its output is all there is
        from jax.experimental import multihost_utils
        from jax.sharding import Mesh, PartitionSpec

        name = self._axis_name if self._axis_name is not None else "i"
        devices = list(self._devices) if self._devices is not None else [
            d for p in range(jax.process_count()) for d in jax.local_devices(p)]

        def spec(axis):
            return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, name)

        mesh = Mesh(devices[:jax.local_device_count() * jax.process_count()], (name,))
        try:
            return multihost_utils.host_local_array_to_global_array(
                out, mesh, spec(axes) if plain else tuple(spec(a) for a in axes))
        except (ValueError, RuntimeError):  # devices that do not make one global array: as it is
            return out


def _recording_pmap(pmap, library_dirs):
    """``jax.pmap`` recording the functions the user's code maps: called as ``pmap(f, ...)`` or
    through ``functools.partial(jax.pmap, axis_name=...)`` (pmap has no decorator-factory form:
    without a function it raises as JAX does)."""
    @functools.wraps(pmap)
    def make(*args, **kwargs):
        mapped = pmap(*args, **kwargs)
        if not _created_by_user(library_dirs):
            return mapped
        axis_name = args[1] if len(args) > 1 else kwargs.get("axis_name")
        return RecordedPmap(mapped, axis_name, kwargs.get("out_axes", 0), kwargs.get("devices"))

    make._jaxmigrate_recording = True  # type: ignore[attr-defined]  # a marker on the wrapper function
    return make


def call_site(name: str) -> Dict[str, Any]:
    """The function's name and the user's innermost frame outside JAX and the verifier (the
    call's file, relative to SITE_BASE when inside it, and line)."""
    frame: Optional[FrameType] = sys._getframe(1)
    hooks = os.path.join(os.path.dirname(_SELF), "")
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_library + (hooks, "<")) or filename.endswith(_PASS_THROUGH)):
            break
        frame = frame.f_back
    if frame is None:
        return {"function": name, "file": "", "line": 0}
    filename = os.path.abspath(frame.f_code.co_filename)
    base = os.path.join(os.path.abspath(SITE_BASE), "") if SITE_BASE else None
    shown = os.path.relpath(filename, base) if base and filename.startswith(base) else os.path.basename(filename)
    return {"function": name, "file": shown, "line": frame.f_lineno}


def _recording_conversion(convert):
    """``multihost_utils.host_local_array_to_global_array`` remembering what each global array
    it makes was made from (see ``live_inputs``)."""
    @functools.wraps(convert)
    def recorded(local_inputs, *args, **kwargs):
        import jax

        out = convert(local_inputs, *args, **kwargs)
        before, after = jax.tree_util.tree_leaves(local_inputs), jax.tree_util.tree_leaves(out)
        if len(before) == len(after):
            _converted.update((id(a), (a, b)) for a, b in zip(after, before) if a is not b)
        return out

    recorded._jaxmigrate_recording = True  # type: ignore[attr-defined]  # a marker on the wrapper function
    return recorded


def install_recorder(sink: Callable[[Dict[str, Any]], None]) -> None:
    """Send the observation of every compiled call made by the user's code to ``sink`` (the
    legacy pjit records itself): its value, plus ``donated``, the leaf positions of the inputs
    the call deleted."""
    import jax
    import jax._src.pjit
    import jax.experimental.pjit

    from jaxmigrate.verify import _hooks
    from jaxmigrate.verify.observe import observe

    global _library
    dirs = _library = _library_dirs()
    _hooks.set_sink(lambda value, donated, name: sink(dict(observe(value), donated=donated, site=call_site(name))))
    jax.jit = _recording(jax.jit, dirs)
    if not hasattr(jax.pmap, "_jaxmigrate_recording"):
        jax.pmap = _recording_pmap(jax.pmap, dirs)
    from jax.experimental import multihost_utils

    if not hasattr(multihost_utils.host_local_array_to_global_array, "_jaxmigrate_recording"):
        multihost_utils.host_local_array_to_global_array = _recording_conversion(
            multihost_utils.host_local_array_to_global_array)
    modern_pjit = jax._src.pjit.pjit
    if not getattr(modern_pjit, "_jaxmigrate_legacy", False) and not hasattr(modern_pjit, "_jaxmigrate_recording"):
        recorded = _recording(modern_pjit, dirs)
        jax._src.pjit.pjit = recorded
        deprecated = getattr(jax.experimental.pjit, "_deprecations", {})
        if "pjit" in deprecated:  # keep the access warning: a migrated script that still uses pjit must show it
            deprecated["pjit"] = (deprecated["pjit"][0], recorded)
        else:
            jax.experimental.pjit.pjit = recorded


