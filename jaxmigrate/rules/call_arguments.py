"""JM804: a call of a JAX function with arguments the target release rejects, from JAX's
signature history."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import FrozenSet, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.api_history import predecessors, status
from jaxmigrate.catalog.keyword_renames import KEYWORD_DEPRECATIONS, KEYWORD_RENAMES, POSITIONAL
from jaxmigrate.catalog.owners import call_owner
from jaxmigrate.catalog.signatures import Signature, Signatures, history
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.prefilter import file_words, raw
from jaxmigrate.rules.base import Example, Rule, snippet


@lru_cache(maxsize=256)
def _keyword_search(words: FrozenSet[bytes]):
    """A search for any of ``words`` passed as a keyword argument."""
    alternatives = b"|".join(re.escape(w) for w in sorted(words))
    return re.compile(rb"[(,]\s*(?:" + alternatives + rb")\s*=(?!=)").search


@lru_cache(maxsize=256)
def _call_search(words: FrozenSet[bytes]):
    """A search for a call of any of ``words`` (``name(`` or ``module.name(``)."""
    alternatives = b"|".join(re.escape(w) for w in sorted(words))
    return re.compile(rb"\b(?:" + alternatives + rb")\s*\(").search


@lru_cache(maxsize=None)
def _judged(qualname: str) -> bool:
    """Whether calls of ``qualname`` are this rule's: a JAX function or class with a signature
    history whose calls no hand-written rule rewrites (pjit's keywords: JM101, ...)."""
    return qualname.startswith("jax.") and call_owner(qualname) is None and bool(history().runs(qualname))


@lru_cache(maxsize=4096)
def _quiet(qualname: str, at: int) -> Optional[Tuple[FrozenSet[Optional[str]], int]]:
    """For a function this rule has nothing to say about as long as a call passes only
    keywords it takes plainly and no more positional arguments than it takes, both of those:
    (the keywords, the count). None for the others (renamed, moved, hidden deprecations, splats
    to judge): their calls go the long way."""
    sigs = history()
    sig = sigs.at(qualname, at)
    if sig is None or sig.most_positional is None:
        return None
    if any(q == qualname for q, _ in KEYWORD_RENAMES) or any(q == qualname for q, _ in KEYWORD_DEPRECATIONS):
        return None
    return frozenset(sig.plain_keywords), sig.most_positional


def _version_list(deprecated: Optional[str], removed: Optional[str]) -> str:
    parts = []
    if deprecated:
        parts.append(f"deprecated in JAX {deprecated}")
    if removed:
        parts.append(f"removed in JAX {removed}" if not deprecated else f"removed in {removed}")
    return " and ".join(parts)


class CallArguments(Rule):
    """
    ## What it does
    Checks each call of a JAX function or class (public or private; a class by its own
    `__init__`) against its parameters at the target release, as JAX's signature history
    records them (generated from JAX's own source at every release tag; methods are not in
    it). Reports, at the call, a keyword argument the function no longer takes (or deprecates
    at the target), a keyword newer than the target, more positional arguments than it now
    takes, and a `*args` or `**kwargs` splat into a function that dropped parameters (which
    the source cannot show it does not pass). Only changes are reported: a keyword the function
    never took in any release is left to Python. A function JM801 renames is checked against
    its new name's parameters (`jax.core.gensym(suffix)` is not a migrated call of
    `jax.extend.core.gensym`, which takes no argument). Calls a hand-written rule rewrites
    (`pjit`: JM101/JM701, `with_sharding_constraint`: JM102, `xmap`, `shard_map`,
    `device_put_sharded`, GDAs) are left to it. `jax.jit(backend=)` and `device=`, which
    warn from inside a helper the history cannot see, are reported with the `device_put` to
    write instead.

    Keywords JAX renamed are rewritten where the target has the new name (`jnp.clip(a_min=,
    a_max=)` → `min=`/`max=`, `jnp.reshape(newshape=)` → `shape=`, `jnp.percentile(...,
    interpolation=)` → `method=`, `jax.local_devices(host_id=)` → `process_index=`,
    `jnp.clip(a=x)` → `jnp.clip(x)`, `jax.export.export(lowering_platforms=)` →
    `platforms=`, `jnp.linalg.pinv(rcond=)` → `rtol=`, `jax.scipy.special.beta(x=, y=)` →
    `a=`, `b=`), and reported as needing a newer JAX where it does not (`min=` exists from
    0.4.27: a project pinned to 0.4.26 keeps `a_min`).

    ## Why is this bad?
    The call raises a `TypeError` on the target release, or warns that it soon will: code that
    imports cleanly still fails when it runs. Fix safety: the renames are safe (JAX renamed the
    parameter, the values mean the same).
    """

    code = "JM804"
    name = "jax-call-arguments"
    summary = "calls with arguments the target JAX rejects (signature history), renamed keywords rewritten"
    fix_safety = "safe"
    triggers = (b"jax",)
    rides_along = True
    examples = (
        Example(
            snippet("""
                import jax.numpy as jnp

                def squash(x):
                    return jnp.clip(x, a_min=-1.0, a_max=1.0)
            """),
            snippet("""
                import jax.numpy as jnp

                def squash(x):
                    return jnp.clip(x, min=-1.0, max=1.0)
            """),
            title="renamed keywords, where the target has the new ones",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                def squash(x):
                    return jnp.clip(x, a_min=-1.0, a_max=1.0)
            """),
            snippet("""
                import jax.numpy as jnp

                def squash(x):
                    return jnp.clip(x, a_min=-1.0, a_max=1.0)
            """),
            flagged=True,
            target="0.4.26",
            title="reported where the target lacks the new keyword",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                flat = jnp.reshape(jnp.arange(6), newshape=(2, 3))
            """),
            snippet("""
                import jax.numpy as jnp

                flat = jnp.reshape(jnp.arange(6), shape=(2, 3))
            """),
            title="`newshape` became `shape`",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                def squash(x, bounds):
                    return jnp.clip(x, **bounds)
            """),
            snippet("""
                import jax.numpy as jnp

                def squash(x, bounds):
                    return jnp.clip(x, **bounds)
            """),
            flagged=True,
            title="a splat is reported, not guessed",
        ),
        Example(
            snippet("""
                import jax.numpy as jnp

                def squash(x):
                    return jnp.clip(x, min=-1.0, max=1.0)
            """),
            title="current keywords are left alone",
        ),
    )

    @classmethod
    def wants(cls, data) -> bool:
        """A file that calls a function that came to take fewer positional arguments (``name(``),
        or passes a keyword some release stopped taking (``word=`` after ``(`` or ``,``) and
        spells a function that stopped taking it; a function is spelled where its last part and
        every part of its module are words of the file (as the API history's prefilter asks)."""
        if b"jax" not in data:
            return False
        sigs = history()
        words = file_words(data)
        functions = frozenset(last for last in sigs.function_bytes & words
                              if any(parts <= words for parts in sigs.shrunk_bytes[last]))
        if functions and _call_search(functions)(raw(data)) is not None:
            return True
        # a keyword counts where a function that dropped it is spelled too (its module's words and its own)
        candidates = frozenset(k for k in sigs.keyword_bytes & words
                               if any(last in words and parts <= words for last, parts in sigs.dropped_bytes[k]))
        return bool(candidates) and _keyword_search(candidates)(raw(data)) is not None

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        sigs = history()
        at = sigs.index(ctx.target)
        parents = ctx.parents
        calls = []
        for qualname, nodes in ctx.resolved_names().items():
            if not _judged(qualname):
                continue
            for node in nodes:
                call = parents.get(id(node))
                if isinstance(call, ast.Call) and call.func is node:
                    calls.append((call, qualname))
        calls.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
        for call, qualname in calls:
            yield from self._call(ctx, call, qualname, sigs, at)

    def _call(self, ctx: FileContext, call: ast.Call, qualname: str, sigs: Signatures, at: int) -> Iterator[Finding]:
        quiet = _quiet(qualname, at)
        if quiet is not None:  # a function whose parameters did not break by the target: the call fits?
            plain, fits = quiet
            if len(call.args) <= fits and all(k.arg in plain for k in call.keywords) and not any(
                    a.__class__ is ast.Starred for a in call.args):
                return
        sig = sigs.at(qualname, at)
        old_name = qualname  # whose history says what the code was written against
        if sig is None:  # removed at the target: judged by the name JM801 renames it to, if any
            found = status(qualname, ctx.target)
            if found is None or not found.rename or not found.replacement:
                return
            qualname = found.replacement
            sig = sigs.at(qualname, at)
            if sig is None:
                return
        shown = f"`{qualname}`" if old_name == qualname else f"`{qualname}` (the new name of `{old_name}`)"
        newest = len(sigs.versions) - 1
        if any(k.arg is None for k in call.keywords):
            lost = self._lost_keywords(sigs, old_name, sig, at)
            if lost:
                names = ", ".join(f"`{k}`" for k in lost)
                yield self.finding(ctx, call.func, f"{shown} no longer takes {names} at the target: check that "
                                   "the `**` arguments of this call do not pass them")
        for keyword in call.keywords:
            if keyword.arg is None:
                continue
            param = sig.keyword(keyword.arg)
            hidden = KEYWORD_DEPRECATIONS.get((qualname, keyword.arg))
            if hidden is not None and param is not None and ctx.target_at_least(hidden[0]):
                since, instead = hidden
                yield self.finding(ctx, keyword, f"keyword `{keyword.arg}` of `{qualname}` is deprecated since JAX "
                                   f"{since} (every call warns)", suggestion=instead.format(value=ctx.text(keyword.value)))
                continue
            if param is not None and not param.deprecated:
                if (qualname, keyword.arg) in KEYWORD_RENAMES:
                    yield from self._renamed(ctx, call, keyword, qualname, sigs, at, newest, future=True)
                continue
            if param is None and sig.var_keywords:
                continue
            if param is None and sigs.keyword_change(old_name, keyword.arg, at) is None:
                newer = sigs.keyword_since(qualname, keyword.arg)
                if newer is not None:  # code written for a newer JAX than the target
                    yield self.finding(ctx, keyword, f"keyword `{keyword.arg}` of `{qualname}` exists from JAX {newer}, "
                                                     "after the target")
                continue  # else it never took it: not a change of JAX's, Python says so
            yield from self._renamed(ctx, call, keyword, qualname, sigs, at, newest, future=False)
        most = sig.most_positional
        given = sum(1 for a in call.args if not isinstance(a, ast.Starred))
        splat = given < len(call.args)
        before = sigs.most_positional_before(old_name, at, now=most) if most is not None else None
        if before is None and most is not None and given > most:  # the code may call the name it had before
            for older in predecessors(qualname):
                before = sigs.most_positional_before(older, at, now=most)
                if before is not None:
                    shown = f"`{qualname}` (the new name of `{older}`)"
                    break
        if before is not None and most is not None and (given > most or splat):
            took, until = before
            took_text = "any number" if took < 0 else str(took)
            passes = f"this call passes {given}" + (" and a `*` splat" if splat else "")
            yield self.finding(ctx, call.func, f"{shown} takes at most {most} positional argument"
                               f"{'s' if most != 1 else ''} since JAX {until} (it took {took_text} before); {passes}")

    def _lost_keywords(self, sigs: Signatures, qualname: str, sig: Signature, at: int) -> List[str]:
        """Keywords ``qualname`` took in some release up to ``at`` that it does not take (or
        deprecates) at ``at``."""
        if sig.var_keywords:
            return []
        seen: List[str] = []
        for run in sigs.runs(qualname):
            if run.start > at:
                break
            for p in run.signature.params:
                if p.kind in ("either", "keyword") and p.name not in seen:
                    seen.append(p.name)
        out = []
        for name in seen:
            now = sig.keyword(name)
            if now is None or now.deprecated:
                out.append(name)
        return out

    def _renamed(self, ctx: FileContext, call: ast.Call, keyword: ast.keyword, qualname: str,
                 sigs: Signatures, at: int, newest: int, future: bool) -> Iterator[Finding]:
        old = keyword.arg or ""
        deprecated, removed = sigs.keyword_change(qualname, old, newest) or (None, None)
        when = _version_list(deprecated, removed)
        if future and not when:
            return  # a keyword the history never deprecated: nothing to say
        head = f"keyword `{old}` of `{qualname}` was {when}" if when else f"`{qualname}` takes no keyword `{old}`"
        new = KEYWORD_RENAMES.get((qualname, old))
        if new is None:
            yield self.finding(ctx, keyword, f"{head}; the target does not take it: remove it or pass what it meant "
                                             "another way")
            return
        if new == POSITIONAL:
            since = self._positional_since(sigs, qualname)
            spelled = "the first positional argument"
        else:
            since = sigs.keyword_since(qualname, new)
            spelled = f"`{new}=`"
        if since is None or sigs.index(tuple(int(p) for p in since.split("."))) > at:
            needs = f"; {spelled} needs jax>={since}" if since else ""
            yield self.finding(ctx, keyword, f"{head}{needs}: keep `{old}` until the project requires it")
            return
        if new != POSITIONAL and any(k.arg == new for k in call.keywords):
            yield self.finding(ctx, keyword, f"{head}, and the call passes `{new}=` as well (it raises on every "
                                             f"release that has both): drop `{old}=` and keep the value that is meant")
            return
        fix = self._rename_fix(ctx, call, keyword, new)
        message = f"{head}: use {spelled}"
        code = self._suggested(ctx, keyword, new)
        yield self.finding(ctx, keyword, message, fix, suggestion=None if fix else code, replacement=code)

    @staticmethod
    def _positional_since(sigs: Signatures, qualname: str) -> Optional[str]:
        """The first release of the newest stretch in which the first parameter is
        positional-only (so passing it positionally is the spelling that lasts)."""
        start = None
        for run in sigs.runs(qualname):
            first = run.signature.params[0] if run.signature.params else None
            if first is not None and first.kind == "positional":
                start = run.start if start is None else start
            else:
                start = None
        return sigs.versions[start] if start is not None else None

    def _rename_fix(self, ctx: FileContext, call: ast.Call, keyword: ast.keyword, new: str) -> Optional[Fix]:
        start = ctx.offset(keyword.lineno, keyword.col_offset)
        if new == POSITIONAL:
            if call.args or call.keywords[0] is not keyword:
                return None  # moving it in front of other arguments could change what binds where
            value_start, _ = ctx.span(keyword.value)
            return Fix("safe", edits=(Edit(start, value_start, ""),))
        if ctx.source[start:start + len(keyword.arg or "")] != keyword.arg:
            return None
        return Fix("safe", edits=(Edit(start, start + len(keyword.arg or ""), new),))

    @staticmethod
    def _suggested(ctx: FileContext, keyword: ast.keyword, new: str) -> str:
        value = ctx.text(keyword.value)
        return value if new == POSITIONAL else f"{new}={value}"
