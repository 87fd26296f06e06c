"""CI output: GitHub annotations, SARIF 2.1.0, --output-file, --statistics, --exit-zero."""

from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

LEGACY = ('from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n'
          'from jax.experimental.maps import xmap\n')


def _tree(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    return str(tmp_path / "a.py")


def test_github_annotations(tmp_path):
    path = _tree(tmp_path)
    result = CliRunner().invoke(main, ["check", "--format", "github", path])
    lines = result.stdout.splitlines()
    assert result.exit_code == 1
    assert lines[0].startswith(f"::warning file={path},line=3,col=15,endLine=3,endColumn=37,title=JM101::")
    assert lines[0].endswith("use `in_shardings` (fixable with `jaxmigrate fix`)")
    assert any("title=JM203::" in line for line in lines)


def test_sarif_log(tmp_path):
    path = _tree(tmp_path)
    result = CliRunner().invoke(main, ["check", "--format", "sarif", path])
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert "JM101" in rules and rules["JM101"]["helpUri"].endswith("docs/rules/JM101.md")
    assert "## What it does" in rules["JM101"]["help"]["markdown"]
    first = run["results"][0]
    assert first["ruleId"] == "JM101" and run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "JM101"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endColumn"]) == (3, 15, 37)


def test_sarif_validates_against_the_sarif_2_1_0_object_model(tmp_path):
    """An independent SARIF 2.1.0 model (sarif-pydantic, from the test extra) accepts the log."""
    import pytest

    sarif_pydantic = pytest.importorskip("sarif_pydantic")
    result = CliRunner().invoke(main, ["check", "--format", "sarif", _tree(tmp_path)])
    log = sarif_pydantic.Sarif.model_validate(json.loads(result.stdout))
    assert log.version == "2.1.0" and len(log.runs[0].results) == 3


def test_output_file_statistics_and_exit_zero(tmp_path):
    path = _tree(tmp_path)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["check", "--format", "json", "-o", str(out), "--exit-zero", path])
    assert result.exit_code == 0
    assert {r["code"] for r in json.loads(out.read_text())} == {"JM101", "JM203"}
    text = tmp_path / "report.txt"
    CliRunner().invoke(main, ["check", "-o", str(text), path], color=True)  # colour on, as in a terminal
    lines = text.read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith(f"{path}:") and "\x1b" not in text.read_text()
    stats = CliRunner().invoke(main, ["check", "--statistics", path])
    assert stats.stdout.splitlines()[0].split() == ["2", "JM101", "[*]", "pjit-axis-resources", "(2", "fixable)"]
    broken = tmp_path / "b.py"
    broken.write_text("def f(:\n  in_axis_resources\n")
    assert CliRunner().invoke(main, ["check", "--exit-zero", str(broken)]).exit_code == 2  # errors still fail


def test_fix_report_lists_what_is_left(tmp_path):
    path = _tree(tmp_path)
    (tmp_path / "d.py").write_text("import jax\n\nn = len(jax.devices()[0].live_buffers())\n")
    report = tmp_path / "migration-report.md"
    result = CliRunner().invoke(main, ["fix", "--report", str(report), str(tmp_path)])
    assert result.exit_code == 1
    text = report.read_text()
    assert "2 fixes applied in 1 file; 2 items left." in text
    assert "| JM203 | removed-maps-api | 1 |" in text and "| JM401 | live-buffers | 1 |" in text
    assert f"- [ ] `{path}:4:35` **JM203**" in text
    assert "why not rewritten: the fix is unsafe" in text
