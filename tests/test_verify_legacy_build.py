"""Building a real legacy JAX's venv (issue 40, item 7): progress on stderr while it builds, a
build stopped by SIGTERM or SIGKILL leaves no pip running and nothing half-built (it is made in a
folder beside its place and renamed there when complete), and an explicit `--legacy-jax 0.4.13`
that cannot be built is an error (exit 2), where `auto` falls back to the emulation and says so.

No package index is reached: pip is pointed at a closed port of this machine (it fails at once)
or at one that accepts and never answers (it hangs until killed), with pip's configuration files
left out (`PIP_CONFIG_FILE=/dev/null`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jaxmigrate.verify import _venv_build

ROOT = Path(__file__).resolve().parent.parent


def _env(cache: Path, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "JAXMIGRATE_LEGACY_JAX_NO_BUILD"}
    return dict(env, JAXMIGRATE_CACHE_DIR=str(cache), PIP_CONFIG_FILE=os.devnull, PIP_RETRIES="0",
                PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple", PIP_DEFAULT_TIMEOUT="300")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _left(cache: Path) -> list:
    """What a build left in the cache, besides its lock file."""
    folder = cache / "legacy-jax"
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock")) if folder.exists() else []


def _pips(cache: Path) -> list:
    """The `pip install` processes with the cache folder in their command line (the build's)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and str(cache).encode() in line and b"pip\x00install" in line:
            found.append(int(entry.name))
    return found


def test_a_step_reports_progress_while_it_runs(tmp_path, monkeypatch):
    """A line at every tick while pip runs: how long so far, how big the folder is, where. (The
    step here waits until it has been reported twice, so the test does not depend on time.)"""
    monkeypatch.setattr(_venv_build, "PROGRESS_EVERY", 0.001)
    flag, lines = tmp_path / "reported", []

    def say(line: str) -> None:
        lines.append(line)
        if len(lines) == 2:
            flag.write_text("")

    wait = f"import os, time\nwhile not os.path.exists({str(flag)!r}): time.sleep(0.01)\n"
    done = _venv_build.run_step([sys.executable, "-c", wait], folder=tmp_path, what="installing JAX 9.9.9",
                                started=time.monotonic(), timeout=120, say=say)
    assert done.returncode == 0 and len(lines) >= 2, lines
    assert lines[0].startswith("  ... installing JAX 9.9.9: ") and f"s so far, 0 MB in {tmp_path}" in lines[0]


def test_an_explicit_version_that_cannot_be_built_is_an_error(tmp_path):
    """No package index: `--legacy-jax 0.4.13` exits 2 naming why (it ran the emulation and exited
    0 EQUIVALENT), with the build's first and last lines on stderr and nothing left in the cache;
    `--legacy-jax auto` runs the emulation and the verdict says that auto's choice could not be had."""
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(textwrap.dedent("""\
        import numpy as np
        import jax
        from jax.experimental.pjit import pjit
        from jax.sharding import Mesh, PartitionSpec as P
        with Mesh(np.array(jax.devices()), ("x",)):
            out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x"))(np.arange(8.0))
        """))
    after.write_text(before.read_text().replace("_axis_resources", "_shardings"))
    env = _env(tmp_path / "cache", _closed_port())
    command = [sys.executable, "-m", "jaxmigrate.cli", "verify", str(before), str(after), "--legacy-jax"]
    done = subprocess.run([*command, "0.4.13"], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "", done.stdout  # no verdict: nothing was verified
    assert "building the environment for JAX 0.4.13 (once, reused after): pip install jax==0.4.13 " in done.stderr
    assert "could not build the environment for JAX 0.4.13 (" in done.stderr
    assert "error: --legacy-jax 0.4.13: cannot install JAX 0.4.13: " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and _left(tmp_path / "cache") == []
    auto = subprocess.run([*command, "auto"], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert auto.returncode == 0, auto.stdout + auto.stderr
    assert ("legacy side: emulated (jaxmigrate's legacy runtime on the installed JAX): --legacy-jax auto chose "
            "JAX 0.4.13 (the oldest installable release") in auto.stdout, auto.stdout
    assert "which cannot be had: cannot install JAX 0.4.13: " in auto.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_build_leaves_nothing_running_nor_half_built(tmp_path, signum):
    """The builder stopped while pip runs (pip hangs on an index that never answers): SIGTERM
    kills pip's group and removes the unfinished venv before exiting 143; after SIGKILL the
    keeper does it. (pip kept running, and a half-filled venv stayed where the venv goes.)"""
    cache = tmp_path / "cache"
    with socket.socket() as index:
        index.bind(("127.0.0.1", 0))
        index.listen(16)  # connections are accepted by the kernel, and never answered
        builder = subprocess.Popen([sys.executable, "-m", "jaxmigrate.verify.legacy_env", "0.4.13"],
                                   env=_env(cache, index.getsockname()[1]), stderr=subprocess.PIPE, text=True,
                                   cwd=ROOT, start_new_session=True)
        try:
            assert builder.stderr is not None
            assert builder.stderr.readline().startswith("building the environment for JAX 0.4.13")
            deadline = time.monotonic() + 300
            while not _pips(cache):
                assert time.monotonic() < deadline and builder.poll() is None, "pip never started"
                time.sleep(0.1)
            pips = _pips(cache)
            assert [p.name.startswith(".0.4.13.building-") for p in (cache / "legacy-jax").iterdir()
                    if not p.name.endswith(".lock")] == [True]
            os.kill(builder.pid, signum)
            code = builder.wait(timeout=120)
        finally:
            if builder.poll() is None:
                builder.kill()
                builder.wait()
        assert code == (143 if signum == signal.SIGTERM else -signal.SIGKILL)
        deadline = time.monotonic() + 60  # after SIGKILL the keeper ends them: it may take a moment
        while (_pips(cache) or _left(cache)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _pips(cache) == [] and _left(cache) == [], (pips, _left(cache))
