"""Benchmark jaxmigrate against ruff and a bare ``ast.parse``, side by side, on one tree.

    python bench/run.py --generate 600000            # a synthetic tree (bench/generate.py), then measure
    python bench/run.py PATH [PATH ...]              # any local tree(s), read only: fix runs on a copy
    python bench/run.py --one-file [10000,50000,100000]  # one legacy file at each size (bench/one_file.py)
    options: --repeat K (default 3), --jobs N (default: CPU count), --json FILE

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
GOALS = {"cold": 3.0, "warm": 1.0, "fix": 4.0, "rss_mb": 500.0, "one_file_s": 0.5}


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
    jm = [py, "-m", "jaxmigrate"]
    env = dict(os.environ, JAXMIGRATE_CACHE_DIR=str(work / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    import jaxmigrate  # bytecode for jaxmigrate itself, as an installed package has it

    subprocess.run([py, "-m", "compileall", "-q", str(Path(jaxmigrate.__file__).parent)], check=True,
                   stdout=subprocess.DEVNULL)
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
    tools["floor"] = lambda: measure([py, str(HERE / "parse_all.py"), "--prefiltered", "--jobs", str(jobs), *paths])
    tools["cold"] = lambda: measure([*jm, "check", "--no-cache", "-j", str(jobs), *paths], cwd=str(work), env=env)
    tools["warm"] = lambda: measure([*jm, "check", "-j", str(jobs), *paths], cwd=str(work), env=env)
    tools["fix"] = lambda: _fix(jm, jobs, paths, work, env)
    tools["one_file"] = lambda: measure([*jm, "check", "--no-cache", str(one)], cwd=str(work), env=env)
    rounds: Dict[str, List[dict]] = {name: [] for name in tools}
    for _ in range(repeat):
        for name, tool in tools.items():
            rounds[name].append(tool())
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in rounds.items()}
    return {"paths": paths, "files": len(sources), "lines": lines, "cores": os.cpu_count(), "jobs": jobs,
            "repeat": repeat, "one_file": str(one), "ruff": bool(ruff), "medians": medians}


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
             f"{result['cores']} cores, -j {result['jobs']}; medians of {result['repeat']} rounds",
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


def main() -> None:
    parser = argparse.ArgumentParser(description="jaxmigrate vs ruff and ast.parse, side by side")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--generate", type=int, metavar="LINES", help="measure a generated tree of this many lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--one-file", nargs="?", const="10000,50000,100000", metavar="LINES",
                        help="instead: check, fix and fix --unsafe-fixes of one generated legacy file at these "
                             "sizes (comma-separated, default 10000,50000,100000; bench/one_file.py)")
    args = parser.parse_args()
    if args.one_file:
        import one_file

        argv = ["--lines", args.one_file, "--repeat", str(args.repeat)]
        one_file.main(argv + (["--json", str(args.json)] if args.json else []))
        return
    if bool(args.paths) == bool(args.generate):
        parser.error("give PATH(s) or --generate LINES")
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-bench-") as tmp:
        work = Path(tmp)
        paths = [str(Path(p).resolve()) for p in args.paths]
        if args.generate:
            sys.path.insert(0, str(HERE))
            from generate import generate

            generate(work / "tree", args.generate, seed=args.seed)
            paths = [str(work / "tree")]
        result = run(paths, args.repeat, args.jobs, work)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
