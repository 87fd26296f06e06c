"""What the API-history rules report: each reference with its message and fix, as plain data.

A name a hand-written rule owns (``catalog/owners.py``: the moved names, `pjit`, ...) is that
rule's: it is not reported here, at its import or its uses."""

from __future__ import annotations

from typing import Callable, Iterator, List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.names import canonical
from jaxmigrate.catalog.api_history import Status, exists, is_private
from jaxmigrate.catalog.owners import owner
from jaxmigrate.catalog.renames import CALLS, DROP_INS
from jaxmigrate.core.findings import Fix, FixSafety
from jaxmigrate.patterns.api_references import Reference, references
from jaxmigrate.patterns.renames import call_fix, in_type_test, rename_fix

Found = Tuple[Reference, str, Optional[Fix]]


def history_findings(ctx: FileContext, wanted: Callable[[Reference], bool]) -> Iterator[Found]:
    """(reference, message, fix) for each reference ``wanted`` selects. A name bound by a ``from``
    import whose fix renames it is not reported at its uses: the import's fix is theirs too."""
    fixed_imports = set()
    out: List[Found] = []
    for ref in references(ctx):
        if not wanted(ref) or _owned(ref):
            continue
        advice, fix = _replacement(ctx, ref)
        if ref.is_import and fix is not None:
            fixed_imports.add(id(ref.node))
        out.append((ref, _message(ctx, ref, advice), fix))
    for ref, text, fix in out:
        if ref.via_import is None or id(ref.via_import) not in fixed_imports:
            yield ref, text, fix


def _owned(ref: Reference) -> bool:
    """Whether a hand-written rule owns the name: as spelled, as the hand rules resolve it
    (``jax._src.pjit.with_sharding_constraint`` is JM201's), or the name reported."""
    return (owner(ref.spelled) is not None or owner(canonical(ref.spelled)) is not None
            or owner(ref.status.qualname) is not None)


def _message(ctx: FileContext, ref: Reference, advice: Optional[str]) -> str:
    st = ref.status
    what = f"`{st.qualname}`" if st.qualname == ref.spelled else f"`{ref.spelled}`: `{st.qualname}`"
    if st.private:
        what = f"private JAX API {what}"
    verb = "was removed in" if st.state == "removed" else "is deprecated since"
    text = f"{what} {verb} JAX {st.version}"
    if advice:
        text += f": use {advice}"
    elif st.replacement and st.replacement_since and not is_private(st.replacement) and not exists(st.replacement, ctx.target):
        text += f"; its replacement `{st.replacement}` only exists from JAX {st.replacement_since}, after the target"
    elif st.state == "removed":
        text += " and has no drop-in replacement"
    if ref.via_import is not None:
        text += " (imported above)"
    return text


def _replacement(ctx: FileContext, ref: Reference) -> Tuple[Optional[str], Optional[Fix]]:
    """(what to use instead at the target, as message text; the fix) for one reference."""
    st = ref.status
    transform = CALLS.get(st.qualname)
    if transform is not None and not ref.is_import:
        call_name, _, keyword = transform.partition("/")
        if call_name == "second-argument":
            return "its second argument (it returned it unchanged)", call_fix(ctx, ref, transform)
        if exists(call_name, ctx.target):
            advice = {"with": f"`with {call_name}(...):`", "with-False": f"`with {call_name}(False):`"}.get(
                keyword, f"`{call_name}(..., {keyword}=True)`")
            return advice, call_fix(ctx, ref, transform)
    curated = DROP_INS.get(st.qualname)
    if curated is not None and exists(curated, ctx.target):
        # `isinstance(x, jax.Array)` holds for every array: it no longer tells the old type apart
        tested = _type_tested(ctx, ref) if ref.is_import else in_type_test(ctx, ref.node)
        safety: FixSafety = "unsafe" if curated == "jax.Array" and tested else "safe"
        return f"`{curated}`", rename_fix(ctx, ref, curated, safety)
    new = _public(st, ctx)
    if new is None:
        return None, None
    fix = rename_fix(ctx, ref, new, "safe") if st.rename and st.replacement == new else None
    return f"`{new}`", fix


def _public(st: Status, ctx: FileContext) -> Optional[str]:
    """The replacement to name, where the target has it (a private name's only when public)."""
    if st.replacement is None or (st.private and is_private(st.replacement)):
        return None
    return st.replacement if exists(st.replacement, ctx.target) else None


def _type_tested(ctx: FileContext, ref: Reference) -> bool:
    """Whether the name an import binds is used in an ``isinstance``/``issubclass`` test."""
    local = cast(str, getattr(ref.node, "asname", None) or getattr(ref.node, "name", ""))  # an alias's names are str
    return any(in_type_test(ctx, n) for n in ctx.names(local.split(".")[0]))
