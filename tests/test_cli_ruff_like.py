"""What a ruff user expects of the command line (issue 16, items 9 and 14): each file's nearest
configuration, --config, --exclude/--extend-exclude, -q, --show-fixes, stdin, --statistics with
rule names, parse errors at their line."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

PJIT = "from jax.experimental.pjit import pjit\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"


def _invoke(cwd, *args, stdin=None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args], input=stdin)
    finally:
        os.chdir(old)


def _codes(result):
    return {(r["path"], r["code"]) for r in json.loads(result.stdout or "[]")}


@pytest.fixture
def latest(monkeypatch):
    monkeypatch.delenv("JAXMIGRATE_TARGET_JAX", raising=False)


@pytest.fixture
def two_projects(tmp_path):
    """a.py under no configuration, sub/b.py under sub/pyproject.toml that ignores JM101."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text(PJIT)
    (tmp_path / "sub" / "b.py").write_text(PJIT)
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.jaxmigrate]\nignore = ["JM101"]\ntarget-jax = "0.4.14"\n')
    return tmp_path


@pytest.mark.usefixtures("latest")
def test_each_file_gets_its_nearest_configuration_whatever_the_order(two_projects):
    one = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "a.py", "sub/b.py"))
    other = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "sub/b.py", "a.py"))
    assert one == other
    assert ("a.py", "JM101") in one and ("sub/b.py", "JM101") not in one
    # the target too: 0.4.14 under sub/ (pjit not yet deprecated: no JM701), the latest for a.py
    assert ("sub/b.py", "JM701") not in one and ("a.py", "JM701") in one
    walked = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "."))
    assert walked == one


@pytest.mark.usefixtures("pinned_target")
def test_config_option_applies_one_file_to_every_file(two_projects):
    (two_projects / "jaxmigrate.toml").write_text('select = ["JM101"]\n')
    found = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "--config", "jaxmigrate.toml", "."))
    assert found == {("a.py", "JM101"), ("sub/b.py", "JM101")}
    missing = _invoke(two_projects, "check", "--config", "nowhere.toml", ".")
    assert missing.exit_code == 2 and "nowhere.toml" in missing.output


@pytest.mark.usefixtures("latest")
def test_exclude_and_extend_exclude_on_the_command_line(two_projects):
    (two_projects / "sub" / "pyproject.toml").write_text("[tool.jaxmigrate]\n")  # sub/b.py has findings too
    (two_projects / "build").mkdir()
    (two_projects / "build" / "c.py").write_text(PJIT)  # a default skip: `build/`
    found = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "--extend-exclude", "sub", "."))
    assert {p for p, _ in found} == {"a.py"}
    replaced = _codes(_invoke(two_projects, "check", "--no-cache", "--format", "json", "--exclude", "a.py", "."))
    assert {p for p, _ in replaced} == {"build/c.py", "sub/b.py"}  # the defaults are replaced too


@pytest.mark.usefixtures("pinned_target")
def test_quiet_prints_the_findings_and_nothing_else(two_projects):
    result = _invoke(two_projects, "check", "--no-cache", "-q", "a.py")
    assert result.exit_code == 1
    assert all(line.startswith("a.py:") for line in result.output.splitlines()) and result.output
    clean = _invoke(two_projects, "check", "--no-cache", "-q", "sub/pyproject.toml")
    assert clean.output == ""


@pytest.mark.usefixtures("pinned_target")
def test_show_fixes_lists_the_fixes_per_file_and_rule(two_projects):
    result = _invoke(two_projects, "fix", "--no-cache", "--show-fixes", "a.py")
    assert "Fixed 2 findings:\n- a.py:\n     2 x JM101 (pjit-axis-resources)" in result.output
    assert "in_shardings" in (two_projects / "a.py").read_text()
    nothing = _invoke(two_projects, "fix", "--no-cache", "--show-fixes", "a.py")
    assert "No fixes applied." in nothing.output


@pytest.mark.usefixtures("latest")
def test_stdin_check_and_fix_with_stdin_filename(two_projects):
    checked = _invoke(two_projects, "check", "--no-cache", "-", stdin=PJIT)
    assert checked.exit_code == 1 and "-:2:15: JM101" in checked.output
    fixed = _invoke(two_projects, "fix", "--no-cache", "-", stdin=PJIT)
    assert fixed.stdout.startswith("from jax.experimental.pjit import pjit\nf = pjit(abs, in_shardings=None")
    assert "JM101" not in fixed.stderr and "JM701" in fixed.stderr  # what is left, on stderr
    # named as a file under sub/: sub's settings (JM101 ignored); nothing is written there
    named = _invoke(two_projects, "check", "--no-cache", "--stdin-filename", "sub/new.py", "-", stdin=PJIT)
    assert "sub/new.py:2:1" not in named.output and "JM101" not in named.output
    assert not (two_projects / "sub" / "new.py").exists()
    assert _invoke(two_projects, "check", "-", "a.py", stdin=PJIT).exit_code == 2
    (two_projects / "a.py").chmod(0o444)  # named after a read-only file: still only stdout
    again = _invoke(two_projects, "fix", "--no-cache", "--stdin-filename", "a.py", "-", stdin=PJIT)
    assert again.stdout.startswith("from jax.experimental.pjit import pjit\nf = pjit(abs, in_shardings=None")
    assert (two_projects / "a.py").read_text() == PJIT


@pytest.mark.usefixtures("latest")
def test_statistics_name_the_rules_and_the_fixable_counts(two_projects):
    result = _invoke(two_projects, "check", "--no-cache", "--statistics", "a.py")
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["2", "JM101", "[*]", "pjit-axis-resources", "(2", "fixable)"] in lines
    assert ["1", "JM701", "[~]", "pjit-to-jit", "(1", "with", "--unsafe-fixes)"] in lines


def test_a_parse_error_is_reported_at_its_line(tmp_path):
    (tmp_path / "bad.py").write_text("import jax\nx = 1\ndef f(:\n    in_axis_resources\n")
    result = _invoke(tmp_path, "check", "--no-cache", "--format", "json", "bad.py")
    record = json.loads(result.stdout)[0]
    assert (record["code"], record["line"], record["column"]) == ("JM000", 3, 7)
    assert result.exit_code == 2


def test_a_target_older_than_jax_array_is_refused(tmp_path):
    """Every rule migrates towards jax.Array (0.4.1): an older target would be told that names it
    still has were removed."""
    (tmp_path / "a.py").write_text(PJIT)
    result = _invoke(tmp_path, "check", "--no-cache", "--target-jax", "0.3.25", "a.py")
    assert result.exit_code == 2 and "older than 0.4.1, the oldest target" in result.output
    (tmp_path / "requirements.txt").write_text("jax==0.3.25\n")
    auto = _invoke(tmp_path, "check", "--no-cache", "--target-jax", "auto", "a.py")
    assert auto.exit_code == 2 and "0.3.25 (" in auto.output and "requirements.txt" in auto.output
    assert _invoke(tmp_path, "check", "--no-cache", "--target-jax", "0.4.1", "a.py").exit_code == 0  # nothing removed yet


def test_a_target_newer_than_the_newest_known_release_is_refused(tmp_path):
    """`--target-jax 9.9` was taken as the newest: a typo or a JAX this jaxmigrate does not know is
    a usage error (exit 2), from the command line or the configuration; a project whose declared
    jax is newer (`auto`) gets the newest known, and says so."""
    from jaxmigrate.catalog.api_history import newest_release, table

    newest = newest_release()
    assert newest == table(False).versions[-1]
    (tmp_path / "a.py").write_text(PJIT)
    for value in ("9.9", "1", newest + ".1" if newest.count(".") == 1 else newest[: newest.rindex(".")] + ".99"):
        result = _invoke(tmp_path, "check", "--no-cache", "--target-jax", value, "a.py")
        assert result.exit_code == 2, (value, result.output)
        assert f"{value} is newer than {newest}, the newest JAX release jaxmigrate knows" in result.output
    assert _invoke(tmp_path, "check", "--no-cache", "--target-jax", newest, "a.py").exit_code == 1
    (tmp_path / "pyproject.toml").write_text('[tool.jaxmigrate]\ntarget-jax = "9.9"\n')
    configured = _invoke(tmp_path, "check", "--no-cache", "a.py")
    assert configured.exit_code == 2 and "9.9 (target-jax in " in configured.output
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["jax>=9.9"]\n')
    auto = _invoke(tmp_path, "check", "--no-cache", "--target-jax", "auto", "a.py")
    assert auto.exit_code == 1 and f"target JAX: latest (the floor of `jax>=9.9` in pyproject.toml, newer than {newest}" \
        in auto.output
