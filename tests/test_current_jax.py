"""All the way to current JAX: every fixture, fixed with ``--target-jax latest --unsafe-fixes``,
runs on the installed JAX without a deprecation warning and is judged equivalent to before.py
on the legacy runtime. Where a deprecated use is left for a person (reported), the warning it
still causes must be matched by a finding: fixed or flagged, never silent.

This is the whole toolchain at once (JM101 → JM701 → JM702 and the rest composing over fix
rounds), where tests/test_verify_fixtures.py checks each fixture's own after.py snapshot (which
may stop earlier: a fixture without unsafe fixes keeps pjit). The fixtures that are incomplete
by design keep their pinned verdict from that module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from tests import verdicts as shared  # noqa: E402
from tests.conftest import run, streams_proven  # noqa: E402
from tests.test_verify_fixtures import BY_DESIGN, CASES, SKIP  # noqa: E402

# incomplete by design for the latest target too, or not a program (see test_verify_fixtures)
NOT_COMPLETE = set(BY_DESIGN) | {case for case in SKIP if not case.endswith("old_target")}
# a verdict that changes for the latest target, with why
LATEST_ONLY = {
    "JM504/partitioned_calls_reported": "with unsafe fixes JM701 rewrites the partitioner's pjit, whose specs are "
                                        "its parameters: the `None` a caller passes meant replicated in pjit and is "
                                        "unspecified in `jax.jit` (JM701's docstring: check it), so the output's "
                                        "sharding differs, not its values; the hold that kept this pjit (JM504's "
                                        "report of its calls) is gone with issue 36",
    "JM201/opsharding_rename_old_target": "with the latest target OpShardingSharding is reported (GSPMDSharding "
                                          "is deprecated), as in JM201/opsharding_rename",
}

# a deprecation warning of the installed JAX (text it contains) -> the rule that reports its use
WARNED_BY = [
    ("jax.experimental.pjit.pjit has been deprecated", "JM701"),
    ("`with mesh:` context manager has been deprecated", "JM702"),
    ("backend and device argument on jit is deprecated", "JM804"),
    ("jax.experimental.shard_map is deprecated", "JM602"),  # the forms JM602 reports (JM602/reported_forms)
]


def _id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def _processes(case: Path) -> int:
    return 2 if "two_process" in case.name else 1


# project fixtures (before/ and after/ folders) are fixed for the latest target already: their own
# after/ is what tests/test_verify_fixtures.py verifies
# the latest migration moves an array made eagerly in a `with mesh:` block: under `jax.set_mesh` JAX
# replicates it over the mesh; the values agree, every difference is that layout (the verifier says JAX
# chose it), and JM702's message says so
EAGER_LAYOUTS = {"JM702/eager_values"}
# a rewrite that changes what the program does, found by this test: strict xfail until the rule is fixed
LATEST_BUGS = {
    "JM702/eager_split": "JM702's unsafe fix: an array made eagerly under `jax.set_mesh` is committed and "
                         "replicated, and the jitted call whose in_shardings split it raises (the message says so)",
}
PARAMS = [pytest.param(c, id=_id(c), marks=[pytest.mark.xfail(strict=True, reason=LATEST_BUGS[_id(c)])]
                       if _id(c) in LATEST_BUGS else [])
          for c in CASES if (c / "before.py").exists() and _id(c) not in NOT_COMPLETE and _id(c) not in LATEST_ONLY]


@pytest.fixture(scope="module")
def verdicts(request, tmp_path_factory):
    """Migrate every selected fixture to the latest JAX and verify it, two pairs at a time (a divergent
    one again with the recheck, as ``verify`` does)."""
    wanted = [item.callspec.params["case"] for item in request.session.items
              if item.module is request.module and getattr(item, "callspec", None)]
    root = tmp_path_factory.mktemp("latest")

    migrated = {}
    for case in wanted:  # in this thread: Python 3.11's ast.parse is not safe on two threads at once
        out = run(case.joinpath("before.py").read_text(), unsafe=True, target=None)
        folder = root / _id(case).replace("/", "__")
        folder.mkdir()
        (folder / "after.py").write_text(out.text)
        migrated[case] = (out, folder / "after.py")

    # the pairs whose after text is the fixture's own after.py were run by tests/test_verify_fixtures.py's
    # fixture already, or are kept for it
    found = shared.verdicts((case, case / "before.py", migrated[case][1], _processes(case)) for case in wanted)
    return {case: (migrated[case][0], shared.again(found[case], case / "before.py", migrated[case][1],
                                                   _processes(case), check=_passes)) for case in wanted}


def _passes(verdict) -> bool:
    return verdict.status == "equivalent" or streams_proven(verdict)


@pytest.mark.parametrize("case", PARAMS)
def test_latest_target_runs_clean_and_equivalent(case, verdicts):
    from tests.test_verify_fixtures import NOTHING_OBSERVABLE, nothing_compared

    out, verdict = verdicts[case]
    if _id(case) in NOTHING_OBSERVABLE:  # imports and definitions only: both sides must run to the end
        assert nothing_compared(verdict), f"{out.text}\n{render_text(verdict)}"
    elif _id(case) in EAGER_LAYOUTS:
        from jaxmigrate.verify.compare import only_layouts

        assert verdict.status == "layout_differs" and only_layouts(verdict.differences), render_text(verdict)
        assert all(d.note for d in verdict.differences), render_text(verdict)
        assert "replicated over the mesh" in (case / "findings.txt").read_text(), "JM702's message does not say it"
    else:  # a draw agrees on JAX 0.4.x's streams: the migration is proven, the numbers moved with JAX 0.5.0
        assert _passes(verdict), f"{out.text}\n{render_text(verdict)}"
    left = {f.code for f in out.findings}
    for warning in verdict.deprecations:  # only where the code that still warns is reported for a person
        codes = {code for text, code in WARNED_BY if text in warning}
        assert codes, f"a deprecation warning no rule is known to report: {warning}\n{out.text}"
        assert codes & left, f"warns, but no {'/'.join(sorted(codes))} finding is left:\n{out.text}\n{render_text(verdict)}"


def test_every_rule_family_is_covered():
    """Core (JM1-4), GDA (JM5) and current-JAX (JM6-7) fixtures all take part."""
    families = {_id(p.values[0])[2] for p in PARAMS}
    assert {"1", "2", "3", "4", "5", "6", "7"} <= families
