"""`jaxmigrate verify` on the command line: exit codes, formats, the one-file form, no JAX."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason='needs the verify extra: pip install "jaxmigrate[verify]"')


def test_help_says_it_runs_the_code():
    result = CliRunner().invoke(main, ["verify", "--help"])
    assert result.exit_code == 0
    assert "RUN legacy code" in result.output and "EXECUTES the given files" in result.output


def test_without_jax_says_how_to_install_it(monkeypatch, tmp_path):
    script = tmp_path / "a.py"
    script.write_text("x = 1\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a))
    result = CliRunner().invoke(main, ["verify", str(script)])
    assert result.exit_code == 2
    assert 'pip install "jaxmigrate[verify]"' in result.output


def test_devices_must_split_over_processes(tmp_path):
    script = tmp_path / "a.py"
    script.write_text("x = 1\n")
    result = CliRunner().invoke(main, ["verify", str(script), "--devices", "8", "--processes", "3"])
    assert result.exit_code == 2 and "cannot be split evenly" in result.output


def test_at_most_two_files(tmp_path):
    script = tmp_path / "a.py"
    script.write_text("x = 1\n")
    result = CliRunner().invoke(main, ["verify", str(script), str(script), str(script)])
    assert result.exit_code == 2


@needs_jax
def test_pair_equivalent_text():
    case = FIXTURES / "JM101" / "positional_specs"
    result = CliRunner().invoke(main, ["verify", str(case / "before.py"), str(case / "after.py")])
    assert result.exit_code == 0, result.output
    # its first line says that it runs the code (on stderr, before it does); the verdict leads stdout
    first = result.output.splitlines()[0]
    assert first.startswith("jaxmigrate verify runs the given code: ") and str(case / "before.py") in first
    assert "on the legacy runtime" in first and result.stderr.startswith(first)
    assert result.stdout.startswith("EQUIVALENT: ")


@needs_jax
def test_one_file_divergent_json(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(
        # JM702's unsafe fix of a block that makes an array eagerly for a jit whose in_shardings split it:
        # under jax.set_mesh the array is replicated and committed, and the call raises (JM702/eager_split)
        "import numpy as np\nimport jax\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ('x', 'y'))\n"
        "double = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P('x')))\n"
        "with mesh:\n    values = jax.numpy.arange(8.0)\n    after = double(values)\n"
    )
    result = CliRunner().invoke(main, ["verify", str(script), "--format", "json", "--devices", "4", "--processes", "1"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "divergent" and report["devices"] == 4
    assert list(report)[0] == "executed" and report["executed"][0] == str(script)
    assert report["executed"][1].startswith(f"{script} (migrated in memory")
    assert result.stderr.startswith("jaxmigrate verify runs the given code: ")
    assert "its migration (made in memory)" in result.stderr.splitlines()[0]
    assert [d["where"] for d in report["differences"]][:1] == ["exception"]
    assert "global `after`" in [d["where"] for d in report["differences"]]


@needs_jax
def test_undecidable_exit_code(tmp_path):
    before, after = tmp_path / "b.py", tmp_path / "a.py"
    before.write_text("raise SystemExit(3)\n")
    after.write_text("x = 1\n")
    result = CliRunner().invoke(main, ["verify", str(before), str(after)])
    assert result.exit_code == 2
    assert "UNDECIDABLE" in result.output and "SystemExit: 3" in result.output


@needs_jax
def test_fix_verify_writes_an_equivalent_fix(tmp_path):
    case = FIXTURES / "JM101" / "partial_decorator"
    target = tmp_path / "step.py"
    target.write_text((case / "before.py").read_text())
    result = CliRunner().invoke(main, ["fix", "--verify", str(target)])
    assert result.exit_code == 0, result.output
    from tests.conftest import run

    assert target.read_text() == run((case / "before.py").read_text(), target=(0, 7, 0)).text  # the pinned target


@needs_jax
def test_fix_verify_refuses_a_divergent_fix(tmp_path, monkeypatch):
    """A (deliberately broken) rule turns P("x") into P("y"): the file must stay as it was. The
    values agree, the layouts do not: LAYOUT_DIFFERS, which fix --verify does not write either."""
    from jaxmigrate.core.findings import Fix
    from jaxmigrate.rules.pjit_axis_resources import PjitAxisResources

    original = PjitAxisResources._keyword_finding

    def wrong(self, ctx, kw):
        finding = original(self, ctx, kw)
        start, end = ctx.span(kw.value)
        bad = ctx.text(kw.value).replace('"dp"', '"mp"')
        edits = (*finding.fix.edits, type(finding.fix.edits[0])(start, end, bad))
        return type(finding)(**{**finding.__dict__, "fix": Fix("safe", edits=edits)})

    monkeypatch.setattr(PjitAxisResources, "_keyword_finding", wrong)
    case = FIXTURES / "JM101" / "partial_decorator"
    target = tmp_path / "step.py"
    target.write_text((case / "before.py").read_text())
    result = CliRunner().invoke(main, ["fix", "--verify", "-j", "1", str(target)])
    assert result.exit_code == 2, result.output
    assert "not written: verification layout_differs: values, outputs and files agree; only layouts" in result.output
    assert target.read_text() == (case / "before.py").read_text()


@needs_jax
def test_findings_left_in_the_after_file_are_named_next_to_the_verdict(tmp_path):
    """A migration that stopped early (safe fixes only, say) is verified as it is, and the verdict
    says the after file still holds findings, and how many an unsafe fix would take."""
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text("import jax\n\nx = jax.numpy.ones(3) * 2\nhosts = jax.host_ids()\n")
    after.write_text(before.read_text())
    result = CliRunner().invoke(main, ["verify", str(before), str(after)])
    assert result.exit_code == 0, result.output
    assert "the after file still has 1 finding(s) (JM802 x1)" in result.output
    clean = tmp_path / "clean.py"
    clean.write_text("import jax\n\nx = jax.numpy.ones(3) * 2\nhosts = jax.process_count()\n")
    assert "still has" not in CliRunner().invoke(main, ["verify", str(clean), str(clean)]).output


@needs_jax
def test_a_crash_shows_the_users_line_first(tmp_path):
    """The last traceback lines of a failure inside JAX are JAX's and jaxmigrate's frames: the
    user's own innermost frame leads."""
    script = tmp_path / "crash.py"
    script.write_text("import jax.numpy as jnp\n\n\ndef add(a, b):\n    return a + b\n\n\n"
                      "total = add(jnp.ones(3), jnp.ones(4))\n")
    result = CliRunner().invoke(main, ["verify", str(script), str(script)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    lead = next(i for i, line in enumerate(lines) if "in your code:" in line)
    assert lines[lead].strip() == f"in your code: {script}:5: return a + b"
    assert all("Traceback" not in line for line in lines[:lead])
