"""Names JAX renamed, given back to the legacy side under their old names: from JAX's API history
(``jaxmigrate/catalog``), where it shows the old name was the very same object as a name the
installed JAX still has (``jax.numpy.product`` was ``jax.numpy.prod``). Written from JAX's history,
not from jaxmigrate's rules; each one is taken on trust, not verified, and listed as such.
"""

from __future__ import annotations

import importlib
from typing import List

#: the old names given back in this process, for the report
TAKEN_ON_TRUST: List[str] = []


def _resolve(qualname: str):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _tie_in(x, y):
    """``jax.lax.tie_in``: returned ``y`` unchanged since omnistaging (JAX 0.2.0)."""
    return y


def install() -> None:
    """Give back, in modules the installed JAX still has, each renamed name it lacks, and
    ``jax.lax.tie_in`` with its documented behaviour."""
    import jax.lax

    if not hasattr(jax.lax, "tie_in"):
        jax.lax.tie_in = _tie_in
    import warnings

    from jaxmigrate.catalog.api_history import table

    history = table(False)
    newest = len(history.versions) - 1
    for qualname in history.names():
        entry = history.entry(qualname)
        if entry is None or not entry.alias or history.present(entry, newest):
            continue
        module, _, name = qualname.rpartition(".")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parent = importlib.import_module(module)
                if hasattr(parent, name):
                    continue
                setattr(parent, name, _resolve(entry.replacement))
        except Exception:  # noqa: BLE001 - a module or replacement the installed JAX lacks: not given back
            continue
        TAKEN_ON_TRUST.append(qualname)
