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
    # an unsafe fix is named as such, like the text output's `[~]`
    unsafe = CliRunner().invoke(main, ["check", "--format", "github", "--target-jax", "latest", path]).stdout
    assert any("title=JM701::" in line and line.endswith("(fixable with `jaxmigrate fix --unsafe-fixes`)")
               for line in unsafe.splitlines())


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
    (tmp_path / "d.py").write_text("import jax\n\nbufs = jax.devices()[0].live_buffers()\n")
    report = tmp_path / "migration-report.md"
    result = CliRunner().invoke(main, ["fix", "--report", str(report), str(tmp_path)])
    assert result.exit_code == 1
    text = report.read_text()
    assert "2 fixes applied in 1 file; 2 items left." in text
    assert "| JM203 | removed-maps-api | 1 |" in text and "| JM401 | live-buffers | 1 |" in text
    assert f"- [ ] `{path}:4:35` **JM203**" in text
    assert "why not rewritten: the fix is unsafe" in text


HOST_LOCAL = ("import jax\nfrom jax.experimental.pjit import pjit\nfrom jax.sharding import PartitionSpec as P\n\n"
              "def train(step, mesh, state, batch):\n"
              "    p_step = pjit(step, in_axis_resources=(None, P('data')), out_axis_resources=(None, None))\n"
              "    with mesh: state, metrics = p_step(state, batch)\n\n"
              "rank = jax.process_index()\n")
HOST_LOCAL_CODE = ("batch_global, = multihost_utils.host_local_array_to_global_array("
                   "(batch,), mesh, (P('data'),))\n"
                   "state, metrics = multihost_utils.global_array_to_host_local_array("
                   "p_step(state, batch_global), mesh, (P(), P()))")


def test_a_suggestion_of_several_lines_goes_where_multi_line_text_belongs(tmp_path):
    """JM504's code: whole in JSON, SARIF and the report (a fenced block); text and GitHub
    annotations keep one line a finding and point there."""
    path = tmp_path / "train.py"
    path.write_text(HOST_LOCAL)
    # a one-line suggestion left for a person: True, read in a file that turns jax_array off
    (tmp_path / "d.py").write_text('import jax\n\njax.config.update("jax_array", False)\nflag = jax.config.jax_array\n')

    def check(*args):
        return CliRunner().invoke(main, ["check", "--select", "JM504,JM301", *args, str(tmp_path)]).stdout

    text = [line for line in check().splitlines() if "JM504" in line]
    assert len(text) == 1 and text[0].endswith("; suggested code: in `--format json` or `sarif`, and `fix --report`")
    github = [line for line in check("--format", "github").splitlines() if "JM504" in line]
    # one line: the message shows the code's first line (issue 36), the rest is where it points
    assert len(github) == 1 and "%0A" not in github[0] and HOST_LOCAL_CODE.splitlines()[-1] not in github[0]
    assert HOST_LOCAL_CODE.splitlines()[0] in github[0]
    records = {r["code"]: r for r in json.loads(check("--format", "json"))}
    assert records["JM504"]["suggestion"] == HOST_LOCAL_CODE
    sarif = json.loads(check("--format", "sarif"))
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    assert results["JM504"]["properties"]["suggestion"] == HOST_LOCAL_CODE
    assert results["JM504"]["message"]["markdown"].endswith(f"suggested code:\n\n```python\n{HOST_LOCAL_CODE}\n```")
    assert "markdown" not in results["JM301"]["message"] and results["JM301"]["properties"]["suggestion"]
    sarif_pydantic = pytest.importorskip("sarif_pydantic")
    sarif_pydantic.Sarif.model_validate(sarif)
    report = tmp_path / "report.md"
    CliRunner().invoke(main, ["fix", "--select", "JM504,JM301", "--report", str(report), str(tmp_path)])
    fenced = "\n".join(["  - suggested:", "    ```python", *("    " + line for line in HOST_LOCAL_CODE.splitlines()), "    ```"])
    assert fenced in report.read_text()
    assert f"  - suggested: `{records['JM301']['suggestion']}`" in report.read_text()  # one line: a code span


def test_every_multi_line_suggestion_in_the_fixtures_is_python_one_statement_a_line():
    """JM501's and JM503's suggestions too (issue 16 item 12): code of several statements is written
    a statement a line, never joined by `;` into a one-line message."""
    import ast
    from pathlib import Path

    from tests.conftest import run

    seen = set()
    for case in sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("*/*/before.py")):
        for f in run(case.read_text(), fix=False).findings:
            if not f.suggestion or "\n" not in f.suggestion and "; " not in f.suggestion:
                continue
            try:
                body = ast.parse(f.suggestion).body
            except SyntaxError:
                assert "\n" not in f.suggestion, f"{case.parent}: {f.code}'s code does not parse"
                continue  # prose with a `;` (JM601's advice), not code
            assert len({s.lineno for s in body}) == len(body), f"{case.parent}: {f.code} joins statements by `;`"
            assert "\n" not in f.message, case.parent
            seen.add(f.code)
    assert {"JM501", "JM503", "JM504"} <= seen
