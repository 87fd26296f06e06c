"""How ``check`` and ``fix`` scale with the size of one legacy file.

    python bench/one_file.py                         # 10k, 50k and 100k lines, both kinds of module
    python bench/one_file.py --lines 10000,50000 --kind pjit --repeat 3
    python bench/run.py --one-file                   # the same, from the main benchmark script
    python bench/one_file.py --against REV --commands check,fix --timeout 60   # REV's jaxmigrate beside this one

For each kind of module (``bench/generate.py:one_file``: ``pjit``, numbered functions each with
a ``jax.tree_map`` and a pjit with ``in_axis_resources``/``out_axis_resources``; ``mixed``,
several legacy patterns in turn: ``maps.Mesh`` and ``with mesh:``, GDA construction and
attributes, sharding constraints, config reads, live buffers; ``multihost``, multi-process code
under a module-level mesh: host-local pjit inputs, ``FROM_GDA``, ``shard_map``,
``PositionalSharding``, ``device_put_sharded``, ``xmap``) and each size, it times
``jaxmigrate check --no-cache FILE``, ``jaxmigrate fix --no-cache`` and ``fix --unsafe-fixes``
(each on a fresh copy of the file; the copy is not timed), and reports the median wall time,
how many times longer each size took than the one before (a linear tool: the ratio of the
sizes), and the goals: at most 6x for 5x the lines, and a 50k-line check under 5 s.

With ``--against REV`` it times the jaxmigrate of git revision REV (built by bench/against.py)
and this working tree's alternately, REV first, each on a fresh copy, and reports both CPU
medians and new / old per module, size and command; a command stopped by ``--timeout`` (wall
time) shows as "> T s".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import against  # noqa: E402
from generate import one_file  # noqa: E402
from run import measure  # noqa: E402

SIZES = (10_000, 50_000, 100_000)
KINDS = ("pjit", "mixed", "multihost")
COMMANDS = {"check": ["check"], "fix": ["fix"], "unsafe": ["fix", "--unsafe-fixes"]}
LABELS = {"check": "check", "fix": "fix", "unsafe": "fix --unsafe-fixes"}
GOALS = {"ratio_per_5x": 6.0, "check_50k_s": 5.0}


def run(sizes=SIZES, kinds=KINDS, repeat: int = 1, commands=tuple(COMMANDS), timeout: Optional[float] = None) -> dict:
    """Median wall and CPU seconds per (kind, lines, command); None for a run stopped at ``timeout``."""
    here = against.current()  # this working tree's jaxmigrate, byte-compiled, not an installed one
    results: List[dict] = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-one-file-") as tmp:
        work = Path(tmp)
        env = here.env(dict(os.environ, JAXMIGRATE_CACHE_DIR=str(work / "cache")))
        for kind in kinds:
            for lines in sizes:
                text = one_file(lines, kind)
                row: Dict[str, object] = {"kind": kind, "lines": text.count("\n")}
                for command in commands:
                    rounds = []
                    for _ in range(repeat):
                        target = work / f"{kind}_{lines}.py"
                        target.write_text(text)
                        rounds.append(measure(here.command(*COMMANDS[command], "--no-cache", str(target)),
                                              cwd=str(work), env=env, timeout=timeout))
                    if any(r is None for r in rounds):
                        row[command] = None
                    else:
                        row[command] = {k: statistics.median(r[k] for r in rounds) for k in ("wall", "cpu", "rss_mb")}
                results.append(row)
    return {"jaxmigrate": here.label, "repeat": repeat, "cores": os.cpu_count(), "timeout": timeout, "rows": results}


def run_against(versions: Dict[str, "against.Version"], sizes=SIZES, kinds=KINDS, repeat: int = 1,
                commands=("check", "fix"), timeout: Optional[float] = None) -> dict:
    """Median wall and CPU seconds per (kind, lines, command) of each version (keys ``old``, ``new``),
    run alternately; None for a version whose run was stopped at ``timeout`` (its later rounds of
    that row are not run)."""
    rows: List[dict] = []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-one-file-") as tmp:
        work = Path(tmp)
        base = dict(os.environ, JAXMIGRATE_CACHE_DIR=str(work / "cache"))
        for kind in kinds:
            for lines in sizes:
                text = one_file(lines, kind)
                samples: Dict[against.Key, List[Optional[dict]]] = {}
                for _, _, command, key in against.schedule([kind], list(commands), list(versions), repeat):
                    assert key is not None
                    done = samples.setdefault((kind, command, key), [])
                    if None in done:
                        continue  # stopped once: the row shows "> T s"
                    version = versions[key]
                    target = work / key / f"{kind}_{lines}.py"
                    target.parent.mkdir(exist_ok=True)
                    target.write_text(text)
                    done.append(measure(version.command(*COMMANDS[command], "--no-cache", str(target)), cwd=str(work),
                                        env=version.env(base), timeout=timeout))
                med = against.medians(samples)
                for command in commands:
                    rows.append({"kind": kind, "lines": text.count("\n"), "command": command,
                                 **{key: med[(kind, command, key)] for key in versions}})
    return {"versions": {k: {"label": v.label, "sha": v.sha} for k, v in versions.items()}, "repeat": repeat,
            "cores": os.cpu_count(), "timeout": timeout, "rows": rows}


def against_ratios(result: dict) -> Dict[str, Optional[float]]:
    """new / old of CPU time per row ("pjit 10,000 check")."""
    return {f"{r['kind']} {r['lines']:,} {LABELS[r['command']]}": against.ratio(r["new"], r["old"]) for r in result["rows"]}


def report_against(result: dict) -> str:
    old, new = (result["versions"][k]["label"] for k in ("old", "new"))
    timeout = result["timeout"]
    out = [f"one file, CPU seconds, medians of {result['repeat']} run(s), old = {old}, new = {new}, run alternately; "
           f"> T s: stopped after T s of wall time", "",
           f"{'module':9} {'lines':>8} {'command':>18} {old:>9} {new:>9} {'new/old':>8}"]
    ratios = against_ratios(result)
    for row, r in zip(result["rows"], ratios.values()):
        cells = [f"{row[k]['cpu']:9.2f}" if row[k] else f"{'> %g s' % timeout:>9}" for k in ("old", "new")]
        shown = f"{r:7.2f}x" if r is not None else "-"
        out.append(f"{row['kind']:9} {row['lines']:8,} {LABELS[row['command']]:>18} {cells[0]} {cells[1]} {shown:>8}")
    return "\n".join(out)


def report(result: dict) -> str:
    """The table and the goals. Ratios are of CPU time (user + system), steadier than wall time
    on a shared machine: the ratio goal is checked on them, the 50k-line goal on wall time."""
    rows = result["rows"]
    commands = [c for c in COMMANDS if any(c in r for r in rows)]
    out = [f"one file, medians of {result['repeat']} run(s): wall s, cpu s, (x: cpu ratio to the size above)", "",
           f"{'module':9} {'lines':>8} " + " ".join(f"{LABELS[c]:>24}" for c in commands)]
    verdicts = []
    previous: Dict[str, dict] = {}
    for row in rows:
        before = previous.get(row["kind"])
        cells = []
        for c in commands:
            cell = row.get(c)
            if cell is None:
                cells.append(f"{'timeout':>24}")
                continue
            ratio = ""
            if before is not None and before.get(c):
                size = row["lines"] / before["lines"]
                cpu, wall = cell["cpu"] / before[c]["cpu"], cell["wall"] / before[c]["wall"]
                ratio = f"({cpu:.1f}x)"
                allowed = GOALS["ratio_per_5x"] * size / 5
                verdicts.append(f"{row['kind']} {LABELS[c]}, {before['lines']:,} -> {row['lines']:,} lines ({size:.1f}x): "
                                f"{cpu:.1f}x cpu, {wall:.1f}x wall (goal <= {allowed:.1f}x: {_verdict(cpu <= allowed)})")
            cells.append(f"{cell['wall']:7.2f} {cell['cpu']:7.2f} {ratio:>8}")
        out.append(f"{row['kind']:9} {row['lines']:8,} " + " ".join(cells))
        if _is_check_50k(row):
            wall = row["check"]["wall"]
            verdicts.append(f"{row['kind']} check of {row['lines']:,} lines: {wall:.2f} s wall, {row['check']['cpu']:.2f} s cpu "
                            f"(goal < {GOALS['check_50k_s']:g} s: {_verdict(wall < GOALS['check_50k_s'])})")
        previous[row["kind"]] = row
    timed_out = [f"{r['kind']} {r['lines']:,} lines {LABELS[c]}" for r in rows for c in commands if c in r and r[c] is None]
    if timed_out:
        verdicts.append(f"stopped after {result['timeout']:g} s: " + ", ".join(timed_out) + " (NOT met)")
    return "\n".join(out + [""] + verdicts)


def _is_check_50k(row: dict) -> bool:
    """Whether ``row`` is the 50k-line check the second goal is stated on."""
    return 45_000 <= row["lines"] <= 55_000 and bool(row.get("check"))


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default=",".join(map(str, SIZES)), help="comma-separated sizes (default %(default)s)")
    parser.add_argument("--kind", default=",".join(KINDS), help="comma-separated: pjit, mixed, multihost (default all)")
    parser.add_argument("--commands", default=None,
                        help="comma-separated: check, fix, unsafe (default all three; with --against check,fix)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=None, help="stop a command after this many seconds")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--against", metavar="REV", help="also time the jaxmigrate of git revision REV, alternately")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where --against builds REV (default: the bench cache)")
    parser.add_argument("--fail-over", type=float, metavar="RATIO", help="with --against: exit 1 if new / old is above RATIO")
    args = parser.parse_args(argv)
    if args.against:
        import trees

        versions = {"old": against.build(args.against, args.cache_dir or trees.default_cache()),
                    "new": against.current()}
        commands = (args.commands or "check,fix").split(",")
        result = run_against(versions, [int(n) for n in args.lines.split(",")], args.kind.split(","), args.repeat,
                             commands, args.timeout)
        print(report_against(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        failed = against.over(against_ratios(result), args.fail_over) if args.fail_over is not None else []
        if failed:
            raise SystemExit(f"new / old above {args.fail_over:g}x: {', '.join(failed)}")
        return
    result = run([int(n) for n in args.lines.split(",")], args.kind.split(","), args.repeat,
                 (args.commands or ",".join(COMMANDS)).split(","), args.timeout)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
