"""One process of one side: ``python -m jaxmigrate.verify._child --side before|after ...``.

Started by the runner with ``JAX_PLATFORMS=cpu`` and the host-platform device-count flag in its
environment. In order: import jax; with several processes ``jax.distributed.initialize`` on
127.0.0.1 (the script's own call then does nothing); the legacy runtime on the before side; the
recorder around ``jax.jit`` and the modern pjit entry points; the script, run as ``__main__``;
then its observations are pickled to ``--out``: every compiled call's value in call order, the
observable module globals at exit, and the uncaught exception if any.
"""

from __future__ import annotations

import argparse
import builtins
import functools
import os
import pickle
import sys
import time
import traceback
import types
import warnings
from typing import Any, Dict, List

_SELF = os.path.abspath(__file__)
_PASS_THROUGH = ("functools.py", "contextlib.py")


def _library_dirs():
    """JAX, jaxlib and the verifier itself (the legacy runtime's own jit is not the user's)."""
    import jax
    import jaxlib

    verify_dir = os.path.dirname(_SELF)
    return tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, jaxlib)) + (verify_dir + os.sep,)


def _created_by_user(library_dirs) -> bool:
    """Whether the nearest caller outside the recorder is the user's code (not JAX itself)."""
    frame = sys._getframe(2)
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

        out = self._fn(*args, **kwargs)
        if not _hooks.is_suppressed() and not _has_tracer(out):
            _hooks.record(out)
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

    make._jaxmigrate_recording = True
    return make


def install_recorder(calls: List[Dict[str, Any]]) -> None:
    """Record the value of every compiled call made by the user's code (legacy pjit records itself)."""
    import jax
    import jax._src.pjit
    import jax.experimental.pjit

    from jaxmigrate.verify import _hooks
    from jaxmigrate.verify.observe import observe

    _hooks.set_sink(lambda value: calls.append(observe(value)))
    dirs = _library_dirs()
    jax.jit = _recording(jax.jit, dirs)
    modern_pjit = jax._src.pjit.pjit
    if not getattr(modern_pjit, "_jaxmigrate_legacy", False) and not hasattr(modern_pjit, "_jaxmigrate_recording"):
        recorded = _recording(modern_pjit, dirs)
        jax._src.pjit.pjit = recorded
        deprecated = getattr(jax.experimental.pjit, "_deprecations", {})
        if "pjit" in deprecated:  # keep the access warning: a migrated script that still uses pjit must show it
            deprecated["pjit"] = (deprecated["pjit"][0], recorded)
        else:
            jax.experimental.pjit.pjit = recorded


def run_script(path: str, filename: str, namespace: Dict[str, Any]):
    """Run the script as ``__main__``; returns the uncaught exception's description or None."""
    with open(path, "rb") as f:
        source = f.read()
    module = types.ModuleType("__main__")
    module.__dict__.update(namespace)
    module.__file__ = filename
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [filename]
    sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
    try:
        exec(compile(source, filename, "exec"), module.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return _describe(exc), module.__dict__
    except BaseException as exc:  # noqa: BLE001 - the script's failure is an observation
        return _describe(exc), module.__dict__
    return None, module.__dict__


def deprecations(caught) -> List[str]:
    """The distinct deprecation messages the script caused (DeprecationWarning, FutureWarning)."""
    seen: List[str] = []
    for w in caught:
        if issubclass(w.category, (DeprecationWarning, FutureWarning)):
            text = f"{w.category.__name__}: {str(w.message).splitlines()[0]}"
            if text not in seen:
                seen.append(text)
    return seen


def _describe(exc: BaseException) -> Dict[str, str]:
    kind = type(exc)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    tb = traceback.format_exception(kind, exc, exc.__traceback__)
    return {"type": name, "message": str(exc), "traceback": "".join(tb[-12:])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m jaxmigrate.verify._child")
    parser.add_argument("--side", choices=["before", "after"], required=True)
    parser.add_argument("--script", required=True, help="the file to run")
    parser.add_argument("--filename", help="the name it runs under (__file__); default: --script")
    parser.add_argument("--out", required=True)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)

    times = {"start": time.time()}
    import jax

    times["import"] = time.time()
    if args.processes > 1:
        # JAX binds its coordinator service to [::]:port (every interface) unless told otherwise
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{args.port}", num_processes=args.processes,
                                   process_id=args.process_id, initialization_timeout=10,
                                   coordinator_bind_address=f"127.0.0.1:{args.port}")
    jax.distributed.initialize = lambda *a, **k: None  # the script's own call: done above, or not needed
    times["initialize"] = time.time()
    if args.side == "before":
        from jaxmigrate.verify.legacy import install

        install()
    calls: List[Dict[str, Any]] = []
    install_recorder(calls)
    times["setup"] = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        warnings.simplefilter("always", FutureWarning)
        exception, namespace = run_script(args.script, args.filename or args.script, {})
    times["run"] = time.time()

    from jaxmigrate.verify.observe import observe_globals

    result = {
        "side": args.side, "process": args.process_id, "calls": calls,
        "globals": observe_globals(namespace), "exception": exception, "times": times,
        "deprecations": deprecations(caught),
    }
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, args.out)
    sys.stdout.flush()
    sys.stderr.flush()
    if args.processes > 1:
        try:
            jax.distributed.shutdown()
        except Exception:  # noqa: BLE001 - the observations are written; the runner ends the rest
            pass
    os._exit(0)


if __name__ == "__main__":
    main()
