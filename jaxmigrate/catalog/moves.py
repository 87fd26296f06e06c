"""The hand table of moved and renamed JAX names, with the rule that owns each (JM201, JM601).

The one renamer (``patterns/renames.py``) rewrites their imports and uses, as it does the API
history's renames; ``catalog/owners.py`` builds from it which rule owns each name. Versions are
JAX releases: ``since`` is the first with the new name, ``until`` the first without it (None:
still there), ``removed_in`` when the old name stopped working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from jaxmigrate.catalog.api_history import parse_version as version  # one reading of "0.4.14"


@dataclass(frozen=True)
class Move:
    old: str
    new: str
    since: str
    removed_in: str
    module: bool = False  # a module path: uses keep their root and change the path
    until: Optional[str] = None
    note: str = ""
    rule: str = "JM201"  # the rule that owns the entry: JM201 (sharding names) or JM601 (the tree aliases)
    # a better spelling for dotted uses (``jax.tree_map(...)``) from version ``prefer_since`` on;
    # imports keep ``new`` (``from jax.tree import map`` would shadow the builtin)
    prefer: Optional[str] = None
    prefer_since: Optional[str] = None


MOVES: Tuple[Move, ...] = (
    Move("jax.experimental.maps.Mesh", "jax.sharding.Mesh", "0.4.1", "0.4.11"),
    # the lowercase context manager takes the same (devices, axis_names); a Mesh is a context manager
    Move("jax.experimental.maps.mesh", "jax.sharding.Mesh", "0.4.1", "0.4.11"),
    Move("jax.interpreters.pxla.Mesh", "jax.sharding.Mesh", "0.4.1", "0.4.11"),
    Move("jax.experimental.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1", "0.4.11"),
    Move("jax.experimental.pjit.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1", "0.4.11"),
    Move("jax.interpreters.pxla.PartitionSpec", "jax.sharding.PartitionSpec", "0.4.1", "0.4.11"),
    Move("jax.experimental.pjit.NamedSharding", "jax.sharding.NamedSharding", "0.4.1", "0.4.11"),
    Move("jax.experimental.sharding.NamedSharding", "jax.sharding.NamedSharding", "0.4.1", "0.4.11"),
    Move("jax.experimental.sharding.MeshPspecSharding", "jax.sharding.NamedSharding", "0.4.1", "0.4.8"),
    Move("jax.sharding.MeshPspecSharding", "jax.sharding.NamedSharding", "0.4.1", "0.4.8"),
    Move("jax.experimental.sharding.Sharding", "jax.sharding.Sharding", "0.4.1", "0.4.11"),
    Move("jax.experimental.sharding.SingleDeviceSharding", "jax.sharding.SingleDeviceSharding", "0.4.1", "0.4.11"),
    Move("jax.experimental.sharding.PmapSharding", "jax.sharding.PmapSharding", "0.4.1", "0.4.11", until="0.10.0",
         note="the pmap infrastructure and PmapSharding are gone from current JAX: use NamedSharding"),
    Move("jax.sharding.OpShardingSharding", "jax.sharding.GSPMDSharding", "0.4.5", "0.4.12", until="0.6.0",
         note="GSPMDSharding itself is deprecated since JAX 0.6.0: use NamedSharding"),
    Move("jax.experimental.sharding.OpShardingSharding", "jax.sharding.GSPMDSharding", "0.4.5", "0.4.12", until="0.6.0",
         note="GSPMDSharding itself is deprecated since JAX 0.6.0: use NamedSharding"),
    Move("jax._src.sharding.OpShardingSharding", "jax.sharding.GSPMDSharding", "0.4.5", "0.4.12", until="0.6.0",
         note="GSPMDSharding itself is deprecated since JAX 0.6.0: use NamedSharding"),
    Move("jax.experimental.pjit.with_sharding_constraint", "jax.lax.with_sharding_constraint", "0.4.1", "0.4.26"),
    Move("jax.experimental.gda_serialization", "jax.experimental.array_serialization", "0.4.9", "0.4.14", module=True),
    # the `jax.config` submodule (deprecated 0.4.25, gone in 0.4.29): `from jax.config import config`
    # becomes `from jax import config`, the same object (`import jax.config`: see MODULE_IMPORTS)
    Move("jax.config.config", "jax.config", "0.1.0", "0.4.29"),
    # use_mesh (0.5.0 until 0.7.0) was renamed set_mesh; jax.set_mesh exists from 0.7.1
    Move("jax.sharding.use_mesh", "jax.set_mesh", "0.7.1", "0.7.1"),
)

# jax.tree_* aliases: deprecated 0.4.26, removed 0.6.0; jax.tree_util.* exists in every version
MOVES += tuple(
    Move(f"jax.{old}", f"jax.tree_util.{old}", "0.1.0", "0.6.0", rule="JM601",
         prefer=f"jax.tree.{new}" if new else None, prefer_since="0.4.25" if new else None)
    for old, new in (("tree_map", "map"), ("tree_flatten", "flatten"), ("tree_leaves", "leaves"),
                     ("tree_structure", "structure"), ("tree_unflatten", "unflatten"),
                     ("tree_transpose", "transpose"), ("treedef_is_leaf", None))
)

BY_OLD: Dict[str, Move] = {m.old: m for m in MOVES}

# `import X` of a removed submodule whose names live on in its parent: `import jax.config`
# (deprecated 0.4.25, gone in 0.4.29) becomes `import jax`.
MODULE_IMPORTS: Dict[str, str] = {"jax.config": "jax"}  # only `jax` roots: see Importer.drop_alias

# Modules that no longer exist at all: an import of one that nothing uses any more is dropped.
REMOVED_MODULES = ("jax.experimental.maps",)

# Names removed with no replacement to import, and the JAX release that removed them: their uses
# are migrated by their own rule (FROM_GDA: JM503), and an import of one that nothing uses any
# more (e.g. after a fold dropped the branch that read it) is dropped by JM201, as the import
# fails on that release and later.
REMOVED_NAMES: Dict[str, str] = {"jax.experimental.pjit.FROM_GDA": "0.4.8"}  # the history's (JM503 too)


def applies(move: Move, target: Optional[Tuple[int, ...]]) -> bool:
    """Whether ``move.new`` exists in the target JAX (None: the newest release)."""
    if target is None:
        return move.until is None
    return version(move.since) <= target and (move.until is None or target < version(move.until))


def premature(move: Move, target: Optional[Tuple[int, ...]]) -> bool:
    """Whether the target predates the new name: the old one is still the right one there."""
    return target is not None and target < version(move.since)


def best_for_uses(move: Move, target: Optional[Tuple[int, ...]]) -> str:
    """The spelling a dotted use should get for the target: ``prefer`` once it exists, else ``new``."""
    if move.prefer and move.prefer_since and (target is None or target >= version(move.prefer_since)):
        return move.prefer
    return move.new
