"""JM201: moved sharding names (`maps.Mesh`, `experimental.PartitionSpec`, ...) → `jax.sharding`."""

from __future__ import annotations

from typing import ClassVar, Tuple

from jaxmigrate.catalog.moves import MOVES, REMOVED_MODULES, REMOVED_NAMES
from jaxmigrate.prefilter import name_triggers
from jaxmigrate.rules.base import Example, snippet
from jaxmigrate.rules.moved_name_base import CONFIG_NAMES, MovedNameRule


class MovedShardingName(MovedNameRule):
    """
    ## What it does
    Rewrites imports and uses of JAX names that moved, from one table: `jax.experimental.maps.Mesh`
    and the lowercase `maps.mesh(devices, names)` context manager → `jax.sharding.Mesh`;
    `jax.experimental.PartitionSpec`, `jax.experimental.pjit.PartitionSpec` and
    `jax.interpreters.pxla.PartitionSpec` → `jax.sharding.PartitionSpec`;
    `jax.experimental.pjit.NamedSharding` and `MeshPspecSharding` → `jax.sharding.NamedSharding`;
    `OpShardingSharding` → `GSPMDSharding` (for targets before 0.6.0, where it still exists);
    `jax.experimental.pjit.with_sharding_constraint` → `jax.lax.with_sharding_constraint`;
    `jax.experimental.gda_serialization` → `jax.experimental.array_serialization`;
    `from jax.config import config` → `from jax import config` and `import jax.config` → `import jax`
    (the submodule is gone since 0.4.29); `jax.sharding.use_mesh` → `jax.set_mesh` (0.7.1).

    An import is rewritten in place (aliases such as `P` or `PS` are kept, and a `from` import
    that mixes moved and other names is split, a comment on a moved name's line going with it);
    a dotted use such as `maps.Mesh(...)` is replaced by a name the module already has for the
    new object, else `jax.sharding.Mesh` through an imported `jax`, else a new import. An import
    of the removed `jax.experimental.maps` module, or of the removed `FROM_GDA`, that nothing
    uses any more is dropped (JM503 migrates the uses of `FROM_GDA`).

    ## Why is this bad?
    These names were removed from JAX between 0.4.8 and 0.4.14 (`jax.experimental.maps` is
    gone entirely in current releases): the import fails before any code runs.
    """

    code = "JM201"
    name = "moved-sharding-name"
    summary = "moved sharding names (`maps.Mesh`, `experimental.PartitionSpec`, ...) → `jax.sharding`"
    fix_safety = "safe"
    # the names of the table (and the removed modules), in the words of the file; `jax.config.config`
    # (the config submodule) has patterns of its own: its parts alone ("config") would let most files in
    triggers, _module_parts = name_triggers(
        [m.old for m in MOVES if m.rule == "JM201" and m.old not in CONFIG_NAMES] + list(REMOVED_MODULES)
        + list(REMOVED_NAMES))
    requires: ClassVar[Tuple[Tuple[bytes, ...], ...]] = (_module_parts,)
    deprecated_in = "0.4.4"
    removed_in = "0.4.11"
    replacement_since = "0.4.1"
    history_names = ("jax.experimental.maps.Mesh", "jax.experimental.PartitionSpec")
    examples: ClassVar[Tuple[Example, ...]] = (
        Example(
            snippet("""
                from jax.experimental import PartitionSpec as PS
                from jax.experimental.maps import Mesh
            """),
            snippet("""
                from jax.sharding import Mesh
                from jax.sharding import PartitionSpec as PS
            """),
            title="imports keep their aliases (an aliased name on a line of its own, in isort's order)",
        ),
        Example(
            snippet("""
                import jax
                from jax.experimental import maps

                def run(devices):
                    with maps.mesh(devices, ("dp", "mp")):
                        pass
            """),
            snippet("""
                import jax

                def run(devices):
                    with jax.sharding.Mesh(devices, ("dp", "mp")):
                        pass
            """),
            title="the lowercase `maps.mesh` context manager becomes a `Mesh`",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import pjit, PartitionSpec as P
            """),
            snippet("""
                from jax.experimental.pjit import pjit
                from jax.sharding import PartitionSpec as P
            """),
            title="a mixed import is split",
        ),
        Example(
            snippet("""
                from jax.experimental.pjit import (
                    pjit,  # still here
                    PartitionSpec as P,  # the spec alias
                    FROM_GDA,
                )
            """),
            snippet("""
                from jax.experimental.pjit import (
                    pjit,  # still here
                )
                from jax.sharding import PartitionSpec as P  # the spec alias
            """),
            title="comments go with their names; the removed `FROM_GDA`, unused, is dropped",
        ),
        Example(
            snippet("""
                class Config:
                    mesh_axes = ("data",)

                def build(cfg, mesh):
                    return mesh.shape, cfg.mesh_axes
            """),
            title="`.mesh` and `.mesh_axes` on other objects are not JAX's",
        ),
    )

    removals = True
