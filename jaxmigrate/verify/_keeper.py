"""The keeper of a verifier: ``python -I -S _keeper.py``, started by ``_lifeline``.

It reads the verifier's process groups and temporary folders from its standard input, a pipe
whose only writer is the verifier: ``+g PGID`` / ``-g PGID`` (a group started / ended),
``+d HEX`` / ``-d HEX`` (a folder made / removed; its path's bytes in hex), ``+p PID:START`` /
``-p PID:START`` (a process seen below a side's, with its start time). At end of file, the
verifier has exited, however it ended (SIGKILL included): the keeper kills every group still
listed (what a side's processes started in the background with them) and every listed process
that is still the one of that start time (one that left its group or session), removes every
folder still listed, then exits. It is not dumpable (``prctl(PR_SET_DUMPABLE, 0)``): a side
cannot reach its pipe through ``/proc``. It runs in a session of its own, ignoring the signals a
terminal or a job runner sends a whole group, so it outlives the verifier by the time this takes.

The standard library only, no site packages: nothing of the user's is imported here.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys


def _undumpable() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        except (ImportError, OSError, AttributeError):
            pass


def _started(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rpartition(b")")[2].split()[19])
    except (OSError, IndexError, ValueError):
        return -1


def main() -> None:
    _undumpable()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    groups, folders = set(), set()
    processes: "set[tuple[int, int]]" = set()
    for line in sys.stdin.buffer:
        what, _, value = line.strip().partition(b" ")
        if what == b"+g":
            groups.add(int(value))
        elif what == b"-g":
            groups.discard(int(value))
        elif what == b"+d":
            folders.add(bytes.fromhex(value.decode()))
        elif what == b"-d":
            folders.discard(bytes.fromhex(value.decode()))
        elif what in (b"+p", b"-p"):
            pid, _, start = value.partition(b":")
            (processes.add if what == b"+p" else processes.discard)((int(pid), int(start)))
    for pid, start in processes:
        if _started(pid) == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:  # gone already
            pass
    for folder in folders:
        for _ in range(3):  # a process dying from the kill above may still have been writing there
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.exists(folder):
                break


if __name__ == "__main__":
    main()
