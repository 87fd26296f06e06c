"""Whole legacy programs, written from JAX's own documentation at the tags of their era
(programs/<name>/before.py; see programs/README.md), migrated all the way to current JAX.

Each is fixed with ``--unsafe-fixes --target-jax latest`` into ``after.py`` (a snapshot: regenerate
with ``pytest tests/test_programs.py --snapshot-update`` and review the diff), with no finding left;
the migrated program runs on the installed JAX without a deprecation warning, and the verifier
judges it equivalent to before.py run on the legacy runtime (two processes x 4 CPU devices for the
programs named ``two_process_*``, else one process x 8)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402
from tests.conftest import run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent / "programs"
PROGRAMS = sorted(p.parent for p in ROOT.glob("*/before.py"))


def _processes(program: Path) -> int:
    return 2 if program.name.startswith("two_process") else 1


@pytest.fixture(scope="module")
def verdicts():
    """Every program's migration (made here, in this thread) and its verdict, two at a time."""
    migrated = {p: run(p.joinpath("before.py").read_text(), unsafe=True, target=None) for p in PROGRAMS}

    def job(program: Path):
        after = program / "after.py"
        if not after.exists() or after.read_text() != migrated[program].text:
            return program, None  # the snapshot test says what differs
        return program, verify_files(str(program / "before.py"), str(after), processes=_processes(program), timeout=120)

    with ThreadPoolExecutor(2) as pool:
        return {p: (migrated[p], v) for p, v in pool.map(job, PROGRAMS)}


def test_there_are_programs():
    assert {p.name for p in PROGRAMS} >= {"migration_guide_gda", "migration_guide_array_mode",
                                           "two_process_host_local", "two_process_gda"}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_migrates_completely(program, snapshot):
    out = run(program.joinpath("before.py").read_text(), unsafe=True, target=None)
    snapshot.snapshot_dir = program
    snapshot.assert_match(out.text, "after.py")
    assert [f"{f.line}: {f.code} {f.message}" for f in out.findings] == []


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_runs_and_is_equivalent(program, verdicts):
    _, verdict = verdicts[program]
    assert verdict is not None, "after.py is not the migration of before.py (see test_program_migrates_completely)"
    assert verdict.status == "equivalent", render_text(verdict)
    assert not verdict.deprecations, render_text(verdict)
