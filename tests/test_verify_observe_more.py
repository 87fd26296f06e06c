"""More observations: donation (the inputs each compiled call deleted), the files a program
writes under its working directory, and globals the migration renamed. Mini projects:
tests/verify_projects/{dropped_donation,checkpoint_order,renamed_globals}."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECTS = Path(__file__).parent / "verify_projects"


def _verify(name: str, after: str = "after.py"):
    verdict = verify_files(str(PROJECTS / name / "before.py"), str(PROJECTS / name / after))
    return verdict, render_text(verdict)


def test_a_dropped_donation_is_divergent():
    """`state = step(state)` rebinds the donated state: only the call's deleted inputs tell."""
    verdict, shown = _verify("dropped_donation")
    assert verdict.status == "divergent", shown
    assert [d.what for d in verdict.differences] == ["donated inputs differ"] * 3, shown
    assert "before: deleted input leaves [0]" in shown and "after:  no input deleted" in shown


def test_a_kept_donation_is_equivalent():
    verdict, shown = _verify("dropped_donation", "after_right.py")
    assert verdict.status == "equivalent", shown


def test_checkpoint_shards_written_in_another_order_are_divergent():
    verdict, shown = _verify("checkpoint_order")
    assert verdict.status == "divergent", shown
    assert {d.where for d in verdict.differences} == {f"file `ckpt/shard_{i}.npy`" for i in range(4)}, shown
    assert "5 file(s)" in verdict.compared  # meta.json too, equal by bytes


def test_a_renamed_global_is_listed_not_a_difference():
    verdict, shown = _verify("renamed_globals")
    assert verdict.status == "equivalent", shown
    assert verdict.renamed == ["`gda` is `arr` after"], shown
