"""Compare two sides' observations, process by process. Needs numpy only (no jax).

Integers, booleans and strings compare exactly, floats with ``np.allclose(rtol=1e-5, atol=1e-6)``
(NaNs equal). Array shapes, dtypes and shardings must match exactly; a pytree node's type, key
paths and static fields too, and then each child at its path. Globals that only the AFTER
side has are names the migration introduced and are not compared; a global the migration lost is
a difference unless its value is there under a new name (renamed). Files written compare by
value (``.npy``/``.npz``) or by bytes; the inputs each compiled call deleted (donation) too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

RTOL, ATOL = 1e-5, 1e-6


@dataclass
class Difference:
    process: int
    where: str  # "call #2", "global `out`", "exception"
    what: str  # "sharding differs", "not defined after", ...
    before: str
    after: str
    site: str = ""  # a call's function and file:line on each side
    detail: str = ""  # a value difference's first differing index and both values
    picture: str = ""  # a sharding difference: both layouts as device grids
    note: str = ""  # a layout difference JAX itself chose (``_ambient``), said so

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        try:
            return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
        except TypeError:
            pass
    return bool(np.array_equal(a, b))


def _diff_array(a: Dict[str, Any], b: Dict[str, Any]) -> Optional[str]:
    """The values are looked at before the layout: "values", "values and sharding", "sharding"."""
    for key in ("shape", "dtype"):
        if a.get(key) != b.get(key):
            return key
    if a.get("deleted") != b.get("deleted"):
        return "deleted"
    layout = a.get("sharding") != b.get("sharding")
    if (a.get("data") is None) != (b.get("data") is None):
        return "sharding" if layout else "addressability"
    if a.get("data") is not None:
        values = not _close(np.asarray(a["data"]), np.asarray(b["data"]))
    else:
        shards_a, shards_b = a.get("shards") or (), b.get("shards") or ()
        if [i for i, _ in shards_a] != [i for i, _ in shards_b]:
            return "sharding" if layout else "addressable shards"
        values = not all(_close(np.asarray(x), np.asarray(y)) for (_, x), (_, y) in zip(shards_a, shards_b))
    if values:
        return "values and sharding" if layout else "values"
    return "sharding" if layout else None


def diff(a: Dict[str, Any], b: Dict[str, Any]) -> Optional[str]:
    """What differs between two observations (a short word), or None when they agree."""
    if a["kind"] != b["kind"]:
        return "kind"
    kind = a["kind"]
    if kind == "array":
        return _diff_array(a, b)
    if kind == "number":
        if a["type"] != b["type"]:
            return "type"
        if isinstance(a["value"], (float, complex)):
            return None if _close(np.asarray(a["value"]), np.asarray(b["value"])) else "value"
        return None if a["value"] == b["value"] else "value"
    if kind == "str":
        return None if a["value"] == b["value"] else "value"
    if kind == "seq":
        if a["type"] != b["type"]:
            return "type"
        if len(a["items"]) != len(b["items"]) or a.get("length") != b.get("length"):
            return "length"
        for i, (x, y) in enumerate(zip(a["items"], b["items"])):
            inner = diff(x, y)
            if inner:
                return f"[{i}] {inner}"
        return None
    if kind == "dict":
        pairs = _dict_pairs(a["items"], b["items"])
        if pairs is None:
            return "keys"
        for k, x, y in pairs:
            inner = diff(x, y)
            if inner:
                return f"[{k}] {inner}"
        return None
    if kind == "pytree":
        if a["type"] != b["type"]:
            return "type"
        if [k for k, _ in a["items"]] != [k for k, _ in b["items"]]:
            return "pytree structure"
        inner = diff(a["aux"], b["aux"])
        if inner:
            return f"static fields (pytree aux data) {inner}"
        for (k, x), (_, y) in zip(a["items"], b["items"]):
            inner = diff(x, y)
            if inner:
                return f"{k} {inner}"
        return None
    if kind == "bytes":
        return None if (a["size"], a["sha256"]) == (b["size"], b["sha256"]) else "bytes"
    if kind == "unobservable":
        return None if a["error"] == b["error"] else "error"
    return None  # none, object: opaque, equal


def _renamed_keys() -> Dict[str, str]:
    """A keyword the migration renamed -> its new name, as dict keys observe (``repr``): a dict
    passed as ``**kwargs`` has its keys renamed with the keywords (JM804, JM101)."""
    from jaxmigrate.catalog.keyword_renames import AXIS_RESOURCES_RENAMES, KEYWORD_RENAMES, POSITIONAL

    renames = {old: new for (_, old), new in KEYWORD_RENAMES.items() if new != POSITIONAL}
    renames.update(AXIS_RESOURCES_RENAMES)
    return {repr(old): repr(new) for old, new in renames.items()}


_RENAMED_KEYS = _renamed_keys()
#: pjit's ``None`` for an axis resource meant replicated: ``P()`` under the renamed keyword
_REPLICATED = {"kind": "str", "value": "PartitionSpec()"}


def _dict_pairs(before: Sequence[Any], after: Sequence[Any]) -> Optional[List[Any]]:
    """(key, before value, after value) of two dicts' items, the before keys read through the
    keywords the migration renames where the keys differ; None where they do not match."""
    if [k for k, _ in before] == [k for k, _ in after]:
        return [(k, x, y) for (k, x), (_, y) in zip(before, after)]
    renamed = {_RENAMED_KEYS.get(k, k): (k, x) for k, x in before}
    if len(renamed) != len(before) or set(renamed) != {k for k, _ in after}:
        return None
    pairs = []
    for k, y in after:
        old, x = renamed[k]
        if old != k and "axis_resources" in old and diff(x, y) is not None and diff(_replicated(x), y) is None:
            x = y  # pjit's `None` specs are `jax.jit`'s `P()`: `(P(), None)` is `(P(), P())`
        pairs.append((k, x, y))
    return pairs


def _replicated(obs: Dict[str, Any]) -> Dict[str, Any]:
    """A spec tree's observation with its ``None`` leaves as ``P()`` (replicated in legacy pjit)."""
    if obs.get("kind") == "none":
        return _REPLICATED
    if obs.get("kind") == "seq":
        return dict(obs, items=tuple(_replicated(i) for i in obs["items"]))
    if obs.get("kind") == "dict":
        return dict(obs, items=tuple((k, _replicated(v)) for k, v in obs["items"]))
    return obs


def differs(what: str) -> str:
    return f"{what} differ" if what.endswith(" and sharding") else f"{what} differs"


def layout_only(what: str) -> bool:
    """Whether a difference (``diff``'s word, at any path) is only in where the values live, the
    values agreeing: shown after the rest."""
    if what.endswith("values and sharding"):
        return False
    return what == "sharding" or what.endswith((" sharding", "addressability", "addressable shards"))


def differing_leaves(a: Dict[str, Any], b: Dict[str, Any]):
    """The pair of observations inside ``a`` and ``b`` where ``diff`` finds their first difference."""
    if a["kind"] != b["kind"]:
        return a, b
    if a["kind"] == "seq" and len(a["items"]) == len(b["items"]):
        pairs = list(zip(a["items"], b["items"]))
    elif a["kind"] in ("dict", "pytree") and [k for k, _ in a["items"]] == [k for k, _ in b["items"]]:
        pairs = [(x, y) for (_, x), (_, y) in zip(a["items"], b["items"])]
        if a["kind"] == "pytree" and a["type"] == b["type"]:
            pairs.insert(0, (a["aux"], b["aux"]))
    else:
        return a, b
    for x, y in pairs:
        if diff(x, y):
            return differing_leaves(x, y)
    return a, b


def _mismatch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        try:
            return ~np.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
        except TypeError:
            pass
    return np.asarray(a != b)


def value_detail(a: Dict[str, Any], b: Dict[str, Any]) -> str:
    """For arrays with differing values: the first differing (global) index, both values there
    and how many elements differ; else nothing."""
    x, y = differing_leaves(a, b)
    if x["kind"] != "array" or y["kind"] != "array" or x.get("shape") != y.get("shape"):
        return ""
    if x.get("data") is not None and y.get("data") is not None:
        blocks = [((0,) * len(x["shape"]), np.asarray(x["data"]), np.asarray(y["data"]))]
    else:
        shards_b = dict(y.get("shards") or ())
        blocks = [(tuple(start for start, _ in index), np.asarray(data), np.asarray(shards_b[index]))
                  for index, data in (x.get("shards") or ()) if index in shards_b]
    count = total = 0
    first = None
    for offset, u, v in blocks:
        if u.shape != v.shape:
            return ""
        wrong = _mismatch(u, v)
        count, total = count + int(wrong.sum()), total + wrong.size
        if first is None and wrong.any():
            local = tuple(int(i) for i in np.argwhere(wrong)[0])
            first = (tuple(o + i for o, i in zip(offset, local)), u[local], v[local])
    if first is None:
        return ""
    index, u_value, v_value = first
    if not index:  # a scalar: its values are shown already
        return ""
    where = "[" + ",".join(str(i) for i in index) + "]"
    return f"first difference at {where}: before {u_value}, after {v_value}; {count} of {total} element(s) differ"


def site_text(x: Dict[str, Any], y: Dict[str, Any]) -> str:
    a, b = x.get("site"), y.get("site")
    if not a or not b:
        return ""
    name = f"`{a['function']}`" if a["function"] == b["function"] else f"`{a['function']}` / `{b['function']}`"
    return f"{name} at {a['file']}:{a['line']} (before) | {b['file']}:{b['line']} (after)"


def call_difference(process: int, where: str, what: str, x: Dict[str, Any], y: Dict[str, Any],
                    meshes: Sequence[str] = ()) -> Difference:
    """The difference ``what`` between ``x`` and ``y``, drawn; ``meshes``: those the after side
    gave ``jax.set_mesh``, to tell a layout JAX chose (``_ambient``)."""
    from jaxmigrate.verify._ambient import note
    from jaxmigrate.verify.report import sharding_picture, summarize

    detail = value_detail(x, y) if "values" in what else ""
    leaf_x, leaf_y = differing_leaves(x, y)
    picture = sharding_picture(leaf_x, leaf_y) if what.endswith("sharding") else ""
    return Difference(process, where, differs(what), summarize(x, layout=layout_only(what)),
                      summarize(y, layout=layout_only(what)), site=site_text(x, y), detail=detail, picture=picture,
                      note=note(leaf_x, leaf_y, meshes) if layout_only(what) else "")


def compare_process(before: Dict[str, Any], after: Dict[str, Any], process: int,
                    *, prefix_only: bool = False, renamed: Optional[List[str]] = None) -> List[Difference]:
    """Every difference between one process's observations on both sides.

    With ``prefix_only`` (one side stopped early) only the calls both made and the globals both
    have are compared. A global only BEFORE has whose value AFTER has under a name of its own is
    renamed, not a difference: listed in ``renamed`` when given.
    """
    from jaxmigrate.verify.report import abridge, summarize

    meshes = after.get("set_meshes") or ()
    out: List[Difference] = []
    exc_a, exc_b = before.get("exception"), after.get("exception")
    if not prefix_only and (exc_a is None) != (exc_b is None):
        show = lambda e: "(none)" if e is None else abridge(f"{e['type']}: {e['message']}")  # noqa: E731
        out.append(Difference(process, "exception", "raised on one side only", show(exc_a), show(exc_b)))
    calls_a, calls_b = before["calls"], after["calls"]
    for i, (x, y) in enumerate(zip(calls_a, calls_b), start=1):
        what = diff(x, y)
        if what:
            out.append(call_difference(process, f"call #{i}", what, x, y, meshes))
        elif x.get("donated", ()) != y.get("donated", ()):
            out.append(Difference(process, f"call #{i}", "donated inputs differ", _donated(x), _donated(y),
                                  site=site_text(x, y)))
    if len(calls_a) != len(calls_b) and not prefix_only:
        out.append(Difference(process, "compiled calls", "number differs", f"{len(calls_a)} calls", f"{len(calls_b)} calls"))
    globals_a, globals_b = before["globals"], after["globals"]
    introduced = [name for name in globals_b if name not in globals_a]
    for name, x in globals_a.items():
        if name not in globals_b:
            twin = next((n for n in introduced if diff(x, globals_b[n]) is None), None)
            if twin is not None:  # the migration renamed it (gda -> arr): the same value under another name
                introduced.remove(twin)
                if renamed is not None:
                    renamed.append(f"`{name}` is `{twin}` after" + (f" (process {process})" if process else ""))
            elif not prefix_only:
                out.append(Difference(process, f"global `{name}`", "not defined after", summarize(x), "(not defined)"))
            continue
        what = diff(x, globals_b[name])
        if what:
            out.append(call_difference(process, f"global `{name}`", what, x, globals_b[name], meshes))
    files_a, files_b = before.get("files", {}), after.get("files", {})
    for name in sorted(set(files_a) | set(files_b)):
        x, y = files_a.get(name), files_b.get(name)
        if x is None or y is None:
            if not prefix_only or x is None:
                out.append(Difference(process, f"file `{name}`", "written on one side only",
                                      "(not written)" if x is None else summarize(x),
                                      "(not written)" if y is None else summarize(y)))
            continue
        what = diff(x, y)
        if what:
            out.append(call_difference(process, f"file `{name}`", what, x, y, meshes))
    out.sort(key=lambda d: layout_only(d.what.rsplit(" ", 1)[0]))  # value differences first
    return out


def only_layouts(differences: Sequence[Difference]) -> bool:
    """Whether every difference is one of layout alone (the values agree)."""
    return bool(differences) and all(layout_only(d.what.rsplit(" ", 1)[0]) for d in differences)


def _donated(obs: Dict[str, Any]) -> str:
    donated = obs.get("donated", ())
    return f"deleted input leaves {list(donated)}" if donated else "no input deleted"
