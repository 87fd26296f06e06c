"""One process of one side: ``python -m jaxmigrate.verify._child --side before|after ...``.

Started by the runner with ``JAX_PLATFORMS=cpu`` and the host-platform device-count flag in its
environment, in a scratch working folder of its own (``_layout``). In order: import jax; with
several processes ``jax.distributed.initialize`` on 127.0.0.1 (the script's own call then does
nothing); the legacy runtime on the before side; the recorder (``_recorder``); the random streams' tracker
(``_streams``); the global generators seeded; the script, run as ``__main__`` the way its project runs it (``--module``
for a package module, ``--path-entry`` first on sys.path); then its observations are written as plain data to
the open file ``--out-fd`` (``_channel``: a file with no name the verifier gave it): every
compiled call's value and donated inputs in call order, the observable module globals at exit,
the files written in the working folder (and where it wrote outside it: ``_written``), and the
uncaught exception if any. Before all that,
the process ties its life to the verifier's (``_channel.bind_to_parent``).
"""

from __future__ import annotations

import argparse
import builtins
import os
import sys
import time
import traceback
import types
import warnings
from typing import Any, Dict, List, Optional, Sequence

from jaxmigrate.verify._channel import bind_to_parent, keep_private, write_result


def _drop_working_dir_from_path() -> None:
    """``python -m`` put the working directory first on sys.path: the program decides its path."""
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]


def run_script(path: str, filename: str, namespace: Dict[str, Any], *, module_name: Optional[str] = None,
               path_entries: Sequence[str] = ()):
    """Run the script as ``__main__`` (as ``python -m module_name`` when given: its package is
    imported first and relative imports work); ``path_entries`` go first on sys.path (default:
    the script's folder). Returns the uncaught exception's description (or None) and the globals."""
    with open(path, "rb") as f:
        source = f.read()
    module = types.ModuleType("__main__")
    module.__dict__.update(namespace)
    module.__file__ = filename
    module.__builtins__ = builtins  # type: ignore[attr-defined]  # not declared on ModuleType; exec reads it
    sys.argv = [filename]
    sys.path[:0] = list(path_entries) or [os.path.dirname(os.path.abspath(filename))]
    try:
        if module_name:
            import importlib
            import importlib.util

            package = module_name.rpartition(".")[0] if not filename.endswith("__init__.py") else module_name
            module.__package__ = package
            if package:
                importlib.import_module(package)
            module.__spec__ = importlib.util.find_spec(module_name)
        sys.modules["__main__"] = module
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


def _library_roots() -> tuple:
    """Folders of code that is not the user's: the standard library, installed packages, jaxmigrate."""
    import site
    import sysconfig

    roots = {sysconfig.get_paths()["stdlib"], *site.getsitepackages(), site.getusersitepackages(),
             os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    return tuple(os.path.join(os.path.abspath(r), "") for r in roots if r)


def _describe(exc: BaseException) -> Dict[str, str]:
    """The exception's type, message and last traceback lines, led by the user's own innermost
    frame (the last lines alone are JAX's and jaxmigrate's frames)."""
    kind = type(exc)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    tb = traceback.format_exception(kind, exc, exc.__traceback__)
    roots = _library_roots()
    own = [f for f in traceback.extract_tb(exc.__traceback__)
           if not f.filename.startswith("<") and not os.path.abspath(f.filename).startswith(roots)]
    lead = f"in your code: {own[-1].filename}:{own[-1].lineno}: {(own[-1].line or '').strip()}\n" if own else ""
    return {"type": name, "message": str(exc), "traceback": lead + "".join(tb[-12:])}


def main(argv=None) -> None:
    bind_to_parent()  # first: die with the verifier, before anything of the user's runs
    parser = argparse.ArgumentParser(prog="python -m jaxmigrate.verify._child")
    parser.add_argument("--side", choices=["before", "after"], required=True)
    parser.add_argument("--script", required=True, help="the file to run")
    parser.add_argument("--filename", help="the name it runs under (__file__); default: --script")
    parser.add_argument("--out-fd", type=int, required=True, help="the open file the results go to")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--module", help="run as `python -m MODULE` (a package module)")
    parser.add_argument("--path-entry", action="append", default=[], help="first on sys.path, in order")
    args = parser.parse_args(argv)
    keep_private(args.out_fd)
    workdir = os.getcwd()
    _drop_working_dir_from_path()
    from jaxmigrate.verify import _origin

    redirected = _origin.redirect()

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
    real = os.environ.get("JAXMIGRATE_VERIFY_LEGACY") == "real"  # a real legacy JAX: nothing to emulate
    if args.side == "before" and not real:
        from jaxmigrate.verify.legacy import install, install_era_defaults

        install()
        install_era_defaults()
    from jaxmigrate.verify._recorder import install_recorder, seed

    calls: List[Dict[str, Any]] = []
    from jaxmigrate.verify import _recorder

    script_dir = os.path.dirname(os.path.abspath(args.filename or args.script))
    _recorder.SITE_BASE = args.path_entry[0] if args.path_entry else script_dir
    install_recorder(calls.append)
    if args.side == "after":
        from jaxmigrate.verify import _ambient

        _ambient.track()  # the meshes given to jax.set_mesh: JAX lays out eager values on them
    from jaxmigrate.verify import _streams

    _streams.track()  # the random streams each draw ran under (the legacy era's differ from today's)
    seed()
    from jaxmigrate.verify import _written

    _written.track(workdir)
    times["setup"] = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        warnings.simplefilter("always", FutureWarning)
        exception, namespace = run_script(args.script, args.filename or args.script, {}, module_name=args.module,
                                          path_entries=args.path_entry)
    times["run"] = time.time()

    from jaxmigrate.verify import observe
    from jaxmigrate.verify._files import observe_files

    observe.RENAMED[:] = _written.temporary_names()  # the program's temporary folders, by their order

    result = {
        "side": args.side, "process": args.process_id, "calls": calls,
        "globals": observe.observe_globals(namespace), "exception": exception, "times": times,
        "files": {**observe_files(workdir), **_written.temporary_files()}, "outside": _written.outside(),
        "deprecations": deprecations(caught),
        "redirected": redirected, "foreign": _origin.foreign(), "jax_version": jax.__version__,
        "streams": _streams.drawn(),
    }
    if args.side == "after":
        result["set_meshes"] = _ambient.meshes()
    if args.side == "before" and not real:
        from jaxmigrate.verify.legacy import _renamed

        result["trusted"] = sorted(_renamed.USED)
    write_result(args.out_fd, result)
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
