"""`--legacy-jax VERSION|auto|emulated` (issue 30): which JAX the before side runs on, and the
before side on a real jax==0.4.13 in a venv of its own.

The choice (auto's rules, the fallback to the emulation) is tested without any venv. The tests
that run the real 0.4.13 use `legacy_env.ensure("0.4.13")`: the venv under
~/.cache/jaxmigrate/legacy-jax/0.4.13 (or $JAXMIGRATE_CACHE_DIR), built once (20-65 s here) and
reused; they are skipped, with the reason, where it is absent and cannot be built (no network, no
Python 3.9-3.11, or JAXMIGRATE_LEGACY_JAX_NO_BUILD=1). Pre-build it with
`python -m jaxmigrate.verify.legacy_env 0.4.13`. Mini project: tests/verify_projects/jax_0_4_13_era.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from click.testing import CliRunner  # noqa: E402

from jaxmigrate.catalog import api_history  # noqa: E402
from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify import legacy_env  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

PROJECT = Path(__file__).parent / "verify_projects" / "jax_0_4_13_era"

PJIT_ERA = """\
import numpy as np
import jax
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
with mesh:
    out = pjit(lambda a: a * 2, in_axis_resources=P("x"), out_axis_resources=P("x"))(np.arange(8.0))
"""
MAKE_MESH_ERA = """\
import jax
import jax.numpy as jnp
mesh = jax.make_mesh((len(jax.devices()),), ("x",))
out = jax.jit(lambda a: a + 1)(jnp.arange(8.0))
"""


def _file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# -- choosing the legacy side ---------------------------------------------------------------------

def test_auto_picks_the_oldest_release_with_every_name_the_code_uses(tmp_path):
    assert legacy_env.auto_version([_file(tmp_path, "pjit.py", PJIT_ERA)], None)[0] == "0.4.13"
    make_mesh_since = api_history.table(False).since(api_history.entry("jax.make_mesh"))
    version, why = legacy_env.auto_version([_file(tmp_path, "mesh.py", MAKE_MESH_ERA)], None)
    assert version == make_mesh_since, why  # a program of the make_mesh era runs on a JAX that has it
    # pjit's in_axis_resources left in 0.4.14 and make_mesh came later: no release has both
    both = _file(tmp_path, "both.py", PJIT_ERA + "mesh2 = jax.make_mesh((1,), ('x',))\n")
    assert legacy_env.auto_version([both], None) == (
        None, "no installable JAX (JAX 0.4.13 or later) has every name the code uses and in_axis_resources, "
              "out_axis_resources (gone in 0.4.14); missing: jax.make_mesh")


def test_auto_keeps_the_emulation_for_what_no_installable_jax_has(tmp_path):
    gda = _file(tmp_path, "gda.py", "from jax.experimental.global_device_array import GlobalDeviceArray\n")
    version, why = legacy_env.auto_version([gda], None)
    assert version is None and "jax.experimental.global_device_array" in why, why
    off = _file(tmp_path, "off.py", 'import jax\njax.config.update("jax_array", False)\n')
    assert legacy_env.auto_version([off], None)[0] is None
    constraint = _file(tmp_path, "wsc.py", "from jax.experimental.pjit import with_sharding_constraint as w\n"
                                          "y = w(1, axis_resources=None)\n")
    assert legacy_env.auto_version([constraint], None)[0] is None  # the keyword left in 0.4.11
    version, why = legacy_env.auto_version([_file(tmp_path, "pjit.py", PJIT_ERA)], None, processes=2)
    assert version is None and why.startswith("several processes"), why


def test_auto_takes_the_projects_declared_jax(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["jax[cpu]==0.4.20", "numpy"]\n')
    (tmp_path / "requirements.txt").write_text("jax>=0.4.16\n")
    assert legacy_env.declared_version(str(tmp_path)) == "0.4.20"
    script = _file(tmp_path, "plain.py", "import jax\nout = jax.jit(lambda a: a)(1.0)\n")
    assert legacy_env.auto_version([script], str(tmp_path)) == ("0.4.20", "the project declares jax 0.4.20")
    # the declared release lacks a name the code uses: the oldest that has it
    mesh = _file(tmp_path, "mesh.py", MAKE_MESH_ERA)
    assert legacy_env.auto_version([mesh], str(tmp_path))[0] == api_history.table(False).since(
        api_history.entry("jax.make_mesh"))


def test_without_an_environment_auto_runs_the_emulation_and_an_explicit_version_is_an_error(tmp_path, monkeypatch):
    """`auto` may fall back to the emulation, and says so; an explicit version that cannot be had
    is an error, exit 2 (it ran the emulation and exited 0: the JAX asked for was not what ran)."""
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JAXMIGRATE_LEGACY_JAX_NO_BUILD", "1")
    before = _file(tmp_path, "before.py", PJIT_ERA)
    after = _file(tmp_path, "after.py", PJIT_ERA.replace("in_axis_resources", "in_shardings")
                  .replace("out_axis_resources", "out_shardings"))
    result = CliRunner().invoke(main, ["verify", before, after, "--legacy-jax", "auto"])
    assert result.exit_code == 0, result.output
    assert ("legacy side: emulated (jaxmigrate's legacy runtime on the installed JAX): --legacy-jax auto chose JAX "
            "0.4.13 (the oldest installable release with every JAX name the code uses (7 names)), which cannot be "
            f"had: no environment for JAX 0.4.13 in {tmp_path / 'cache' / 'legacy-jax' / '0.4.13'} (build it: "
            "python -m jaxmigrate.verify.legacy_env 0.4.13)") in result.output
    explicit = CliRunner().invoke(main, ["verify", before, after, "--legacy-jax", "0.4.13"])
    assert explicit.exit_code == 2 and "EQUIVALENT" not in explicit.output, explicit.output
    assert "error: --legacy-jax 0.4.13: no environment for JAX 0.4.13 in " in explicit.output
    assert "legacy side" not in CliRunner().invoke(main, ["verify", before, after]).output  # the default: quiet
    with pytest.raises(legacy_env.Unavailable, match="JAX 0.4.1 cannot be installed"):
        legacy_env.choose("0.4.1", [before], None)
    with pytest.raises(legacy_env.Unavailable, match="cannot run several processes on CPU"):
        legacy_env.choose("0.4.13", [before], None, processes=2)
    bad = CliRunner().invoke(main, ["verify", before, after, "--legacy-jax", "newest"])
    assert bad.exit_code == 2 and "give `emulated`, `auto` or a JAX version" in bad.output


# -- the real jax 0.4.13 --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax_0_4_13():
    python, note = legacy_env.ensure("0.4.13")
    if python is None:
        pytest.skip(f"needs a venv with jax==0.4.13, absent and not buildable here: {note}")
    return python


def test_the_real_venv_has_rich_and_names_its_own_place(jax_0_4_13):
    """rich is installed (`jax.debug.visualize_array_sharding` needs it; the seeds call it), and the
    venv, built in a folder beside its place and renamed there, names its place in its scripts."""
    import subprocess

    venv = Path(jax_0_4_13).parent.parent
    done = subprocess.run([jax_0_4_13, "-c", "import rich, jax; print(jax.__version__)"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "0.4.13", done.stderr
    assert (venv / "bin" / "pip").read_text().startswith(f"#!{venv}/bin/python")


def test_a_program_of_its_era_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """pjit with in_axis_resources, pmap with psum, device_put_replicated, jax.tree_map and
    PositionalSharding run on the real 0.4.13 (not emulated) and agree with the migration (fix
    --unsafe-fixes) on 0.10.2. The per-device live buffer count is the real 0.4.13's: 0 (its
    live_buffers() no longer saw jax.Arrays), where the emulation (0.4.1's semantics) and the
    migration's jax.live_arrays() count 6: the one difference, shown as each side computed it.
    (Before issue 40 the migration counted 10 under the verifier: reading a sharded array's value
    makes JAX keep a per-device array for each of its shards, and the verifier read the pjit and
    pmap outputs before the count; it now reads copies.)"""
    project = Path(shutil.copytree(PROJECT, tmp_path / "era"))
    verdict = verify_files(str(project / "before.py"), str(project / "after.py"), legacy_jax="0.4.13")
    shown = render_text(verdict)
    assert verdict.legacy.startswith("real JAX 0.4.13 (--legacy-jax 0.4.13; "), shown
    assert verdict.trusted == [], shown  # nothing given back by the emulation: there is none
    assert [(d.where, d.before, d.after) for d in verdict.differences] == [
        ("global `on_first`", "int 0", "int 6")], shown
    assert verdict.compared == "2 compiled call value(s), 8 global(s), 0 file(s)", shown  # the pjit and pmap calls
    emulated = verify_files(str(project / "before.py"), str(project / "after.py"))
    assert emulated.status == "equivalent" and emulated.differences == [], render_text(emulated)  # 6 and 6


def test_a_suite_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """--pytest: the before suite runs under the venv's pytest, without the emulation."""
    for side, spelling in (("before", 'in_axis_resources=P("x"), out_axis_resources=P("x")'),
                           ("after", 'in_shardings=P("x"), out_shardings=P("x")')):
        (tmp_path / side).mkdir()
        (tmp_path / side / "test_era.py").write_text(textwrap.dedent(f"""\
            import numpy as np
            import jax
            from jax.experimental.pjit import pjit
            from jax.sharding import Mesh, PartitionSpec as P


            def test_version():
                assert jax.__version__ == {'"0.4.13"' if side == "before" else "jax.__version__"}


            def test_double():
                with Mesh(np.array(jax.devices()), ("x",)):
                    out = pjit(lambda a: a * 2, {spelling})(np.arange(8.0))
                assert float(out.sum()) == 56.0
            """))
    result = CliRunner().invoke(main, ["verify", "--pytest", str(tmp_path / "before"), str(tmp_path / "after"),
                                       "--legacy-jax", "0.4.13"])
    assert result.exit_code == 0, result.output
    assert "legacy side: real JAX 0.4.13 (--legacy-jax 0.4.13; " in result.output
    assert "2 of 2 tests pass on both sides, 0 fail on both, 1 compiled call value(s)" in result.output


def test_jm804_keyword_renames_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """JM804's renames (clip a_min/a_max/a, reshape newshape, percentile interpolation,
    local_devices host_id) proven where the before side is the JAX the code was written for:
    the real 0.4.13 runs before.py, the installed JAX runs what `fix --target-jax latest` made of
    it, and every value agrees."""
    from tests.conftest import run

    before = Path(__file__).parent / "verify_projects" / "jm804_calls" / "before.py"
    fixed = run(before.read_text())
    assert {f.code for f in fixed.findings} == set(), fixed.findings  # nothing left for a person
    assert "a_min" not in fixed.text and "newshape" not in fixed.text and "host_id" not in fixed.text
    _equivalent_on_0_4_13(before, fixed.text, tmp_path, calls=1)


def test_jm701_nothing_to_shard_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """A pjit with only `None` specs (or none) called outside any mesh: the real 0.4.13 reads `None`
    there as unspecified and runs it; JM701 writes `jax.jit(f)` with its other options, which the
    installed JAX runs alike (the `P()` it wrote before raised "jit requires a non-empty mesh")."""
    from tests.conftest import run

    before = Path(__file__).parent.parent / "fixtures" / "JM701" / "nothing_to_shard_outside_a_mesh" / "before.py"
    fixed = run(before.read_text(), unsafe=True)
    assert fixed.findings == [] and "PartitionSpec" not in fixed.text
    _equivalent_on_0_4_13(before, fixed.text, tmp_path, calls=4)


@pytest.mark.parametrize("case,calls", [("function_types", 1), ("default_prng_impl", 1), ("trace_state", 1),
                                        ("prng_impl", 1), ("key_type_tests", 1)])
def test_jm801_import_time_blockers_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path, case, calls):
    """Removed names a library reads at import or on every call (issue 37): jaxlib's function types
    (`jax.xla.xe.CompiledFunction`, ...; the unsafe fix writes the type `jax.jit` returns and drops
    `PmapFunction` from a tuple), `jax.random.default_prng_impl().key_shape` (the shape of a
    default key's data), a snapshot of the trace stack (JAX's opaque trace state now) and
    `jax.prng.PRNGImpl(...)` (define_prng_impl, its split given the count it took) with
    `seed_with_impl`, and `isinstance(k, KeyArray)` written out as the key test: the real 0.4.13 runs
    before.py, the installed JAX the fixed code, alike."""
    from tests.conftest import run

    before = Path(__file__).parent.parent / "fixtures" / "JM801" / case / "before.py"
    fixed = run(before.read_text(), unsafe=True)
    assert not any(old in fixed.text for old in ("jax.xla.xe.CompiledFunction", "default_prng_impl", "thread_local_state",
                                                 "prng."))
    _equivalent_on_0_4_13(before, fixed.text, tmp_path, calls=calls)


def test_jm403_device_method_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """`arr.device()` (JAX 0.4's own tests' helper): `arr.device`, the property of current JAX,
    names the same device the real 0.4.13's method returned."""
    from tests.conftest import run

    before = Path(__file__).parent.parent / "fixtures" / "JM403" / "forms" / "before.py"
    fixed = run(before.read_text(), unsafe=True)
    assert fixed.findings == [] and "data.device()" not in fixed.text
    _equivalent_on_0_4_13(before, fixed.text, tmp_path, calls=0)


def test_jm801_keys_of_other_implementations_on_the_real_jax_0_4_13(jax_0_4_13, tmp_path):
    """`rbg_key(seed)` and its kin become `PRNGKey(seed, impl=...)`, as JAX's deprecation said: the
    rbg bits agree with the real 0.4.13, and the threefry key's split agrees on 0.4.x's streams
    (a proven STREAMS_DIFFER); `PRNGKey(seed)`, the advice before, made a threefry key of it."""
    from tests.conftest import run, streams_proven

    before = Path(__file__).parent.parent / "fixtures" / "JM801" / "rbg_keys" / "before.py"
    fixed = run(before.read_text())
    assert [f.code for f in fixed.findings] == ["JM904"] and 'impl="rbg"' in fixed.text  # the streams notice
    after = tmp_path / "after.py"
    after.write_text(fixed.text)
    verdict = verify_files(str(before), str(after), legacy_jax="0.4.13")
    assert verdict.legacy.startswith("real JAX 0.4.13") and streams_proven(verdict), render_text(verdict)


def _equivalent_on_0_4_13(before: Path, fixed: str, tmp_path, calls: int) -> None:
    """``before`` on the real 0.4.13 and ``fixed`` on the installed JAX agree, ``calls`` values compared."""
    after = tmp_path / "after.py"
    after.write_text(fixed)
    verdict = verify_files(str(before), str(after), legacy_jax="0.4.13")
    shown = render_text(verdict)
    assert verdict.legacy.startswith("real JAX 0.4.13"), shown
    assert verdict.status == "equivalent", shown
    assert verdict.differences == [], shown
    assert f"{calls} compiled call value(s)" in verdict.compared, shown


IMPORT_TIME_LIBRARY = Path(__file__).parent / "verify_projects" / "import_time_library"


def test_a_library_blocked_at_import_passes_its_own_tests_after_fix(jax_0_4_13, tmp_path):
    """The program that imports (issue 37): a package whose modules read removed names as they load
    (jaxlib's function types, the default PRNG's key shape, a trace-state snapshot in a class), so
    on current JAX unmigrated no test of it even imports. After `fix --unsafe-fixes --target-jax
    latest`, nothing is left to review, and its own tests on the installed JAX pass as the
    unmigrated ones do on the real 0.4.13, test by test and value by value."""
    import subprocess
    import sys

    from jaxmigrate.verify.suite import render, verify_suites

    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache")
    before = Path(shutil.copytree(IMPORT_TIME_LIBRARY, tmp_path / "before", ignore=ignore))
    after = Path(shutil.copytree(IMPORT_TIME_LIBRARY, tmp_path / "after", ignore=ignore))
    unmigrated = subprocess.run([sys.executable, "-c", "import tracelib"], cwd=after, capture_output=True, text=True)
    assert unmigrated.returncode != 0 and "AttributeError" in unmigrated.stderr, unmigrated.stderr
    result = CliRunner().invoke(main, ["fix", "--unsafe-fixes", "--target-jax", "latest", "--no-cache", str(after)])
    assert result.exit_code == 0 and "0 findings left for manual review" in result.output, result.output
    verdict = verify_suites(str(before), str(after), legacy_jax="0.4.13")
    shown = render(verdict)
    assert verdict.status == "equivalent", shown
    assert "4 of 4 tests pass on both sides, 0 fail on both" in verdict.compared, shown
