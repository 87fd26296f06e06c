"""Run both sides in fresh processes and decide: equivalent, divergent or undecidable.

Each side runs in ``processes`` fresh Python processes (``python -m jaxmigrate.verify._child``),
both sides at once, each process in its own session so that a time-out kills its whole process
group. Only the loopback interface is used (the coordinator of a multi-process side listens on
127.0.0.1 at a free port). No process outlives ``verify_files``.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from jaxmigrate.verify.compare import Difference, compare_process

EXIT_EQUIVALENT, EXIT_DIVERGENT, EXIT_UNDECIDABLE = 0, 1, 2
_EXIT = {"equivalent": EXIT_EQUIVALENT, "divergent": EXIT_DIVERGENT, "undecidable": EXIT_UNDECIDABLE}
GRACE_SECONDS = 2.0  # a side whose observations are all written (or that already failed) gets this long to exit
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)


@dataclass
class ProcessRun:
    side: str
    process: int
    pid: int = 0
    returncode: Optional[int] = None
    result: Optional[Dict[str, Any]] = None
    output: str = ""
    timed_out: bool = False


@dataclass
class Verdict:
    status: str  # "equivalent" | "divergent" | "undecidable"
    reason: str
    before: str
    after: str
    devices: int
    processes: int
    seconds: float
    differences: List[Difference] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    compared: str = ""
    # deprecation warnings the after side caused: migrated code that still warns is not done
    deprecations: List[str] = field(default_factory=list)
    runs: List[ProcessRun] = field(default_factory=list, repr=False)

    @property
    def exit_code(self) -> int:
        return _EXIT[self.status]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "verdict": self.status, "exit_code": self.exit_code, "reason": self.reason,
            "before": self.before, "after": self.after, "devices": self.devices, "processes": self.processes,
            "seconds": round(self.seconds, 3), "compared": self.compared,
            "differences": [d.to_dict() for d in self.differences], "errors": self.errors,
            "deprecations": self.deprecations,
        }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_environment(devices_per_process: int) -> Dict[str, str]:
    """The environment of a verify child: CPU only, the device count, this package importable."""
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices_per_process}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for name in ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"):
        env.pop(name, None)
    return env


class _Side:
    def __init__(self, side: str, script: str, filename: str, processes: int, env: Dict[str, str], workdir: Path):
        self.side = side
        port = free_port() if processes > 1 else 0
        self.runs = [ProcessRun(side, i) for i in range(processes)]
        self.outs = [workdir / f"{side}.{i}.pkl" for i in range(processes)]
        self.logs = [workdir / f"{side}.{i}.log" for i in range(processes)]
        self.procs: List[subprocess.Popen] = []
        self.done_at: Optional[float] = None
        self.killed = False
        cwd = os.path.dirname(os.path.abspath(filename)) or "."
        for i in range(processes):
            cmd = [sys.executable, "-m", "jaxmigrate.verify._child", "--side", side, "--script", script,
                   "--filename", filename, "--out", str(self.outs[i]), "--processes", str(processes),
                   "--process-id", str(i), "--port", str(port)]
            with open(self.logs[i], "wb") as log:
                self.procs.append(subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                                   stderr=subprocess.STDOUT, start_new_session=True))
            self.runs[i].pid = self.procs[-1].pid

    def settled(self) -> bool:
        """All exited; or all observations written, or one process failed, and the grace is over."""
        codes = [p.poll() for p in self.procs]
        if all(c is not None for c in codes):
            return True
        written = all(out.exists() for out in self.outs)
        failed = any(c is not None and not out.exists() for c, out in zip(codes, self.outs))
        if written or failed:
            self.done_at = self.done_at or time.monotonic()
            return time.monotonic() - self.done_at > GRACE_SECONDS
        return False

    def kill(self, timed_out: bool) -> None:
        """Kill each process's whole group, also of a process that exited: what it started in
        the background (a server, a ``sleep``) is still there, holding its output file open.
        Once only: a group id is not signalled again after its processes are gone."""
        if self.killed:
            return
        self.killed = True
        for run, proc in zip(self.runs, self.procs):
            if proc.poll() is None:
                run.timed_out = timed_out and not self.outs[run.process].exists()
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the group outlives its leader while it has members
            except (ProcessLookupError, PermissionError):  # empty: nothing left
                pass
        for proc in self.procs:
            proc.wait()

    def collect(self) -> List[ProcessRun]:
        for run, proc, out, log in zip(self.runs, self.procs, self.outs, self.logs):
            run.returncode = proc.returncode
            run.output = log.read_text(errors="replace") if log.exists() else ""
            if out.exists():
                with open(out, "rb") as f:
                    run.result = pickle.load(f)
        return self.runs


def run_sides(scripts: Dict[str, tuple], *, devices: int, processes: int, timeout: float) -> Dict[str, List[ProcessRun]]:
    """Run each side (``{side: (script, filename)}``) at once; their process runs by side."""
    if devices < 1 or processes < 1 or devices % processes:
        raise ValueError(f"{devices} devices cannot be split evenly over {processes} processes")
    env = child_environment(devices // processes)
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-verify-") as tmp:
        sides: List[_Side] = []
        timed_out = False
        try:
            for side, (script, filename) in scripts.items():
                sides.append(_Side(side, script, filename, processes, env, Path(tmp)))
            deadline = time.monotonic() + timeout
            while True:
                for s in sides:
                    if not s.killed and s.settled():  # a side done: its background processes go now
                        s.kill(timed_out=False)
                if all(s.killed for s in sides) or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            timed_out = time.monotonic() > deadline
        finally:
            for s in sides:
                s.kill(timed_out=timed_out)
        return {s.side: s.collect() for s in sides}


def _failure(run: ProcessRun, timeout: float) -> Optional[str]:
    if run.result is not None:
        return None
    if run.timed_out:
        what = f"timed out after {timeout:g} s"
    elif run.returncode is not None and run.returncode < 0:
        what = f"was killed by signal {-run.returncode}"
    else:
        what = f"exited with code {run.returncode} without observations"
    tail = "\n".join(run.output.strip().splitlines()[-15:])
    return f"the {run.side} side (process {run.process}) {what}" + (f":\n{tail}" if tail else "")


def decide(runs: Dict[str, List[ProcessRun]], *, before: str, after: str, devices: int, processes: int,
           timeout: float, seconds: float) -> Verdict:
    verdict = Verdict("equivalent", "", before, after, devices, processes, seconds,
                      runs=runs["before"] + runs["after"])
    failures = [f for r in verdict.runs if (f := _failure(r, timeout))]
    if failures:
        verdict.status = "undecidable"
        verdict.reason = failures[0].splitlines()[0].rstrip(":")
        verdict.errors = failures
        return verdict
    pairs = list(zip(runs["before"], runs["after"]))
    for _, a in pairs:
        verdict.deprecations += [d for d in a.result.get("deprecations", ()) if d not in verdict.deprecations]
    raised = [b.result["exception"] for b, _ in pairs if b.result["exception"]]
    for b, a in pairs:
        verdict.differences += compare_process(b.result, a.result, b.process, prefix_only=bool(raised))
    first_before, first_after = pairs[0][0].result, pairs[0][1].result
    names = set(first_before["globals"]) & set(first_after["globals"])
    verdict.compared = f"{len(first_before['calls'])} compiled call value(s), {len(names)} global(s)"
    if raised:
        verdict.status = "undecidable"
        verdict.reason = f"the before side raised under the legacy runtime: {raised[0]['type']}: {raised[0]['message']}"
        verdict.errors = [raised[0]["traceback"]]
        after_exc = next((a.result["exception"] for _, a in pairs if a.result["exception"]), None)
        if after_exc:
            verdict.errors.append(f"the after side raised too: {after_exc['type']}: {after_exc['message']}")
        return verdict
    verdict.status = "divergent" if verdict.differences else "equivalent"
    if verdict.differences:
        first = verdict.differences[0]
        verdict.reason = f"{len(verdict.differences)} difference(s); first: {first.where} (process {first.process}): {first.what}"
    return verdict


def verify_files(before: str, after: str, *, devices: int = 8, processes: int = 1, timeout: float = 60.0,
                 before_name: Optional[str] = None, after_name: Optional[str] = None) -> Verdict:
    """Run ``before`` on the legacy runtime and ``after`` on the installed JAX; compare.

    ``*_name`` is the file name each runs under (``__file__``, its directory is the working
    directory and ``sys.path[0]``), for a migrated text written to a temporary file.
    """
    start = time.monotonic()
    before_name, after_name = before_name or before, after_name or after
    scripts = {"before": (os.path.abspath(before), os.path.abspath(before_name)),
               "after": (os.path.abspath(after), os.path.abspath(after_name))}
    runs = run_sides(scripts,
                     devices=devices, processes=processes, timeout=timeout)
    return decide(runs, before=before_name, after=after_name, devices=devices, processes=processes,
                  timeout=timeout, seconds=time.monotonic() - start)


def verify_migration(path: str, **options) -> Verdict:
    """Migrate ``path`` in memory with every rule (unsafe fixes on) and verify it against itself."""
    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    data = Path(path).read_bytes()
    settings = Settings(tuple(r.code for r in ALL_RULES), fix=True, write=False, unsafe_fixes=True)
    outcome = transform(data, path, settings)
    migrated_bytes = outcome.text.encode(outcome.encoding) if outcome.changed else data
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-migrated-") as tmp:
        migrated = os.path.join(tmp, os.path.basename(path))
        Path(migrated).write_bytes(migrated_bytes)
        verdict = verify_files(path, migrated, before_name=path, after_name=path, **options)
    verdict.after = f"{path} (migrated in memory{'' if outcome.changed else ', unchanged'})"
    return verdict
