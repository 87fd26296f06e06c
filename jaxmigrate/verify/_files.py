"""The files a program wrote under its working directory, as observations.

Only real files count (the links of the scratch folder to the project's own entries, see
``_layout.mirror``, are not followed). ``.npy`` files are observed as their array, ``.npz``
files as a dict of their arrays (compared by value like any array); every other file by its size
and SHA-256 (compared by bytes). Files written outside the working folder, into the project
folder every process reaches, are observed once a side has ended (``settle_outside``).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Dict, List, Optional

MAX_FILES = 200


def _bytes(path: str) -> Dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {"kind": "bytes", "size": os.path.getsize(path), "sha256": digest.hexdigest()}


def observe_file(path: str) -> Dict[str, Any]:
    import numpy as np

    from jaxmigrate.verify.observe import observe

    try:
        if path.endswith(".npy"):
            return observe(np.load(path, allow_pickle=False))
        if path.endswith(".npz"):
            with np.load(path, allow_pickle=False) as data:
                return observe({name: data[name] for name in data.files})
    except Exception:  # noqa: BLE001 - not readable as arrays: compared by bytes
        pass
    return _bytes(path)


def observe_files(root: str) -> Dict[str, Dict[str, Any]]:
    """Relative path -> observation of every real file under ``root`` (at most MAX_FILES)."""
    out: Dict[str, Dict[str, Any]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)) and d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path) or len(out) >= MAX_FILES:
                continue
            try:
                out[os.path.relpath(path, root)] = observe_file(path)
            except OSError as exc:
                out[os.path.relpath(path, root)] = {"kind": "unobservable", "error": f"{type(exc).__name__}: {exc}"}
    return out


PROJECT = "<project>/"  # the key prefix of a file written into the project folder, outside the working folder


def _under(path: str, base: str) -> Optional[str]:
    if path == base or not path.startswith(base.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(path, base)


def settle_outside(runs: Dict[str, List[Any]], bases: Dict[str, str], observe: bool) -> None:
    """Once every process of the sides has ended: what each side wrote outside its working
    folders (``_written``; ``runs``: side -> process runs, ``bases``: side -> the folder its
    program runs from, ``_layout``), noted in its process 0's result: ``project_written``, the
    files under the base (the project, which every process of a side reaches: a checkpoint
    folder beside the script), relative to it; ``project_created``, what of it the program
    created (files and folders, removable by ``remove_created``); ``outside_unobserved``, what is
    not compared. With ``observe`` (the side ran alone: nothing else wrote there) the project
    files are observed, once for the side, into its process 0's ``files`` as ``<project>/REL``;
    else they are listed as not compared, as files elsewhere always are."""
    for side, side_runs in runs.items():
        base = os.path.realpath(bases[side])
        project: Dict[str, str] = {}
        elsewhere, created = set(), set()
        for run in side_runs:
            found = (run.result or {}).get("outside") or {}
            for entry in found.get("files", ()):
                rel = _under(entry["path"], base)
                if rel is None:
                    elsewhere.add(entry["path"])
                    continue
                project[rel] = entry["path"]
                if entry["created"]:
                    created.add(entry["path"])
            created.update(entry["path"] for entry in found.get("folders", ())
                           if entry["created"] and _under(entry["path"], base) is not None)
        first = side_runs[0].result if side_runs else None
        if first is None:
            continue
        first["project_written"], first["project_created"] = sorted(project), sorted(created)
        first["outside_unobserved"] = sorted(elsewhere) + ([] if observe else [PROJECT + rel for rel in sorted(project)])
        if observe:
            for rel in sorted(project)[:MAX_FILES]:
                try:
                    first["files"][PROJECT + rel] = observe_file(project[rel])
                except OSError as exc:
                    first["files"][PROJECT + rel] = {"kind": "unobservable", "error": f"{type(exc).__name__}: {exc}"}


def shared_folder(runs: Dict[str, List[Any]]) -> bool:
    """Whether both sides wrote into one place of the project at once: the same file, or files
    in one subfolder of it (a checkpoint folder); then their files there cannot be told apart."""
    written = []
    for side_runs in runs.values():
        first = side_runs[0].result if side_runs else None
        written.append(set((first or {}).get("project_written", ())))
    if len(written) < 2:
        return False
    folders = [{os.path.dirname(rel) for rel in names} - {""} for names in written]
    return bool(written[0] & written[1] or folders[0] & folders[1])


def remove_created(runs: Dict[str, List[Any]]) -> None:
    """Remove what the sides' programs created in the project outside their working folders
    (files, then folders left empty), so that the next run starts from the tree as it was."""
    paths = [p for side_runs in runs.values() for run in side_runs[:1]
             for p in (run.result or {}).get("project_created", ())]
    for path in paths:
        if os.path.isfile(path) or os.path.islink(path):
            try:
                os.remove(path)
            except OSError:
                pass
    for folder in sorted((p for p in paths if os.path.isdir(p)), key=lambda p: p.count(os.sep), reverse=True):
        try:
            os.rmdir(folder)  # only when empty: what else is in it stays
        except OSError:
            pass
