"""Honest verdicts and determinism: nothing compared is undecidable, values count in suites,
global generators are seeded, unstable observations are left out and listed, and `--pytest`
honours `--processes` and `--timeout`. Mini projects: tests/verify_projects/."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from click.testing import CliRunner  # noqa: E402

from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402
from jaxmigrate.verify.suite import render, verify_suites  # noqa: E402

PROJECTS = Path(__file__).parent / "verify_projects"


def _project(tmp_path, name: str):
    shutil.copytree(PROJECTS / name, tmp_path / name)
    return str(tmp_path / name / "before"), str(tmp_path / name / "after")


def _pair(tmp_path, before: str, after: str, **options):
    (tmp_path / "before.py").write_text(textwrap.dedent(before))
    (tmp_path / "after.py").write_text(textwrap.dedent(after))
    return verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"), **options)


# -- 1. honest verdicts --------------------------------------------------------------------------

def test_a_suite_where_nothing_ran_is_undecidable(tmp_path):
    """Every module a collection error on both sides: seen as "EQUIVALENT, 7 tests, same outcomes"."""
    result = CliRunner().invoke(main, ["verify", "--pytest", *_project(tmp_path, "collects_nothing")])
    assert result.exit_code == 2, result.output
    assert "no test passed on both sides (0 collected, 0 failing on both, 2 collection error(s))" in result.output
    assert "before: ModuleNotFoundError: No module named 'mlxu_not_installed'" in result.output


def test_a_script_that_computes_nothing_observable_is_undecidable(tmp_path):
    verdict = _pair(tmp_path, "import jax\nprint(jax.devices())\n", "import jax\n")
    assert verdict.status == "undecidable", render_text(verdict)
    assert verdict.reason.startswith("nothing was compared")
    assert "0 compiled call value(s), 0 global(s), 0 file(s)" in render_text(verdict)


def test_tests_failing_on_both_sides_are_named(tmp_path):
    """It said "EQUIVALENT, 4 of 4 tests run" with nothing about the two failing on both sides."""
    before, after = _project(tmp_path, "fails_on_both")
    result = CliRunner().invoke(main, ["verify", "--pytest", before, after])
    assert result.exit_code == 0, result.output  # the passing tests are evidence; the rest is said
    assert result.stderr.startswith("jaxmigrate verify runs the given code: the tests in ")
    first = result.stdout.splitlines()[0]
    assert first.startswith("EQUIVALENT (2 test(s) fail on both sides): tests in"), result.output
    assert ("equivalent on 2 test(s) that pass on both sides (same outcomes and values); 2 fail on both sides, "
            "not verified beyond the values they computed before failing: test_model.py::test_expectation_fails, "
            "test_model.py::test_internals_fails") in result.output
    assert "2 of 4 tests pass on both sides, 2 fail on both, 3 compiled call value(s)" in result.output
    assert "ImportError: cannot import name 'dispatch_internals_of_0_4_1' from 'jax._src'" in result.output
    verdict = verify_suites(before, after, ["-k", "fails"])  # only the failing ones: nothing verified
    assert verdict.status == "undecidable", render(verdict)
    assert verdict.reason == ("no test passed on both sides (2 collected, 2 failing on both, 0 collection error(s)): "
                              "nothing was verified")
    assert verdict.to_dict()["failed_on_both"] == ["test_model.py::test_expectation_fails",
                                                   "test_model.py::test_internals_fails"]


# -- 2. per-test values, first error lines -------------------------------------------------------

def test_a_suite_asserting_shapes_only_still_sees_a_changed_value(tmp_path):
    """`mean` -> `sum` passes every shape-only test; the compiled call's value differs. A test
    module the migration left on a removed import shows both sides' first error lines."""
    verdict = verify_suites(*_project(tmp_path, "shape_only"))
    shown = render(verdict)
    assert verdict.status == "divergent", shown
    assert verdict.outcomes["after"]["test_loss.py::test_loss_shape"] == "passed"
    assert "test_loss.py::test_loss_shape: call #1: values differs" in shown
    assert "values: 325.5" in shown and "values: 10416." in shown
    assert "test_kept_import.py: collection error after only" in shown
    assert "test_kept_import.py::test_mesh_class: before passed, after missing" in shown
    assert "after: ModuleNotFoundError: No module named 'jax.experimental.maps'" in shown
    assert "test_logits_shape" not in shown  # same values: not a difference
    assert "2 of 3 tests pass on both sides, 0 fail on both, 2 compiled call value(s)" in shown


# -- 3. determinism ------------------------------------------------------------------------------

def test_unseeded_test_data_is_the_same_on_both_sides(tmp_path):
    verdict = verify_suites(*_project(tmp_path, "unseeded_suite"))
    assert verdict.status == "equivalent", render(verdict)
    assert verdict.unstable == []  # seeded, not left out as unstable


UNSEEDED_SCRIPT = """\
import os, random
import numpy as np
import jax
x = np.random.rand(8).astype(np.float32)
r = random.random()
out = jax.jit(lambda a: a * 2)(x)
token = int.from_bytes(os.urandom(4), "little")  # differs on every run of the same program
"""


def test_unseeded_script_and_an_unstable_global(tmp_path):
    verdict = _pair(tmp_path, UNSEEDED_SCRIPT, UNSEEDED_SCRIPT)
    shown = render_text(verdict)
    assert verdict.status == "equivalent", shown
    assert verdict.unstable == ["global `token` (process 0)"], shown
    assert "left out, unstable" in shown


# -- 5. options mean the same everywhere ---------------------------------------------------------

def test_pytest_runs_every_process_of_a_multi_process_suite(tmp_path):
    """2 processes x 4 devices: each process runs the suite and passes its own host-local block."""
    verdict = verify_suites(*_project(tmp_path, "two_process_suite"), processes=2)
    shown = render(verdict)
    assert verdict.status == "equivalent", shown
    assert verdict.outcomes["before"] == {"test_hostlocal.py::test_host_local_batch": "passed"}, shown


def test_pytest_honours_the_timeout(tmp_path):
    for side in ("before", "after"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(600)\n")
    result = CliRunner().invoke(main, ["verify", "--pytest", str(tmp_path / "before"), str(tmp_path / "after"),
                                       "--timeout", "3"])
    assert result.exit_code == 2, result.output
    assert "timed out after 3 s" in result.output


def test_a_suite_that_stopped_early_is_undecidable(tmp_path):
    """A session that ends early (here pytest.exit; on jax v0.4.1's pjit_test a pytest internal
    error) leaves the rest of the tests unrun: not comparable."""
    for side in ("before", "after"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "test_stop.py").write_text(
            "import pytest\n\ndef test_a():\n    pytest.exit('stop')\n\ndef test_b():\n    assert True\n")
    verdict = verify_suites(str(tmp_path / "before"), str(tmp_path / "after"))
    assert verdict.status == "undecidable", render(verdict)
    assert "stopped early: pytest exit status 2 (interrupted) after 1 tests" in verdict.reason
