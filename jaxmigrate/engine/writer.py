"""Atomic file replacement: write a temporary file beside the target, then rename over it."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

SUFFIX = ".jaxmigrate-tmp"  # temporary files are named .<file>.<pid>.<random>.jaxmigrate-tmp


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never half.

    The temporary file lives in the same folder (same file system, so ``os.replace`` is atomic)
    and gets the original's permission bits (a new file keeps the temporary file's 0600); it is
    removed if anything fails before the rename. ``durable=False`` skips the fsync (for caches).
    """
    path = Path(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    import tempfile  # here: only a write needs it (it costs `check` 2.6 ms of start-up)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def remove_stale_temporaries(folders: Iterable[Path]) -> int:
    """Delete temporary files that a killed run left in ``folders`` (their process is gone); a
    running process's (another ``fix`` at work) are kept. Returns how many went."""
    removed = 0
    for folder in folders:
        try:
            entries = [e for e in os.scandir(folder) if e.name.startswith(".") and e.name.endswith(SUFFIX)]
        except OSError:
            continue
        for entry in entries:
            parts = entry.name[: -len(SUFFIX)].rsplit(".", 2)
            if len(parts) != 3 or not parts[1].isdigit() or _alive(int(parts[1])):
                continue
            try:
                os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that has exited and waits to be reaped (where nothing reaps orphans, a killed
    run's workers stay so): it writes nothing any more."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            return any(line.startswith("State:") and "Z" in line.split()[1:2] for line in handle)
    except OSError:
        return False
