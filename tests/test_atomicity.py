"""A `fix` killed with SIGKILL at any moment leaves every file original or fully fixed, and the
next run removes what the killed one left (temporary files) and completes the job. Two `fix` runs
on one tree at once do not corrupt it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxmigrate.engine.writer import SUFFIX, write_atomic

LEGACY = '''from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P
from jax.experimental.maps import Mesh

{body}
f = pjit(abs, in_axis_resources=P("x"), out_axis_resources=None)
'''
ENV = dict(os.environ, JAXMIGRATE_TARGET_JAX="0.7.0")


def _tree(root: Path, n: int = 240) -> Path:
    for i in range(n):
        folder = root / f"pkg{i % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def g{i}_{k}(x):\n    return x * {k}\n\n" for k in range(i % 40))
        (folder / f"m{i}.py").write_text(LEGACY.format(body=body))
    return root


def _fix(root: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jaxmigrate", "fix", "--no-cache", *extra, str(root)],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _snapshot(root: Path) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """(original tree, fixed tree, seconds a full fix of it takes here)."""
    original = _tree(tmp_path_factory.mktemp("original"))
    fixed = tmp_path_factory.mktemp("fixed") / "t"
    shutil.copytree(original, fixed)
    start = time.monotonic()
    assert _fix(fixed, "-j", "2").wait(timeout=120) == 0
    return _snapshot(original), _snapshot(fixed), time.monotonic() - start


def _copy(snapshot: dict, root: Path) -> Path:
    for rel, data in snapshot.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _children(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def _assert_gone(pids: list) -> None:
    deadline = time.monotonic() + 10
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if os.path.exists(f"/proc/{p}") and "zombie" not in _state(p)]
        time.sleep(0.05)
    assert not alive, f"workers left running: {alive}"


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next((line for line in handle if line.startswith("State:")), "").lower()
    except OSError:
        return "zombie"


def test_sigkill_at_any_moment(tmp_path, trees):
    original, fixed, seconds = trees
    partial = []
    for i, fraction in enumerate((0.1, 0.25, 0.4, 0.55, 0.7, 0.85)):  # moments spread over a whole run
        root = _copy(original, tmp_path / f"t{i}")
        proc = _fix(root, "-j", "2")
        time.sleep(seconds * fraction)
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _assert_gone(workers)  # the pool's workers die with it
        done = sum(1 for rel, data in _snapshot(root).items()
                   if not rel.name.endswith(SUFFIX) and data == fixed[rel] != original[rel])
        for rel, data in _snapshot(root).items():
            if not rel.name.endswith(SUFFIX):
                assert data in (original[rel], fixed[rel]), f"{rel} is neither original nor fixed"
        partial.append(done)
        assert _fix(root).wait(timeout=120) == 0  # the rerun completes the job
        assert _snapshot(root) == fixed  # and leaves no temporary file behind
    assert any(0 < n < len(original) for n in partial), f"no kill landed mid-run: {partial}"


def test_stale_temporary_files_of_a_dead_run_are_removed(tmp_path, trees):
    original, fixed, _ = trees
    root = _copy(fixed, tmp_path / "t")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = root / "pkg0" / f".m0.py.{dead.pid}.abc123{SUFFIX}"
    live = root / "pkg0" / f".m6.py.{os.getpid()}.def456{SUFFIX}"  # a run still at work: kept
    stale.write_text("half a file")
    live.write_text("being written")
    assert _fix(root).wait(timeout=120) == 0
    assert not stale.exists() and live.exists()


def test_two_concurrent_runs(tmp_path, trees):
    """Two runs on one tree end with the tree one run makes. A file the other run wrote since this
    one read it is not written again: that run says so (exit 2), and says nothing else is wrong."""
    original, fixed, _ = trees
    root = _copy(original, tmp_path / "t")
    runs = [subprocess.Popen([sys.executable, "-m", "jaxmigrate", "fix", "--no-cache", str(root)], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    for run in runs:
        output = run.communicate(timeout=180)[0]
        errors = [line for line in output.splitlines() if " JM000 " in line]
        assert run.returncode in (0, 1) or run.returncode == 2 and errors and all(
            "not written: the file changed while fix worked on it" in line for line in errors), output
    assert _snapshot(root) == fixed


# Deterministic: the write itself, with failures injected at each step.

def _spy_replace(monkeypatch, path: Path, old: bytes, new: bytes) -> list:
    """Record each os.replace, checking that until it happens the target still holds ``old``."""
    real, calls = os.replace, []

    def replace(src, dst):
        assert Path(dst) == path and Path(src).parent == path.parent and Path(src).name.endswith(SUFFIX)
        assert Path(src).name.startswith(f".{path.name}.{os.getpid()}.")  # what remove_stale_temporaries reads
        assert path.read_bytes() == old and Path(src).read_bytes() == new  # written beside, not in place
        calls.append((src, dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return calls


def test_a_write_goes_through_a_temporary_file_and_a_rename(tmp_path, monkeypatch):
    target = tmp_path / "m.py"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    calls = _spy_replace(monkeypatch, target, b"old\n", b"new\n")
    write_atomic(target, b"new\n")
    assert len(calls) == 1 and target.read_bytes() == b"new\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the original's permission bits
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


@pytest.mark.parametrize("step", ["write", "fsync", "chmod", "replace"])
def test_a_failure_during_a_write_leaves_the_original_intact(tmp_path, monkeypatch, step):
    target = tmp_path / "m.py"
    target.write_bytes(b"old\n" * 100)

    def fail(*args, **kwargs):
        raise OSError(f"injected failure in {step}")

    if step == "write":  # the first bytes reach the file, then the disk fills up
        real_fdopen = os.fdopen

        def fdopen(fd, *args, **kwargs):
            handle = real_fdopen(fd, *args, **kwargs)
            real_write = handle.write

            class Half:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    handle.close()

                def write(self, data):
                    real_write(data[: len(data) // 2])
                    handle.flush()
                    fail()

                def __getattr__(self, name):
                    return getattr(handle, name)
            return Half()
        monkeypatch.setattr(os, "fdopen", fdopen)
    else:
        monkeypatch.setattr(os, step, fail)
    with pytest.raises(OSError, match="injected"):
        write_atomic(target, b"new\n" * 100)
    assert target.read_bytes() == b"old\n" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]  # the temporary file is gone


def test_fix_whose_rename_fails_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    """Through `fix` itself: the file is replaced by a rename or not at all."""
    from jaxmigrate.engine import runner
    from jaxmigrate.engine.discovery import SourceFile
    from jaxmigrate.engine.pipeline import Settings
    from jaxmigrate.rules import ALL_RULES

    source = LEGACY.format(body="").encode()
    target = tmp_path / "m.py"
    target.write_bytes(source)
    settings = Settings(tuple(r.code for r in ALL_RULES), target=(0, 7, 0), fix=True)
    calls = []

    def refuse(src, dst):
        calls.append((src, dst))
        raise OSError("injected: rename refused")

    monkeypatch.setattr(os, "replace", refuse)
    result = runner.run([SourceFile(target, "m.py")], settings, jobs=1)[0]
    assert len(calls) == 1 and Path(calls[0][1]) == target and target.read_bytes() == source
    assert "rename refused" in result.error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_stale_temporaries_are_told_apart_in_process(tmp_path):
    """Only `.<file>.<pid>.<random>.jaxmigrate-tmp` of a dead process goes; the count says how many."""
    from jaxmigrate.engine.writer import remove_stale_temporaries

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    other = tmp_path / "other"
    other.mkdir()
    names = {
        f".model_file.py.{dead.pid}.abc{SUFFIX}": False, f".n.py.{dead.pid}.def{SUFFIX}": False,  # stale: removed
        f".m.py.{os.getpid()}.ghi{SUFFIX}": True,  # this process is alive
        f"m.py.{dead.pid}.jkl{SUFFIX}": True, f".m.py.{dead.pid}.mno.tmp": True,  # not ours
        f".m.py.x{dead.pid}.pqr{SUFFIX}": True, f".m.py.{dead.pid}{SUFFIX}": True,  # no pid field
        "m.py": True,
    }
    for name in names:
        (tmp_path / name).write_text("x")
    (other / f".o.py.{dead.pid}.vwx{SUFFIX}").write_text("x")
    assert remove_stale_temporaries([tmp_path, tmp_path / "missing", other]) == 3
    assert {n for n in names if (tmp_path / n).exists()} == {n for n, kept in names.items() if kept}
    assert list(other.iterdir()) == []
