"""Random streams: JAX 0.5.0 made ``jax_threefry_partitionable`` True, so the same key draws other numbers.

- ``track()`` (each side's process, before the program runs): every threefry hash JAX computes
  (``threefry2x32_p.bind``: ``split``, ``fold_in`` and every draw) notes the option's value it ran
  under; ``drawn()`` lists them (``[]``: nothing drawn; None: not tracked on this JAX).
- ``differ(before, after)``: whether the sides drew under different streams (or it is unknown), so
  that a divergent pair is worth running again with ``OLD_STREAMS`` on the after side (JAX reads
  ``JAX_THREEFRY_PARTITIONABLE`` at import as the option's default; a program's own
  ``jax.config.update`` still wins).
- ``reason(first)``: the reason of a pair whose values agree once the after side draws as 0.4.x did.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Dict, List, Optional, Sequence

from jaxmigrate.catalog.changed_defaults import KEEP_OLD_STREAMS as KEEP_LINE, STREAMS_FLAG as FLAG

OLD_STREAMS = {FLAG.upper(): "0"}  # JAX reads an option's default from its name in capitals
_HOMES = ("jax._src.random.threefry2x32", "jax._src.prng")
_SEEN: List[bool] = []
_TRACKED: List[bool] = []


def _primitive():
    """JAX's threefry primitive, from the module ``import jax`` loaded it in (0.9 on; before)."""
    found = [getattr(sys.modules.get(name), "threefry2x32_p", None) for name in _HOMES]
    return next((p for p in found if p is not None), None)


def track() -> None:
    """Note the option's value at every threefry hash the program makes JAX compute."""
    import jax

    primitive = _primitive()
    if primitive is None or not hasattr(jax.config, FLAG) or _TRACKED:
        return
    real = primitive.bind

    @functools.wraps(real)
    def bind(*args, **params):
        value = bool(getattr(jax.config, FLAG))
        if value not in _SEEN:
            _SEEN.append(value)
        return real(*args, **params)

    primitive.bind = bind
    _TRACKED.append(True)


def drawn() -> Optional[List[bool]]:
    return sorted(_SEEN) if _TRACKED else None


def _union(results: Sequence[Dict[str, Any]]) -> Optional[List[bool]]:
    seen: set = set()
    for result in results:
        values = result.get("streams")
        if values is None:
            return None
        seen.update(values)
    return sorted(seen)


def summary(before: Sequence[Dict[str, Any]], after: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """What each side drew under (``partitionable`` values; None: not tracked), for the verdict."""
    return {"before": _union(before), "after": _union(after), "rerun": False}


def differ(streams: Dict[str, Any]) -> bool:
    """Whether the after side may have drawn other numbers than the before side for its streams:
    it drew under the new streams where the before side drew under the old (or either is unknown)."""
    before, after = streams["before"], streams["after"]
    if after is not None and True not in after:  # nothing drawn under the new streams
        return False
    return before is None or False in before


def reason(first: str) -> str:
    return ("values agree when the after side draws random numbers as JAX 0.4.x did: JAX 0.5.0 changed the "
            f"default random streams (`{FLAG}`); to keep the old numbers add `{KEEP_LINE}` at program start "
            f"(or in conftest.py); to accept the new ones, nothing to change. With the new streams: {first}")
