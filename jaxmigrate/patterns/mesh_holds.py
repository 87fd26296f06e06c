"""The project fact of JM701 (pjit → jax.jit) and JM702 (`with mesh:` → `jax.set_mesh`): which
modules must keep the old API because a module linked to them by imports keeps it.

The two rewrites hold together only if they change together: `jax.jit` with bare specs sees only
`jax.set_mesh`, and a pjit sees only `with mesh:`. Each module plans them on its own
(patterns/jit_plan.py); across modules, code that runs under a mesh entered in one module creates
or calls pjit in another that it imports. So:

- the members are the modules that mention pjit or a mesh and are linked to another such module
  (one imports the other, directly or through any file: analysis/module_graph.py), or every such
  module when only one rule of the pair is selected; of the groups so linked, those with a file
  of the run (the others of the project are read only to hold the run's files);
- a member's part says whether it keeps a pjit or `with mesh:` after its own fixes, read from its
  findings before any fix: a JM701/JM702 finding without a fix stays, unless every reason that
  holds the module back is removed by another selected rule's fixes (JM503's, for `FROM_GDA`)
  that all have fixes; a use of the rule of the pair that is not selected stays too, and every use in
  a module of the project that the run was not given;
- the value of every member of a group with such a module, that has uses of its own, is why.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from jaxmigrate.analysis.module_graph import linked_groups
from jaxmigrate.analysis.project import ProjectFact
from jaxmigrate.patterns.jit_plan import HELD, PROJECT_HOLD, always_reported, held_until_fixed

if TYPE_CHECKING:
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.module_graph import ModuleGraph
    from jaxmigrate.core.findings import Finding

MESH_CODES = ("JM701", "JM702")
Part = Tuple[Optional[str], bool, bool]  # (why it keeps the old API, or None; the unselected rule's; has uses)


class MeshHolds(ProjectFact):
    key = PROJECT_HOLD
    reads_codes = MESH_CODES
    reach = "linked"  # a group holds a module linked to it either way: its importers are read too

    def needed(self, codes: Sequence[str], files: int) -> bool:
        pair = set(MESH_CODES) & set(codes)
        return bool(pair) and (files > 1 or len(pair) == 1)

    def wants(self, data: bytes) -> bool:  # a superset of what the pair looks for
        return b"pjit" in data or b"mesh" in data or b"Mesh" in data

    def members(self, graph: "ModuleGraph", wanted: List[int], codes: Sequence[str]) -> List[int]:
        alone = not set(MESH_CODES) <= set(codes)  # one of the pair: a module alone may need holding
        return [i for group in linked_groups(graph, wanted)
                if (len(group) > 1 or alone) and any(map(graph.is_given, group)) for i in group]

    def part(self, ctx: "FileContext", findings: List["Finding"], codes: Sequence[str]) -> Optional[Part]:
        mesh = [f for f in findings if f.code in MESH_CODES]
        if not mesh:
            return None
        selected = set(codes)
        unselected = [f for f in mesh if f.code not in selected]
        kept = [f for f in mesh if f.code in selected and f.fix is None]
        if kept:
            needs = held_until_fixed(ctx)
            if needs is not None and needs <= selected and all(f.fix is not None for f in findings if f.code in needs):
                # the other rules' fixes free the module: only what JM702 never fixes stays
                stay = {node.lineno for node in always_reported(ctx)}
                kept = [f for f in kept if f.code == "JM702" and f.line in stay]
        first = min([*kept, *unselected], key=lambda f: (f.line, f.column), default=None)
        uses = any(f.code in selected for f in mesh)
        if first is None:
            return (None, False, uses) if uses else None
        what = "pjit" if first.code == "JM701" else "`with mesh:`"
        if first.code not in selected:
            return f"{first.line} keeps its {what} (its rewrite is not selected there)", True, uses
        return f"{first.line} keeps its {what} ({first.code})", False, uses

    def outside_part(self, ctx: "FileContext", findings: List["Finding"], codes: Sequence[str]) -> Optional[Part]:
        """A module the run does not fix keeps every pjit and `with mesh:` it has (the engine runs only
        the pair's rules there: ``codes`` is empty)."""
        first = min((f for f in findings if f.code in MESH_CODES), key=lambda f: (f.line, f.column), default=None)
        if first is None:
            return None
        what = "pjit" if first.code == "JM701" else "`with mesh:`"
        return f"{first.line} keeps its {what} (it is not among the paths given: fix them together)", True, False

    def settle(self, findings: List["Finding"], value: Any) -> List["Finding"]:
        """A held module: every JM701/JM702 finding that had a fix says why it is held and has none
        (what the two rules report under ``module_blocker``'s project hold; the others keep theirs)."""
        return [replace(f, message=f"{f.message}; {HELD}: {value}", fix=None) if f.code in MESH_CODES and f.fix is not None
                else f for f in findings]

    def combine(self, graph: "ModuleGraph", parts: Dict[int, Any], displays: Sequence[str]) -> Dict[int, Any]:
        values: Dict[int, str] = {}
        for group in linked_groups(graph, parts):
            where = next((i for i in group if parts[i] and parts[i][0]), -1)
            if where < 0:
                continue
            why, itself, _ = parts[where]
            if len(group) == 1 and not itself:
                continue  # a module alone plans its own rewrites (jit_plan.module_blocker)
            for i in group:  # the holder too: its own rewrites would break the pjit its linked modules keep
                if parts[i] and parts[i][2]:
                    values[i] = f"line {why}" if i == where else \
                        f"{displays[where]}:{why}, and that module and this one are linked by imports"
        return values


MESH_HOLDS = MeshHolds()
