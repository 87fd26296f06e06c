"""Every rule jaxmigrate knows, and selection by code or prefix."""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Type

from jaxmigrate.prefilter import anchors_of
from jaxmigrate.rules.array_device_method import ArrayDeviceMethod
from jaxmigrate.rules.base import Rule
from jaxmigrate.rules.call_arguments import CallArguments
from jaxmigrate.rules.cpu_device_names import CpuDeviceNames
from jaxmigrate.rules.deprecated_jax_name import DeprecatedJaxName
from jaxmigrate.rules.device_buffers import DeviceBuffers
from jaxmigrate.rules.device_put_sharded import DevicePutSharded
from jaxmigrate.rules.experimental_shard_map import ExperimentalShardMap
from jaxmigrate.rules.from_gda import FromGda
from jaxmigrate.rules.gda_attributes import GdaAttributes
from jaxmigrate.rules.gda_construction import GdaConstruction
from jaxmigrate.rules.host_local_inputs import HostLocalInputs
from jaxmigrate.rules.jax_array_config import JaxArrayConfig
from jaxmigrate.rules.live_buffers import LiveBuffers
from jaxmigrate.rules.make_mesh_axis_types import MakeMeshAxisTypes
from jaxmigrate.rules.mesh_context import MeshContext
from jaxmigrate.rules.moved_sharding_name import MovedShardingName
from jaxmigrate.rules.partition_spec_tuple import PartitionSpecTuple
from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources
from jaxmigrate.rules.pjit_to_jit import PjitToJit
from jaxmigrate.rules.pmap_to_shard_map import PmapToShardMap
from jaxmigrate.rules.positional_sharding import PositionalSharding
from jaxmigrate.rules.random_streams import RandomStreams
from jaxmigrate.rules.removed_jax_name import RemovedJaxName
from jaxmigrate.rules.removed_maps_api import RemovedMapsApi
from jaxmigrate.rules.removed_private_jax_name import RemovedPrivateJaxName
from jaxmigrate.rules.sharding_constraint_axis_resources import ShardingConstraintAxisResources
from jaxmigrate.rules.stack_list_arguments import StackListArguments
from jaxmigrate.rules.tree_aliases import TreeAliases

ALL_RULES: Sequence[Type[Rule]] = (  # in code order
    PjitAxisResources,
    ShardingConstraintAxisResources,
    MovedShardingName,
    RemovedMapsApi,
    JaxArrayConfig,
    LiveBuffers,
    DeviceBuffers,
    ArrayDeviceMethod,
    GdaConstruction,
    GdaAttributes,
    FromGda,
    HostLocalInputs,
    TreeAliases,
    ExperimentalShardMap,
    PjitToJit,
    MeshContext,
    PositionalSharding,
    DevicePutSharded,
    MakeMeshAxisTypes,
    PmapToShardMap,
    RemovedJaxName,
    DeprecatedJaxName,
    RemovedPrivateJaxName,
    CallArguments,
    PartitionSpecTuple,
    CpuDeviceNames,
    StackListArguments,
    RandomStreams,
)
BY_CODE: Dict[str, Type[Rule]] = {r.code: r for r in ALL_RULES}
#: the prefilter's anchors for every rule's trigger words (``prefilter.Presence``)
ANCHORS = anchors_of(word for r in ALL_RULES for group in (r.triggers, *r.requires) for word in group)


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())


def select_rules(select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None) -> List[Type[Rule]]:
    """Rules whose code starts with a selected prefix ("ALL" or none: every rule), minus ignored."""
    select = [s for s in (select or []) if s.strip()]
    chosen = []
    for rule in ALL_RULES:
        if select and "ALL" not in [s.upper() for s in select] and not _matches(rule.code, select):
            continue
        if ignore and _matches(rule.code, ignore):
            continue
        chosen.append(rule)
    return chosen


def unknown_codes(patterns: Iterable[str]) -> List[str]:
    """Patterns that match no rule code (a typo in --select or --ignore)."""
    return [p for p in patterns if p.strip() and p.upper() != "ALL" and not any(c.startswith(p.upper()) for c in BY_CODE)]
