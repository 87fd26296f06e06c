"""Generated legacy programs (bench/program_grammar.py), migrated and judged by the verifier.

A fixed-seed sample of each family (``derandomize``: the same programs on every run; a failure
shrinks to a small program). The oracle is bench/generate_programs.py's ``judge``: ``fix`` must
not raise, must write code that compiles and is stable under a second fix, every finding left
must name the code to write, and a program left with no finding must verify EQUIVALENT (with 2
processes too where it may run on several). More programs: ``python bench/generate_programs.py
--n N --seed S``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')
pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from generate_programs import judge  # noqa: E402
from program_grammar import FAMILIES, programs  # noqa: E402

#: programs per family in this sample (each is one or two verifier runs: a few seconds)
SAMPLE = 3


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_programs_migrate_and_verify(family, tmp_path_factory):
    @settings(max_examples=SAMPLE, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(family))
    def one(program):
        judged = judge(program, tmp_path_factory.mktemp(family))
        assert judged.outcome in ("equivalent", "reported"), (
            f"{judged.outcome}: {judged.why}\n--- program\n{program.text}\n--- after fix\n{judged.after}")

    one()


@pytest.mark.parametrize("family", FAMILIES)
def test_the_grammar_covers_its_family(family):
    """A family draws programs whose features vary (the grammar is not stuck on one form)."""
    seen: set = set()

    @settings(max_examples=30, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(family))
    def collect(program):
        seen.update(program.features)

    collect()
    assert len(seen) >= 8, seen
