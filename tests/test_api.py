"""jaxmigrate.api: the command line's findings and fixes as data, for the same files and settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxmigrate import api
from tests.test_cli import LEGACY, MANUAL, invoke

ROOT = Path(__file__).resolve().parent.parent
#: only an unsafe fix: a device's buffers as a list (its count is a safe fix)
UNSAFE = "import jax\n\n\ndef first():\n    return jax.local_devices()[0].live_buffers()\n"


def _cli_records(*args, cwd) -> list:
    result = invoke("check", "--format", "json", "-q", *args, cwd=cwd)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """A project whose configuration ignores JM203 and pins its target through `auto`."""
    monkeypatch.delenv("JAXMIGRATE_TARGET_JAX", raising=False)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["jax>=0.4.20"]\n\n'
                                             '[tool.jaxmigrate]\nignore = ["JM203"]\ntarget-jax = "auto"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY + MANUAL)
    (tmp_path / "pkg" / "tree.py").write_text("import jax\n\nx = jax.tree_map(abs, [1])\n")
    (tmp_path / "pkg" / "buffers.py").write_text(UNSAFE)
    return tmp_path


def test_check_gives_what_check_json_prints(project, monkeypatch):
    monkeypatch.chdir(project)
    found = [f.to_dict() for f in api.check(["pkg"])]
    assert found == _cli_records("pkg", cwd=project)
    assert found and not any(f["code"] == "JM203" for f in found)  # the configuration's ignore


def test_check_source_gives_what_check_gives_the_file(project, monkeypatch):
    monkeypatch.chdir(project)
    workspace = api.Workspace()
    for name in ["pkg/legacy.py", "pkg/tree.py", "pkg/buffers.py"]:
        text = (project / name).read_text()
        assert [f.to_dict() for f in workspace.check_source(text, name)] == _cli_records(name, cwd=project), name


def test_options_override_the_configuration_as_the_command_line_does(project, monkeypatch):
    monkeypatch.chdir(project)
    text = (project / "pkg/tree.py").read_text()
    for target in ["0.4.20", "latest"]:
        options = api.Options(target_jax=target, select=("JM6",))
        expected = _cli_records("--target-jax", target, "--select", "JM6", "pkg/tree.py", cwd=project)
        assert [f.to_dict() for f in api.check_source(text, "pkg/tree.py", options)] == expected


def test_fix_source_gives_what_fix_writes_and_the_edits_that_make_it(project, monkeypatch):
    monkeypatch.chdir(project)
    left, changed = 0, 0
    for name in ["pkg/legacy.py", "pkg/buffers.py"]:  # all fixed; only unsafe fixes (left, with their findings)
        text = (project / name).read_text()
        fixed = api.fix_source(text, name)
        assert invoke("fix", "-q", name, cwd=project).exit_code == (1 if fixed.findings else 0)
        written = (project / name).read_text()
        assert fixed.text == written
        changed += written != text
        assert [f.to_dict() for f in fixed.findings] == _cli_records(name, cwd=project)
        assert _applied(text, fixed.edits) == written
        left += len(fixed.findings)
    assert left and changed == 1


def test_fix_source_of_one_finding_applies_its_fix_alone(project, monkeypatch):
    monkeypatch.chdir(project)
    text = (project / "pkg/legacy.py").read_text()
    first, second = [f for f in api.check_source(text, "pkg/legacy.py") if f.code == "JM101"]
    fixed = api.fix_source(text, "pkg/legacy.py", only=first)
    assert fixed.text == text.replace("in_axis_resources", "in_shardings")
    assert [f.message for f in fixed.findings] == [second.message]
    assert _applied(text, fixed.edits) == fixed.text


def test_a_text_that_does_not_parse_is_one_jm000(tmp_path):
    # (as for `check`, only a text the prefilter keeps is parsed: one that names a legacy API)
    [error] = api.check_source("from jax.experimental.pjit import pjit\n\ndef (:\n", str(tmp_path / "broken.py"))
    assert error.code == api.ERROR_CODE and error.line == 3 and "invalid syntax" in error.message


def test_bad_options_are_option_errors():
    with pytest.raises(api.OptionError, match="older than 0.4.1"):
        api.check_source(LEGACY, "x.py", api.Options(target_jax="0.3"))
    with pytest.raises(api.OptionError, match="unknown rule code or prefix: JM999"):
        api.check_source(LEGACY, "x.py", api.Options(select=("JM999",)))


def _applied(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        start, end = starts[e.line - 1] + e.column - 1, starts[e.end_line - 1] + e.end_column - 1
        text = text[:start] + e.text + text[end:]
    return text
