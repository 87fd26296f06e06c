"""Benchmark jaxmigrate against ruff and a bare ``ast.parse``, side by side, on one tree.

    python bench/run.py --generate 600000            # a synthetic tree (bench/generate.py), then measure
    python bench/run.py PATH [PATH ...]              # any local tree(s), read only: fix runs on a copy
    python bench/run.py --one-file [10000,50000,100000]  # one legacy file at each size (bench/one_file.py)
    python bench/run.py --real                       # the real legacy trees of bench/trees.py, as one tree
    python bench/run.py --against REV --real         # this working tree's jaxmigrate and REV's, per tree
    python bench/run.py --one-file --against REV     # the one-file rows of both
    python bench/run.py --in-tree [--against REV]    # one file in a 10,000-file project, and alone (bench/in_tree.py)
    options: --repeat K (default 3), --jobs N (default: CPU count), --json FILE

With ``--against REV`` (a git revision of this repository; bench/against.py builds its jaxmigrate
into a cached venv) the two versions run alternately, REV first, on each tree: ``check --no-cache
-j 1`` and ``fix --no-cache -j N`` on a fresh copy (not timed), beside one ``ast.parse`` of every
file; the table gives the medians of CPU time per tree, new / old and fix / ast.parse.
``--fail-over RATIO`` exits 1 when new / old of any row is above RATIO.

Each round runs, one after the other: ``ruff check --select NPY201 --no-cache``, a bare
``ast.parse`` of every ``*.py`` file (bench/parse_all.py, on the same number of processes as
jaxmigrate), the floor of a cold check (the same, parsing only the files jaxmigrate's byte
prefilter passes: no walk, no rule), ``jaxmigrate check --no-cache`` (cold), ``jaxmigrate check`` with a cache filled
beforehand (warm), ``jaxmigrate fix --no-cache`` on a fresh copy of the tree (the copy is not
timed) and a one-file ``check --no-cache``. The table shows medians over the rounds: wall time,
CPU time (user + system of the process and its workers, robust when the machine is busy), peak
RSS of the largest process and of all processes together (sampled), and the ratios the goals
are stated in. ruff is optional: without it the ruff column is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import against  # noqa: E402
import trees  # noqa: E402

GOALS = {"cold": 3.0, "warm": 1.0, "fix": 4.0, "rss_mb": 500.0, "one_file_s": 0.5}
FIX_OVER_PARSE = 2.0  # the side-by-side goal: fix within 2x a bare ast.parse of every file (CPU)


def _children(pid: int) -> List[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_rss_kb(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += _rss_kb(p)
        todo += _children(p)
    return total


def measure(argv: List[str], cwd: Optional[str] = None, env: Optional[dict] = None,
            timeout: Optional[float] = None) -> Optional[Dict[str, float]]:
    """Wall, CPU and peak memory of one command (its output is discarded); None if it was
    stopped after ``timeout`` seconds."""
    peak = [0]
    errors = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
    done = threading.Event()
    stopper = threading.Timer(timeout, proc.kill) if timeout else None
    if stopper is not None:
        stopper.start()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if stopper is not None:
        stopper.cancel()
        if timeout is not None and wall >= timeout:
            errors.close()
            return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    errors.seek(0)
    err = errors.read().decode(errors="replace")
    errors.close()
    if proc.returncode not in (0, 1, 2):  # 1: findings, 2: files that do not parse (still measured)
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "tree_rss_mb": max(peak[0], usage.ru_maxrss) / 1024}


def _ruff() -> Optional[str]:
    beside = Path(sys.executable).parent / "ruff"
    return str(beside) if beside.exists() else shutil.which("ruff")


def _sources(paths: List[str]) -> List[Path]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("parse_all", HERE / "parse_all.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]  # the file exists: a spec
    spec.loader.exec_module(module)  # type: ignore[union-attr]  # a file spec has a loader
    return [Path(p) for root in paths for p in module.files(root)]


def _one_file(sources: List[Path]) -> Path:
    """A file with legacy pjit code if there is one (the pre-commit case), else the first."""
    for path in sources:
        if b"in_axis_resources" in path.read_bytes():
            return path
    return sources[0]


def run(paths: List[str], repeat: int, jobs: int, work: Path) -> dict:
    py = sys.executable
    here = against.current()  # this working tree's jaxmigrate, byte-compiled, not an installed one
    jm = here.command()
    env = here.env(dict(os.environ, JAXMIGRATE_CACHE_DIR=str(work / "cache")))
    sources = _sources(paths)
    lines = sum(p.read_bytes().count(b"\n") for p in sources)
    one = _one_file(sources)
    ruff = _ruff()
    time.sleep(2.1)  # a file modified in the last 2 s is re-read by a cached check (racy mtime): not a real tree's case
    subprocess.run([*jm, "check", "-j", str(jobs), *paths], env=env, stdout=subprocess.DEVNULL, cwd=work)  # fill the cache
    tools = {}
    if ruff:
        tools["ruff"] = lambda: measure([ruff, "check", "--select", "NPY201", "--no-cache", "--exit-zero", "--quiet", *paths])
    tools["parse"] = lambda: measure([py, str(HERE / "parse_all.py"), "--jobs", str(jobs), *paths])
    tools["floor"] = lambda: measure([py, str(HERE / "parse_all.py"), "--prefiltered", "--jobs", str(jobs), *paths],
                                     env=env)
    tools["cold"] = lambda: measure([*jm, "check", "--no-cache", "-j", str(jobs), *paths], cwd=str(work), env=env)
    tools["warm"] = lambda: measure([*jm, "check", "-j", str(jobs), *paths], cwd=str(work), env=env)
    tools["fix"] = lambda: _fix(jm, jobs, paths, work, env)
    tools["one_file"] = lambda: measure([*jm, "check", "--no-cache", str(one)], cwd=str(work), env=env)
    rounds: Dict[str, List[dict]] = {name: [] for name in tools}
    for _ in range(repeat):
        for name, tool in tools.items():
            rounds[name].append(tool())
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in rounds.items()}
    return {"jaxmigrate": here.label, "paths": paths, "files": len(sources), "lines": lines, "cores": os.cpu_count(),
            "jobs": jobs, "repeat": repeat, "one_file": str(one), "ruff": bool(ruff), "medians": medians}


def _fix(jm: List[str], jobs: int, paths: List[str], work: Path, env: dict) -> dict:
    copy = work / "fix-copy"
    shutil.rmtree(copy, ignore_errors=True)
    copies = []
    for i, p in enumerate(paths):
        shutil.copytree(p, copy / str(i), symlinks=True)
        copies.append(str(copy / str(i)))
    return measure([*jm, "fix", "--no-cache", "-j", str(jobs), *copies], cwd=str(work), env=env)


def report(result: dict) -> str:
    m = result["medians"]
    lines = [f"tree: {' '.join(result['paths'])}: {result['files']} files, {result['lines']:,} lines; "
             f"{result['cores']} cores, -j {result['jobs']}; medians of {result['repeat']} rounds"
             + (f"; jaxmigrate at {result['jaxmigrate']}" if "jaxmigrate" in result else ""),
             "", f"{'':32} {'wall s':>8} {'cpu s':>8} {'RSS MB':>8} {'all MB':>8}"]
    names = {"ruff": "ruff check --select NPY201", "parse": "ast.parse, every file",
             "floor": "prefilter + ast.parse (floor)",
             "cold": "jaxmigrate check --no-cache", "warm": "jaxmigrate check (cached)",
             "fix": "jaxmigrate fix (fresh copy)", "one_file": "jaxmigrate check, one file"}
    for key, label in names.items():
        if key in m:
            r = m[key]
            lines.append(f"{label:32} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:8.0f} {r['tree_rss_mb']:8.0f}")
    lines.append("")

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    if "ruff" in m:
        for key, label in (("cold", "cold check"), ("warm", "warm check")):
            ratio = m[key]["wall"] / m["ruff"]["wall"]
            lines.append(f"{label} / ruff: {ratio:.1f}x wall, {m[key]['cpu'] / m['ruff']['cpu']:.1f}x cpu "
                         f"(goal <= {GOALS[key]:g}x wall: {verdict(ratio <= GOALS[key])})")
        if "floor" in m:
            lines.append(f"floor / ruff: {m['floor']['wall'] / m['ruff']['wall']:.1f}x wall, "
                         f"{m['floor']['cpu'] / m['ruff']['cpu']:.1f}x cpu (prefilter and ast.parse alone, "
                         "before any walk or rule)")
    else:
        lines.append("ruff is not installed (pip install ruff, or the `bench` extra): no ruff ratios")
    ratio = m["fix"]["wall"] / m["parse"]["wall"]
    lines.append(f"fix / ast.parse: {ratio:.1f}x wall, {m['fix']['cpu'] / m['parse']['cpu']:.1f}x cpu "
                 f"(goal <= {GOALS['fix']:g}x: {verdict(ratio <= GOALS['fix'])})")
    peak = max(m[k]["tree_rss_mb"] for k in ("cold", "warm", "fix", "one_file"))
    lines.append(f"peak memory, all processes: {peak:.0f} MB "
                 f"(goal <= {GOALS['rss_mb']:g} MB: {verdict(peak <= GOALS['rss_mb'])})")
    one = m["one_file"]["wall"]
    lines.append(f"one-file check: {one:.2f} s (goal <= {GOALS['one_file_s']:g} s: {verdict(one <= GOALS['one_file_s'])})")
    return "\n".join(lines)


def tree_names(paths: List[str]) -> Dict[str, str]:
    """A short name for each tree (its folder's name; a later same name gets its position)."""
    names: Dict[str, str] = {}
    for i, path in enumerate(paths):
        name = Path(path).name or path
        names[name if name not in names else f"{name}#{i + 1}"] = path
    return names


def run_against(tree_paths: Dict[str, str], versions: Dict[str, "against.Version"], repeat: int, jobs: int, work: Path,
                timeout: Optional[float] = None) -> dict:
    """``check --no-cache -j 1`` and ``fix --no-cache -j JOBS`` of each version (keys ``old``, ``new``) on
    each tree, run alternately as ``against.schedule`` orders them, beside a bare ``ast.parse``."""
    work.mkdir(parents=True, exist_ok=True)
    env = {"JAXMIGRATE_CACHE_DIR": str(work / "cache")}
    info = {}
    for name, path in tree_paths.items():
        sources = _sources([path])
        info[name] = {"path": path, "files": len(sources), "lines": sum(p.read_bytes().count(b"\n") for p in sources)}

    def one(tree: str, measure_: str, key: Optional[str]) -> Optional[Dict[str, float]]:
        path = tree_paths[tree]
        if key is None:
            return measure([sys.executable, str(HERE / "parse_all.py"), "--jobs", str(jobs), path], cwd=str(work),
                           timeout=timeout)
        version = versions[key]
        if measure_ == "check":
            return measure(version.command("check", "--no-cache", "-j", "1", path), cwd=str(work),
                           env=version.env(dict(os.environ, **env)), timeout=timeout)
        copy = work / "fix-copy" / key
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(path, copy, symlinks=True)
        return measure(version.command("fix", "--no-cache", "-j", str(jobs), str(copy)), cwd=str(work),
                       env=version.env(dict(os.environ, **env)), timeout=timeout)

    samples: Dict[against.Key, List[Optional[dict]]] = {}
    for _, tree, measure_, key in against.schedule(list(tree_paths), ["parse", "check", "fix"], list(versions), repeat,
                                                   shared=["parse"]):
        samples.setdefault((tree, measure_, key), []).append(one(tree, measure_, key))
    med = against.medians(samples)
    rows = []
    for name in tree_paths:
        row = dict(info[name], name=name, parse=med[(name, "parse", None)])
        for measure_ in ("check", "fix"):
            row[measure_] = {key: med[(name, measure_, key)] for key in versions}
        rows.append(row)
    return {"versions": {k: {"label": v.label, "sha": v.sha} for k, v in versions.items()}, "repeat": repeat,
            "jobs": jobs, "cores": os.cpu_count(), "timeout": timeout, "trees": rows}


def _sum(cells: List[Optional[dict]]) -> Optional[dict]:
    if any(c is None for c in cells):
        return None
    return {k: sum(c[k] for c in cells) for k in ("wall", "cpu")}  # type: ignore[index]


def against_rows(result: dict) -> List[dict]:
    """The trees' rows, then (for more than one tree) their total: the sums of the medians."""
    rows = list(result["trees"])
    if len(rows) > 1:
        total = {"name": "total", "files": sum(r["files"] for r in rows), "lines": sum(r["lines"] for r in rows),
                 "parse": _sum([r["parse"] for r in rows])}
        for measure_ in ("check", "fix"):
            total[measure_] = {k: _sum([r[measure_][k] for r in rows]) for k in result["versions"]}
        rows.append(total)
    return rows


def against_ratios(result: dict) -> Dict[str, Optional[float]]:
    """new / old of CPU time, per tree and measure ("jax041 check")."""
    return {f"{row['name']} {m}": against.ratio(row[m]["new"], row[m]["old"])
            for row in against_rows(result) for m in ("check", "fix")}


def report_against(result: dict) -> str:
    old, new = (result["versions"][k]["label"] for k in ("old", "new"))
    timeout = result.get("timeout")

    def cell(value: Optional[dict], width: int = 8) -> str:
        return f"{value['cpu']:{width}.2f}" if value else f"{'> %g s' % timeout if timeout else '-':>{width}}"

    def times(value: Optional[float]) -> str:
        return f"{value:7.2f}x" if value is not None else f"{'-':>8}"

    head = (f"{'':37}{'check --no-cache -j 1':^29}{'fix --no-cache -j %d' % result['jobs']:^29}"
            f"{'fix / ast.parse':^19}")
    cols = (f"{'tree':12} {'files':>6} {'lines':>9} {'parse':>7}" + f" {old:>9} {new:>9} {'new/old':>8}" * 2
            + f" {old:>9} {new:>8}")
    out = [f"CPU seconds (user + system, workers included), medians of {result['repeat']} rounds run alternately "
           f"(old, new, old, new, ...): old = {old}, new = {new}; parse: ast.parse of every file, -j {result['jobs']}; "
           f"{result['cores']} cores", "", head.rstrip(), cols]
    goal = []
    for row in against_rows(result):
        cells = [f"{row['name']:12} {row['files']:6,} {row['lines']:9,} {cell(row['parse'], 7)}"]
        for m in ("check", "fix"):
            cells.append(f"{cell(row[m]['old'], 9)} {cell(row[m]['new'], 9)} "
                         f"{times(against.ratio(row[m]['new'], row[m]['old']))}")
        per_parse = [against.ratio(row["fix"][k], row["parse"]) for k in ("old", "new")]
        cells.append(f"{times(per_parse[0]):>9} {times(per_parse[1])}")
        out.append(" ".join(cells))
        if row["name"] == "total" or len(result["trees"]) == 1:
            for label, r in zip((old, new), per_parse):
                if r is not None:
                    goal.append(f"fix / ast.parse at {label}: {r:.2f}x cpu (goal <= {FIX_OVER_PARSE:g}x: "
                                f"{'met' if r <= FIX_OVER_PARSE else 'NOT met'})")
    return "\n".join(out + [""] + goal)


def main() -> None:
    parser = argparse.ArgumentParser(description="jaxmigrate vs ruff and ast.parse, side by side")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--generate", type=int, metavar="LINES", help="measure a generated tree of this many lines")
    parser.add_argument("--real", action="store_true",
                        help="the real legacy trees of bench/trees.py (written from the git mirrors on first use)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--one-file", nargs="?", const="10000,50000,100000", metavar="LINES",
                        help="instead: check, fix and fix --unsafe-fixes of one generated legacy file at these "
                             "sizes (comma-separated, default 10000,50000,100000; bench/one_file.py)")
    parser.add_argument("--against", metavar="REV",
                        help="time this working tree's jaxmigrate beside the one of git revision REV of this "
                             "repository, alternately (check -j 1 and fix per tree; with --one-file, its rows)")
    parser.add_argument("--fail-over", type=float, metavar="RATIO",
                        help="with --against: exit 1 if new / old CPU time of any row is above RATIO")
    parser.add_argument("--timeout", type=float, default=None,
                        help="with --against or --one-file: stop a command after this many seconds (shown as > T s)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="the bench's cache: built revisions and real trees (default $JAXMIGRATE_BENCH_CACHE "
                             "or jaxmigrate-bench in the temp folder)")
    parser.add_argument("--in-tree", nargs="?", const=10_000, type=int, metavar="FILES",
                        help="instead: check of one file inside a generated project of this many files (default "
                             "10000) and alone, cold and warm (bench/in_tree.py)")
    trees.add_arguments(parser)
    args = parser.parse_args()
    if args.fail_over is not None and not args.against:
        parser.error("--fail-over needs --against")
    cache = args.cache_dir or trees.default_cache()
    if args.in_tree:
        import in_tree

        argv = ["--files", str(args.in_tree), "--repeat", str(args.repeat)]
        argv += ["--json", str(args.json)] if args.json else []
        argv += ["--against", args.against, "--cache-dir", str(cache)] if args.against else []
        in_tree.main(argv)
        return
    if args.one_file:
        import one_file

        argv = ["--lines", args.one_file, "--repeat", str(args.repeat)]
        argv += ["--json", str(args.json)] if args.json else []
        argv += ["--timeout", str(args.timeout)] if args.timeout else []
        argv += ["--against", args.against, "--cache-dir", str(cache)] if args.against else []
        argv += ["--fail-over", str(args.fail_over)] if args.fail_over is not None else []
        one_file.main(argv)
        return
    if sum((bool(args.paths), bool(args.generate), args.real)) != 1:
        parser.error("give PATH(s), --generate LINES or --real")
    versions = {}
    if args.against:
        versions = {"old": against.build(args.against, cache), "new": against.current()}
    real = trees.materialise_all(list(trees.TREES), cache / "trees", args) if args.real else []
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-bench-") as tmp:
        work = Path(tmp)
        paths = [str(Path(p).resolve()) for p in [*args.paths, *real]]
        named = tree_names(paths) if not args.real else dict(zip(trees.TREES, paths))
        if args.generate:
            from generate import generate

            generate(work / "tree", args.generate, seed=args.seed)
            paths = [str(work / "tree")]
            named = {"generated": paths[0]}
        if versions:
            result = run_against(named, versions, args.repeat, args.jobs, work, args.timeout)
        else:
            result = run(paths, args.repeat, args.jobs, work)
    print(report_against(result) if versions else report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.fail_over is not None:
        failed = against.over(against_ratios(result), args.fail_over)
        if failed:
            raise SystemExit(f"new / old above {args.fail_over:g}x: {', '.join(failed)}")


if __name__ == "__main__":
    main()
