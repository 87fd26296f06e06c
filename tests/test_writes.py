"""How `fix` writes a file (issue 16 item 10): owner, group and hard links kept, read-only files
and symbolic links refused with the reason, a failed write called a write failure. Each case
sits next to a legacy file that must still be fixed: one file's trouble is that file's."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main
from jaxmigrate.engine import writer
from jaxmigrate.engine.pipeline import FileResult
from jaxmigrate.engine.writer import SUFFIX

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

LEGACY = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"
FIXED = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_shardings=None, out_shardings=None)\n"


def _fix(*args):
    return CliRunner().invoke(main, ["fix", "-j", "1", "--no-cache", *map(str, args)], catch_exceptions=False)


def _tree(tmp_path: Path, name: str) -> Path:
    """``tmp_path/tree`` with ``ok.py`` and ``name``, both legacy; returns the second."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.py").write_text(LEGACY)
    target = tree / name
    target.write_text(LEGACY)
    return target


def _temporaries(folder: Path) -> list:
    return [p.name for p in folder.iterdir() if p.name.endswith(SUFFIX)]


def test_read_only_file_is_not_written(tmp_path):
    """0444: refused by its mode bits, so also when root (who may write anything) runs fix."""
    ro = _tree(tmp_path, "ro.py")
    os.chmod(ro, 0o444)
    result = _fix(ro.parent)
    assert result.exit_code == 2, result.output
    assert "ro.py:1:1: JM000 not written: permission denied (the file is read-only)" in result.output
    assert "ro.py:3:15: JM101" in result.output  # its findings stay reported
    assert ro.read_text() == LEGACY and stat.S_IMODE(os.stat(ro).st_mode) == 0o444
    assert (ro.parent / "ok.py").read_text() == FIXED
    diff = _fix("--diff", ro.parent)  # nor shown as a fix --diff would apply
    assert diff.exit_code == 2 and "not written: permission denied" in diff.output and "b/tree/ro.py" not in diff.output


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file another owner (this machine runs the suite as root)")
def test_owner_and_group_are_kept(tmp_path):
    theirs = _tree(tmp_path, "theirs.py")
    os.chown(theirs, 12345, 23456)
    os.chmod(theirs, 0o640)
    before = os.stat(theirs)
    assert _fix(theirs.parent).exit_code == 0
    after = os.stat(theirs)
    assert theirs.read_text() == FIXED
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (12345, 23456, 0o640)
    assert after.st_ino != before.st_ino  # still the atomic rename, not an in-place write
    assert not _temporaries(theirs.parent)


def test_hard_links_stay_linked(tmp_path):
    linked = _tree(tmp_path, "linked.py")
    (tmp_path / "elsewhere").mkdir()
    other = tmp_path / "elsewhere" / "same.py"
    os.link(linked, other)
    before = os.stat(linked)
    assert _fix(linked.parent).exit_code == 0
    assert linked.read_text() == FIXED and other.read_text() == FIXED
    after = os.stat(linked)
    assert after.st_ino == before.st_ino == os.stat(other).st_ino and after.st_nlink == 2
    assert not _temporaries(linked.parent)


def test_hard_links_in_one_tree_are_one_file(tmp_path):
    """Processed once (the first name found), not by two workers at once in place."""
    linked = _tree(tmp_path, "a.py")
    os.link(linked, linked.parent / "b.py")
    check = CliRunner().invoke(main, ["check", "--no-cache", str(linked.parent)], catch_exceptions=False)
    assert check.output.count("JM101") == 4  # a.py's two and ok.py's two; b.py is a.py
    assert "b.py" not in check.output
    assert _fix(linked.parent).exit_code == 0
    assert (linked.parent / "b.py").read_text() == FIXED and os.stat(linked.parent / "b.py").st_nlink == 2


def test_a_file_this_user_cannot_own_is_written_in_place(tmp_path, monkeypatch):
    """Another user's file (group-writable, say) that a rename would give to this user: written in
    its inode instead. Here as an unprivileged user whose uid is not the file's."""
    file = tmp_path / "shared.py"
    file.write_text(LEGACY)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(file).st_uid + 1, raising=False)
    before = os.stat(file).st_ino
    writer.write_fixed(file, FIXED.encode())
    assert file.read_text() == FIXED and os.stat(file).st_ino == before


def test_a_failed_in_place_write_puts_the_old_bytes_back(tmp_path, monkeypatch):
    linked = _tree(tmp_path, "linked.py")
    os.link(linked, tmp_path / "same.py")
    real_fsync = os.fsync
    calls = []

    def fsync_fails_once(fd):
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_fails_once)
    result = _fix(linked.parent)
    assert result.exit_code == 2, result.output
    assert "linked.py:1:1: JM000 could not write: [Errno 28] No space left on device" in result.output
    assert linked.read_text() == LEGACY and (linked.parent / "ok.py").read_text() == FIXED


def test_a_failed_write_is_a_write_failure(tmp_path, monkeypatch):
    """What an immutable file (chattr +i) does to the rename: EPERM. Not "could not read"."""
    stuck = _tree(tmp_path, "stuck.py")
    real_replace = os.replace

    def replace(src, dst, **kw):
        if Path(dst).name == "stuck.py":
            raise PermissionError(errno.EPERM, "Operation not permitted", str(dst))
        return real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "replace", replace)
    result = _fix(stuck.parent)
    assert result.exit_code == 2, result.output
    assert "stuck.py:1:1: JM000 could not write: [Errno 1] Operation not permitted" in result.output
    assert "could not read" not in result.output and "stuck.py:3:15: JM101" in result.output
    assert stuck.read_text() == LEGACY and (stuck.parent / "ok.py").read_text() == FIXED
    assert not _temporaries(stuck.parent)


def test_an_immutable_file_is_a_write_failure(tmp_path):
    """The same with a real immutable file, where chattr works (Linux, root, ext4 and the like)."""
    stuck = _tree(tmp_path, "stuck.py")
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(stuck)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here (test_a_failed_write_is_a_write_failure covers the path)")
    try:
        result = _fix(stuck.parent)
    finally:
        subprocess.run(["chattr", "-i", str(stuck)], check=True)
    assert result.exit_code == 2, result.output
    assert "stuck.py:1:1: JM000 could not write: [Errno 1] Operation not permitted" in result.output
    assert stuck.read_text() == LEGACY and (stuck.parent / "ok.py").read_text() == FIXED
    assert not _temporaries(stuck.parent)


def test_symlink_to_a_file_in_the_tree_fixes_that_file(tmp_path):
    """The link sorts before its target: discovery keeps the file itself, which is fixed."""
    target = _tree(tmp_path, "z_target.py")
    os.symlink("z_target.py", target.parent / "a_link.py")
    result = _fix(target.parent)
    assert result.exit_code == 0, result.output
    assert target.read_text() == FIXED and (target.parent / "a_link.py").is_symlink()


def test_symlink_named_on_the_command_line_says_why_it_is_not_written(tmp_path):
    target = _tree(tmp_path, "target.py")
    link = target.parent / "link.py"
    os.symlink("target.py", link)
    result = _fix(link)
    assert result.exit_code == 2, result.output
    assert "link.py:1:1: JM000 not written: a symbolic link (to target.py)" in result.output
    assert "link.py:3:15: JM101" in result.output
    assert target.read_text() == LEGACY and link.is_symlink()


def test_dangling_symlink_is_reported(tmp_path):
    ok = _tree(tmp_path, "ok2.py")
    os.symlink("gone.py", ok.parent / "dangling.py")
    message = "dangling.py:1:1: JM000 could not read: a symbolic link to gone.py, which does not exist"
    for named in (ok.parent, ok.parent / "dangling.py"):  # found by the walk, or named
        result = _fix(named)
        assert result.exit_code == 2, result.output
        assert message in result.output
    assert ok.read_text() == FIXED and (ok.parent / "ok.py").read_text() == FIXED


def test_verified_fix_is_refused_like_any_other(tmp_path):
    """`fix --verify` writes what verification accepted through the same checks."""
    from jaxmigrate.verify.gate import _write

    ro = _tree(tmp_path, "ro.py")
    os.chmod(ro, 0o444)
    result = FileResult(str(ro), changed=True, fixes_applied=2, new_bytes=FIXED.encode())
    _write(result)
    assert result.error == "not written: permission denied (the file is read-only)"
    assert not result.changed and ro.read_text() == LEGACY


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs (root mounts it; CI runs as root), unmounted afterwards; skipped with the
    reason where it cannot be mounted."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a full disk needs a small tmpfs, which only root can mount (CI runs as root)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def _fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to its last byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)


# a module of less than a page whose fix makes it longer than one (for a target before 0.4.25, JM601
# writes `jax.tree_util.tree_map` for every `jax.tree_map`): on a full disk the new text's first
# page is written and the rest is not
GROWING = "import jax\n\n" + "".join(f"y{i} = jax.tree_map(abs, [{i}])\n" for i in range(120))


def _linked_on_full_disk(disk: Path) -> Path:
    """A hard-linked legacy module (so written in place) on a file system with no byte left."""
    target = disk / "linked.py"
    target.write_text(GROWING)
    os.link(target, disk / "other_link.py")
    _fill(disk)
    return target


def test_a_full_disk_leaves_an_in_place_file_as_it_was(small_disk):
    """On a full disk the space the new text needs is reserved first: that fails, the file keeps
    every old byte, and fix says it could not write (it once left the new text cut at a page
    boundary and said nothing was written)."""
    target = _linked_on_full_disk(small_disk)
    result = CliRunner().invoke(main, ["fix", "-j", "1", "--no-cache", "--target-jax", "0.4.14", str(target)],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "JM000 could not write: [Errno 28] No space left on device" in result.output
    assert target.read_text() == GROWING


def test_a_full_disk_without_reservation_writes_the_old_bytes_back(small_disk, monkeypatch):
    """A file system that cannot reserve space ahead: the write fails part way, and the old bytes
    go back through a fresh descriptor (the buffered handle re-raised the disk-full error and the
    restore was skipped)."""
    target = _linked_on_full_disk(small_disk)

    def unsupported(fd, offset, size):
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported)
    with pytest.raises(OSError) as raised:
        writer.write_fixed(target, GROWING.replace("tree_map", "tree_util.tree_map").encode())
    assert raised.value.errno == errno.ENOSPC
    assert target.read_text() == GROWING


def test_a_failed_restore_says_the_file_may_be_damaged_and_where_its_bytes_are(tmp_path, monkeypatch):
    """If writing the old bytes back fails too, the error says so and names the saved copy."""
    target = tmp_path / "linked.py"
    target.write_text(LEGACY)
    os.link(target, tmp_path / "other.py")
    real_pwrite, calls = os.pwrite, []

    def pwrite_fails(fd, data, offset):
        calls.append(fd)
        if len(calls) == 1:
            real_pwrite(fd, bytes(data[:10]), offset)  # part of the new text, then the disk fails
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "pwrite", pwrite_fails)
    with pytest.raises(writer.Damaged) as raised:
        writer.write_fixed(target, FIXED.encode())
    message = str(raised.value)
    assert f"{target} may be damaged; its original bytes are saved at " in message
    saved = Path(message.rsplit("saved at ", 1)[1])
    assert saved.read_text() == LEGACY and saved.parent == tmp_path


def test_a_file_changed_while_fix_worked_on_it_is_not_written(tmp_path, monkeypatch):
    """A line appended by another program between fix's read and its write is kept: the file is
    not written, and fix says why (it was overwritten without notice)."""
    from jaxmigrate.engine import pipeline

    target = _tree(tmp_path, "edited.py")
    real = pipeline.transform

    def edited_meanwhile(data, display, settings, *rest):
        outcome = real(data, display, settings, *rest)
        if display.endswith("edited.py"):
            with open(target, "a") as handle:
                handle.write("print('added while fix ran')\n")
        return outcome

    monkeypatch.setattr(pipeline, "transform", edited_meanwhile)
    result = _fix(target.parent)
    assert result.exit_code == 2, result.output
    assert "edited.py:1:1: JM000 not written: the file changed while fix worked on it" in result.output
    assert target.read_text() == LEGACY + "print('added while fix ran')\n"
    assert (target.parent / "ok.py").read_text() == FIXED
