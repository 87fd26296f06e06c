"""The files a process writes outside its working folder, seen through an audit hook.

A checkpoint written by several processes goes to one folder all of them reach: an absolute
path, often beside the script (``os.path.dirname(__file__)``) or an existing folder of the
project, reached through the working folder's links. Those writes leave the process's scratch
folder (``_layout.mirror``), so ``_files.observe_files`` never saw them, and both sides wrote
into the same real folder at once. In each process ``track(workdir)`` installs an audit hook
(``sys.addaudithook``: the ``open`` event for writing, ``os.rename`` / ``os.replace``
destinations, ``os.mkdir``) that records them; ``outside()`` lists, once the script is done, those
that exist and resolve outside the working folder, with whether this process created them (the
verifier observes them once a side has ended, then removes what the program created:
``runner``). ``__pycache__`` files are not the program's. Writes made in native code
(tensorstore) are not seen.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Dict, List, Optional

MAX_TRACKED = 2000
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class _Tracker:
    def __init__(self, workdir: str) -> None:
        self.workdir = os.path.realpath(workdir)
        self.files: Dict[str, bool] = {}  # absolute path as written -> created by this process
        self.folders: Dict[str, bool] = {}
        self.local = threading.local()

    def hook(self, event: str, args) -> None:
        if event == "open":
            path, flags = args[0], args[2]
            if not isinstance(flags, int) or not flags & _WRITING:
                return
            table = self.files
        elif event == "os.rename":
            path, table = args[1], self.files
        elif event == "os.mkdir":
            path, table = args[0], self.folders
        else:
            return
        if not isinstance(path, (str, bytes, os.PathLike)) or getattr(self.local, "busy", False):
            return
        self.local.busy = True
        try:
            absolute = os.path.abspath(os.fsdecode(path))
            if absolute not in table and len(table) < MAX_TRACKED and "__pycache__" not in absolute:
                table[absolute] = not os.path.lexists(absolute)
        except Exception:  # noqa: BLE001 - never in the program's way
            pass
        finally:
            self.local.busy = False

    def _outside(self, path: str) -> Optional[str]:
        real = os.path.realpath(path)
        inside = real == self.workdir or real.startswith(self.workdir + os.sep)
        return None if inside else real

    def outside(self) -> Dict[str, List[Dict[str, object]]]:
        """``{"files": [{"path", "created"}], "folders": [...]}``: what was written and still
        exists outside the working folder, by real path."""
        out: Dict[str, List[Dict[str, object]]] = {"files": [], "folders": []}
        for kind, table, exists in (("files", self.files, os.path.isfile), ("folders", self.folders, os.path.isdir)):
            for path, created in list(table.items()):
                real = self._outside(path)
                if real is not None and exists(real):
                    out[kind].append({"path": real, "created": created})
        return out


_tracker: Optional[_Tracker] = None


def track(workdir: str) -> None:
    """Start recording writes (once a process; an audit hook cannot be removed)."""
    global _tracker
    if _tracker is None:
        _tracker = _Tracker(workdir)
        sys.addaudithook(_tracker.hook)


def outside() -> Dict[str, List[Dict[str, object]]]:
    return _tracker.outside() if _tracker is not None else {"files": [], "folders": []}
