"""Start each side's processes, wait for them, kill what is left: the verifier's process handling.

Each side runs in ``processes`` fresh Python processes, all sides at once, each process in its
own session so that a time-out (or the end of its side) kills its whole process group. Only the
loopback interface is used (the coordinator of a multi-process side listens on 127.0.0.1 at a
free port). Nothing outlives ``run_launches``, nor the verifier (``_lifeline``: signals, the
keeper; ``_channel.bind_to_parent`` in each process): the verifier is a child subreaper and
not dumpable (``_reaper``); while a side runs, the processes below its processes are noted
(and told to the keeper) at every turn of the wait, and when it ends they are killed with its
process groups, also those that left the group or the session, and then every orphan the
verifier was given since the side started. Each process's output goes through a pipe, its
first and last megabyte kept (``_capture``).

Each side has a folder of its own (mode 0700, made apart from the other side's, so that no
folder above a side's holds the other's), with a folder per process: its scratch working
folder, and its link to jaxmigrate for a real legacy JAX. A process's results and output go to
files with no name that it is given open (``_channel``): nothing a side is given, its
arguments, environment, working folder or open files, leads to the other side's results.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple, cast

from jaxmigrate.verify import _capture, _channel, _lifeline, _reaper
from jaxmigrate.verify._reaper import group_of

GRACE_SECONDS = 2.0  # a side whose observations are all written (or that already failed) gets this long to exit
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)

# (process id, port, the process's own folder, the descriptor of its result file) -> (command,
# working directory, environment)
Launch = Callable[[int, int, Path, int], Tuple[List[str], str, Dict[str, str]]]


@dataclass
class ProcessRun:
    side: str
    process: int
    pid: int = 0
    returncode: Optional[int] = None
    result: Optional[Dict[str, Any]] = None
    output: str = ""
    timed_out: bool = False
    malformed: str = ""  # why results it wrote could not be read as plain data (a program writing there)

    def ended(self, timeout: float) -> Optional[str]:
        """Why it gave no results, when the verifier knows more than its exit status."""
        if self.timed_out:
            return f"timed out after {timeout:g} s"
        if self.malformed:
            return f"wrote results that are not the verifier's plain data, not read ({self.malformed})"
        if self.returncode == _channel.DISK_FULL:
            return "could not write its results: no space left on the device (the disk is full)"
        return None

    @property
    def finished(self) -> Dict[str, Any]:
        """``result``, for a run its caller knows finished (it looked for failures first)."""
        return cast(Dict[str, Any], self.result)


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
    env["PYTHONHASHSEED"] = "0"  # the same set and dict-of-str order on both sides
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for name in ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"):
        env.pop(name, None)
    return env


def real_legacy(env: Dict[str, str], workdir: Path) -> Dict[str, str]:
    """The environment of a process running on a real legacy JAX in its own venv: jaxmigrate
    importable through a folder holding only a link to it (the folder above this package may be
    a site-packages whose numpy and jax would shadow the venv's), the user's PYTHONPATH after it."""
    shim = workdir / "legacy-path"
    shim.mkdir(exist_ok=True)
    try:
        (shim / "jaxmigrate").symlink_to(Path(_PACKAGE_ROOT) / "jaxmigrate")
    except FileExistsError:
        pass
    user = os.environ.get("PYTHONPATH")
    return dict(env, PYTHONPATH=os.pathsep.join(p for p in (str(shim), user) if p), JAXMIGRATE_VERIFY_LEGACY="real")


def script_launch(side: str, script: str, filename: str, processes: int, env: Dict[str, str],
                  python: Optional[str] = None) -> Launch:
    """How to start one process of a side running a script (``python -m jaxmigrate.verify._child``):
    the way its project runs it (``_layout``), in a scratch working folder of its own. ``python``:
    the interpreter of a venv with a real legacy JAX (the before side, with no emulation)."""
    from jaxmigrate.verify._layout import locate, mirror

    layout = locate(filename)
    extra = [arg for entry in layout.path for arg in ("--path-entry", entry)]
    if layout.module:
        extra += ["--module", layout.module]
    env = dict(env, PYTHONSAFEPATH="1")  # the working folder is not on sys.path (a logging.py there)

    def launch(i: int, port: int, folder: Path, out_fd: int):
        cwd = mirror(layout.base, folder / "cwd")
        cmd = [python or sys.executable, "-m", "jaxmigrate.verify._child", "--side", side, "--script", script,
               "--filename", filename, "--out-fd", str(out_fd), "--processes", str(processes),
               "--process-id", str(i), "--port", str(port), *extra]
        return cmd, cwd, (real_legacy(env, folder) if python else env)

    return launch


class _Verifier:
    hardened = False


def _harden_verifier() -> None:
    """Once per process: not dumpable, and the subreaper of what the sides start (``_reaper``)."""
    if not _Verifier.hardened:
        _reaper.protect_self()
        _reaper.become_subreaper()
        _Verifier.hardened = True


class _Side:
    def __init__(self, side: str, processes: int):
        self.side = side
        self.processes = processes
        self.runs = [ProcessRun(side, i) for i in range(processes)]
        self.folder = _lifeline.make_folder(f"jaxmigrate-verify-{side}-")
        self.outs: List[IO[bytes]] = []  # result files, without a name (``_channel``)
        self.logs: List[_capture.Capture] = []  # standard output and error, through pipes
        self.procs: List[subprocess.Popen] = []
        self.below: Dict[int, int] = {}  # processes seen below the side's processes: pid -> start time
        self.since: Optional[int] = None  # the start time of its first process
        self.done_at: Optional[float] = None
        self.killed = False

    def start(self, launch: Launch) -> None:
        _harden_verifier()
        port = free_port() if self.processes > 1 else 0
        for i in range(self.processes):
            folder = Path(self.folder) / f"p{i}"
            folder.mkdir(mode=0o700)
            self.outs.append(tempfile.TemporaryFile())
            self.logs.append(_capture.Capture())
            out = self.outs[i].fileno()
            cmd, cwd, env = launch(i, port, folder, out)
            env = dict(env, **{_channel.PARENT_ENV: str(os.getpid())})
            with _lifeline.uninterrupted():  # started and known to the keeper, or not started
                self.procs.append(subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                                   stdout=self.logs[i].write_fd, stderr=subprocess.STDOUT,
                                                   pass_fds=(out,), start_new_session=True))
                _reaper.STARTED.add(self.procs[-1].pid)
                _lifeline.track_group(self.procs[-1].pid)
            self.logs[i].started()
            self.runs[i].pid = self.procs[-1].pid
            if self.since is None:
                self.since = _reaper.start_time(self.procs[-1].pid) or 0

    def watch(self) -> None:
        """Note (and tell the keeper) the processes now below the side's processes, and the
        orphans the verifier was given since the side started."""
        if self.killed:
            return
        seen = _reaper.descendants(p.pid for p in self.procs)
        seen.update(_reaper.orphans(self.since or 0))
        for pid, start in seen.items():
            if self.below.get(pid) != start:
                with _lifeline.uninterrupted():
                    self.below[pid] = start
                    _lifeline.track_process(pid, start)

    def written(self, i: int) -> bool:
        return _channel.result_written(self.outs[i].fileno())

    def settled(self) -> bool:
        """All exited; or all observations written, or one process failed, and the grace is over."""
        codes = [p.poll() for p in self.procs]
        if all(c is not None for c in codes):
            return True
        written = all(self.written(i) for i in range(len(self.procs)))
        failed = any(c is not None and not self.written(i) for i, c in enumerate(codes))
        if written or failed:
            self.done_at = self.done_at or time.monotonic()
            return time.monotonic() - self.done_at > GRACE_SECONDS
        return False

    def claims(self, pid: int) -> bool:
        """Whether ``pid`` was seen below this side, or is in one of its process groups."""
        return pid in self.below or group_of(pid) in {p.pid for p in self.procs}

    def kill(self, timed_out: bool, others: Sequence["_Side"] = ()) -> None:
        """Kill each process's whole group, also of a process that exited: what it started in
        the background (a server, a ``sleep``) is still there, holding its output file open;
        then every process seen below them, and the orphans the verifier was given since the
        side started that no side still running (``others``) claims.
        Once only: a group id is not signalled again after its processes are gone."""
        if self.killed:
            return
        with _lifeline.uninterrupted():
            self.watch()  # what is below now, whatever group or session it is in
            self.killed = True
            for run, proc in zip(self.runs, self.procs):
                if proc.poll() is None:
                    run.timed_out = timed_out and not self.written(run.process)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # the group outlives its leader while it has members
                except (ProcessLookupError, PermissionError):  # empty: nothing left
                    pass
            _reaper.end(self.below)
            for proc in self.procs:
                proc.wait()
                _lifeline.forget_group(proc.pid)
                _reaper.STARTED.discard(proc.pid)
            for _ in range(100):  # orphans given to the verifier: what a killed process had just started
                left = {pid: start for pid, start in _reaper.orphans(self.since or 0).items()
                        if not any(o.claims(pid) for o in others if not o.killed)}
                if not left:
                    break
                _reaper.end(left)
            for pid, start in self.below.items():
                _lifeline.forget_process(pid, start)
            _capture.drain(self.logs)

    def collect(self) -> List[ProcessRun]:
        for run, proc, out, log in zip(self.runs, self.procs, self.outs, self.logs):
            run.returncode = proc.returncode
            run.output = log.text()
            if self.written(run.process):
                try:
                    run.result = _channel.read_result(out.fileno())
                except ValueError as exc:  # not what the child writes: the program wrote there
                    run.malformed = str(exc)
        return self.runs

    def close(self) -> None:
        """Its files closed, its folder removed."""
        with _lifeline.uninterrupted():
            for f in self.outs:
                f.close()
            for log in self.logs:
                log.close()
            _lifeline.remove_folder(self.folder)


def run_launches(launches: Dict[str, Launch], *, processes: int, timeout: float) -> Dict[str, List[ProcessRun]]:
    """Start every side (``{side: launch}``) at once, each in ``processes`` processes; wait for
    all (at most ``timeout`` seconds); their process runs by side."""
    with _reaper.busy():
        return _run_launches(launches, processes=processes, timeout=timeout)


def _run_launches(launches: Dict[str, Launch], *, processes: int, timeout: float) -> Dict[str, List[ProcessRun]]:
    sides: List[_Side] = []
    try:
        timed_out = False
        try:
            for side, launch in launches.items():
                with _lifeline.uninterrupted():  # its folder made and kept in ``sides``
                    sides.append(_Side(side, processes))
                sides[-1].start(launch)
            deadline = time.monotonic() + timeout
            turn = 0
            while True:
                turn += 1
                for s in sides:
                    if turn % 5 == 1:  # every 0.1 s or so
                        s.watch()
                    if not s.killed and s.settled():  # a side done: its background processes go now
                        s.kill(timed_out=False, others=[o for o in sides if o is not s])
                if all(s.killed for s in sides) or time.monotonic() > deadline:
                    break
                _capture.pump([log for s in sides for log in s.logs], 0.02)
            timed_out = time.monotonic() > deadline
        finally:
            with _lifeline.uninterrupted():  # a signal now is acted on once every side is killed
                for s in sides:
                    s.kill(timed_out=timed_out)
        return {s.side: s.collect() for s in sides}
    finally:
        with _lifeline.uninterrupted():
            for s in sides:
                s.close()
