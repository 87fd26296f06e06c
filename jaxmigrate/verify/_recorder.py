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
from typing import Any, Callable, Dict, Optional

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


def live_inputs(args) -> list:
    """(leaf position, array) of the inputs that are alive arrays: donation deletes some of them."""
    import jax

    out = []
    for i, leaf in enumerate(jax.tree_util.tree_leaves(args)):
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
            _hooks.record(out, deleted_inputs(live), getattr(self, "__name__", ""))
        return out

    def __getattr__(self, name):
        return getattr(self._fn, name)

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


def _recording_pmap(pmap, library_dirs):
    """``jax.pmap`` recording the functions the user's code maps: called as ``pmap(f, ...)`` or
    through ``functools.partial(jax.pmap, axis_name=...)`` (pmap has no decorator-factory form:
    without a function it raises as JAX does)."""
    @functools.wraps(pmap)
    def make(*args, **kwargs):
        mapped = pmap(*args, **kwargs)
        return Recorded(mapped) if _created_by_user(library_dirs) else mapped

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
    modern_pjit = jax._src.pjit.pjit
    if not getattr(modern_pjit, "_jaxmigrate_legacy", False) and not hasattr(modern_pjit, "_jaxmigrate_recording"):
        recorded = _recording(modern_pjit, dirs)
        jax._src.pjit.pjit = recorded
        deprecated = getattr(jax.experimental.pjit, "_deprecations", {})
        if "pjit" in deprecated:  # keep the access warning: a migrated script that still uses pjit must show it
            deprecated["pjit"] = (deprecated["pjit"][0], recorded)
        else:
            jax.experimental.pjit.pjit = recorded


