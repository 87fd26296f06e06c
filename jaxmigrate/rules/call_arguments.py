"""JM804: a call of a JAX function with arguments the target release rejects, from JAX's
signature history."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.statements import drop_argument
from jaxmigrate.analysis.values import binding_scope
from jaxmigrate.catalog.api_history import exists, predecessors, status
from jaxmigrate.catalog.keyword_renames import (
    KEYWORD_DEPRECATIONS,
    KEYWORD_NO_OP_DEFAULTS,
    KEYWORD_RENAMES,
    KEYWORD_VALUE_RENAMES,
    POSITIONAL,
)
from jaxmigrate.catalog.owners import call_owner
from jaxmigrate.catalog.signatures import Signature, Signatures, history
from jaxmigrate.core.findings import Edit, Finding, Fix
from jaxmigrate.prefilter import WORD_BYTES as _WORD_BYTES, file_words, raw
from jaxmigrate.rules.base import Example, Rule, snippet

_SPACE = frozenset(b" \t\r\n")


def _passed_as_keyword(data: bytes, word: bytes) -> bool:
    """Whether ``word`` is passed as a keyword argument somewhere in ``data``: after ``(`` or
    ``,`` and before ``=`` (not ``==``), spaces and line breaks between (``bytes.find``, no
    regex to compile for each file's set of words)."""
    i = data.find(word)
    size = len(data)
    while i != -1:
        before = i - 1
        while before >= 0 and data[before] in _SPACE:
            before -= 1
        after = i + len(word)
        if before >= 0 and data[before] in b"(," and (i == 0 or _WORD_BYTES[data[i - 1]] == 32):
            while after < size and data[after] in _SPACE:
                after += 1
            if after < size and data[after] == 61 and (after + 1 == size or data[after + 1] != 61):
                return True
        i = data.find(word, i + 1)
    return False


def _spelled_through(data: bytes, at: int) -> Optional[bytes]:
    """The word before the dot of a name at ``at`` (``mlir`` in ``mlir.aval_to_ir_type(``), or
    None for a name called bare (imported by name)."""
    if at == 0 or data[at - 1] != 46:
        return None
    start = at - 1
    while start > 0 and _WORD_BYTES[data[start - 1]] != 32:
        start -= 1
    return data[start:at - 1]


_DROPPING: Dict[int, Dict[bytes, Tuple[FrozenSet[bytes], ...]]] = {}


def _dropping(sigs) -> Dict[bytes, Tuple[FrozenSet[bytes], ...]]:
    """The last word of every function that stopped taking some keyword -> how its module is
    spelled (``Signatures.dropped_by`` of every keyword, merged): once per table."""
    found = _DROPPING.get(id(sigs))
    if found is None:
        merged: Dict[bytes, set] = {}
        for keyword in sigs.keyword_bytes:
            for last, spellings in sigs.dropped_by(keyword).items():
                merged.setdefault(last, set()).update(spellings)
        found = _DROPPING[id(sigs)] = {last: tuple(spellings) for last, spellings in merged.items()}
    return found


def _calls_of(data: bytes, name: bytes) -> Iterator[int]:
    """Where the arguments of each call of ``name`` start (``name(`` or ``module.name(``, the
    name not part of a longer word): found with ``bytes.find``, much faster than a regex here."""
    call = name + b"("
    i = data.find(call)
    while i != -1:
        if i == 0 or _WORD_BYTES[data[i - 1]] == 32:
            yield i + len(call)
        i = data.find(call, i + 1)


_KEYWORD_START = re.compile(rb"\s*\w+\s*=(?!=)")
_SPLAT_START = re.compile(rb"\s*\*")
_LAMBDA = re.compile(rb"\s*lambda\b")
_SIGNIFICANT = re.compile(rb"[()\[\]{},#'\"]")
_SPLAT = 1 << 30  # what ``_positional_count`` says of a call with a `*` or `**` argument, or unclear bytes
_LIMIT = 4000  # bytes of a call's arguments looked at before it is taken as a candidate


def _positional_count(data: bytes, start: int, enough: int = _SPLAT) -> int:
    """How many arguments before the first keyword argument the call whose ``(`` ends at
    ``start`` passes, read from the bytes (strings and comments skipped), counted up to
    ``enough``. ``_SPLAT`` for a call with a `*` or `**` argument, and where the bytes are not
    clear: the prefilter then lets the file through."""
    return _scan(data, start, enough)[0]


def _double_splat(data: bytes, start: int) -> bool:
    """Whether the call whose ``(`` ends at ``start`` has a ``**`` argument (read from the bytes,
    strings not told apart: a `**` in one lets the file through)."""
    depth, i, end = 0, start, min(len(data), start + _LIMIT)
    while i < end:
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth == 0:
                return False
            depth -= 1
        elif c == 42 and depth == 0 and data[i + 1:i + 2] == b"*" and data[start:i].rstrip()[-1:] in (b"", b","):
            return True
        i += 1
    return False


def _passes_keyword(data: bytes, start: int) -> bool:
    """Whether the call whose ``(`` ends at ``start`` may pass a keyword argument (or its bytes
    are not clear)."""
    count, keyword = _scan(data, start, _SPLAT)
    return keyword or count == _SPLAT


def _scan(data: bytes, start: int, enough: int) -> Tuple[int, bool]:
    """``_positional_count``, and whether the count stopped at a keyword argument."""
    depth, count, end = 0, 0, min(len(data), start + _LIMIT)
    arg_start = i = start
    while True:
        if i == arg_start:
            lam = _LAMBDA.match(data, i)
            if lam is not None:  # its parameters' commas are not the call's
                i = data.find(b":", lam.end())
                if i == -1:
                    return _SPLAT, False
        found = _SIGNIFICANT.search(data, i, end)
        if found is None:
            return _SPLAT, False
        i = found.start()
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth == 0:
                if _SPLAT_START.match(data, arg_start):
                    return _SPLAT, False
                if _KEYWORD_START.match(data, arg_start):
                    return count, True
                if data[arg_start:i].strip():
                    count += 1
                return count, False
            depth -= 1
        elif c == 44:  # a comma: between the call's arguments only at depth 0
            if depth == 0:
                if _SPLAT_START.match(data, arg_start):
                    return _SPLAT, False
                if _KEYWORD_START.match(data, arg_start):
                    return count, True
                count += 1
                if count > enough:
                    return count, False
                arg_start = i + 1
        elif c == 35:  # a comment, to the end of its line
            i = data.find(b"\n", i)
            if i == -1:
                return _SPLAT, False
        else:  # a quote: to the next one of its kind that is not escaped
            close = data.find(data[i:i + 1], i + 1)
            while close != -1 and data[close - 1] == 92:
                close = data.find(data[i:i + 1], close + 1)
            if close == -1:
                return _SPLAT, False
            i = close
        i += 1


@lru_cache(maxsize=None)
def _judged(qualname: str) -> bool:
    """Whether calls of ``qualname`` are this rule's: a JAX function or class with a signature
    history whose calls no hand-written rule rewrites (pjit's keywords: JM101, ...)."""
    return qualname.startswith("jax.") and call_owner(qualname) is None and history().has(qualname)


#: the functions with a keyword in ``KEYWORD_RENAMES``, ``KEYWORD_VALUE_RENAMES`` or ``KEYWORD_DEPRECATIONS``
_TABLED = frozenset(q for q, _ in (*KEYWORD_RENAMES, *KEYWORD_VALUE_RENAMES, *KEYWORD_DEPRECATIONS))


@lru_cache(maxsize=4096)
def _quiet(qualname: str, at: int) -> Optional[Tuple[FrozenSet[Optional[str]], int, Tuple[str, ...]]]:
    """For a function this rule has nothing to say about as long as a call passes only
    keywords it takes plainly, no more positional arguments than it takes, and binds its leading
    parameters without a default: (those keywords, the most positional arguments, the names of
    those parameters). None for the others (renamed, moved, hidden deprecations): their calls go
    the long way."""
    sigs = history()
    sig = sigs.at(qualname, at)
    if sig is None or sig.most_positional is None or sig.required_keywords:
        return None
    if qualname in _TABLED:
        return None
    leading = tuple(p.name for p in sig.params[:sig.fewest_positional])
    return frozenset(sig.plain_keywords), sig.most_positional, leading


@lru_cache(maxsize=8192)
def _required_since(qualname: str, at: int, positional: int, keywords: FrozenSet[str]):
    return history().required_since(qualname, at, positional, keywords)


@lru_cache(maxsize=8192)
def _resolved(qualname: str, at: int, target: Optional[Tuple[int, ...]]) -> Optional[Tuple[Signature, str, str, str]]:
    """(signature, the name the code calls, the name judged, how to name it) for a call of
    ``qualname`` at release ``at``, or None where there is nothing to judge it by."""
    sigs = history()
    sig = sigs.at(qualname, at)
    old_name = qualname  # whose history says what the code was written against
    as_of = ""
    if sig is None and exists(qualname, target):  # its definition took a form the history cannot read
        known = sigs.last_known(qualname, at)
        if known is None:
            return None
        sig, last = known
        as_of = f" (its parameters as last read from JAX's source, at {last})"
    if sig is None:  # removed at the target: judged by the name JM801 renames it to, if any
        found = status(qualname, target)
        if found is None or not found.rename or not found.replacement:
            return None
        qualname = found.replacement
        sig = sigs.at(qualname, at)
        if sig is None:
            return None
    shown = (f"`{qualname}`" if old_name == qualname else f"`{qualname}` (the new name of `{old_name}`)") + as_of
    return sig, old_name, qualname, shown


#: (keyword, function's last part, its module's parts) of ``KEYWORD_DEPRECATIONS``, as bytes
_HIDDEN_WORDS = tuple((keyword.encode(), qualname.rpartition(".")[2].encode(), frozenset(qualname.encode().split(b".")[:-1]))
                      for qualname, keyword in KEYWORD_DEPRECATIONS)


def _bound(partial: ast.Call) -> ast.Call:
    """The call a ``functools.partial(f, *args, **keywords)`` makes, as far as it binds: ``f(*args,
    **keywords)`` (the same nodes, in a call of its own)."""
    return ast.copy_location(ast.Call(func=partial.args[0], args=partial.args[1:], keywords=partial.keywords), partial)


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
    at the target), more positional arguments than it now takes, a parameter without a default
    that came since the call was written (`mlir.aval_to_ir_type(aval)`, `(ctx, aval)` since
    0.10.1), and a `*args` or `**kwargs` splat into a function that dropped parameters (which
    the source cannot show it does not pass). A `**` of a dict the module shows (a literal with
    string keys or `dict(k=v)`, or a name bound once to one and read only by `**`) is read as
    the keywords it passes: a renamed key is renamed in the dict (safe, where every `**` of it
    goes to the same function; else reported), a deprecated or removed one is reported at the
    key, and a dict that passes nothing lost says nothing. Only changes are reported: a keyword the function
    never took by the target is left alone (one it never took is Python's to report; one newer
    than the target is not legacy, as JM801 leaves newer names alone). A class whose
    construction the history stopped being able to read (a `__new__`, a decorator) is judged by
    its last recorded parameters, and the message says so. A function JM801 renames is checked
    against its new name's parameters (`jax.core.gensym(suffix)` is not a migrated call of
    `jax.extend.core.gensym`, which takes no argument). Calls a hand-written rule rewrites
    (`pjit`: JM101/JM701, `with_sharding_constraint`: JM102, `xmap`, `shard_map`,
    `device_put_sharded`, GDAs) are left to it. `jax.jit(backend=)` and `device=`, which
    warn from inside a helper the history cannot see, are reported with the `device_put` to
    write instead. The arguments a `functools.partial` of a JAX function binds are checked as
    a call's (`@functools.partial(jax.checkpoint, concrete=False)`), except for the parameters
    it leaves to later calls.

    A removed keyword passed with its old default, which asked for nothing, is removed
    (`jax.checkpoint(f, concrete=False)`: any `concrete` raises from 0.10.0); a partial left
    binding nothing becomes the function (`@jax.checkpoint`). Another value is reported with
    what JAX's own message says to write (`static_argnums`).

    Keywords JAX renamed are rewritten where the target has the new name (`jnp.clip(a_min=,
    a_max=)` → `min=`/`max=`, `jnp.reshape(newshape=)` → `shape=`, `jnp.percentile(...,
    interpolation=)` → `method=`, `jax.local_devices(host_id=)` → `process_index=`,
    `jnp.clip(a=x)` → `jnp.clip(x)`, `jax.export.export(lowering_platforms=)` →
    `platforms=`, `jnp.linalg.pinv(rcond=)` → `rtol=`, `jax.scipy.special.beta(x=, y=)` →
    `a=`, `b=`), and reported as needing a newer JAX where it does not (`min=` exists from
    0.4.27: a project pinned to 0.4.26 keeps `a_min`). A keyword replaced by another with other
    values is rewritten with JAX's own translation (`jax.pure_callback(vectorized=True)` →
    `vmap_method="legacy_vectorized"`, `False` → `"sequential"`), a variable's value reported.
    Such a keyword is reported even where the target's `**kwargs` takes it: it no longer raises
    but is passed on (`pure_callback` hands `vectorized=` to the callback, from 0.10.0); other
    keywords a `**kwargs` takes keep their meaning (`jnp.pad(constant_values=)`) and pass.

    ## Why is this bad?
    The call raises a `TypeError` on the target release, or warns that it soon will: code that
    imports cleanly still fails when it runs. Fix safety: the renames are safe (JAX renamed the
    parameter, the values mean the same), and so are removing a keyword that passes its old
    default and a value rename (the translation JAX itself made while the old keyword lasted).
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
        text = raw(data)
        for last in sigs.function_bytes & words:
            spelled_as = [(n, r, module) for parts, n, r, module in sigs.shrunk_by(last) if parts <= words]
            if not spelled_as:
                continue
            fewest = min((n for n, _, _ in spelled_as if n is not None), default=_SPLAT)
            needed = {module: r for _, r, module in spelled_as if r is not None}
            for end in _calls_of(text, last):
                count = _positional_count(text, end, fewest)
                if count > fewest:
                    return True
                # too few: only where the call is spelled `name(` or `module.name(`, not as a
                # method of some object (`x.reshape(...)` is everywhere)
                if needed:
                    module = _spelled_through(text, end - len(last) - 1)
                    if count < (max(needed.values()) if module is None else needed.get(module, 0)):
                        return True
        # a function that stopped taking `**kwargs`, called with a keyword
        for last in sigs.any_keyword.keys() & words:
            if any(parts <= words for parts in sigs.any_keyword[last]) and any(
                    _passes_keyword(text, end) for end in _calls_of(text, last)):
                return True
        # a keyword counts where a function that dropped it is spelled too (its module's words and its own)
        spelled = set()
        candidates = set()
        for keyword in sigs.keyword_bytes & words:
            by_last = sigs.dropped_by(keyword)
            found = {last for last in by_last.keys() & words if any(parts <= words for parts in by_last[last])}
            if found:
                candidates.add(keyword)
                spelled |= found
        for word, function, parts in _HIDDEN_WORDS:  # warned of by a helper: not in the data
            if word in words and function in words and parts <= words:
                candidates.add(word)
        if any(_passed_as_keyword(text, keyword) for keyword in candidates):
            return True
        # a `**` splat into a function that dropped keywords: the source cannot show what it passes
        # (the keyword need not be spelled anywhere: `jax.pmap(f, **options)`)
        if b"**" not in text:
            return False
        if any(_positional_count(text, end) == _SPLAT for last in spelled for end in _calls_of(text, last)):
            return True
        return any(_double_splat(text, end) for last, spellings in _dropping(sigs).items()
                   if last in words and any(parts <= words for parts in spellings) for end in _calls_of(text, last))

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
                    calls.append((call, qualname, call))
                elif isinstance(call, ast.Call) and call.args and call.args[0] is node \
                        and ctx.qualname(call.func) == "functools.partial":
                    calls.append((_bound(call), qualname, call))
        calls.sort(key=lambda item: (item[2].lineno, item[2].col_offset))
        for call, qualname, written in calls:
            yield from self._call(ctx, call, qualname, sigs, at, written)

    def _call(self, ctx: FileContext, call: ast.Call, qualname: str, sigs: Signatures, at: int,
              written: ast.Call) -> Iterator[Finding]:
        """The findings of one call, or of the arguments a ``functools.partial`` binds (``call``
        is then the call they make, ``written`` the partial's: later calls pass the rest)."""
        quiet = _quiet(qualname, at)
        if quiet is not None:  # a function whose parameters did not break by the target: the call fits?
            plain, fits, leading = quiet
            given = len(call.args)
            if given <= fits and all(k.arg in plain for k in call.keywords) and not any(
                    a.__class__ is ast.Starred for a in call.args) and (
                    given >= len(leading) or all(any(k.arg == name for k in call.keywords) for name in leading[given:])):
                return
        resolved = _resolved(qualname, at, ctx.target)
        if resolved is None:
            return
        sig, old_name, qualname, shown = resolved
        newest = len(sigs.versions) - 1
        keywords: List[Tuple[ast.keyword, bool]] = [(k, True) for k in call.keywords if k.arg is not None]
        if any(k.arg is None for k in call.keywords):
            lost = self._lost_keywords(sigs, old_name, sig, at)
            shown_dicts = [_visible_dict(ctx, k.value, qualname) for k in call.keywords if k.arg is None]
            if lost and any(d is None for d in shown_dicts):
                names = ", ".join(f"`{k}`" for k in lost)
                yield self.finding(ctx, call.func, f"{shown} no longer takes {names} at the target: check that "
                                   "the `**` arguments of this call do not pass them")
            elif lost:  # every `**` is a dict the module shows: its keys are the keywords it passes
                keywords += [(k, d.fixable) for d in shown_dicts if d is not None for k in d.keys]
        for keyword, editable in keywords:
            assert keyword.arg is not None  # the `**` ones are left out above
            param = sig.keyword(keyword.arg)
            hidden = KEYWORD_DEPRECATIONS.get((qualname, keyword.arg))
            if hidden is not None and param is not None and ctx.target_at_least(hidden[0]):
                since, instead = hidden
                yield self.finding(ctx, keyword, f"keyword `{keyword.arg}` of `{qualname}` is deprecated since JAX "
                                   f"{since} (every call warns)", suggestion=instead.format(value=ctx.text(keyword.value)))
                continue
            if param is not None and not param.deprecated:
                if (qualname, keyword.arg) in KEYWORD_RENAMES:
                    yield from self._renamed(ctx, written, keyword, qualname, sigs, at, newest, True, editable)
                continue
            if param is None and sig.var_keywords and (qualname, keyword.arg) not in KEYWORD_VALUE_RENAMES:
                continue  # `**kwargs` takes it (`jnp.pad(constant_values=)`, named until 0.2.8, means what it
                # meant); a keyword of the table falls into it with another meaning: `pure_callback(vectorized=)`
            if param is None and sigs.keyword_change(old_name, keyword.arg, at) is None:
                # never named it by the target: a keyword of a newer JAX is not legacy (as JM801
                # leaves names newer than the target alone), and one it never took is Python's to
                # say, unless it took any keyword (`**kwargs`) then and no longer does
                dropped = sigs.any_keyword_until(old_name, at)
                if dropped is not None:
                    params = ", ".join(p.name for p in sig.params)
                    yield self.finding(ctx, keyword, f"{shown} takes no keyword `{keyword.arg}` since JAX {dropped}, "
                                       f"when it stopped taking any keyword (`**kwargs`); its parameters now: "
                                       f"{params}: remove it or pass what it meant another way")
                continue
            yield from self._renamed(ctx, written, keyword, qualname, sigs, at, newest, False, editable)
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

        if not splat and not any(k.arg is None for k in call.keywords) and written is call:
            # as the call will be once its renamed keywords are fixed (their findings are above); a
            # partial's later calls pass the parameters it leaves unbound
            renamed = [KEYWORD_RENAMES.get((qualname, k.arg), k.arg) for k in call.keywords if k.arg]
            passed = frozenset(k for k in renamed if k != POSITIONAL)
            required = _required_since(qualname, at, given + renamed.count(POSITIONAL), passed)
            if required is not None:
                missing, since = required
                names = ", ".join(f"`{m}`" for m in missing)
                params = ", ".join(p.name for p in sig.params)
                yield self.finding(ctx, call.func, f"{shown} takes {names} without a default since JAX {since} "
                                                   f"(its parameters now: {params}): this call leaves a parameter "
                                                   "unbound")

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
                 sigs: Signatures, at: int, newest: int, future: bool, editable: bool = True) -> Iterator[Finding]:
        """The finding of a keyword the history renamed or removed; ``editable``: whether its text
        may be changed (a key of a dict that other calls read may not)."""
        for found in self._renamed_findings(ctx, call, keyword, qualname, sigs, at, newest, future):
            if found.fix is not None and keyword not in call.keywords and not (editable and _is_rename(found.fix, keyword)):
                # a key of a dict: renamed in place, or, where other calls read the dict, by a person
                why = "the dict goes to other calls too" if not editable else "the key is not written as a plain name"
                found = replace(found, fix=None, message=f"{found.message} (a key of the `**` dict; {why})")
            yield found

    def _renamed_findings(self, ctx: FileContext, call: ast.Call, keyword: ast.keyword, qualname: str,
                          sigs: Signatures, at: int, newest: int, future: bool) -> Iterator[Finding]:
        old = keyword.arg or ""
        deprecated, removed = sigs.keyword_change(qualname, old, newest) or (None, None)
        when = _version_list(deprecated, removed)
        if future and not when:
            return  # a keyword the history never deprecated: nothing to say
        head = f"keyword `{old}` of `{qualname}` was {when}" if when else f"`{qualname}` takes no keyword `{old}`"
        sig = sigs.at(qualname, at)
        passed_on = not future and sig is not None and sig.var_keywords and sig.keyword(old) is None
        if passed_on:  # no error: the function's `**kwargs` takes it
            head += ", and at the target its `**kwargs` takes it and passes it on (no error of its own)"
        if (qualname, old) in KEYWORD_VALUE_RENAMES:
            yield from self._value_renamed(ctx, call, keyword, qualname, sigs, head)
            return
        new = KEYWORD_RENAMES.get((qualname, old))
        if new is None:
            no_op = KEYWORD_NO_OP_DEFAULTS.get((qualname, old))
            if no_op is not None:
                default, raises, instead = no_op
                head = f"keyword `{old}` of `{qualname}` was {_version_list(deprecated, None)}; any value raises " \
                       f"from {raises}" + (f" and {removed} removed it" if removed else "")
            if no_op is not None and ctx.text(keyword.value) == default:
                yield self.finding(ctx, keyword, f"{head}: it passes the old default, which asked for nothing: "
                                                 "remove it", self._drop_fix(ctx, call, keyword))
            elif no_op is not None:
                yield self.finding(ctx, keyword, f"{head}: use {instead}", suggestion=instead.split(" for ")[0])
            else:
                yield self.finding(ctx, keyword, f"{head}; the target does not take it: remove it or pass what it "
                                                 "meant another way")
            return
        if new == POSITIONAL:
            since = sigs.positional_since(qualname)
            spelled = "the first positional argument"
        else:
            since = sigs.keyword_since(qualname, new)
            spelled = f"`{new}=`"
        if since is None or not ctx.target_at_least(since):
            needs = f"; {spelled} needs jax>={since}" if since else ""
            yield self.finding(ctx, keyword, f"{head}{needs}: keep `{old}` until the project requires it")
            return
        if new != POSITIONAL and any(k.arg == new for k in (*call.keywords, *_siblings(keyword))):
            yield self.finding(ctx, keyword, f"{head}, and the call passes `{new}=` as well (it raises on every "
                                             f"release that has both): drop `{old}=` and keep the value that is meant")
            return
        fix = self._rename_fix(ctx, call, keyword, new)
        message = f"{head}: use {spelled}"
        code = self._suggested(ctx, keyword, new)
        yield self.finding(ctx, keyword, message, fix, suggestion=None if fix else code, replacement=code)

    def _value_renamed(self, ctx: FileContext, call: ast.Call, keyword: ast.keyword, qualname: str,
                       sigs: Signatures, head: str) -> Iterator[Finding]:
        """A keyword JAX replaced by another whose values are spelled differently
        (``KEYWORD_VALUE_RENAMES``): rewritten where the value is one of the table's, else reported
        with the mapping."""
        old = keyword.arg or ""
        new, values = KEYWORD_VALUE_RENAMES[(qualname, old)]
        since = sigs.keyword_since(qualname, new)
        if since is None or not ctx.target_at_least(since):
            needs = f"; `{new}=` needs jax>={since}" if since else ""
            yield self.finding(ctx, keyword, f"{head}{needs}: keep `{old}` until the project requires it")
            return
        mapping = ", ".join(f"`{old}={a}` is `{new}={b}`" for a, b in values.items())
        if any(k.arg == new for k in call.keywords):
            yield self.finding(ctx, keyword, f"{head}, and the call passes `{new}=` as well (it raises on every "
                                             f"release that has both): drop `{old}=` ({mapping})")
            return
        value = values.get(ctx.text(keyword.value))
        if value is None:  # a flag: both of the values, chosen as the flag chooses
            choice = (f"{new}={values['True']} if {ctx.text(keyword.value)} else {values['False']}"
                      if set(values) == {"True", "False"} else None)
            yield self.finding(ctx, keyword, f"{head}: use `{new}=` ({mapping})", suggestion=choice)
            return
        code = f"{new}={value}"
        start, end = ctx.span(keyword)
        fix = Fix("safe", edits=(Edit(start, end, code),))
        yield self.finding(ctx, keyword, f"{head}: use `{code}` (as JAX translated it while it was deprecated)",
                           fix, replacement=code)

    @staticmethod
    def _drop_fix(ctx: FileContext, call: ast.Call, keyword: ast.keyword) -> Fix:
        """Drop ``keyword`` from ``call``; a ``functools.partial`` left binding nothing becomes the
        function it names (``partial(jax.checkpoint)`` is ``jax.checkpoint``)."""
        if ctx.qualname(call.func) == "functools.partial" and len(call.args) == 1 and call.keywords == [keyword]:
            return Fix("safe", edits=(ctx.replace(call, ctx.text(call.args[0])),),
                       drop_unused_imports=importer(ctx).root_import(call.func))
        return Fix("safe", edits=(drop_argument(ctx, call, keyword),))

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


@dataclass
class _ShownDict:
    """The keywords a ``**`` argument passes, where the module shows its dict: each key as a
    keyword at the key's name (marked ``_jm_key``, its dict's keys in ``_jm_siblings``);
    ``fixable``: whether a key may be renamed (the dict goes to calls of this one function alone)."""
    keys: List[ast.keyword]
    fixable: bool


def _siblings(keyword: ast.keyword) -> List[ast.keyword]:
    return getattr(keyword, "_jm_siblings", [])


def _is_rename(fix: Fix, keyword: ast.keyword) -> bool:
    """Whether ``fix`` only rewrites the name of ``keyword``, a dict key written as a plain name."""
    return getattr(keyword, "_jm_key", False) and len(fix.edits) == 1 and not fix.statement_edits \
        and not fix.add_imports


def _visible_dict(ctx: FileContext, expr: ast.expr, qualname: str) -> Optional[_ShownDict]:
    """The dict a ``**expr`` argument passes, where its keys are all visible: a literal with
    string keys, ``dict(k=v, ...)``, or a name bound once to one of those and read only as ``**name``."""
    fixable = True
    if isinstance(expr, ast.Name):
        stmt = ctx.single_assignment(expr)
        if stmt is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            return None
        for read in ctx.names_bound_by(expr.id, binding_scope(ctx, expr)):
            if read is stmt.targets[0]:
                continue
            splat = ctx.parent(read)
            call = ctx.parent(splat) if isinstance(splat, ast.keyword) and splat.arg is None else None
            if not isinstance(call, ast.Call) or not isinstance(read.ctx, ast.Load):
                return None  # read for something else: it may change, or its keys matter elsewhere
            fixable = fixable and _owner_call(ctx, call) == qualname
        expr = stmt.value
    keys = _dict_keys(ctx, expr)
    if keys is None:
        return None
    for key in keys:
        key._jm_siblings = keys  # type: ignore[attr-defined]  # read by _siblings
    return _ShownDict(keys, fixable)


def _owner_call(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """The function ``call`` calls, through ``functools.partial`` too."""
    callee = ctx.qualname(call.func)
    if callee == "functools.partial" and call.args:
        return ctx.qualname(call.args[0])
    return callee


def _dict_keys(ctx: FileContext, expr: ast.expr) -> Optional[List[ast.keyword]]:
    """The keys of a dict display or ``dict(k=v)`` call as keywords at their names, or None. A
    display's key in other than plain single-line quotes gets no rename (``_jm_key`` unset)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" \
            and not expr.args and not ctx.bindings(expr.func) and all(k.arg is not None for k in expr.keywords):
        for k in expr.keywords:
            k._jm_key = True  # type: ignore[attr-defined]  # its name is the key
        return list(expr.keywords)
    if not isinstance(expr, ast.Dict):
        return None
    out = []
    for key, value in zip(expr.keys, expr.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
            return None
        keyword = ast.keyword(arg=key.value, value=value, lineno=key.lineno, col_offset=key.col_offset + 1,
                              end_lineno=key.end_lineno, end_col_offset=(key.end_col_offset or 1) - 1)
        keyword._jm_key = ctx.text(key)[1:-1] == key.value  # type: ignore[attr-defined]  # plain quotes
        out.append(keyword)
    return out
