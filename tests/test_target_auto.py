"""`--target-jax auto`: the project's declared jax requirement (an exact pin, or a range's floor)
before the installed jax, from pyproject.toml, requirements*.txt, setup.cfg or setup.py, and the
message says where the target came from."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main
from jaxmigrate.engine import target

# a legacy keyword that JM101 renames from 0.4.9 on and leaves alone before
PJIT = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None)\n"


@pytest.fixture
def installed_new_jax(monkeypatch):
    """The jax installed beside jaxmigrate is new (as in a venv with the verify extra)."""
    monkeypatch.setattr(target, "installed", lambda: "0.10.2")


def _check(path):
    return CliRunner().invoke(main, ["check", "--target-jax", "auto", "--select", "JM101", "--no-cache", str(path)])


DECLARED = [
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["numpy", "jax>=0.4.20,<0.5"]\n', "0.4.20",
     "the floor of `jax>=0.4.20,<0.5` in pyproject.toml"),
    ("requirements.txt", "numpy  # arrays\njax==0.4.13\n", "0.4.13", "`jax==0.4.13` in requirements.txt"),
    ("requirements-dev.txt", "-r base.txt\njax[cuda12] >= 0.4.20, < 0.5 ; sys_platform == 'linux'\n", "0.4.20",
     "the floor of `jax[cuda12] >= 0.4.20, < 0.5` in requirements-dev.txt"),
    ("requirements.txt", "jax>0.4.20\n", "0.4.21", "the floor of `jax>0.4.20` in requirements.txt"),
    ("requirements.txt", "jax~=0.4.6\n", "0.4.6", "the floor of `jax~=0.4.6` in requirements.txt"),
    ("setup.cfg", "[metadata]\nname = p\n\n[options]\ninstall_requires =\n    numpy\n    jax>=0.4.1\n", "0.4.1",
     "the floor of `jax>=0.4.1` in setup.cfg"),
    ("setup.py", 'from setuptools import setup\nDEPS = ["numpy", "jax==0.4.8"]\nsetup(name="p", install_requires=DEPS)\n',
     "0.4.8", "`jax==0.4.8` in setup.py"),
]


@pytest.mark.parametrize("name, text, version, source", DECLARED, ids=[f"{d[0]}:{d[2]}" for d in DECLARED])
def test_the_declared_requirement_wins_over_the_installed_jax(tmp_path, installed_new_jax, name, text, version, source):
    (tmp_path / name).write_text(text)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(PJIT)
    result = _check(tmp_path / "src" / "train.py")
    assert f"target JAX: {version} ({source})" in result.output, result.output
    reported = "JM101" in result.output
    assert reported == (tuple(map(int, version.split("."))) >= (0, 4, 9)), result.output


def test_the_pyproject_dependencies_come_before_requirements_files(tmp_path, installed_new_jax):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["jax>=0.4.6"]\n')
    (tmp_path / "requirements.txt").write_text("jax==0.4.30\n")
    (tmp_path / "train.py").write_text(PJIT)
    assert "target JAX: 0.4.6 (the floor of `jax>=0.4.6` in pyproject.toml)" in _check(tmp_path / "train.py").output


@pytest.mark.parametrize("requirement", ["jax\n", "jax<0.5\n", "jaxlib==0.4.1\nnumpy\n"])
def test_no_floor_falls_back_to_the_installed_jax_and_says_why(tmp_path, installed_new_jax, requirement):
    (tmp_path / "requirements.txt").write_text(requirement)
    (tmp_path / "train.py").write_text(PJIT)
    output = _check(tmp_path / "train.py").output
    assert "target JAX: 0.10.2 (the installed jax; " in output
    if requirement.startswith("jax") and not requirement.startswith("jaxlib"):
        assert f"`{requirement.strip()}` in requirements.txt has no lower bound" in output
    else:
        assert "no jax requirement in the project's" in output


def test_nothing_declared_nor_installed_is_the_newest(tmp_path, monkeypatch):
    monkeypatch.setattr(target, "installed", lambda: None)
    (tmp_path / "train.py").write_text(PJIT)
    output = _check(tmp_path / "train.py").output
    assert "target JAX: latest (the newest; no jax requirement in the project's" in output and "JM101" in output


def test_a_range_beyond_the_known_releases_takes_its_own_floor():
    assert target.floor([(">=", "99.1")], [(0, 4, 1), (0, 10, 2)]) == "99.1"
    assert target.floor([(">=", "0.4.2"), ("!=", "0.4.3")], [(0, 4, 1), (0, 4, 3), (0, 4, 4)]) == "0.4.4"
    assert target.floor([("<", "0.5")], [(0, 4, 1)]) is None


def test_requirement_parsing():
    assert target.jax_clauses("jax") == []
    assert target.jax_clauses("JAX (>=0.4.6)") == [(">=", "0.4.6")]
    assert target.jax_clauses("jax-metal>=0.1") is None and target.jax_clauses("jaxlib==0.4.1") is None
    assert target.jax_clauses("jax @ https://example.org/jax.whl") is None
    assert target.jax_clauses("jax==0.4.20 ; python_version >= '3.9'") == [("==", "0.4.20")]


@pytest.mark.parametrize("op,spec,version,admitted", [
    ("==", "0.4.*", (0, 4, 20), True), ("==", "0.4.*", (0, 5, 0), False), ("==", "0.4.*", (0, 4), True),
    ("!=", "0.4.*", (0, 4, 1), False), ("!=", "0.4.*", (0, 5, 0), True),
    ("==", "0.4.20", (0, 4, 20), True), ("==", "0.4.20", (0, 4, 21), False), ("==", "0.4", (0, 4, 0), True),
    ("===", "0.4.20", (0, 4, 20), True), ("===", "0.4.20", (0, 4, 2), False), ("===", "0.4.20", (0, 4, 25), False),
    ("!=", "0.4.20", (0, 4, 20), False), ("!=", "0.4.20", (0, 4, 21), True),
    (">=", "0.4.20", (0, 4, 20), True), (">=", "0.4.20", (0, 4, 19), False), (">=", "0.4.20", (0, 5, 0), True),
    ("<=", "0.4.20", (0, 4, 20), True), ("<=", "0.4.20", (0, 4, 21), False),
    (">", "0.4.20", (0, 4, 20), False), (">", "0.4.20", (0, 4, 21), True),
    ("<", "0.4.20", (0, 4, 20), False), ("<", "0.4.20", (0, 4, 19), True),
    ("~=", "0.4.20", (0, 4, 25), True), ("~=", "0.4.20", (0, 5, 0), False), ("~=", "0.4.20", (0, 4, 19), False),
    ("~=", "0.4", (0, 9, 0), True), ("~=", "0.4", (1, 0, 0), False), ("~=", "1", (1, 5), True), ("~=", "1", (2, 0), False),
    (">=", "0.4.20rc1", (0, 4, 20), True), (">=", "1!0.4.20", (0, 4, 20), True), ("==", "1!0.4.*", (0, 4, 3), True),
])
def test_one_clause_admits_a_release_as_pep_440_says(op, spec, version, admitted):
    """The clause matching behind every floor, one operator and boundary at a time (the epoch and
    a pre-release tag are ignored: the versions compared are final releases)."""
    assert target._admits(op, spec, version) is admitted
