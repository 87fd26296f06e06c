"""What a verify child shares with the verifier: its tie to it, and where its results go.

- **Its tie** (``bind_to_parent``, first thing in a child, before any user code): on Linux the
  child asks for SIGKILL when the verifier (the thread that started it) dies
  (``PR_SET_PDEATHSIG``), then checks that its parent is still the verifier whose pid it was
  given: one killed before the request took effect has left an orphan, which ends at once.
- **Its results** go to an open file the verifier passes it (``--out-fd`` / an environment
  variable naming the descriptor), a file with no name (created and unlinked by the verifier):
  no path leads to it, so nothing the other side is given leads there either. The child writes
  its results as plain data (``_plain``: JSON and ``.npy``, never a pickle: nothing a side writes
  there can run code in the verifier) after an 8-byte header, then the header (their length)
  last: a nonzero header means the observations are complete. A disk too full to hold them ends
  the child with ``DISK_FULL`` and says so on its stderr.

Imported by children before JAX, the user's code and pytest's conftests: the standard library only.
"""

from __future__ import annotations

import errno
import os
import signal
import struct
import sys
from typing import Any

from jaxmigrate.verify import _plain, _reaper

PARENT_ENV = "JAXMIGRATE_VERIFY_PARENT"  # the verifier's pid, for the child's check
DISK_FULL = 75  # the exit status of a child whose results did not fit on the disk
_HEADER = struct.Struct("<Q")


def bind_to_parent() -> None:
    """Die with the verifier (see the module docstring); exit now if it is already gone. Not
    dumpable, without CAP_SYS_PTRACE (``_reaper.protect_self``): the other side cannot reach
    this process's descriptors."""
    expected = os.environ.pop(PARENT_ENV, None)  # the user's own subprocesses are not told
    _reaper.protect_self()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (ImportError, OSError, AttributeError):  # a Python without ctypes, a libc without prctl
            pass
    if expected is not None and os.getppid() != int(expected):  # it died before the request took effect
        os._exit(1)


def keep_private(fd: int) -> None:
    """The result descriptor is not passed on to the programs the process runs (closed on exec:
    they may be dumpable again)."""
    os.set_inheritable(fd, False)


def write_result(fd: int, result: Any) -> None:
    """``result`` as plain data into the open file ``fd``: the data after the header, the header
    last. A full disk (or quota) ends the process with ``DISK_FULL``, said on stderr."""
    data = _plain.dumps(result)
    try:
        at = _HEADER.size
        while at - _HEADER.size < len(data):
            at += os.pwrite(fd, data[at - _HEADER.size:at - _HEADER.size + (1 << 24)], at)
        os.pwrite(fd, _HEADER.pack(len(data)), 0)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        sys.stderr.write(f"jaxmigrate verify: no space left on the device for this process's results "
                         f"({len(data)} bytes): {exc.strerror}\n")
        sys.stderr.flush()
        os._exit(DISK_FULL)


def result_written(fd: int) -> bool:
    """Whether the child of ``fd`` has written its results whole (its header is set)."""
    head = os.pread(fd, _HEADER.size, 0)
    return len(head) == _HEADER.size and _HEADER.unpack(head)[0] > 0


def read_result(fd: int) -> Any:
    """The results written to ``fd`` (``result_written(fd)`` first); ``ValueError`` when they
    are not plain data in ``_plain``'s form (what a program wrote there itself)."""
    (size,) = _HEADER.unpack(os.pread(fd, _HEADER.size, 0))
    chunks, at = [], _HEADER.size
    while at - _HEADER.size < size:
        chunk = os.pread(fd, min(size - (at - _HEADER.size), 1 << 24), at)
        if not chunk:
            raise ValueError(f"cut short: {at - _HEADER.size} of {size} bytes")
        chunks.append(chunk)
        at += len(chunk)
    return _plain.loads(b"".join(chunks))
