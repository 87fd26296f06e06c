"""Issue 30, what was left: the program's own output kept and shown with -v; live-buffer counts
under the emulation not comparable; make_mesh-era programs on the emulation with the era's Auto
axes; a checkpoint written into a folder of the project (shared by every process, outside each
process's working folder) compared. Mini projects: tests/verify_projects/{program_output,
live_count_global,make_mesh_era,shared_checkpoint}, copied to a temporary folder before each run."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECTS = Path(__file__).parent / "verify_projects"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def _verify(folder: Path, after: str = "after.py", **options):
    verdict = verify_files(str(folder / "before.py"), str(folder / after), **options)
    return verdict, render_text(verdict)


# 1. the program's own output ------------------------------------------------------------------


def test_the_programs_output_is_kept_for_both_sides_and_shown_with_verbose(tmp_path):
    verdict, shown = _verify(_copy("program_output", tmp_path))
    assert verdict.status == "equivalent", shown  # printed words differ: shown, never compared
    texts = {o["side"]: o["text"] for o in verdict.output}
    for side in ("before", "after"):
        assert f"{side}: sum 992.0" in texts[side] and f"{side}: to stderr" in texts[side]
        assert "│ CPU 0 │ CPU 1 │" in texts[side]  # jax.debug.visualize_array_sharding's drawing
    assert "before: sum" not in shown
    assert "the program's own output is kept (before: 11 line(s), after: 11 line(s)); -v shows it" in shown
    verbose = render_text(verdict, verbose=True)
    lines = verbose.splitlines()
    start = lines.index("  output of the before side (process 0, stdout and stderr):")
    assert lines[start + 1:start + 3] == ["    | ┌───────┬───────┐", "    | │ CPU 0 │ CPU 1 │"], verbose
    assert "    | before: sum 992.0" in lines and "    | before: to stderr" in lines
    assert "  output of the after side (process 0, stdout and stderr):" in lines
    assert "    | after: sum 992.0" in lines and "    | after: to stderr" in lines
    assert verdict.to_dict()["output"] == verdict.output


def test_verify_dash_v_on_the_command_line(tmp_path):
    folder = _copy("program_output", tmp_path)
    args = ["verify", str(folder / "before.py"), str(folder / "after.py")]
    quiet, loud = CliRunner().invoke(main, args), CliRunner().invoke(main, [*args, "-v"])
    assert quiet.exit_code == 0 and loud.exit_code == 0, loud.output
    assert "before: sum 992.0" not in quiet.output and "-v shows it" in quiet.output
    assert "    | before: sum 992.0" in loud.output and "    | after: to stderr" in loud.output


def test_a_suites_pytest_output_is_shown_with_verbose_only():
    from jaxmigrate.verify.suite import SuiteVerdict, render

    verdict = SuiteVerdict("equivalent", "old", "new", reason="equivalent on 1 test(s)",
                           output=[{"side": "before", "process": 0, "text": "1 passed in 0.1s\n"},
                                   {"side": "after", "process": 0, "text": ""}])
    assert "1 passed in 0.1s" not in render(verdict)  # pytest always prints: no hint line either
    assert render(verdict).splitlines()[-1] == "  equivalent on 1 test(s)"
    lines = render(verdict, verbose=True).splitlines()
    assert lines[-3:] == ["  output of the before side (process 0, stdout and stderr):", "    | 1 passed in 0.1s",
                          "  output of the after side (process 0, stdout and stderr): (nothing)"]


# 4. the make_mesh era -------------------------------------------------------------------------


def test_a_make_mesh_era_program_runs_with_auto_axes_on_the_emulation(tmp_path):
    """0.4.35-0.8: make_mesh's axes were Auto; today's are Explicit and the before side raised
    (undecidable whatever the migration). Now decided both ways."""
    folder = _copy("make_mesh_era", tmp_path)
    verdict, shown = _verify(folder)
    assert verdict.status == "equivalent", shown
    assert verdict.compared.startswith("1 compiled call value(s)"), shown
    left, shown = _verify(folder, "after_unchanged.py")
    assert left.status == "divergent", shown
    assert left.differences[0].where == "exception" and left.differences[0].before == "(none)", shown
    assert "can only refer to Auto axes" in left.differences[0].after, shown


# 3. live counts under the emulation: compared (issue 40: the verifier no longer adds arrays) -------


def test_live_count_globals_are_compared_and_agree(tmp_path):
    folder = _copy("live_count_global", tmp_path)
    verdict, shown = _verify(folder)
    assert verdict.status == "equivalent", shown
    assert verdict.compared == "2 compiled call value(s), 8 global(s), 0 file(s)", shown  # the counts among them
    after = next(r for r in verdict.runs if r.side == "after").finished["globals"]
    assert [after[n]["value"] for n in ("live_before_step", "live_after_step", "leaked")] == [2, 3, 1], shown


def test_a_migration_that_kept_live_buffers_still_diverges(tmp_path):
    """Today's `Device.live_buffers()` lists nothing: the kept call computes a wrong count."""
    verdict, shown = _verify(_copy("live_count_global", tmp_path), "after_kept.py")
    assert verdict.status == "divergent", shown
    assert [d.where for d in verdict.differences] == ["global `live_before_step`", "global `live_after_step`",
                                                      "global `leaked`"], shown


# 5. a checkpoint written into a folder every process reaches -----------------------------------


def test_a_two_process_checkpoint_written_in_the_wrong_order_is_divergent(tmp_path):
    """Both processes write into `ckpt/` beside the script: outside their working folders, so
    before this nothing of it was observed (and both sides wrote into one folder at once)."""
    folder = _copy("shared_checkpoint", tmp_path)
    verdict, shown = _verify(folder, processes=2, recheck=False)
    assert verdict.status == "divergent", shown
    assert [d.where for d in verdict.differences] == [
        f"file `<project>/ckpt/shard_{p}_{i}.npy`" for p in (0, 1) for i in (0, 1)], shown
    assert verdict.differences[0].detail.startswith("first difference at [0,0]: before 0.0, after 4.0"), shown
    assert verdict.compared.endswith("5 file(s)"), shown  # 4 shards and meta.json, equal by bytes
    # run one side after the other, each from the tree as it was; the tree is left as the last run left it
    assert sorted(p.name for p in (folder / "ckpt").iterdir()) == ["meta.json"] + [
        f"shard_{p}_{i}.npy" for p in (0, 1) for i in (0, 1)]
    assert np.load(folder / "ckpt" / "shard_0_0.npy").tolist() == [[4.0, 5.0], [6.0, 7.0]]  # the after side's


def test_the_right_two_process_checkpoint_is_equivalent(tmp_path):
    folder = _copy("shared_checkpoint", tmp_path)
    (folder / "ckpt").mkdir()
    (folder / "ckpt" / "README").write_text("kept\n")  # there before: stays, and the folder with it
    verdict, shown = _verify(folder, "after_right.py", processes=2)
    assert verdict.status == "equivalent", shown
    assert verdict.compared.endswith("5 file(s)"), shown
    assert "README" in [p.name for p in (folder / "ckpt").iterdir()]


def test_files_written_elsewhere_are_listed_not_compared(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    for side, value in (("before", 1), ("after", 2)):
        (project / f"{side}.py").write_text(f"import numpy as np\nx = 1\nnp.save({str(elsewhere / 'out.npy')!r}, "
                                            f"np.full(3, {value}))\n")
    verdict, shown = _verify(project)
    assert verdict.status == "equivalent", shown  # the file differs, but is not compared
    assert verdict.elsewhere == [f"{elsewhere / 'out.npy'} (before, after)"], shown
    assert f"written outside the working folder, not compared: {elsewhere / 'out.npy'} (before, after)" in shown


def test_files_each_side_writes_beside_the_script_under_names_of_its_own_are_listed(tmp_path):
    """Not one place both sides wrote into: nothing to tell apart, so no second run (a test's
    report file beside the script is not compared); listed as not compared."""
    for side in ("before", "after"):
        (tmp_path / f"{side}.py").write_text(f"import os\nx = 1\nwith open(os.path.join(os.path.dirname(__file__), "
                                             f"'{side}.log'), 'w') as f:\n    f.write('{side}')\n")
    verdict, shown = _verify(tmp_path)
    assert verdict.status == "equivalent", shown
    assert verdict.elsewhere == ["<project>/after.log (after)", "<project>/before.log (before)"], shown
    assert (tmp_path / "before.log").read_text() == "before" and (tmp_path / "after.log").read_text() == "after"


# 2. pictures: a vector drawn as visualize_array_sharding draws it -------------------------------


def _vector(blocks, layout):
    """An observation of a float32[16] laid out as ``blocks``: [(start, stop, [device positions])]."""
    sharding = tuple(sorted((p, ((start, stop),)) for start, stop, held in blocks for p in held))
    return {"kind": "array", "shape": (16,), "dtype": "float32", "sharding": sharding, "layout": layout,
            "data": np.arange(16.0)}


def test_a_vectors_layouts_are_drawn_as_one_row_each():
    from jaxmigrate.verify.compare import call_difference, diff

    rows = _vector([(0, 8, [0, 1, 2, 3]), (8, 16, [4, 5, 6, 7])], "NamedSharding(mesh x=2 y=4, P('x'))")
    each = _vector([(2 * i, 2 * i + 2, [i]) for i in range(8)], "NamedSharding(mesh x=2 y=4, P(('x', 'y')))")
    found = call_difference(0, "call #1", diff(rows, each), rows, each)
    assert found.what == "sharding differs"
    assert [line.split() for line in found.picture.splitlines()] == [
        ["before:", "NamedSharding(mesh", "x=2", "y=4,", "P('x'))", "after:", "NamedSharding(mesh", "x=2", "y=4,",
         "P(('x',", "'y')))"],
        ["|", "d0-3", "|", "d4-7", "|", "|", *" | ".join(f"d{i}" for i in range(8)).split(), "|"]]
