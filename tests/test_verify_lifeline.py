"""The pieces that end verify's processes with it (issue 26), each on its own, without JAX:
the keeper (``_lifeline``: what is listed when the verifier dies is killed and removed, what
was forgotten is not, a forked child does not keep it waiting), a child's tie to the verifier
(``_channel.bind_to_parent``: PR_SET_PDEATHSIG, the parent check) and the result file with no
name. The whole command under SIGTERM, SIGINT and SIGKILL: tests/test_verify_signals.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from jaxmigrate.verify import _channel

ROOT = Path(__file__).resolve().parent.parent
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG is Linux's")

DIES_KEEPING = """\
import os, signal, subprocess, sys, time
from jaxmigrate.verify import _lifeline

folder = _lifeline.make_folder("jaxmigrate-test-")
quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
kept = subprocess.Popen(["sleep", "600"], **quiet)
_lifeline.track_group(kept.pid)
forgotten = subprocess.Popen(["sleep", "600"], **quiet)
_lifeline.track_group(forgotten.pid)
_lifeline.forget_group(forgotten.pid)
if {fork}:
    if os.fork() == 0:  # a forked child living on must not keep the keeper waiting
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(1, 2)
        time.sleep(30)
        os._exit(0)
print(folder, kept.pid, forgotten.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie no one reaps counts as gone
    except FileNotFoundError:
        return False


def _env(tmp_path: Path, **more: str) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, TMPDIR=str(tmp_path), **more)


def _kill(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@linux
@pytest.mark.parametrize("fork", [False, True], ids=["alone", "with-a-forked-child"])
def test_the_keeper_ends_what_a_killed_verifier_left(tmp_path, fork):
    proc = subprocess.run([sys.executable, "-c", DIES_KEEPING.format(fork=fork)], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    folder, kept, forgotten = proc.stdout.split()
    try:
        deadline = time.monotonic() + 1.0
        while (_alive(int(kept)) or os.path.exists(folder)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(int(kept)), "a listed process group outlived the verifier by a second"
        assert not os.path.exists(folder), "a listed folder outlived the verifier by a second"
        assert _alive(int(forgotten)), "the keeper killed a group it was told was over"
    finally:
        _kill(int(kept), int(forgotten))


BOUND = """\
import sys, time
from jaxmigrate.verify._channel import bind_to_parent
bind_to_parent()
print("bound", flush=True)
time.sleep(600)
"""

PARENT = """\
import os, signal, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", {bound!r}], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True,
                         env=dict(os.environ, JAXMIGRATE_VERIFY_PARENT=str(os.getpid())))
assert child.stdout.readline() == b"bound\\n"
print(child.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@linux
def test_a_child_dies_with_its_parent_without_the_keeper(tmp_path):
    """Its own session (out of reach of a signal to the verifier's group), no keeper: the
    parent-death signal alone ends it."""
    proc = subprocess.run([sys.executable, "-c", PARENT.format(bound=BOUND)], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    child = int(proc.stdout.split()[0])
    try:
        deadline = time.monotonic() + 1.0
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(child)
    finally:
        _kill(child)


def test_a_child_whose_parent_is_already_gone_stops_at_once(tmp_path):
    """Started by a verifier that died before the child could ask for the signal: its parent is
    not the pid it was given, so it exits before running anything."""
    parent = os.getppid()  # alive, and not the child's parent
    proc = subprocess.run([sys.executable, "-c", BOUND], env=_env(tmp_path, JAXMIGRATE_VERIFY_PARENT=str(parent)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "bound" not in proc.stdout


def test_results_go_through_a_file_without_a_name():
    with tempfile.TemporaryFile() as f:
        fd = f.fileno()
        assert not _channel.result_written(fd)
        if sys.platform.startswith("linux"):
            assert os.readlink(f"/proc/self/fd/{fd}").endswith("(deleted)")  # no path leads to it
        _channel.write_result(fd, {"calls": [1, 2], "globals": {"x": "y" * 100_000}})
        assert _channel.result_written(fd)
        assert _channel.read_result(fd) == {"calls": [1, 2], "globals": {"x": "y" * 100_000}}
