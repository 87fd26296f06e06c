"""[tool.jaxmigrate] in the nearest pyproject.toml; the command line wins."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

PJIT = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None)\n"
MOVED = "from jax.experimental import PartitionSpec\n"
OPSHARDING = "from jax.sharding import OpShardingSharding\n"


def _check(cwd, *args):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["check", "--format", "json", *args])
    finally:
        os.chdir(old)
    return result, {(r["path"], r["code"]) for r in json.loads(result.stdout or "[]")}


def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n\n[tool.jaxmigrate]\n" + table)
    for rel, text in {"src/a.py": PJIT + MOVED, "src/legacy/b.py": PJIT, "generated/c.py": PJIT,
                      "src/d.py": OPSHARDING}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.usefixtures("pinned_target")
def test_select_ignore_per_file_and_extend_exclude(tmp_path):
    # JM8 too: with JM201 ignored, the API-history rules would report the names it moves
    root = _project(tmp_path, 'ignore = ["JM201", "JM8"]\nextend-exclude = ["generated/"]\n'
                              '[tool.jaxmigrate.per-file-ignores]\n"src/legacy/*.py" = ["JM1"]\n')
    _, found = _check(root)
    assert found == {("src/a.py", "JM101")}  # JM201 ignored, legacy/ silenced, generated/ excluded
    _, from_below = _check(root / "src")  # the config is found upwards from the path
    assert from_below == {("a.py", "JM101")}
    _, cli_wins = _check(root, "--ignore", "JM101")
    assert ("src/a.py", "JM201") in cli_wins and ("src/a.py", "JM101") not in cli_wins


def test_target_jax_from_config(tmp_path):
    root = _project(tmp_path, 'select = ["JM201"]\ntarget-jax = "0.4.20"\n')
    result = CliRunner().invoke(main, ["fix", str(root / "src" / "d.py")])
    assert result.exit_code == 0, result.output
    assert (root / "src" / "d.py").read_text() == "from jax.sharding import GSPMDSharding\n"


def test_bad_config_is_a_usage_error(tmp_path):
    root = _project(tmp_path, 'selectt = ["JM2"]\n')
    result, _ = _check(root / "src")
    assert result.exit_code == 2 and "unknown key(s) in [tool.jaxmigrate]: selectt" in result.output


def test_target_jax_auto_prefers_the_project_pin_to_the_installed_jax(tmp_path, monkeypatch):
    from jaxmigrate.engine import target

    root = _project(tmp_path, 'select = ["JM201"]\n')
    (root / "requirements.txt").write_text("numpy\njax==0.4.20\n")
    monkeypatch.setattr(target, "installed", lambda: "0.10.2")  # the project's pin wins over it
    result = CliRunner().invoke(main, ["fix", "--target-jax", "auto", str(root / "src" / "d.py")])
    assert "target JAX: 0.4.20 (`jax==0.4.20` in requirements.txt)" in result.output
    assert (root / "src" / "d.py").read_text() == "from jax.sharding import GSPMDSharding\n"
    (root / "requirements.txt").write_text("numpy\n")  # no requirement on jax: the installed one
    (root / "src" / "d.py").write_text(OPSHARDING)
    result = CliRunner().invoke(main, ["check", "--target-jax", "auto", str(root / "src" / "d.py")])
    assert "target JAX: 0.10.2 (the installed jax; no jax requirement in the project's" in result.output
    assert "JM201" in result.output  # GSPMDSharding is gone from 0.10.2: reported
