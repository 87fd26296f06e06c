"""`jaxmigrate verify` ended from outside (issue 26): SIGTERM (how CI cancels a job), SIGINT
(Ctrl-C) and SIGKILL sent to the verify process while both sides busy-loop, each with a
`sleep 600` of its own in the background and one in a session of its own. No process of verify (its sides' processes, their
children, anything it started) survives it by more than a second, its temporary folders are
gone, and the exit code is 128 + the signal (130 for Ctrl-C; 1 is verify's "divergent")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Set

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from tests.test_verify_pairs import _alive  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

BUSY = """\
import os
import subprocess

subprocess.Popen(["sleep", "600"])  # a child of the side's process, in its process group
subprocess.Popen(["sleep", "600"], start_new_session=True)  # one that left the group and the session
mark = os.path.join({marks!r}, "{side}." + str(os.getpid()))
with open(mark + ".tmp", "w") as f:
    f.write(os.getcwd())
os.replace(mark + ".tmp", mark)
while True:  # 99% of a core, for ever
    pass
"""


def _descendants(pid: int) -> Set[int]:
    """Every process below ``pid`` (children of each thread, recursively)."""
    found: Set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = {int(c) for c in f.read().split()}
            except (FileNotFoundError, ProcessLookupError):
                continue
            todo += sorted(children - found)
            found |= children
    return found


def _sigint_default() -> None:  # a shell's background job starts with SIGINT ignored; Ctrl-C must reach verify
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args, temp: Path, marks: Path) -> subprocess.Popen:
    """``python -m jaxmigrate ARGS`` in a session of its own, TMPDIR ``temp``; returns once both
    sides have written their mark in ``marks`` (or the command ended)."""
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.Popen([sys.executable, "-m", "jaxmigrate", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 120
    while len(list(marks.glob("*.*[0-9]"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2.0)  # the verifier notes the processes below each side every 0.1 s: it has seen the sleeps
    return proc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_verify_ended_by_a_signal_leaves_nothing_running(tmp_path, signum):
    marks, temp = tmp_path / "marks", tmp_path / "tmp"
    marks.mkdir()
    temp.mkdir()  # verify's TMPDIR: every temporary folder or file it makes goes here
    for side in ("before", "after"):
        (tmp_path / f"{side}.py").write_text(BUSY.format(marks=str(marks), side=side))
    proc = _start(["verify", str(tmp_path / "before.py"), str(tmp_path / "after.py"), "--timeout", "600"], temp, marks)
    seen: Set[int] = set()
    try:
        assert proc.poll() is None, proc.communicate()
        assert len(list(marks.glob("*.*[0-9]"))) == 2, "the sides did not start"
        seen = _descendants(proc.pid)
        side_pids = {int(m.name.rsplit(".", 1)[1]) for m in marks.glob("*.*[0-9]")}
        assert side_pids <= seen and len(seen) >= 6, (side_pids, seen)  # two sides, four sleeps
        scratch = [Path(m.read_text()) for m in marks.glob("*.*[0-9]")]
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
        ended = time.monotonic()
        while any(_alive(pid) for pid in seen) and time.monotonic() < ended + 1.0:
            time.sleep(0.05)
        left = sorted(pid for pid in seen if _alive(pid))
        assert not left, f"still running a second after verify ended: {left}"
        while os.listdir(temp) and time.monotonic() < ended + 1.0:
            time.sleep(0.05)
        assert not os.listdir(temp), f"temporary folders left: {os.listdir(temp)}"
        assert not any(folder.exists() for folder in scratch)
        assert proc.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), (proc.returncode, err)
        if signum != signal.SIGKILL:
            assert b"Traceback" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen | _descendants(proc.pid):  # never leave busy loops behind, whatever the outcome
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


LEGACY_BUSY = "import jax\n\nprint(jax.tree_map(abs, [1]))\n" + BUSY


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_fix_verify_ended_by_a_signal_leaves_nothing_running_and_nothing_written(tmp_path, signum):
    """`fix --verify` says first that it runs the code, and ended from outside while it verifies,
    leaves no process, no temporary folder and no file written, and exits 128 + the signal."""
    marks, temp = tmp_path / "marks", tmp_path / "tmp"
    marks.mkdir()
    temp.mkdir()
    target = tmp_path / "train.py"
    target.write_text(LEGACY_BUSY.format(marks=str(marks), side="side"))
    before = target.read_bytes()
    proc = _start(["fix", "--no-cache", "--verify", str(target)], temp, marks)
    seen: Set[int] = set()
    try:
        assert proc.poll() is None, proc.communicate()
        seen = _descendants(proc.pid)
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
        ended = time.monotonic()
        while any(_alive(pid) for pid in seen) and time.monotonic() < ended + 1.0:
            time.sleep(0.05)
        assert not [pid for pid in seen if _alive(pid)], "still running a second after fix --verify ended"
        assert not os.listdir(temp), f"temporary folders left: {os.listdir(temp)}"
        assert proc.returncode == 128 + signum, (proc.returncode, err)
        assert err.decode().startswith("jaxmigrate fix --verify runs the given code"), err
        assert b"Interrupted" in err and b"Traceback" not in err, err
        assert target.read_bytes() == before
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen | _descendants(proc.pid):
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
