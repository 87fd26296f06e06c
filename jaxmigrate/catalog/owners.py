"""Which rule owns a JAX name: qualified name -> rule code, built once from the hand tables.

The API-history rules (JM801-JM803) judge every JAX reference a file makes; a name listed here is
migrated by a hand-written rule, which reports it wherever it is used, so the history rules leave
it alone: the moved names of ``moves.MOVES`` (JM201, JM601; a moved module's entry covers the
names under it), and the names the rules JM701 and JM602 rewrite. Decided here, once, rather
than by comparing the rules' findings in each file.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from jaxmigrate.catalog.moves import MOVES

#: names a hand-written rule migrates at each use, besides the moved names: their deprecation
#: is reported with that rule's fix (JM802 does not report `pjit` beside JM701)
MIGRATED: Dict[str, str] = {
    "jax.experimental.pjit.pjit": "JM701",
    "jax.experimental.shard_map.shard_map": "JM602",
}

OWNERS: Dict[str, str] = {**{m.old: m.rule for m in MOVES}, **MIGRATED}

#: the moved modules, each with a trailing dot: a name under one is its owner's too
_MODULES: Tuple[str, ...] = tuple(m.old + "." for m in MOVES if m.module)


def owner(qualname: str) -> Optional[str]:
    """The code of the rule that owns ``qualname``, if a hand-written rule does."""
    found = OWNERS.get(qualname)
    if found is None and qualname.startswith(_MODULES):
        found = next(OWNERS[m[:-1]] for m in _MODULES if qualname.startswith(m))
    return found


#: functions whose calls a hand-written rule rewrites, arguments included, besides the owned
#: names above (pjit: JM701, and JM101 renames its keywords; shard_map: JM602): JM804 (the
#: signature history) leaves their calls to it
CALLS_OWNED: Dict[str, str] = {
    "jax.experimental.pjit.with_sharding_constraint": "JM102",
    "jax.lax.with_sharding_constraint": "JM102",
    "jax.experimental.maps.xmap": "JM203",
    "jax.device_put_sharded": "JM704",
    "jax.device_put_replicated": "JM704",
    "jax.experimental.global_device_array.GlobalDeviceArray": "JM501",
}


def call_owner(qualname: str) -> Optional[str]:
    """The code of the hand-written rule that rewrites calls of ``qualname``, if one does."""
    return CALLS_OWNED.get(qualname) or owner(qualname)
