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
from typing import Any, Dict, List, Optional

import numpy as np

RTOL, ATOL = 1e-5, 1e-6


@dataclass
class Difference:
    process: int
    where: str  # "call #2", "global `out`", "exception"
    what: str  # "sharding differs", "not defined after", ...
    before: str
    after: str

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
    for key in ("shape", "dtype"):
        if a.get(key) != b.get(key):
            return key
    if a.get("deleted") != b.get("deleted"):
        return "deleted"
    if a.get("sharding") != b.get("sharding"):
        return "sharding"
    if (a.get("data") is None) != (b.get("data") is None):
        return "addressability"
    if a.get("data") is not None:
        return None if _close(np.asarray(a["data"]), np.asarray(b["data"])) else "values"
    shards_a, shards_b = a.get("shards") or (), b.get("shards") or ()
    if [i for i, _ in shards_a] != [i for i, _ in shards_b]:
        return "addressable shards"
    if not all(_close(np.asarray(x), np.asarray(y)) for (_, x), (_, y) in zip(shards_a, shards_b)):
        return "values"
    return None


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
        if [k for k, _ in a["items"]] != [k for k, _ in b["items"]]:
            return "keys"
        for (k, x), (_, y) in zip(a["items"], b["items"]):
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


def compare_process(before: Dict[str, Any], after: Dict[str, Any], process: int,
                    *, prefix_only: bool = False, renamed: Optional[List[str]] = None) -> List[Difference]:
    """Every difference between one process's observations on both sides.

    With ``prefix_only`` (one side stopped early) only the calls both made and the globals both
    have are compared. A global only BEFORE has whose value AFTER has under a name of its own is
    renamed, not a difference: listed in ``renamed`` when given.
    """
    from jaxmigrate.verify.report import abridge, summarize

    out: List[Difference] = []
    exc_a, exc_b = before.get("exception"), after.get("exception")
    if not prefix_only and (exc_a is None) != (exc_b is None):
        show = lambda e: "(none)" if e is None else abridge(f"{e['type']}: {e['message']}")  # noqa: E731
        out.append(Difference(process, "exception", "raised on one side only", show(exc_a), show(exc_b)))
    calls_a, calls_b = before["calls"], after["calls"]
    for i, (x, y) in enumerate(zip(calls_a, calls_b), start=1):
        what = diff(x, y)
        if what:
            out.append(Difference(process, f"call #{i}", f"{what} differs", summarize(x), summarize(y)))
        elif x.get("donated", ()) != y.get("donated", ()):
            out.append(Difference(process, f"call #{i}", "donated inputs differ", _donated(x), _donated(y)))
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
            out.append(Difference(process, f"global `{name}`", f"{what} differs", summarize(x), summarize(globals_b[name])))
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
            out.append(Difference(process, f"file `{name}`", f"{what} differs", summarize(x), summarize(y)))
    return out


def _donated(obs: Dict[str, Any]) -> str:
    donated = obs.get("donated", ())
    return f"deleted input leaves {list(donated)}" if donated else "no input deleted"
