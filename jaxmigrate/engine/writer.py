"""How `fix` writes a file: a temporary file beside the target renamed over it (atomic), in
place when a rename would lose the file's identity (its other hard links, an owner this process
cannot give the new file), and not at all for a symbolic link or a read-only file (docs/safety.md)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterable, List, Optional

SUFFIX = ".jaxmigrate-tmp"  # temporary files are named .<file>.<pid>.<random>.jaxmigrate-tmp


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never half.

    The temporary file lives in the same folder (same file system, so ``os.replace`` is atomic)
    and gets the original's owner, group and permission bits (a new file keeps the temporary
    file's 0600); it is removed if anything fails before the rename. ``durable=False`` skips the
    fsync (for caches).
    """
    path = Path(path)
    try:
        st: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        st = None
    import tempfile  # here: only a write needs it (it costs `check` 2.6 ms of start-up)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if st is not None:
            _keep_owner(tmp, st)
            os.chmod(tmp, stat.S_IMODE(st.st_mode))  # after chown, which may clear set-id bits
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class NotWritten(Exception):
    """A file `fix` will not write; the message says why."""


def refusal(path: Path) -> Optional[str]:
    """Why `fix` does not write ``path``, or None. A symbolic link: writing through it would
    change a file elsewhere (perhaps outside the tree), replacing it would turn the link into a
    file. A file without its owner's write bit (0444): read-only on purpose, for root too."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return (f"a symbolic link (to {os.readlink(path)}); fix does not write through links: "
                "run it on the file the link points to")
    if not st.st_mode & stat.S_IWUSR:
        return "permission denied (the file is read-only)"
    return None


def write_fixed(path: Path, data: bytes, expected: Optional[bytes] = None) -> None:
    """`fix`'s write of ``path``: refused (``NotWritten``) by ``refusal``, or when the file no
    longer holds ``expected`` (the bytes the fix was made from: another program changed it
    meanwhile); in place for a file a rename would change (``_identity_kept`` fails); else atomic.
    OSError: the write failed."""
    why = refusal(path)
    if why:
        raise NotWritten(why)
    if expected is not None and _read(path) != expected:
        raise NotWritten("the file changed while fix worked on it; its new contents are kept: run fix again")
    st = os.stat(path)
    if _identity_kept(st):
        write_atomic(path, data)
    else:
        _write_in_place(path, data)


def _read(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _identity_kept(st: os.stat_result) -> bool:
    """Whether a new file renamed over this one is the same file to its users: it has no other
    hard link (a rename would split them), and this process may give it the same owner and group
    (root may; another user may only keep their own file, in one of their groups)."""
    if st.st_nlink > 1:
        return False
    if not hasattr(os, "geteuid"):  # Windows: no owners to keep
        return True
    euid = os.geteuid()
    return euid == 0 or st.st_uid == euid and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


def _keep_owner(tmp: str, st: os.stat_result) -> None:
    """Give the temporary file the original's owner and group, where they differ (root fixing a
    user's file; a file whose group is not the folder's)."""
    if hasattr(os, "chown"):
        tmp_st = os.stat(tmp)
        if (tmp_st.st_uid, tmp_st.st_gid) != (st.st_uid, st.st_gid):
            os.chown(tmp, st.st_uid, st.st_gid)


class Damaged(OSError):
    """An in-place write failed and so did writing the old bytes back: the file may be damaged."""


def _write_in_place(path: Path, data: bytes) -> None:
    """Overwrite the file's bytes, keeping its inode: hard links, owner, mode, ACLs all stay (as
    ruff writes). Not atomic, so: the space the new bytes need is reserved first (a full disk
    fails there, before a byte is written); the bytes are written unbuffered; if the write fails
    the old bytes are written back through a fresh descriptor and the error raised; and if even
    that fails, the old bytes are saved to another file and ``Damaged`` says where. A SIGKILL in
    the write itself can still leave the file part written."""
    fd = os.open(path, os.O_RDWR)
    try:
        old = _read_all(fd)
        _reserve(fd, len(data))
        try:
            _overwrite(fd, data)
        except BaseException as exc:
            try:
                restore = os.open(path, os.O_WRONLY)
                try:
                    _overwrite(restore, old)
                finally:
                    os.close(restore)
            except OSError as again:
                saved = _save_copy(path, old)
                where = f"its original bytes are saved at {saved}" if saved else "its original bytes could not be saved"
                raise Damaged(f"{exc}; writing the original back failed too ({again}): {path} may be damaged; "
                              f"{where}") from exc
            raise
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks: List[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reserve(fd: int, size: int) -> None:
    """Allocate ``size`` bytes of the file now (ENOSPC here leaves it untouched); a file system
    that cannot allocate ahead (EOPNOTSUPP, EINVAL) is written without."""
    if size and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise


def _overwrite(fd: int, data: bytes) -> None:
    """``data`` from offset 0, unbuffered (a failed write leaves no buffer to flush later), then
    the file cut to its length and synced."""
    view, done = memoryview(data), 0
    while done < len(data):
        done += os.pwrite(fd, view[done:], done)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _save_copy(path: Path, data: bytes) -> Optional[str]:
    """Save ``data`` beside ``path``, else in the temporary folder; the path, or None."""
    import tempfile

    for folder in (path.parent, Path(tempfile.gettempdir())):
        try:
            fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".jaxmigrate-original", dir=folder)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            return name
        except OSError:
            continue
    return None


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
