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

Folders and files the program made with ``tempfile`` (``mkdtemp``, ``TemporaryDirectory``,
``mkstemp``, ``NamedTemporaryFile``: the ``tempfile.mkdtemp`` / ``tempfile.mkstemp`` audit
events) have a name of their own on each side and in each run: ``temporary_files()`` observes
what is in them at the end under the name of their order, ``<tempdir 1>/shard_0.npy``,
``<tempfile 2>``, the same on both sides, so they are compared as the working folder's files
are (and a string holding such a path is observed with that name: ``temporary_names``);
``outside()`` leaves them out.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Dict, List, Optional, Tuple

MAX_TRACKED = 2000
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class _Tracker:
    def __init__(self, workdir: str) -> None:
        self.workdir = os.path.realpath(workdir)
        self.files: Dict[str, bool] = {}  # absolute path as written -> created by this process
        self.folders: Dict[str, bool] = {}
        self.temps: List[str] = []  # tempfile's folders, in the order made (real paths)
        self.temp_files: List[str] = []  # and its files
        self.given: Dict[str, str] = {}  # real path -> the path tempfile returned
        self.local = threading.local()

    def hook(self, event: str, args) -> None:
        if event in ("tempfile.mkdtemp", "tempfile.mkstemp"):
            made = self.temps if event == "tempfile.mkdtemp" else self.temp_files
            if len(made) < MAX_TRACKED and isinstance(args[0], (str, bytes)):
                made.append(os.path.realpath(os.fsdecode(args[0])))
                self.given[made[-1]] = os.path.abspath(os.fsdecode(args[0]))
            return
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
        inside = any(real == base or real.startswith(base + os.sep) for base in [self.workdir, *self.temps])
        return None if inside or real in self.temp_files else real

    def temporary(self) -> Dict[str, Dict[str, Any]]:
        """The files in tempfile's folders and tempfile's files still there, by the name of their
        order: a file in a folder made inside another counts in the innermost."""
        from jaxmigrate.verify._files import observe_file, observe_files

        out: Dict[str, Dict[str, Any]] = {}
        for i, folder in enumerate(self.temps, start=1):
            if not os.path.isdir(folder):
                continue
            for rel, obs in observe_files(folder).items():
                where = os.path.join(folder, rel)
                if max((t for t in self.temps if where.startswith(t + os.sep)), key=len) == folder:
                    out[f"<tempdir {i}>/{rel}"] = obs
        for i, path in enumerate(self.temp_files, start=1):
            if os.path.isfile(path) and not any(path.startswith(t + os.sep) for t in self.temps):
                try:
                    out[f"<tempfile {i}>"] = observe_file(path)
                except OSError as exc:
                    out[f"<tempfile {i}>"] = {"kind": "unobservable", "error": f"{type(exc).__name__}: {exc}"}
        return out

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


def temporary_files() -> Dict[str, Dict[str, Any]]:
    return _tracker.temporary() if _tracker is not None else {}


def temporary_names() -> List[Tuple[str, str]]:
    """``(path, name)`` of tempfile's folders and files (``<tempdir 1>``), as returned and as real
    paths, longest first: a string global holding one reads the same on both sides."""
    if _tracker is None:
        return []
    pairs = [(path, f"<{kind} {i}>") for kind, made in (("tempdir", _tracker.temps), ("tempfile", _tracker.temp_files))
             for i, real in enumerate(made, start=1) for path in {real, _tracker.given.get(real, real)}]
    return sorted(pairs, key=lambda pair: -len(pair[0]))
