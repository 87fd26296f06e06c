"""The verifier against scripts that misbehave: one process of two exits early, output of several
MB, and what the multi-process runs listen on (loopback only). Hanging scripts and their
grandchildren: tests/test_verify_pairs.py::test_timeout_kills_every_process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402
from tests.test_verify_pairs import _alive  # noqa: E402

PROGRAM = """\
import numpy as np
import jax
from jax.experimental import multihost_utils
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
{extra}
g = multihost_utils.host_local_array_to_global_array(np.ones((4, 2)) * jax.process_index(), mesh, P("x"))
total = float(jax.jit(lambda a: a.sum())(g))
"""

LISTENING = """
import os
def _listening():
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{{fd}}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in list(f)[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # LISTEN, one of ours
                    found.append(fields[1].split(":")[0])
    return found
open({out!r} + str(jax.process_index()), "w").write("\\n".join(_listening()))
"""


def _write(tmp_path: Path, before: str, after: str):
    (tmp_path / "before.py").write_text(before)
    (tmp_path / "after.py").write_text(after)
    return str(tmp_path / "before.py"), str(tmp_path / "after.py")


def _all_gone(verdict) -> bool:
    deadline = time.monotonic() + 5
    while any(_alive(r.pid) for r in verdict.runs) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(_alive(r.pid) for r in verdict.runs)


def test_one_process_of_two_exits_early(tmp_path):
    early = PROGRAM.format(extra="import os\nif jax.process_index() == 1:\n    os._exit(3)")
    start = time.monotonic()
    verdict = verify_files(*_write(tmp_path, PROGRAM.format(extra=""), early), processes=2, timeout=30)
    assert verdict.status == "undecidable", render_text(verdict)
    assert "process 1" in render_text(verdict)
    assert time.monotonic() - start < 45
    assert _all_gone(verdict)


def test_megabytes_of_output(tmp_path):
    loud = PROGRAM.format(extra="for i in range(60000):\n    print('x' * 100, i)")  # about 6 MB
    verdict = verify_files(*_write(tmp_path, loud, loud.replace("np.ones((4, 2))", "np.zeros((4, 2))")), processes=2,
                           timeout=60)
    assert verdict.status == "divergent", render_text(verdict)
    assert len(render_text(verdict)) < 20_000  # the report stays readable
    assert _all_gone(verdict)


def test_multi_process_runs_listen_on_loopback_only(tmp_path):
    out = str(tmp_path / "listening.")
    program = PROGRAM.format(extra=LISTENING.format(out=out))
    verdict = verify_files(*_write(tmp_path, program, program), processes=2, timeout=60)
    assert verdict.status == "equivalent", render_text(verdict)
    addresses = [a for i in (0, 1) for a in Path(out + str(i)).read_text().split()]
    assert addresses, "the coordinator's listening socket was not found"
    # 127.0.0.1, ::ffff:127.0.0.1 and ::1 as /proc/net prints them (JAX's default would be [::], every interface)
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
    assert set(addresses) <= loopback, addresses


SPAWNS = """\
import subprocess


def _spawn():
    child = subprocess.Popen(["sleep", "600"])  # never waited for
    with open({pid_file!r}, "w") as f:
        f.write(str(child.pid))


_spawn()
x = 1
"""


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(pid)


def test_a_background_child_of_a_script_that_returns_is_killed(tmp_path):
    """Both sides return normally, each leaving a `sleep 600` behind in its process group (it
    also holds the side's output file open): verify returns promptly, and neither sleep is left."""
    pid_files = {side: tmp_path / f"{side}.pid" for side in ("before", "after")}
    start = time.monotonic()
    verdict = verify_files(*_write(tmp_path, SPAWNS.format(pid_file=str(pid_files["before"])),
                                   SPAWNS.format(pid_file=str(pid_files["after"]))), timeout=60)
    assert time.monotonic() - start < 40
    assert verdict.status == "equivalent", render_text(verdict)
    pids = {side: int(f.read_text()) for side, f in pid_files.items()}
    assert all(_gone(pid) for pid in pids.values()), pids
    assert _all_gone(verdict)


def test_verify_with_its_output_captured_does_not_wait_for_background_children(tmp_path):
    """A caller reading `jaxmigrate verify`'s output through pipes gets end of file when verify
    exits: the background child never holds those pipes, and is gone by then."""
    import subprocess
    import sys

    pid_file = tmp_path / "bg.pid"
    script = SPAWNS.format(pid_file=str(pid_file))
    before, after = _write(tmp_path, script, script)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "jaxmigrate", "verify", before, after], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - start < 40
    assert _gone(int(pid_file.read_text()))
