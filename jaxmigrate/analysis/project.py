"""Project facts: what a rule needs to know about other modules of the run, as a provider.

Some findings depend on more than their own file: JM701/JM702 rewrite a module only if every
module linked to it by imports can be rewritten too, and JM502 must know which functions of
other modules return GlobalDeviceArrays. A rule declares such a fact (``Rule.project_facts``),
the way a LibCST rule declares the metadata providers it reads; the engine, which knows no
rule, computes each declared fact once per run:

1. ``members``: which files contribute, from the module graph and the byte test ``wants``;
   the graph may hold other files of the project than the run's (``graph.is_given``: read for
   the plan, never fixed), and only members that bear on the run's files are wanted;
2. ``part``: each member's own part, plain data read from that file's own analysis (its
   context and its findings before any fix), cached with the file's other results;
   ``outside_part`` for a member the run does not fix, whose analysis runs only the rules of
   ``reads_codes`` (no rule is selected there: nothing is fixed);
3. ``combine``: the parts joined over the module graph, in one pass, into a value per file;
4. ``settle`` (optional): a file's findings with its value, from its findings without one.

A file's rules read its value as ``ctx.origin[provider.key]``. A file with a value runs the
rules that declared the fact even when its bytes alone would not (its meaning came from
elsewhere). Values and parts are built of tuples, strings, numbers, booleans and None: they are
hashed into cache keys, pickled to workers and stored in the cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.module_graph import ModuleGraph
    from jaxmigrate.core.findings import Finding


class ProjectFact:
    """One fact about the project; subclasses set ``key`` and implement the three steps."""

    #: where a file's rules find its value (``FileContext.origin``)
    key: str = ""
    #: rules whose findings ``part`` reads, run on the members even when not selected
    reads_codes: Tuple[str, ...] = ()
    #: which other files of the project of the run's files the fact needs read (engine/project.py):
    #: "project", every one; "imports", the modules the run's files import; "linked", the modules
    #: linked to a run's file that passes ``wants`` (one imports the other, directly or through any
    #: file), those linked to such modules, and so on
    reach: str = "project"

    def needed(self, codes: Sequence[str], files: int) -> bool:
        """Whether a run with these selected rule codes over this many files needs the fact."""
        return files > 1

    def wants(self, data: bytes) -> bool:
        """Whether a file with these bytes (a notebook: its code) may contribute a part."""
        return True

    def members(self, graph: "ModuleGraph", wanted: List[int], codes: Sequence[str]) -> List[int]:
        """The files (indexes into the run's files) whose parts ``combine`` needs."""
        return wanted

    def part(self, ctx: "FileContext", findings: List["Finding"], codes: Sequence[str]) -> Any:
        """A member's own part: from its analysis, its findings (of its rules and ``reads_codes``)
        and the codes selected for it. ``None`` when it contributes nothing."""
        raise NotImplementedError

    def outside_part(self, ctx: "FileContext", findings: List["Finding"], codes: Sequence[str]) -> Any:
        """The part of a member the run was not given (another file of its project, read for the
        plan): it keeps what it has. By default the same as ``part``."""
        return self.part(ctx, findings, codes)

    def settle(self, findings: List["Finding"], value: Any) -> Optional[List["Finding"]]:
        """A file's findings with ``value``, from its findings without one (``check`` then need not
        analyse it again), or None when only its analysis can tell (the default)."""
        return None

    def combine(self, graph: "ModuleGraph", parts: Dict[int, Any], displays: Sequence[str]) -> Dict[int, Any]:
        """The value of each file that has one (file index -> value), from the members' parts."""
        raise NotImplementedError
