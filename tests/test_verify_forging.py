"""No program can forge the verdict (issue 40, item 5): a side's results are plain data, never
unpickled (a crafted pickle written to the result channel runs no code in the verifier); the
verifier and the sides are not dumpable, so a side cannot open their descriptors through
``/proc/<pid>/fd`` (as root too: the sides give up CAP_SYS_PTRACE); no process a side started
survives it, also one that left its process group or its session; a side's output is bounded
(its first and last megabyte kept, the cut said); a disk too full for the results is named."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify import _capture  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402
from tests.test_verify_pairs import _alive  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

COMPUTE = """\
import jax
import jax.numpy as jnp

total = float(jax.jit(lambda a: a.sum())(jnp.arange(4.0)))
"""

# the result channel is the process's only open file without a name
RESULT_FDS = """\
import os


def result_fds():
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.endswith("(deleted)"):
            fds.append(int(fd))
    return fds
"""

FORGED_PICKLE = RESULT_FDS + """\
import pickle
import struct


class Payload:
    def __reduce__(self):
        return (exec, ("open({mark!r}, 'w').write('ran in the verifier')",))


data = pickle.dumps({{"calls": [], "globals": {{}}, "payload": Payload()}})
for fd in result_fds():
    os.pwrite(fd, data, 8)
    os.pwrite(fd, struct.pack("<Q", len(data)), 0)
os._exit(0)
"""


def _pair(tmp_path: Path, before: str, after: str):
    (tmp_path / "before.py").write_text(before)
    (tmp_path / "after.py").write_text(after)
    return str(tmp_path / "before.py"), str(tmp_path / "after.py")


def test_a_forged_pickle_in_the_result_channel_runs_no_code(tmp_path):
    mark = tmp_path / "mark"
    before, after = _pair(tmp_path, COMPUTE + FORGED_PICKLE.format(mark=str(mark)), COMPUTE)
    verdict = verify_files(before, after, timeout=60)
    assert not mark.exists(), "the forged pickle ran code in the verifier"
    assert verdict.status == "undecidable", verdict.reason
    assert "not the verifier's plain data" in verdict.reason, verdict.reason


# the before side opens every descriptor of the verifier and of the after side's processes it can
PROC_ATTACK = """\
import os
import time


def _after_pids():
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\\0")
        except OSError:
            continue
        if b"jaxmigrate.verify._child" in args and b"after" in args:
            found.append(int(pid))
    return found


def _reach(pid):
    count = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            os.close(os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK))
            count += 1
        except OSError:
            pass
    return count


def _attack():
    deadline = time.monotonic() + 20
    while not _after_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _reach(os.getppid()) + sum(_reach(pid) for pid in _after_pids())


reached = int(_attack() > 0)  # 1: it could open one
"""


def test_a_side_cannot_open_the_verifiers_or_the_other_sides_descriptors(tmp_path):
    after_waits = COMPUTE + "import time\n\ntime.sleep(2)\nreached = 0\n"  # alive while the before side looks
    before, after = _pair(tmp_path, COMPUTE + PROC_ATTACK, after_waits)
    verdict = verify_files(before, after, timeout=60, recheck=False)
    assert verdict.status == "equivalent", (verdict.reason, [d.before for d in verdict.differences])


ESCAPE = """\
import os
import subprocess
import sys

pids = [
    subprocess.Popen(["sleep", "600"], process_group=0).pid,  # left the side's process group
    subprocess.Popen(["sleep", "600"], start_new_session=True).pid,  # left its session
]
daemon = subprocess.run(  # a daemon: its parent exits at once, it lives on in a session of its own
    [sys.executable, "-c", "import subprocess; print(subprocess.Popen(['sleep', '600'], start_new_session=True,"
     " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"],
    capture_output=True, text=True)
pids.append(int(daemon.stdout))
with open(os.path.join({folder!r}, "{side}." + str(os.getpid())), "w") as f:
    f.write(" ".join(map(str, pids)))
del pids, daemon, f  # the pids differ between the sides: not compared
x = 1
"""


@pytest.mark.parametrize("ending", ["ends", "times out"])
def test_no_process_a_side_started_survives_it(tmp_path, ending):
    pids_folder, program = tmp_path / "pids", tmp_path / "program"  # the pids outside the program's project
    pids_folder.mkdir()
    program.mkdir()
    tail = "while True:\n    pass\n" if ending == "times out" else ""
    before, after = _pair(program, ESCAPE.format(folder=str(pids_folder), side="before") + tail,
                          ESCAPE.format(folder=str(pids_folder), side="after") + tail)
    started = []
    try:
        verdict = verify_files(before, after, timeout=60 if ending == "ends" else 8)
        started = [int(p) for f in pids_folder.iterdir() for p in f.read_text().split()]
        assert len(started) == 6, started
        assert verdict.status == ("equivalent" if ending == "ends" else "undecidable"), verdict.reason
        deadline = time.monotonic() + 1.0
        while any(_alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in started if _alive(p)], "a process a side started outlived verify"
    finally:
        for pid in started:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def test_a_sides_output_is_kept_at_both_ends_and_the_cut_said(tmp_path):
    size = 4 * _capture.LIMIT
    loud = COMPUTE + f"import sys\n\nsys.stdout.write('first line\\n' + 'x' * {size} + '\\nlast line\\n')\n"
    before, after = _pair(tmp_path, loud, loud)
    verdict = verify_files(before, after, timeout=60)
    assert verdict.status == "equivalent", verdict.reason
    for output in verdict.output:
        text = output["text"]
        assert text.startswith("first line") and text.rstrip().endswith("last line"), (text[:40], text[-40:])
        assert len(text) < 2 * _capture.LIMIT + 500
        total = size + len("first line\n\nlast line\n")
        assert f"{total - 2 * _capture.LIMIT} bytes of output cut here" in text


DISK_FULL = RESULT_FDS + """\
full = os.open("/dev/full", os.O_WRONLY)  # every write there fails: no space left on the device
for fd in result_fds():
    os.dup2(full, fd)
print("the program's own output")
"""


def test_a_disk_too_full_for_the_results_is_named_and_the_output_kept(tmp_path):
    before, after = _pair(tmp_path, COMPUTE + DISK_FULL, COMPUTE)
    verdict = verify_files(before, after, timeout=60)
    assert verdict.status == "undecidable"
    assert "no space left on the device (the disk is full)" in verdict.reason, verdict.reason
    before_output = [o["text"] for o in verdict.output if o["side"] == "before"]
    assert "the program's own output" in before_output[0]


def test_plain_results_keep_their_types_and_a_pickle_is_refused():
    import pickle

    import numpy as np

    from jaxmigrate.verify import _plain

    result = {"calls": [{"shape": (8, 4), "data": np.arange(6.0).reshape(2, 3), "n": np.int32(3)}],
              (0, "k"): [None, True, 2 ** 70, float("inf"), 1 + 2j, b"\x00", "s"],
              "obj": np.array(["device#0", None], dtype=object)}
    back = _plain.loads(_plain.dumps(result))
    assert type(back["calls"][0]["shape"]) is tuple and back[(0, "k")][:5] == [None, True, 2 ** 70, float("inf"), 1 + 2j]
    assert back["calls"][0]["data"].dtype == np.float64 and (back["calls"][0]["data"] == result["calls"][0]["data"]).all()
    assert type(back["calls"][0]["n"]) is np.int32 and back["obj"].dtype == object and list(back["obj"]) == ["device#0", None]
    with pytest.raises(ValueError):
        _plain.loads(pickle.dumps({"calls": []}))
    with pytest.raises(ValueError):  # cut short
        blob = bytearray(_plain.dumps({"a": np.zeros(2)}))
        _plain.loads(bytes(blob[:-3]))
