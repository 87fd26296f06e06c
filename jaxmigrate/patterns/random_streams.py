"""Whether a module draws random numbers that JAX 0.5.0's new default streams change (JM904).

A module ran on a JAX before 0.5.0 when it uses a name JAX removed in 0.5.0 or earlier (it runs on
no later release) or is written for GDA-era pjit (``patterns/era.py``). Such a module's draws
(``catalog/changed_defaults.DRAWS``) give other numbers on a target from 0.5.0 on, unless it sets
``jax_threefry_partitionable`` itself. The evidence of the text as given is handed on to the fix
rounds (``streams_origin``, which the pipeline reads beside ``era.origin_facts``), whose fixes
remove the names it is made of.
"""

from __future__ import annotations

import ast
from typing import Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.api_history import parse_version
from jaxmigrate.catalog.changed_defaults import DRAWS, STREAMS_CHANGED_IN, STREAMS_FLAG
from jaxmigrate.patterns.api_references import references
from jaxmigrate.patterns.era import written_evidence

#: the key of the evidence in ``FileContext.origin``
OLD_STREAMS_ERA = "ran before the new random streams"
_CHANGED = parse_version(STREAMS_CHANGED_IN)


def written_before_new_streams(ctx: FileContext) -> Optional[str]:
    """What shows that the module ran on a JAX before 0.5.0 (`` `jax.numpy.product` at line 3,
    removed in JAX 0.4.16``), or None: of the text as given to the run, else of this text."""
    inherited = ctx.origin.get(OLD_STREAMS_ERA)
    if inherited is not None:
        return str(inherited)
    for ref in references(ctx):
        st = ref.status
        if st.state == "removed" and parse_version(st.version) <= _CHANGED:
            return f"`{ref.spelled}` at line {getattr(ref.node, 'lineno', '?')}, removed in JAX {st.version}"
    gda = written_evidence(ctx)
    return f"GDA-era pjit ({gda})" if gda is not None else None


def first_draw(ctx: FileContext) -> Optional[Tuple[ast.Call, str]]:
    """The module's first call that hashes a key (``jax.random.split``, ``normal``, ...), and its name."""
    return next(iter(ctx.calls_to(*DRAWS)), None)


def sets_streams(ctx: FileContext) -> bool:
    """Whether the module chooses its streams itself (``jax.config.update("jax_threefry_partitionable", v)``)."""
    return any(call.args and getattr(call.args[0], "value", None) == STREAMS_FLAG
               for call, _ in ctx.calls_to("jax.config.update"))


def streams_origin(ctx: FileContext) -> dict:
    """The fact later fix rounds inherit: the evidence, for a module that draws (JM904 itself asks
    whether the module sets the option)."""
    if "random" not in ctx.source or not ctx.target_at_least(STREAMS_CHANGED_IN) or first_draw(ctx) is None:
        return {}  # the draws first: a lookup, where the evidence walks the module's references
    evidence = written_before_new_streams(ctx)
    return {OLD_STREAMS_ERA: evidence} if evidence is not None else {}
