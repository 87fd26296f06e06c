"""Names JAX renamed, given back to the legacy side under their old names: from JAX's API history
(``jaxmigrate/catalog``), where it shows the old name was the very same object as a name the
installed JAX still has (``jax.numpy.product`` was ``jax.numpy.prod``). Written from JAX's history,
not from jaxmigrate's rules. They are served by each module's ``__getattr__``, so the names the
program reads are known: the report lists them as taken on trust, not verified.
"""

from __future__ import annotations

import importlib
import types
from typing import Dict, Set

#: the old names the program read in this process (for the report)
USED: Set[str] = set()
#: serve them (a test of the installed JAX itself switches this off)
ACTIVE = True


def _tie_in(x, y):
    """``jax.lax.tie_in``: returned ``y`` unchanged since omnistaging (JAX 0.2.0)."""
    return y


def _x64_managers():
    """``jax.experimental.enable_x64(new_val=True)`` and ``disable_x64()``: context managers that
    set the ``jax_enable_x64`` option inside their block (removed in JAX 0.9.0)."""
    import contextlib

    import jax

    @contextlib.contextmanager
    def enable_x64(new_val: bool = True):
        with jax.enable_x64(new_val):
            yield

    @contextlib.contextmanager
    def disable_x64():
        with jax.enable_x64(False):
            yield

    return enable_x64, disable_x64


def _serve(module: types.ModuleType, names: Dict[str, str]) -> None:
    """Give ``module`` a ``__getattr__`` that answers ``names`` (old name -> replacement's
    qualified name), recording each read, and defers to the one it had for the rest."""
    previous = module.__dict__.get("__getattr__")

    def __getattr__(name):
        if ACTIVE and name in names:
            USED.add(f"{module.__name__}.{name}")
            target_module, _, target = names[name].rpartition(".")
            return getattr(importlib.import_module(target_module), target)
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__


def install() -> None:
    """Give back, in modules the installed JAX still has, each renamed name it lacks, and
    ``jax.lax.tie_in`` and the x64 context managers with their documented behaviour."""
    import warnings

    import jax.lax

    from jaxmigrate.catalog.api_history import table

    if not hasattr(jax.lax, "tie_in"):
        jax.lax.tie_in = _tie_in
    import jax.experimental

    if not hasattr(jax.experimental, "enable_x64") and hasattr(jax, "enable_x64"):
        jax.experimental.enable_x64, jax.experimental.disable_x64 = _x64_managers()
    history = table(False)
    newest = len(history.versions) - 1
    by_module: Dict[str, Dict[str, str]] = {}
    for qualname in history.names():
        entry = history.entry(qualname)
        if entry is None or not entry.alias or history.present(entry, newest):
            continue
        owner, _, name = qualname.rpartition(".")
        by_module.setdefault(owner, {})[name] = entry.replacement
    for module_name, names in by_module.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                module = importlib.import_module(module_name)
            except Exception:  # noqa: BLE001 - a module the installed JAX lacks: nothing given back there
                continue
            served = {}
            for name, replacement in names.items():
                if name in module.__dict__:
                    continue
                try:
                    target_module, _, target = replacement.rpartition(".")
                    getattr(importlib.import_module(target_module), target)
                except Exception:  # noqa: BLE001 - the installed JAX lacks the replacement too
                    continue
                served[name] = replacement
            if served:
                _serve(module, served)
