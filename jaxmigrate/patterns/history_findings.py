"""What the API-history rules report: each reference with its message and fix, as plain data.

A name a hand-written rule owns (``catalog/owners.py``: the moved names, `pjit`, ...) is that
rule's: it is not reported here, at its import or its uses."""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Tuple, cast

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.import_layout import name_key
from jaxmigrate.analysis.imports import importer
from jaxmigrate.analysis.names import canonical
from jaxmigrate.analysis.values import type_comparison
from jaxmigrate.catalog.api_history import Status, Version, entry, exists, is_private, status
from jaxmigrate.catalog.array_classes import DISTINGUISH, DISTINGUISH_NEEDS, GAINS
from jaxmigrate.catalog.owners import owner
from jaxmigrate.catalog.renames import CALL_CODE, CALLS, DROP_INS, FUNCTION_TYPES, MODULE_ALIASES, TYPE_TESTS
from jaxmigrate.core.findings import Fix, FixSafety
from jaxmigrate.patterns.api_references import Reference, references
from jaxmigrate.patterns.array_tests import array_test, describe, use_kind
from jaxmigrate.patterns.call_advice import call_code
from jaxmigrate.patterns.function_types import function_type_advice
from jaxmigrate.patterns.gda import same_answer_with_array
from jaxmigrate.patterns.renames import call_fix, in_type_test, rename_fix, rewrite_from_import, rewrite_use
from jaxmigrate.patterns.trace_snapshots import STATE, SUBLEVEL, snapshot_fix

SNAPSHOT_READS = (STATE, SUBLEVEL)
#: (reference, message, fix, the code to write)
Found = Tuple[Reference, str, Optional[Fix], Optional[str]]
#: (what to use instead, as message text; the code to write; the fix)
Advice = Tuple[Optional[str], Optional[str], Optional[Fix]]


def history_findings(ctx: FileContext, wanted: Callable[[Reference], bool]) -> Iterator[Found]:
    """(reference, message, fix, code) for each reference ``wanted`` selects. A name bound by a
    ``from`` import whose fix renames it is not reported at its uses: the import's fix is theirs too."""
    fixed_imports = set()
    out: List[Found] = []
    for ref in references(ctx):
        if not wanted(ref) or _owned(ref):
            continue
        advice, code, fix = _replacement(ctx, ref)
        if ref.is_import and fix is not None:
            fixed_imports.add(id(ref.node))
        out.append((ref, _message(ctx, ref, advice), fix, code))
    out = _one_fix_per_import(ctx, out)
    for found in out:
        ref = found[0]
        if ref.via_import is None or id(ref.via_import) not in fixed_imports:
            yield found


def _one_fix_per_import(ctx: FileContext, found: List[Found]) -> List[Found]:
    """The renames of several names of one ``from`` import, as one fix that moves them all,
    shared by their findings: each finding's own fix rewrites the whole statement, so they would
    take a round each (an import of 11 moved names: 11 rounds, past the engine's limit). The names
    go in isort's order, as the engine's join of written imports keeps them."""
    by_statement: Dict[int, List[int]] = {}
    for i, (ref, _, fix, code) in enumerate(found):
        if ref.is_import and fix is not None and code and all(p.isidentifier() for p in code.split(".")) \
                and isinstance(ref.statement, ast.ImportFrom) and isinstance(ref.node, ast.alias) \
                and not fix.statement_edits and not fix.add_imports and not fix.last:
            by_statement.setdefault(id(ref.statement), []).append(i)
    for indexes in by_statement.values():
        safeties = {found[i][2].safety for i in indexes}  # type: ignore[union-attr]  # fixes, selected above
        if len(indexes) < 2 or len(safeties) != 1:
            continue
        statement = found[indexes[0]][0].statement
        moved = sorted(((found[i][0].node, found[i][3] or "") for i in indexes), key=lambda m: name_key(m[1].rpartition(".")[2]))
        shared = Fix(safeties.pop(), edits=tuple(rewrite_from_import(ctx, statement, moved)))  # type: ignore[arg-type]
        for i in indexes:
            ref, message, _, code = found[i]
            found[i] = (ref, message, shared, code)
    return found


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
        text += f"; {advice}" if advice.startswith("there is no") else f": use {advice}"
    elif st.replacement and st.replacement_since and not is_private(st.replacement) and not exists(st.replacement, ctx.target):
        text += f"; its replacement `{st.replacement}` only exists from JAX {st.replacement_since}, after the target"
    elif st.state == "removed":
        text += " and has no drop-in replacement"
    if ref.via_import is not None:
        text += " (imported above)"
    if st.state == "removed" and ctx.runs_at_import(ref.statement or ref.node):
        text += "; it runs at import, so the module does not import"
    return text


#: call transforms whose name, where the transform does not take the use (not called, ``*args``),
#: is renamed as the history says: ``seed_with_impl`` is ``jax.extend.random.seed_with_impl``
RENAMED_UNCALLED = frozenset({"jax.prng.seed_with_impl"})


def _replacement(ctx: FileContext, ref: Reference) -> Advice:
    """(what to use instead at the target, as message text; the code; the fix) for one reference."""
    st = ref.status
    if ref.spelled in FUNCTION_TYPES and not ref.is_import and isinstance(ref.node, ast.expr):
        return function_type_advice(ctx, ref.node, ref.spelled)
    transform = CALLS.get(st.qualname)
    if transform is not None and not ref.is_import and st.qualname not in CALL_CODE:
        call_name, _, keyword = transform.partition("/")
        fix = call_fix(ctx, ref, transform)
        if call_name == "second-argument":
            call = ctx.parent(ref.node)
            plain = isinstance(call, ast.Call) and call.func is ref.node and len(call.args) == 2
            second = ctx.text(call.args[1]) if plain else None  # type: ignore[union-attr]  # a call: plain
            return "its second argument (it returned it unchanged)", second, fix
        if fix is None and st.qualname in RENAMED_UNCALLED:
            pass  # not a call the transform takes: the history's rename below
        elif exists(call_name, ctx.target):
            parent = ctx.parent(ref.node)
            if keyword.startswith("with") and not (isinstance(parent, ast.Call) and parent.func is ref.node):
                value = call_name if keyword == "with" else f"functools.partial({call_name}, False)"
                return f"`{value}` (it is named as a value, to be called later)", value, fix
            code = {"with": f"with {call_name}(...):", "with-False": f"with {call_name}(False):",
                    "no-arguments": f"{call_name}()",
                    "key-shape": "jax.eval_shape(lambda seed: jax.random.key_data(jax.random.key(seed)), 0).shape",
                    "seed-with-impl": f"{call_name}(seed, impl=impl)",
                    }.get(keyword, f"{call_name}(..., {keyword}=True)")
            if keyword.startswith("impl:"):
                code = f'{call_name}(seed, impl="{keyword[5:]}")'
            if keyword == "key-shape":
                return f"`{code}` for its `key_shape` (the shape of a default key's data)", code, fix
            return f"`{code}`", code, fix
    if st.qualname in SNAPSHOT_READS and not ref.is_import:
        snapshot = snapshot_fix(ctx, ref.node)
        if snapshot is not None:
            return ("`jax.extend.core.get_opaque_trace_state()`, unsafe: the snapshot of the trace state this function "
                    "builds becomes JAX's opaque one (it compares with `==` as the tuple did; its parts cannot be read)",
                    "jax.extend.core.get_opaque_trace_state()", snapshot)
    if st.qualname in CALL_CODE and (ref.spelled == st.qualname or ref.spelled.startswith(st.qualname + ".")):
        needs, advice = CALL_CODE[st.qualname]
        if all(exists(name, ctx.target) for name in needs):  # the call rewritten where CALLS has it
            fix = call_fix(ctx, ref, transform) if transform is not None and not ref.is_import else None
            return advice, call_code(ctx, st.qualname, ref.node), fix
    new, how, old = replacement_name(ref.spelled, st, ctx.target)
    if new is None:
        return None, None, None
    if how == "same-name":
        return f"`{new}` (the same name under `jax.extend`: check that it does what the old one did)", new, None
    if old in TYPE_TESTS and not ref.is_import and isinstance(ref.node, ast.expr):
        key_test = _key_test_fix(ctx, ref.node, old)
        if key_test is not None:
            return key_test
    if how == "drop-in" or old in TYPE_TESTS:
        safety: FixSafety = "safe"
        advice = f"`{new}`"
        if new == "jax.Array" and old in GAINS:  # a removed array class: every array is a jax.Array now
            verdict, advice, to_write = _array_class_use(ctx, ref, old)
            if verdict == "report":
                return advice, to_write, None
            safety = "unsafe" if verdict == "unsafe" else "safe"
        if how != "drop-in":
            return advice, new, None
        if st.qualname != ref.spelled and not ref.is_import and ref.via_import is None and isinstance(ref.node, ast.expr):
            return advice, new, rewrite_use(ctx, ref.node, ref.spelled, new, safety)  # through a moved module
        return advice, new, rename_fix(ctx, ref, new, safety)
    fix = rename_fix(ctx, ref, new, "safe") if st.rename and st.replacement == new else None
    if (fix is None and st.qualname in MODULE_ALIASES and new != st.replacement and not ref.is_import
            and ref.via_import is None and isinstance(ref.node, ast.expr)):
        fix = rewrite_use(ctx, ref.node, ref.spelled, new, "safe")  # `jax.ad.X`: the module's own `X`
    return f"`{new}`", new, fix


#: (verdict: "safe", "unsafe" or "report"; the message's advice; the code to write)
Use = Tuple[str, str, Optional[str]]


def _array_class_use(ctx: FileContext, ref: Reference, old: str) -> Use:
    """A removed array class (``catalog/array_classes.py``) whose drop-in is `jax.Array`: safe in an
    annotation; in a type test that told it from other arrays (a sibling branch for arrays or
    tracers), or of a class no test of `jax.Array` tells apart, reported with the test to write;
    in another type test, or used as a value (a registry key), an unsafe rename whose message says
    what `jax.Array` takes besides. An import is judged by the worst of its name's uses."""
    if not ref.is_import:
        return _class_use(ctx, ref.node, old)  # type: ignore[arg-type]  # a use: a Name or Attribute
    local = cast(str, getattr(ref.node, "asname", None) or getattr(ref.node, "name", "")).split(".")[0]
    judged = [(n, _class_use(ctx, n, old)) for n in ctx.names(local) if isinstance(n.ctx, ast.Load)]
    reported = [n for n, (verdict, _, _) in judged if verdict == "report"]
    if reported:
        lines = ", ".join(sorted({str(n.lineno) for n in reported}))
        return ("report", f"`jax.Array` in annotations; its type test on line {lines} told it from other arrays "
                "(see there)", "jax.Array")
    unsafe = next(((n, found) for n, found in judged if found[0] == "unsafe"), None)
    if unsafe is not None:
        node, (_, advice, _) = unsafe
        return "unsafe", advice.replace("this use", f"its use on line {node.lineno}", 1), "jax.Array"
    return "safe", "`jax.Array`", "jax.Array"


def _class_use(ctx: FileContext, node: ast.expr, old: str) -> Use:
    kind = use_kind(ctx, node)
    gains = GAINS[old]
    if kind == "annotation":
        return "safe", "`jax.Array`", "jax.Array"
    made = ctx.parent(node)
    if isinstance(made, ast.Call) and made.func is node:  # `jax.Array(...)` raises: it takes no arguments
        parts = [ctx.text(a) for a in made.args if not isinstance(a, ast.Starred)]
        shape = f"{parts[0]}.shape" if len(parts) >= 2 else "shape"
        arrays = parts[-1] if len(parts) >= 2 else "arrays"
        return ("report", "`jax.make_array_from_single_device_arrays(shape, sharding, arrays)` from the per-device "
                "arrays (`jax.Array` cannot be constructed)",
                f"jax.make_array_from_single_device_arrays({shape}, sharding, {arrays})")
    if kind == "value":
        return ("unsafe", f"`jax.Array`, unsafe: this use is no type test or annotation, and no array's type is "
                f"`jax.Array` itself (an abstract base class): a lookup by `type(x)` misses every array, one by "
                f"isinstance also takes {gains}", "jax.Array")
    call = ctx.parent(node)
    if isinstance(call, ast.Tuple):
        call = ctx.parent(call)
    value = "x"
    if isinstance(call, ast.Call) and len(call.args) == 2:
        value = ctx.text(call.args[0])
    elif kind == "comparison":
        value = type_comparison(ctx, node) or "x"
    if kind == "comparison":
        code = distinguishing_test(ctx, old, value) or f"isinstance({value}, jax.Array)"
        return ("report", f"`{code}` (an array's type is never `jax.Array`, an abstract base class; every array "
                "and tracer is an instance of it)", code)
    if old in TYPE_TESTS and in_type_test(ctx, node):  # isinstance/issubclass of a key or sharded type
        return _type_test_advice(ctx, node, old, value)
    if same_answer_with_array(ctx, node):  # `assert isinstance(x, C)`: it only stops failing for other arrays
        return "safe", "`jax.Array`", "jax.Array"
    test = array_test(ctx, node)
    if test is not None and test.sibling is not None:
        code = distinguishing_test(ctx, old, value) or "jax.Array"
        return ("report", f"`{code}`: this test told it from what {describe(ctx, test.sibling)} takes, and "
                f"`isinstance({value}, jax.Array)` also takes {gains}", code)
    went = f"; they went to {test.other_path} before" if test is not None and test.other_path else ""
    return "unsafe", f"`jax.Array`, unsafe: every array is one now, so this test also takes {gains}{went}", "jax.Array"


def distinguishing_test(ctx: FileContext, old: str, value: str) -> Optional[str]:
    """The test that still tells ``old`` (a removed array class) apart, for ``value``, where the target has its names."""
    template = DISTINGUISH.get(old)
    if template is None or not all(exists(name, ctx.target) for name in DISTINGUISH_NEEDS):
        return None
    return template.format(value)


def _key_test_fix(ctx: FileContext, node: ast.expr, old: str) -> Optional[Advice]:
    """``isinstance(name, KeyArray)`` (a name, the class alone): the key test written out,
    ``(isinstance(name, jax.Array) and jax.dtypes.issubdtype(name.dtype, jax.dtypes.prng_key))``,
    which is True for typed keys and their tracers and False for raw keys and anything else, as
    the class test was. Unsafe: the test is rewritten, not renamed."""
    test = TYPE_TESTS[old]
    call = ctx.parent(node)
    if (test is None or not exists("jax.dtypes.prng_key", ctx.target) or not isinstance(call, ast.Call)
            or not isinstance(call.func, ast.Name) or call.func.id != "isinstance" or call.keywords
            or len(call.args) != 2 or call.args[1] is not node or not isinstance(call.args[0], ast.Name)
            or ctx.qualname(call.func) is not None):
        return None
    value = call.args[0].id
    array, imports = importer(ctx).reference("jax.Array", at=call)
    dtypes, more = importer(ctx).reference("jax.dtypes", at=call, dotted=True)
    code = f"isinstance({value}, {array}) and {test.format(value).replace('jax.dtypes', dtypes)}"
    holder = ctx.parent(call)
    alone = isinstance(holder, (ast.If, ast.While, ast.Assert)) and holder.test is call or (
        isinstance(holder, (ast.Assign, ast.Return)) and holder.value is call)
    fix = Fix("unsafe", edits=(ctx.replace(call, code if alone else f"({code})"),), add_imports=(*imports, *more),
              drop_unused_imports=importer(ctx).root_import(node))
    return (f"`{code}`, unsafe: the test for a key written out (every array is a `jax.Array`, raw keys too)",
            code, fix)


def _type_test_advice(ctx: FileContext, node: ast.expr, old: str, value: str) -> Use:
    """A type that ``TYPE_TESTS`` lists, in an ``isinstance`` test: what to test instead, where
    something tells the old type apart, else the annotation's type with a caveat."""
    test = TYPE_TESTS[old]
    if test is not None and exists("jax.dtypes.prng_key", ctx.target):
        key_test = test.format(value)
        return "report", f"`{key_test}` to test for a key (every array is a `jax.Array`, raw keys too)", key_test
    code = distinguishing_test(ctx, old, value)
    if code is not None:
        where = ", beside the tuple's other classes" if isinstance(ctx.parent(node), ast.Tuple) else ""
        return "report", f"`{code}` to tell it apart{where} (every array and tracer is a `jax.Array` now)", code
    return ("report", "`jax.Array` in annotations; in an `isinstance` test it holds for every array and tracer, so it "
            "no longer tells this type apart", "jax.Array")


def replacement_name(spelled: str, st: Status, target: Optional[Version]) -> Tuple[Optional[str], str, str]:
    """The name to use instead of ``spelled`` (judged ``st``) at ``target``, always one the target
    has, and how it was found: ``drop-in`` (the hand table), ``history`` (the name JAX pointed
    to, followed through a moved module: ``jax.pxla.X`` is ``jax.interpreters.pxla.X``, or what
    that name became), ``same-name`` (the same name under ``jax.extend``, which the history has
    at the target); and the old name it replaces (``jax.interpreters.pxla.X`` for ``jax.pxla.X``).
    (None, "", spelled) where none is known."""
    if st.qualname == spelled:
        curated = DROP_INS.get(st.qualname)
        if curated is not None and exists(curated, target):
            return curated, "drop-in", spelled
        new = _public(st, target)
        if new is not None:
            return new, "history", spelled
        same = same_name(st.qualname, target)
        return (same, "same-name", spelled) if same is not None else (None, "", spelled)
    new = _public(st, target)
    if new is None and DROP_INS.get(st.qualname) is not None and exists(DROP_INS[st.qualname], target):
        return DROP_INS[st.qualname], "history", spelled  # `DeviceArray.item`: the type's drop-in, no rename
    found = entry(new) if new is not None else None
    if new is None or found is None or not found.module:
        return new, "history", spelled  # an attribute of a removed object: the object's replacement
    moved = new + spelled[len(st.qualname):]  # the same name in the module that replaced the removed one
    if exists(moved, target):
        return moved, "history", moved
    judged = status(moved, target)
    if judged is not None and judged.qualname == moved:
        return replacement_name(moved, judged, target)
    return None, "", spelled


def same_name(qualname: str, target: Optional[Version]) -> Optional[str]:
    """The same name under ``jax.extend``, where the target has it (``jax.core.X`` ->
    ``jax.extend.core.X``, ``jax.interpreters.mlir.X`` -> ``jax.extend.mlir.X``): the longest
    tail of the name's path that ``jax.extend`` has, with the same last part."""
    parts = qualname.split(".")
    if parts[:2] == ["jax", "extend"]:
        return None
    for start in range(1, len(parts) - 1):
        tail = parts[start:]
        if any(p.startswith("_") for p in tail):
            continue
        candidate = "jax.extend." + ".".join(tail)
        found = entry(candidate)
        if found is not None and not found.module and exists(candidate, target):
            return candidate
    return None


def _public(st: Status, target: Optional[Version]) -> Optional[str]:
    """The replacement to name, where the target has it (a private name's only when public)."""
    if st.replacement is None or (st.private and is_private(st.replacement)):
        return None
    return st.replacement if exists(st.replacement, target) else None


