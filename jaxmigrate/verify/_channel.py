"""What a verify child shares with the verifier: its tie to it, and where its results go.

- **Its tie** (``bind_to_parent``, first thing in a child, before any user code): on Linux the
  child asks for SIGKILL when the verifier (the thread that started it) dies
  (``PR_SET_PDEATHSIG``), then checks that its parent is still the verifier whose pid it was
  given: one killed before the request took effect has left an orphan, which ends at once.
- **Its results** go to an open file the verifier passes it (``--out-fd`` / an environment
  variable naming the descriptor), a file with no name (created and unlinked by the verifier):
  no path leads to it, so nothing the other side is given leads there either. The child writes
  its pickle after an 8-byte header, then the header (the pickle's length) last: a nonzero
  header means the observations are complete.

Imported by children before JAX, the user's code and pytest's conftests: the standard library only.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from typing import Any

PARENT_ENV = "JAXMIGRATE_VERIFY_PARENT"  # the verifier's pid, for the child's check
_HEADER = struct.Struct("<Q")


def bind_to_parent() -> None:
    """Die with the verifier (see the module docstring); exit now if it is already gone."""
    expected = os.environ.pop(PARENT_ENV, None)  # the user's own subprocesses are not told
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (ImportError, OSError, AttributeError):  # a Python without ctypes, a libc without prctl
            pass
    if expected is not None and os.getppid() != int(expected):  # it died before the request took effect
        os._exit(1)


def write_result(fd: int, result: Any) -> None:
    """Pickle ``result`` into the open file ``fd``: the data after the header, the header last."""
    with os.fdopen(os.dup(fd), "wb") as f:
        f.seek(_HEADER.size)
        pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        f.flush()
        size = f.tell() - _HEADER.size
    os.pwrite(fd, _HEADER.pack(size), 0)


def result_written(fd: int) -> bool:
    """Whether the child of ``fd`` has written its results whole (its header is set)."""
    head = os.pread(fd, _HEADER.size, 0)
    return len(head) == _HEADER.size and _HEADER.unpack(head)[0] > 0


def read_result(fd: int) -> Any:
    """The results written to ``fd`` (``result_written(fd)`` first)."""
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(_HEADER.size)
        return pickle.load(f)
