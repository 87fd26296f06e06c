"""The files a program wrote under its working directory, as observations.

Only real files count (the links of the scratch folder to the project's own entries, see
``_layout.mirror``, are not followed). ``.npy`` files are observed as their array, ``.npz``
files as a dict of their arrays (compared by value like any array); every other file by its size
and SHA-256 (compared by bytes).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Dict

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
