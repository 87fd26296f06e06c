"""The ``jax.shard_map`` call that corresponds to an ``xmap`` call, for JM203's report.

``xmap(f, in_axes=(["shard", ...], ["batch", ...]), out_axes=["batch", ...],
axis_resources={"shard": "mp", "batch": "dp"})`` maps named axes to mesh axes; the
``shard_map`` form partitions the same dimensions over the same mesh axes. It is advice, not a
fix: inside ``f`` a named dimension disappeared under xmap but stays (as a block) under
shard_map, and collectives must name the mesh axes instead of the xmap names.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

XMAP = "jax.experimental.maps.xmap"


def _constant_str(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _resources(node: ast.AST) -> Optional[Dict[str, str]]:
    """``{"shard": "mp", "batch": ("dp", "x")}`` → names to the spec entry's source text."""
    if not isinstance(node, ast.Dict):
        return None
    out = {}
    for key, value in zip(node.keys, node.values):
        name = _constant_str(key) if key is not None else None
        if name is None:
            return None
        if _constant_str(value) is not None:
            out[name] = repr(value.value)  # type: ignore[attr-defined]  # a str constant: _constant_str says so
        elif isinstance(value, (ast.Tuple, ast.List)) and all(_constant_str(e) for e in value.elts):
            out[name] = "(" + ", ".join(repr(e.value) for e in value.elts) + ("," if len(value.elts) == 1 else "") + ")"  # type: ignore[attr-defined]  # str constants: _constant_str says so
        else:
            return None
    return out


def _spec(entry: ast.AST, resources: Dict[str, str]) -> Optional[str]:
    """One argument's axes (``["batch", ...]`` or ``{0: "batch"}``) as ``P(...)`` source."""
    dims: Dict[int, str] = {}
    if isinstance(entry, ast.List):
        for i, e in enumerate(entry.elts):
            if isinstance(e, ast.Constant) and e.value is Ellipsis:
                if i != len(entry.elts) - 1:
                    return None
                break
            name = _constant_str(e)
            if name is None:
                return None
            dims[i] = name
    elif isinstance(entry, ast.Dict):
        for key, value in zip(entry.keys, entry.values):
            if (not (isinstance(key, ast.Constant) and isinstance(key.value, int) and key.value >= 0)
                    or _constant_str(value) is None):
                return None
            dims[key.value] = value.value  # type: ignore[attr-defined]  # a string constant: _constant_str says so
    else:
        return None
    if any(name not in resources for name in dims.values()):
        return None  # a named axis without resources is vectorized, not partitioned: no spec says that
    entries = [resources[dims[i]] if i in dims else "None" for i in range(max(dims) + 1)] if dims else []
    return f"P({', '.join(entries)})"


def _specs(node: ast.AST, resources: Dict[str, str]) -> Optional[str]:
    if isinstance(node, ast.Tuple):
        specs = [_spec(e, resources) for e in node.elts]
        if any(s is None for s in specs):
            return None
        return "(" + ", ".join(specs) + ("," if len(specs) == 1 else "") + ")"  # type: ignore[arg-type]  # no None in specs: checked above
    return _spec(node, resources)


def shard_map_advice(call: ast.Call, text) -> Optional[str]:
    """The advice for one xmap call, or None when its axes are not literal. ``text(node)`` gives source."""
    given: Dict[str, ast.AST] = {k.arg: k.value for k in call.keywords if k.arg}
    names: List[str] = ["fun", "in_axes", "out_axes"]
    for name, arg in zip(names, call.args):
        given.setdefault(name, arg)
    if not {"fun", "in_axes", "out_axes", "axis_resources"} <= set(given):
        return None
    resources = _resources(given["axis_resources"])
    if resources is None:
        return None
    in_specs, out_specs = _specs(given["in_axes"], resources), _specs(given["out_axes"], resources)
    if in_specs is None or out_specs is None:
        return None
    renames = ", ".join(f"{name!r} → {axes}" for name, axes in resources.items())
    return (f"jax.shard_map({text(given['fun'])}, mesh=mesh, in_specs={in_specs}, out_specs={out_specs}) "
            f"with `P` = jax.sharding.PartitionSpec; inside the function, collectives name the mesh axes ({renames}), "
            "and a named dimension no longer disappears: it is a block of size n / (mesh axis size), so squeeze it "
            "where n equals that size, else vmap over it")
