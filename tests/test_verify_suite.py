"""`jaxmigrate verify --pytest BEFORE_DIR AFTER_DIR`: a test suite on both sides, outcomes per test id."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.cli import main  # noqa: E402

LEGACY_TESTS = '''
import numpy as np
import jax
from jax.experimental.maps import Mesh
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P


def mesh():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def test_double():
    with mesh():
        out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=None)(np.arange(8.0))
    assert out.sharding.is_fully_replicated  # None meant replicated
    assert float(out.sum()) == 56.0


def test_identity():
    with mesh():
        out = pjit(lambda a: a, in_axis_resources=None, out_axis_resources=P("x"))(np.arange(8.0))
    assert not out.sharding.is_fully_replicated
'''


def _suites(tmp_path, after_text):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    (before / "test_model.py").write_text(LEGACY_TESTS)
    (after / "test_model.py").write_text(after_text)
    return str(before), str(after)


def test_migrated_suite_is_equivalent(tmp_path):
    before, after = _suites(tmp_path, LEGACY_TESTS)
    assert CliRunner().invoke(main, ["fix", "--unsafe-fixes", after]).exit_code == 0  # all the way to jax.jit
    result = CliRunner().invoke(main, ["verify", "--pytest", before, after, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"jaxmigrate verify runs the given code: the tests in {before} ")
    report = json.loads(result.stdout)
    assert report["executed"] == [before, after]
    assert "equivalent on 2 test(s) that pass on both sides (same outcomes and values)" in report["reason"]


def test_wrong_migration_changes_an_outcome(tmp_path):
    wrong = (LEGACY_TESTS.replace("from jax.experimental.maps import Mesh", "from jax.sharding import Mesh")
             .replace("from jax.experimental import PartitionSpec as P", "from jax.sharding import PartitionSpec as P")
             .replace('in_axis_resources=P("x"), out_axis_resources=None', 'in_shardings=P("x")')  # None dropped
             .replace('in_axis_resources=None, out_axis_resources=P("x")', 'in_shardings=None, out_shardings=P("x")'))
    before, after = _suites(tmp_path, wrong)
    result = CliRunner().invoke(main, ["verify", "--pytest", before, after, "--", "-p", "no:randomly"])
    assert result.exit_code == 1, result.output
    assert "test_model.py::test_double: before passed, after failed" in result.output


BACKGROUND_TEST = '''
import subprocess


def test_starts_a_server():
    child = subprocess.Popen(["sleep", "600"])  # never waited for
    with open({pid_file!r}, "w") as f:
        f.write(str(child.pid))
'''


def test_background_processes_of_a_suite_are_killed(tmp_path):
    """Both suites pass and exit, each leaving a `sleep 600` in its process group: none is left."""
    import time

    from jaxmigrate.verify.suite import verify_suites
    from tests.test_verify_pairs import _alive

    dirs = {}
    for side in ("before", "after"):
        dirs[side] = tmp_path / side
        dirs[side].mkdir()
        (dirs[side] / "test_bg.py").write_text(BACKGROUND_TEST.format(pid_file=str(tmp_path / f"{side}.pid")))
    verdict = verify_suites(str(dirs["before"]), str(dirs["after"]), timeout=120)
    assert verdict.status == "equivalent", verdict.reason
    pids = [int((tmp_path / f"{side}.pid").read_text()) for side in dirs]
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if _alive(pid)]
