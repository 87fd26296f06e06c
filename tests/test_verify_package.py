"""Package code runs the way its project runs it: `python -m pkg.mod` from the package root, with
relative imports, no shadowing of the standard library by the package's own `logging.py`, and
`fix --verify` verifying every fixed file of a project together (a module imports its fixed
siblings). Mini project: tests/verify_projects/package_relative."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from click.testing import CliRunner  # noqa: E402

from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify._layout import locate  # noqa: E402

PROJECT = Path(__file__).parent / "verify_projects" / "package_relative"


def _copy(tmp_path) -> Path:
    return Path(shutil.copytree(PROJECT, tmp_path / "proj", ignore=shutil.ignore_patterns("__pycache__")))


def test_a_package_module_runs_as_python_dash_m(tmp_path):
    proj = _copy(tmp_path)
    layout = locate(str(proj / "mypkg" / "train.py"))
    assert (layout.module, layout.base, layout.path) == ("mypkg.train", str(proj), [str(proj)])
    assert locate(str(proj / "setup.py")).module is None


def test_fix_verify_writes_a_package_whose_modules_import_each_other(tmp_path):
    """train.py imports `.util` (migrated too) and `.logging`; before, each file ran alone as a
    script: the relative imports failed and nothing was written."""
    proj = _copy(tmp_path)
    result = CliRunner().invoke(main, ["fix", "--verify", "--unsafe-fixes", "-j", "1", str(proj)])
    assert result.exit_code == 0, result.output
    for name in ("train.py", "util.py"):
        text = (proj / "mypkg" / name).read_text()
        assert "jax.experimental" not in text, text


LIBRARY = Path(__file__).parent / "verify_projects" / "library_with_tests"


def test_fix_verify_pytest_verifies_library_code_through_its_tests(tmp_path):
    """mylib/sharded.py only defines functions: verified alone it computes nothing (undecidable,
    not written); through the project's tests (per-test values compared) it is written."""
    proj = Path(shutil.copytree(LIBRARY, tmp_path / "lib", ignore=shutil.ignore_patterns("__pycache__")))
    target = proj / "mylib" / "sharded.py"
    original = target.read_text()
    alone = CliRunner().invoke(main, ["fix", "--verify", "--unsafe-fixes", str(target)])
    assert alone.exit_code == 2 and "nothing was compared" in alone.output, alone.output
    assert target.read_text() == original
    result = CliRunner().invoke(main, ["fix", "--verify", "--unsafe-fixes", "--pytest", str(proj / "tests"), str(target)])
    assert result.exit_code == 0, result.output
    assert "jax.experimental" not in target.read_text()
    assert "1 of 1 tests pass on both sides, 0 fail on both, 1 compiled call value(s)" in result.output


SRC_LAYOUT = Path(__file__).parent / "verify_projects" / "library_src_layout"


def _src_layout(tmp_path):
    proj = Path(shutil.copytree(SRC_LAYOUT, tmp_path / "lib", ignore=shutil.ignore_patterns("__pycache__")))
    target = proj / "src" / "mylib" / "sharded.py"
    return proj, target, ["fix", "--verify", "--unsafe-fixes", "--pytest", str(proj / "tests"), str(target)]


def test_an_absolute_pythonpath_to_the_original_is_pointed_at_the_fixed_copy(tmp_path, monkeypatch):
    """src layout, PYTHONPATH=<project>/src (absolute): the fixed side imported the original
    mylib (its legacy imports failed there: 'divergent', nothing said about why)."""
    proj, target, command = _src_layout(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(proj / "src"))
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "jax.experimental" not in target.read_text()
    assert f"pointed at the side's own: after: {proj / 'src'} -> " in result.output
    assert "1 of 1 tests pass on both sides" in result.output


def test_a_fixed_side_importing_the_original_is_refused(tmp_path, monkeypatch):
    """conftest.py puts an absolute path to the original first on sys.path (as an editable
    install's hook would): the fixed side runs the original code; undecidable, nothing written."""
    proj, target, command = _src_layout(tmp_path)
    original = target.read_text()
    monkeypatch.setenv("MYLIB_PATH", str(proj / "src"))
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    assert target.read_text() == original
    assert ("not written: verification undecidable: the after side imported the before side's code, not its own: "
            f"mylib ({proj / 'src' / 'mylib' / '__init__.py'}); it would not verify the fixed code") in result.output
