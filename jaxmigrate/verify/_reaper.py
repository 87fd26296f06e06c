"""What keeps the sides apart from the verifier and from each other, and ends all they started.

- ``protect_self`` (the verifier, once; each side's process, first thing): the process is not
  dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so ``/proc/<pid>/fd``, ``/mem`` and ptrace are
  closed to other processes of the same user: a side cannot open the verifier's descriptors
  (the other side's results) nor the other side's. A process running as root also gives up
  ``CAP_SYS_PTRACE`` (its bounding set and its own sets), without which root cannot pass that
  check either. Linux only; elsewhere nothing is done.
- ``become_subreaper`` (the verifier, once): ``prctl(PR_SET_CHILD_SUBREAPER, 1)``: a process a
  side started that is orphaned (its parent ended, also after ``setsid`` or
  ``process_group=0``) is given to the verifier, not to init, so it can still be found and ended.
- ``descendants`` / ``orphans`` / ``end``: the processes below a side's processes (read from
  ``/proc/<pid>/task/*/children``), the verifier's children it never started, and killing them,
  each named by pid and start time (a pid reused by another process is left alone). Orphans are
  looked for only while nothing else in this process starts processes (``busy``: one
  verification, no venv build, at a time): another thread's child, just forked and not yet in
  ``STARTED``, would look like one.

The standard library only (``_channel`` imports it in children before anything else).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, Optional, Set

_LINUX = sys.platform.startswith("linux")
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_CHILD_SUBREAPER = 4, 24, 36
_CAP_SYS_PTRACE = 19
_CAP_VERSION_3 = 0x20080522
STARTED: Set[int] = set()  # the processes this process started itself (sides, the keeper): never orphans


class _Busy:
    lock = threading.Lock()
    count = 0  # verifications (and venv builds) under way in this process


@contextmanager
def busy() -> Iterator[None]:
    """Around anything of the verifier's that starts processes (see ``orphans``)."""
    with _Busy.lock:
        _Busy.count += 1
    try:
        yield
    finally:
        with _Busy.lock:
            _Busy.count -= 1


def _libc():
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def _drop_ptrace(ctypes, libc) -> None:
    libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_PTRACE, 0, 0, 0)  # an exec'd program cannot get it back
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two of (effective, permitted, inheritable)
    if libc.capget(header, data) != 0:
        return
    for i in range(3):
        data[i] &= ~(1 << _CAP_SYS_PTRACE)
    libc.capset(header, data)


def protect_self() -> None:
    """This process not dumpable, and without CAP_SYS_PTRACE (see the module docstring)."""
    if not _LINUX:
        return
    try:
        ctypes, libc = _libc()
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        _drop_ptrace(ctypes, libc)
    except (ImportError, OSError, AttributeError):  # a Python without ctypes, a libc without prctl
        pass


def become_subreaper() -> None:
    if not _LINUX:
        return
    try:
        _libc()[1].prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def _stat(pid: int) -> Optional[list]:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return None if fields[0] == b"Z" else fields


def start_time(pid: int) -> Optional[int]:
    """When ``pid`` started (clock ticks since boot), None if it is gone (a zombie counts as gone)."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])


def group_of(pid: int) -> Optional[int]:
    fields = _stat(pid)
    return None if fields is None else int(fields[2])


def children(pid: int) -> Set[int]:
    found: Set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(int(c) for c in f.read().split())
        except OSError:
            pass
    return found


def descendants(roots: Iterable[int]) -> Dict[int, int]:
    """Every live process below ``roots`` (not the roots): pid -> start time."""
    found: Dict[int, int] = {}
    todo = list(roots)
    while todo:
        for child in children(todo.pop()) - found.keys():
            start = start_time(child)
            if start is not None:
                found[child] = start
                todo.append(child)
    return found


def orphans(since: int) -> Dict[int, int]:
    """This process's children it did not start (orphans given to it as subreaper) that started
    at ``since`` or later: pid -> start time. None while another thread of this process (another
    verification, a test's thread pool) may be starting one: a child it started a moment ago is
    not in ``STARTED`` yet (two verifications at once, each in a thread, killed each other's sides)."""
    found: Dict[int, int] = {}
    if _Busy.count > 1 or threading.active_count() > 1:  # another thread may be starting a process now
        return found
    for pid in children(os.getpid()) - STARTED:
        start = start_time(pid)
        if start is not None and start >= since:
            found[pid] = start
    return found


def end(processes: Dict[int, int]) -> None:
    """SIGKILL each process still the one of that start time; reap those that are this
    process's children (orphans it was given), for at most a second."""
    mine = children(os.getpid())
    for pid, start in processes.items():
        if start_time(pid) == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    waiting = [pid for pid in processes if pid in mine and pid not in STARTED]
    deadline = time.monotonic() + 1.0
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.remove(pid)
        if waiting:
            time.sleep(0.01)
