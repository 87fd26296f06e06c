"""Render observations and verdicts for people (text) and tools (json)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import numpy as np

LIMIT = 200


def abridge(text: str, limit: int = LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _index(index: Tuple[Tuple[int, int], ...], shape) -> str:
    parts = [":" if (start, stop) == (0, n) else f"{start}:{stop}" for (start, stop), n in zip(index, shape)]
    return "[" + ",".join(parts) + "]"


def _positions(positions: List[int]) -> str:
    if len(positions) > 2 and positions == list(range(positions[0], positions[-1] + 1)):
        return f"d{positions[0]}-{positions[-1]}"
    return ",".join(f"d{p}" for p in positions)


def sharding_text(obs: Dict[str, Any]) -> str:
    sharding = obs.get("sharding")
    if sharding is None:
        return "deleted" if obs.get("deleted") else "none (numpy)"
    by_index: Dict[Any, List[int]] = {}
    for position, index in sharding:
        by_index.setdefault(index, []).append(position)
    shape = obs["shape"]
    if len(by_index) == 1:
        (positions,) = by_index.values()
        return f"replicated on {_positions(positions)}" if len(positions) > 1 else f"only on d{positions[0]}"
    return " ".join(f"{_index(i, shape)}@{_positions(p)}" for i, p in sorted(by_index.items()))


def _ranges(index_set) -> List[Tuple[int, int]]:
    return sorted(set(index_set))


def _grid(obs: Dict[str, Any]) -> List[str]:
    """A 1-D or 2-D array's layout as a grid of blocks, each naming the devices that hold it (as
    ``jax.debug.visualize_array_sharding`` draws it); nothing for other ranks."""
    sharding, shape = obs.get("sharding"), obs.get("shape") or ()
    if not sharding or len(shape) not in (1, 2):
        return []
    holders: Dict[Any, List[int]] = {}
    for position, index in sharding:
        holders.setdefault(tuple(index), []).append(position)
    if len(shape) == 1:  # one row, left to right, as visualize_array_sharding draws a vector
        cells = [[_positions(sorted(holders[(c,)])) for c in _ranges(index[0] for index in holders)]]
    else:
        rows, cols = _ranges(index[0] for index in holders), _ranges(index[1] for index in holders)
        cells = [[_positions(sorted(holders.get((r, c), []))) or "-" for c in cols] for r in rows]
    width = max(len(cell) for row in cells for cell in row)
    return ["|" + "|".join(f" {cell:<{width}} " for cell in row) + "|" for row in cells]


def sharding_picture(before: Dict[str, Any], after: Dict[str, Any]) -> str:
    """Both layouts side by side as device grids, under their shardings; nothing when neither
    can be drawn."""
    left, right = _grid(before), _grid(after)
    if not left and not right:
        return ""
    heads = [f"before: {before.get('layout') or 'sharding'}", f"after: {after.get('layout') or 'sharding'}"]
    width = max(len(line) for line in left + [heads[0]])
    lines = [f"{heads[0]:<{width}}   {heads[1]}"]
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        lines.append(f"{a:<{width}}   {b}".rstrip())
    return "\n".join(lines)


def _values(obs: Dict[str, Any]) -> str:
    if obs.get("data") is not None:
        data = np.asarray(obs["data"])
        return np.array2string(data, threshold=12, edgeitems=2, max_line_width=10_000, separator=" ")
    shards = obs.get("shards") or ()
    return "addressable shards " + " ".join(
        f"{_index(i, obs['shape'])}={np.array2string(np.asarray(d), threshold=6, edgeitems=1)}" for i, d in shards)


def summarize(obs: Dict[str, Any], limit: int = LIMIT, layout: bool = False) -> str:
    """One line for an observation. ``layout``: a difference in where the values live only:
    the sharding in full (its spec, mesh axes and device map), not the values."""
    kind = obs["kind"]
    if kind == "array":
        shape = "x".join(str(n) for n in obs["shape"]) or "scalar"
        how = f"{obs['layout']} " if obs.get("layout") else ""
        if layout:
            return abridge(f"{obs['dtype']}[{shape}] sharding: {how}{sharding_text(obs)}", 4 * limit)
        text = f"{obs['dtype']}[{shape}] sharding: {how}{sharding_text(obs)}; values: {_values(obs)}"
    elif kind == "number":
        text = f"{obs['type']} {obs['value']!r}"
    elif kind == "str":
        text = repr(obs["value"])
    elif kind == "none":
        text = "None"
    elif kind == "seq":
        inner = ", ".join(summarize(item, 80, layout) for item in obs["items"][:4])
        more = ", ..." if len(obs["items"]) > 4 else ""
        text = f"{obs['type']}({inner}{more})" if "length" not in obs else f"{obs['type']} of {obs['length']} items"
    elif kind == "dict":
        text = ("{" + ", ".join(f"{k}: {summarize(v, 60, layout)}" for k, v in obs["items"][:4])
                + (", ..." if len(obs["items"]) > 4 else "") + "}")
    elif kind == "pytree":
        text = (f"{obs['type']}(" + ", ".join(f"{k}={summarize(v, 60, layout)}" for k, v in obs["items"][:4])
                + (", ..." if len(obs["items"]) > 4 else "") + ")")
    elif kind == "bytes":
        text = f"{obs['size']} bytes, sha256 {obs['sha256'][:12]}"
    elif kind == "unobservable":
        text = f"(unobservable: {obs['error']})"
    else:
        text = f"<{obs['type']}>"
    return abridge(text, limit)


def difference_lines(d, indent: str = "    ") -> List[str]:
    """A difference's lines under its heading: the call's site, both sides, the first differing
    value, both layouts as device grids."""
    lines = [f"{indent}call of {d.site}"] if d.site else []
    lines += [f"{indent}before: {d.before}", f"{indent}after:  {d.after}"]
    if d.detail:
        lines.append(f"{indent}{d.detail}")
    if d.picture:
        lines += [f"{indent}{line}" for line in d.picture.splitlines()]
    if getattr(d, "note", ""):
        lines.append(f"{indent}{d.note}")
    return lines


def running_notice(before: str, after: str, legacy_jax: str = "emulated", *, suites: bool = False,
                   migrated: bool = False) -> str:
    """The line `verify` starts with: it runs the given code, which, and on what."""
    legacy = "the legacy runtime" if legacy_jax == "emulated" else f"the legacy side (--legacy-jax {legacy_jax})"
    if suites:
        what = f"the tests in {before} on {legacy} and those in {after} on the installed JAX"
    elif migrated:
        what = f"{before} on {legacy} and its migration (made in memory) on the installed JAX"
    else:
        what = f"{before} on {legacy} and {after} on the installed JAX"
    return f"jaxmigrate verify runs the given code: {what}, in processes of their own"


MAX_OUTPUT_LINES = 200  # per process, with -v; the JSON has all of it


def output_lines(outputs: List[Dict[str, Any]], verbose: bool, hint: bool = True) -> List[str]:
    """The program's own output (stdout and stderr), per side and process: all of it (up to
    MAX_OUTPUT_LINES a process) with ``verbose``, else (``hint``) a line saying how much there is."""
    printed = [o for o in outputs if o["text"].strip()]
    if not printed:
        return ["  the program printed nothing on either side"] if verbose and outputs else []
    if not verbose:
        if not hint:
            return []
        counts = {side: sum(len(o["text"].splitlines()) for o in printed if o["side"] == side)
                  for side in ("before", "after")}
        return [f"  the program's own output is kept (before: {counts['before']} line(s), after: "
                f"{counts['after']} line(s)); -v shows it"]
    lines: List[str] = []
    for o in outputs:
        text = o["text"].rstrip("\n").splitlines()
        lines.append(f"  output of the {o['side']} side (process {o['process']}, stdout and stderr)"
                     + (":" if text else ": (nothing)"))
        lines += [f"    | {line}" for line in text[:MAX_OUTPUT_LINES]]
        if len(text) > MAX_OUTPUT_LINES:
            lines.append(f"    ... and {len(text) - MAX_OUTPUT_LINES} more line(s) (all of them in --format json)")
    return lines


def render_text(verdict, max_differences: int = 5, verbose: bool = False) -> str:
    """The verdict for people; ``verbose`` adds the program's own output of both sides."""
    v = verdict
    head = (f"{v.status.upper()}: {v.before} vs {v.after} "
            f"({v.processes} process{'es' if v.processes > 1 else ''} x {v.devices // v.processes} CPU devices, "
            f"{v.seconds:.1f} s)")
    lines = [head]
    if getattr(v, "legacy_asked", "emulated") != "emulated" and v.legacy:
        lines.append(f"  legacy side: {v.legacy}")
    if v.status == "equivalent" or not v.reason:
        lines.append(f"  compared per process: {v.compared}")
    else:
        lines.append(f"  {v.reason}")
        if v.compared:
            lines.append(f"  compared per process: {v.compared}")
    if v.renamed:
        lines.append("  globals renamed (the same value under a new name): " + ", ".join(v.renamed))
    if v.trusted:
        lines.append("  taken on trust, not verified (renamed names the legacy runtime gives back from JAX's "
                     "history): " + ", ".join(v.trusted))
    if v.unstable:
        lines.append("  left out, unstable (they differ between two runs of the before side): " + ", ".join(v.unstable))
    if getattr(v, "unread", None):
        lines.append("  bound on the before side only and never read there, not compared: " + ", ".join(v.unread))
    if getattr(v, "elsewhere", None):
        lines.append("  written outside the working folder, not compared: " + ", ".join(v.elsewhere))
    for d in v.differences[:max_differences]:
        lines.append(f"  {d.where} (process {d.process}): {d.what}")
        lines.extend(difference_lines(d))
    if len(v.differences) > max_differences:
        lines.append(f"  ... and {len(v.differences) - max_differences} more differences")
    for error in v.errors:
        lines.append("  " + error.rstrip().replace("\n", "\n    "))
    if v.deprecations:
        lines.append("  the after side still warns (not yet on current JAX):")
        lines.extend(f"    {d}" for d in v.deprecations)
    lines += output_lines(getattr(v, "output", []), verbose)
    return "\n".join(lines)


def render_json(verdict) -> str:
    return json.dumps(verdict.to_dict(), indent=2)
