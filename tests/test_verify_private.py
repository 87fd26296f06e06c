"""Each side's results are its own (issue 26): a side is given nothing (arguments, environment,
working folder, open files) that leads to where the other side's results are written. Here the
before side hunts for the after side's result file and scratch folder from every path it is
given (the path with "before" read as "after", and the entries named "after" beside it, up to
the top of verify's temporary folder) and forges what it finds: it must find nothing, and the
verdict stays equivalent."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify import _lifeline  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

COMPUTE = """\
import jax
import jax.numpy as jnp

total = float(jax.jit(lambda a: a.sum())(jnp.arange(4.0)))
"""

HUNT = '''\
def _hunt(report):
    import json
    import os
    import pickle
    import time

    given = []
    with open("/proc/self/cmdline", "rb") as f:
        given += [a.decode() for a in f.read().split(b"\\0") if a.startswith(b"/")]
    given += [v for v in os.environ.values() if v.startswith("/")]
    given.append(os.getcwd())
    for fd in os.listdir("/proc/self/fd"):
        try:
            given.append(os.readlink("/proc/self/fd/" + fd))
        except OSError:
            pass
    found = set()
    for path in given:
        parts = path.split(os.sep)
        tops = [i for i, part in enumerate(parts) if part.startswith("jaxmigrate-")]
        if not tops:  # only what lies in verify's own temporary folders
            continue
        top = tops[0]
        other = os.sep.join(parts[:top + 1] + [p.replace("before", "after") for p in parts[top + 1:]])
        if other != path:
            found.add(other)
        for depth in range(len(parts) - 1, top, -1):
            folder = os.sep.join(parts[:depth])
            try:
                found.update(os.path.join(folder, n) for n in os.listdir(folder) if "after" in n)
            except OSError:
                pass
    forged = []
    deadline = time.monotonic() + 30
    for path in sorted(found):
        if path.endswith(".pkl"):  # the after side's observations: wait for them, then forge them
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.05)
            try:
                with open(path, "rb") as f:
                    result = pickle.load(f)
                result["calls"], result["globals"] = [], {"total": result["globals"].get("total")}
                with open(path, "wb") as f:
                    pickle.dump(result, f)
                forged.append(path)
            except (OSError, EOFError, pickle.UnpicklingError):
                pass
        elif os.path.isdir(path):  # a folder of the after side: a file of ours in it
            try:
                with open(os.path.join(path, "forged.txt"), "w") as f:
                    f.write("written by the before side")
                forged.append(path)
            except OSError:
                pass
    with open(report, "w") as f:
        json.dump({"found": sorted(found), "forged": forged, "cwd": os.getcwd()}, f)


_hunt(REPORT)
del _hunt
'''

WHERE = """\
import os
with open({report!r}, "w") as f:
    f.write(os.getcwd())
"""


def test_a_side_cannot_reach_the_other_sides_results(tmp_path):
    hunt, cwd_after = tmp_path / "hunt.json", tmp_path / "after.cwd"
    before, after = tmp_path / "one.py", tmp_path / "two.py"  # no side name in the scripts' own paths
    before.write_text(HUNT.replace("REPORT", repr(str(hunt))) + COMPUTE)
    after.write_text(WHERE.format(report=str(cwd_after)) + COMPUTE)
    verdict = verify_files(str(before), str(after), devices=4, timeout=120, recheck=False)
    report = json.loads(hunt.read_text())
    assert verdict.status == "equivalent", render_text(verdict)
    assert report["found"] == [] and report["forged"] == [], report
    # the two sides' folders have no ancestor in common but the system's temporary folder
    common = os.path.commonpath([report["cwd"], cwd_after.read_text()])
    assert Path(common).resolve() == Path(tempfile.gettempdir()).resolve(), common
    assert not Path(report["cwd"]).exists()  # removed, and no longer listed for the keeper to remove
    assert not [what for what in _lifeline.tracked() if what[0] == "d"]
