"""Every fixture pair is verified at run time: before.py on the legacy runtime, after.py on JAX.

Single-process (8 CPU devices) for every fixture, and also with 2 processes x 4 devices for the folders
named ``any_process_*`` (code that runs the same in any number of processes); except the folders named
``two_process_*``:
those are programs for 2 processes x 4 devices (their host-local blocks only fit that way) and
run so. A pair must be judged equivalent unless it is listed below:

- ``BY_DESIGN``: the migration is incomplete on purpose (``findings.txt`` lists what is left for
  a person), so after.py still uses a removed API, or before.py itself is not a valid legacy
  program; the verdict and its reason are pinned.
- ``RULE_BUGS``: the verifier found a rule that changes what the program computes; strict
  xfail, so the fix of the rule makes this test fail until the entry is removed.
- ``NOTHING_OBSERVABLE``: the program only imports and defines functions (a trap for a rule):
  both sides must run to the end, and with nothing compared the verdict is undecidable.
- ``SKIP``: not runnable on either side as a program.

The pairs run two at a time (both sides of a pair run at once too); see docs/verify.md.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from tests import verdicts as shared  # noqa: E402
from tests.conftest import streams_proven  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
# a case: a folder with before.py and after.py, or a project fixture with before/ and after/ (main.py runs)
CASES = sorted([*(p.parent for p in ROOT.glob("*/*/before.py")), *(p.parent.parent for p in ROOT.glob("*/*/before/main.py"))])


def _script(case: Path, side: str) -> Path:
    return case / f"{side}.py" if (case / f"{side}.py").exists() else case / side / "main.py"

SKIP = {
    "JM503/migration_guide": "the migration guide's snippet verbatim: its arrays are placeholder `None`s and "
                             "`out_axis_resources=...` is prose, so neither side is a program (the guide's example "
                             "with real per-process data runs in tests/test_verify_pairs.py)",
    "JM704/old_target": "after.py is written for --target-jax 0.8.0: `jax.device_put_sharded` is gone from the "
                        "installed JAX",
    "JM201/opsharding_rename_old_target": "after.py is written for --target-jax 0.4.20: `jax.sharding.GSPMDSharding` "
                                          "is not importable from the installed JAX",
    "JM301/live_option_old_target": "after.py is written for --target-jax 0.4.5, where `jax_array` is an option: the "
                                    "installed JAX has no `jax.config.jax_array`",
    "JM901/old_target": "after.py is written for --target-jax 0.9.2, where a PartitionSpec equals a tuple: the "
                        "installed JAX's does not (JM901/forms covers the migration)",
    "JM902/old_target": "after.py is written for --target-jax 0.9.2, where CPU devices are TFRT_CPU_<n>: the "
                        "installed JAX's are cpu:<n> (JM902/forms covers the migration)",
    "JM903/old_target": "after.py is written for --target-jax 0.9.2, where jnp.vstack takes lists: the installed "
                        "JAX's does not (JM903/forms covers the migration)",
    "JM801/old_target": "after.py is written for --target-jax 0.4.14, which still has `jax.random.KeyArray`: the "
                        "installed JAX does not (the legacy runtime gives it back to the before side only)",
    "JM703/old_target": "after.py is written for --target-jax 0.5.0, which still has `jax.sharding.PositionalSharding`: "
                        "the installed JAX does not (JM703/tutorial covers the migration)",
}
if importlib.util.find_spec("tensorstore") is None:
    SKIP["JM201/gda_serialization"] = ("`jax.experimental.array_serialization` (and so the legacy "
                                       "`gda_serialization` alias) needs tensorstore, which is not installed")

# case -> (verdict, text the reason or first difference must contain, why)
BY_DESIGN = {
    "JM804/abstract_values": ("undecidable", "named_shape", "calls the installed JAX rejects are reported for a "
                              "person (named_shape is gone, with no replacement): before.py cannot run on the "
                              "legacy runtime, which is the installed JAX"),
    "JM804/jit_backend": ("undecidable", "nothing was compared", "jit(backend=/device=) is reported with the "
                          "device_put to write, and the program only builds jitted functions"),
    "JM203/positional_semantics": ("undecidable", "_positional_semantics", "`maps._positional_semantics` was removed "
                                   "in JAX 0.4.7, with GDA: neither the legacy runtime nor the real 0.4.13 has it "
                                   "(after.py runs on the installed JAX)"),
    "JM801/default_prng_impl": ("undecidable", "default_prng_impl", "the legacy runtime does not give back "
                                "`jax.random.default_prng_impl`; on the real JAX 0.4.13 the pair is EQUIVALENT "
                                "(tests/test_verify_real_legacy.py)"),
    "JM801/prng_impl": ("undecidable", "prng", "the legacy runtime does not give `jax.prng` back; on the real JAX "
                        "0.4.13 the pair (PRNGImpl -> define_prng_impl, unsafe) is EQUIVALENT "
                        "(tests/test_verify_real_legacy.py)"),
    "JM403/forms": ("undecidable", "not callable", "the legacy runtime does not give back the `device()` method of "
                    "arrays (the installed JAX's `.device` is a property); on the real JAX 0.4.13 the pair is "
                    "EQUIVALENT (tests/test_verify_real_legacy.py)"),
    "JM403/old_target": ("undecidable", "not callable", "as JM403/forms: the legacy runtime does not give back "
                         "`device()`; for a target before 0.4.31 it is reported with `.devices()` to write"),
    "JM801/rbg_keys": ("undecidable", "rbg_key", "the legacy runtime does not give back `jax.random.rbg_key` (not "
                       "the same object as any name JAX has now); on the real JAX 0.4.13 the pair agrees on 0.4.x's "
                       "streams (tests/test_verify_real_legacy.py)"),
    "JM801/trace_state": ("undecidable", "thread_local_state", "the legacy runtime does not give back JAX's trace "
                          "stack; on the real JAX 0.4.13 the pair is EQUIVALENT (tests/test_verify_real_legacy.py)"),
    "JM801/function_types": ("undecidable", "no attribute 'xla'", "the legacy runtime does not give back jaxlib's "
                             "function types (`jax.xla.xe`); on the real JAX 0.4.13 the pair is EQUIVALENT "
                             "(tests/test_verify_real_legacy.py)"),
    "JM801/drop_ins": ("divergent", "ShardedDeviceArray", "the legacy runtime gives jax.random.KeyArray back as "
                       "0.4.13 had it; after.py keeps `ShardedDeviceArray` (reported), which the installed JAX lacks"),
    "JM801/reported_forms": ("undecidable", "xla_client", "host_callback, xla_client, pxla.ShardingSpec and the rest "
                             "are reported for a person, and not emulated"),
    "JM801/registries": ("undecidable", "EffectTypeSet", "`mlir.lowerable_effects.add` is reported for a person (the "
                         "registry takes effect types now) and not emulated: the before side raises"),
    "JM801/callbacks": ("undecidable", "host_callback", "host_callback and xla_computation are reported with the "
                        "code to write (not emulated by the legacy runtime, gone from the installed JAX)"),
    "JM802/callbacks_old_target": ("undecidable", "host_callback", "written for --target-jax 0.4.30: host_callback "
                                   "is reported with the code to write, and gone from the installed JAX"),
    "JM801/type_tests": ("divergent", "PRNGKeyArray", "an isinstance test of a removed key type is reported with "
                         "the test to write; the legacy runtime gives jax.random.PRNGKeyArray back as 0.4.13 had it"),
    "JM801/shuffle": ("undecidable", "shuffle", "the removed jax.random.shuffle's random stream is not emulated: "
                      "the rewrite to permutation(independent=True) is unsafe and taken on JAX's word"),
    "JM801/star_import": ("undecidable", "tree_multimap", "the legacy runtime gives removed names back through a "
                          "module `__getattr__`, which `from jax import *` does not call: before.py cannot run there"),
    "JM803/private_names": ("divergent", "xla_bridge", "`jax._src.lib.xla_bridge` is emulated on the legacy side "
                            "and reported, not rewritten: the after side cannot import it"),
    "JM101/import_forms": ("undecidable", "Setting both in_shardings and in_axis_resources",
                           "line 26 passes both spellings at once (reported); both sides raise there, every "
                           "observation before it is equal"),
    "JM102/xmap_trap": ("undecidable", "xmap is not emulated", "xmap is not emulated by the legacy runtime"),
    "JM203/xmap_advice": ("undecidable", "xmap is not emulated", "xmap is reported with the shard_map call to write; "
                          "the legacy runtime does not emulate xmap"),
    "JM203/xmap_thread_resources": ("undecidable", "xmap is not emulated",
                                    "xmap is not emulated; after.py keeps jax.experimental.maps (reported)"),
    "JM201/mixed_import_split": ("divergent", "No module named 'jax.experimental.maps'",
                                 "after.py keeps `from jax.experimental.maps import xmap` (JM203 reports it)"),
    "JM201/opsharding_rename": ("divergent", "OpShardingSharding",
                                "OpShardingSharding is reported, not rewritten, for the latest target"),
    # after.py raises at `config.update('jax_array', False)` (reported); before.py gets that far and then
    # imports jax._src.test_util, which needs absl: without it the before side raises too
    "JM301/reported_forms": ("divergent" if importlib.util.find_spec("absl") else "undecidable",
                             "Unrecognized config option: jax_array",
                             "after.py keeps `config.update('jax_array', False)` (reported); before.py imports "
                             "jax._src.test_util, which needs absl"),
    "JM401/device_forms": ("divergent", "counts",
                           "without --unsafe-fixes `Device.live_buffers()` stays, and it sees no jax.Array on "
                           "the installed JAX (reported)"),
    "JM401/buffer_list_reported": ("divergent", "xla_bridge", "uses of the buffers themselves (shapes, bytes) are "
                                   "reported: `jax.live_arrays()` lists arrays, and `live_buffers()` sees none"),
    "JM501/batched_reported": ("divergent", "global_device_array",
                               "batched GDA callbacks are reported with the code to write, not rewritten"),
    "JM501/keywords": ("divergent", "global_device_array", "a starred from_callback(*args) is reported, not rewritten"),
    "JM502/reported_forms": ("divergent", "global_device_array", "GDA uses left for a person (reported)"),
    "JM502/gda_branch_with_else": ("divergent", "global_device_array", "a GDA branch with an `else` that may be "
                                   "where arrays go now is reported, not rewritten"),
    "JM502/guard_with_flag": ("divergent", "global_device_array", "a guard that turned GDAs away is reported, not "
                              "rewritten: with jax.Array it would turn away every array"),
    "JM502/gda_chains": ("divergent", "global_device_array", "GDA tests that told GDAs from other arrays or tracers "
                         "are reported with the test to write, not rewritten"),
    "JM502/pjit_outputs_scoped": ("divergent", "parallel_functions_output_gda", "JAX's internal option state that "
                                  "turned GDA outputs on is reported (JM301), not rewritten: the after side cannot "
                                  "import it"),
    "JM801/array_class_chains": ("undecidable", "DeviceArray", "a test that told ShardedDeviceArray or DeviceArray "
                                 "from other arrays is reported, and the legacy runtime does not give back "
                                 "jax.interpreters.xla.DeviceArray"),
    "JM702/thread_resources_reported": ("divergent", "jax.experimental", "after.py keeps `jax.experimental.maps` "
                                        "for thread_resources (JM203 reports it)"),
    "JM503/reported_forms": ("divergent", "FROM_GDA", "FROM_GDA in pytrees, variables or without a mesh is reported"),
    "JM703/reported_forms": ("divergent", "PositionalSharding", "PositionalSharding of unknown rank, passed to a "
                             "function, read as `.shape` or in isinstance is reported, and the installed JAX has none"),
    "JM703/leading_ones_unknown_rank": ("divergent", "PositionalSharding", "a sharding with a leading dim of size 1 "
                                        "placing values of unknown rank is reported, and the installed JAX has none"),
}

# a divergent pair -> the finding left after the fix that explains it: (code, text of the after.py line
# it is on). Any leftover finding would not do: it must sit where the divergence comes from.
EXPLAINED = {
    "JM803/private_names": ("JM803", "xla_bridge"),
    "JM201/mixed_import_split": ("JM203", "from jax.experimental.maps import"),
    "JM201/opsharding_rename": ("JM201", "OpShardingSharding"),
    "JM401/device_forms": ("JM401", "live_buffers()"),
    "JM401/buffer_list_reported": ("JM401", "live_buffers()"),
    "JM502/guard_with_flag": ("JM502", "isinstance(x, GlobalDeviceArray)"),
    "JM502/gda_branch_with_else": ("JM502", "from jax.experimental.global_device_array import"),
    "JM502/gda_chains": ("JM502", "from jax.experimental.global_device_array import"),
    "JM502/pjit_outputs_scoped": ("JM301", "from jax._src.config import parallel_functions_output_gda"),
    "JM501/batched_reported": ("JM502", "from jax.experimental.global_device_array import"),
    "JM501/keywords": ("JM502", "from jax.experimental.global_device_array import"),
    "JM502/reported_forms": ("JM502", "import jax.experimental.global_device_array"),
    "JM702/thread_resources_reported": ("JM203", "from jax.experimental import maps"),
    "JM503/reported_forms": ("JM801", "FROM_GDA"),
    "JM703/reported_forms": ("JM801", "PositionalSharding"),
    "JM703/leading_ones_unknown_rank": ("JM801", "PositionalSharding"),
    "JM301/reported_forms": ("JM301", 'config.update("jax_array", False)'),
    "JM801/drop_ins": ("JM801", "from jax.interpreters.pxla import ShardedDeviceArray"),
    "JM801/type_tests": ("JM801", "isinstance(k, jax.random.PRNGKeyArray)"),
}

# programs that only import and define (rule traps): no compiled call, no observable global
NOTHING_OBSERVABLE = {
    "JM101/partitioner_trap", "JM101/shadowed_param_trap", "JM101/user_wrapper_trap", "JM102/easylm_wrapper_trap",
    "JM102/keyword_x", "JM801/trace_levels",
    "JM201/function_local_import", "JM201/gda_serialization", "JM201/mesh_attribute_trap",
    "JM201/owned_name_attributes",
    "JM301/only_statement_in_block", "JM401/hasattr_complex", "JM401/unknown_receiver", "JM504/safe_fix_renames_reported_pjit",
    "JM602/reported_forms",
    "JM801/same_name", "JM802/same_name", "JM801/many_names_one_import",
    "JM801/old_target",  # skipped above; its latest-target migration (tests/test_current_jax.py) runs to the end
    # JM804's cases define the calls the installed JAX rejects before the fix; the legacy runtime
    # (the installed JAX) cannot run them, so they are only defined: `--legacy-jax 0.4.13` can
    "JM804/gensym", "JM804/left_alone", "JM804/old_target", "JM804/renamed_keywords", "JM804/target_0427",
    "JM804/required_parameter", "JM804/any_keyword", "JM804/pure_callback_vectorized",
}


def nothing_compared(verdict) -> bool:
    """Both sides ran to the end and nothing was there to compare (no difference, no error)."""
    return (verdict.status == "undecidable" and verdict.reason.startswith("nothing was compared")
            and not verdict.differences and not verdict.errors)


RULE_BUGS: dict = {
}


def _id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


PARAMS = []
for _case in CASES:
    # code that runs the same in any number of processes (any_process_*), and the guide's loop, whose
    # conversions change nothing on one process (issue 36): both ways
    both = "any_process" in _case.name or "guide_loop" in _case.name
    for _processes in ((1, 2) if both else (2,) if "two_process" in _case.name else (1,)):
        key = _id(_case) if _processes == 1 else f"{_id(_case)}@2"
        marks = []
        if _id(_case) in SKIP:
            marks.append(pytest.mark.skip(reason=SKIP[_id(_case)]))
        elif key in RULE_BUGS:
            marks.append(pytest.mark.xfail(strict=True, reason=RULE_BUGS[key]))
        PARAMS.append(pytest.param(_case, _processes, id=key, marks=marks))


@pytest.fixture(scope="module")
def verdicts(request):
    """The verdicts of every selected pair, computed two pairs at a time (tests/verdicts.py)."""
    wanted = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.module is request.module and spec and "case" in spec.params and not item.get_closest_marker("skip"):
            wanted.append((spec.params["case"], spec.params["processes"]))

    # without the recheck: the pinned divergent verdicts are not about instability (test_verify_honest is);
    # a pair tests/test_current_jax.py ran (the same after text) is not run again
    return shared.verdicts((job, _script(job[0], "before"), _script(job[0], "after"), job[1]) for job in wanted)


def _left_after_fix(case: Path) -> list:
    text = (case / "findings.txt").read_text()
    return [line for line in text.split("# left after fix\n", 1)[1].splitlines() if line.strip()]


def _explained(case: Path) -> bool:
    """A finding left after the fix has the expected code and sits on the after.py line that holds
    the expected text (the use the divergence comes from)."""
    code, text = EXPLAINED[_id(case)]
    lines = _script(case, "after").read_text().splitlines()
    return any(finding.split()[1] == code and text in lines[int(finding.split(":", 1)[0]) - 1]
               for finding in _left_after_fix(case))


def test_every_divergent_pair_names_its_explanation():
    divergent = {case for case, (statuses, *_) in BY_DESIGN.items() if "divergent" in statuses}
    assert divergent <= set(EXPLAINED) <= set(BY_DESIGN)
    for case in EXPLAINED:
        assert _explained(ROOT / case), f"{case}: no finding {EXPLAINED[case]} left after the fix"


@pytest.mark.parametrize("case,processes", PARAMS)
def test_fixture_pair_verified(case, processes, verdicts):
    from jaxmigrate.verify.report import render_text

    verdict = verdicts[(case, processes)]
    expected = BY_DESIGN.get(_id(case))
    if _id(case) in NOTHING_OBSERVABLE:
        assert nothing_compared(verdict), render_text(verdict)
        return
    if expected is None:
        # a pair that draws random numbers agrees on JAX 0.4.x's streams, the legacy side's: the code's
        # migration is proven, the numbers moved with JAX 0.5.0 (docs/verify.md "Random streams")
        assert verdict.status == "equivalent" or streams_proven(verdict), render_text(verdict)
        return
    statuses, text, why = expected
    statuses = (statuses,) if isinstance(statuses, str) else statuses
    assert verdict.status in statuses, f"{why}\n{render_text(verdict)}"
    shown = verdict.reason + "\n" + "\n".join(f"{d.before} {d.after}" for d in verdict.differences) + "\n".join(verdict.errors)
    assert text in shown, f"{why}\n{render_text(verdict)}"
    if verdict.status == "undecidable" and verdict.differences:
        pytest.fail(f"observations differ before the exception:\n{render_text(verdict)}")
    if verdict.status == "divergent":
        assert _explained(case), f"divergent, and not where a finding is left: a rule bug, not by design\n{render_text(verdict)}"
