"""Random streams of the legacy era (issue 40, item 6): JAX 0.5.0 made `jax_threefry_partitionable`
True, so the same key draws other numbers. The before side draws as 0.4.x did; a divergent pair
whose sides drew under different streams has its after side run again on the old streams, and
agreeing then it is STREAMS_DIFFER (exit 4), with the line that keeps the old numbers. Before this,
the legacy side drew today's numbers, so the unchanged pair below was EQUIVALENT while the real
0.4.13 gave other numbers, and there was no `streams` in the verdict."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from click.testing import CliRunner  # noqa: E402

from jaxmigrate.cli import main  # noqa: E402
from jaxmigrate.verify import legacy_env  # noqa: E402
from jaxmigrate.verify._streams import KEEP_LINE  # noqa: E402
from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import EXIT_STREAMS, verify_files  # noqa: E402

DRAWS = """\
import jax
k1, k2 = jax.random.split(jax.random.PRNGKey(1))
x = jax.random.normal(k2, (3,))
"""
OLD_STREAMS = DRAWS.replace("import jax\n", f"import jax\n{KEEP_LINE}\n")
SAYS = "values agree when the after side draws random numbers as JAX 0.4.x did: JAX 0.5.0 changed the default"


def _pair(tmp_path, before: str, after: str):
    (tmp_path / "before.py").write_text(textwrap.dedent(before))
    (tmp_path / "after.py").write_text(textwrap.dedent(after))
    return str(tmp_path / "before.py"), str(tmp_path / "after.py")


def test_a_pair_that_draws_without_the_flag_says_the_streams_differ_and_exits_4(tmp_path):
    result = CliRunner().invoke(main, ["verify", *_pair(tmp_path, DRAWS, DRAWS), "--format", "json"])
    assert result.exit_code == EXIT_STREAMS == 4, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["verdict"] == "streams_differ" and data["exit_code"] == 4
    assert data["reason"].startswith(SAYS) and f"add `{KEEP_LINE}` at program start" in data["reason"]
    assert "to accept the new ones, nothing to change" in data["reason"]
    assert data["streams"] == {"before": [False], "after": [True], "rerun": True}
    assert [d["where"] for d in data["differences"]] == ["global `k1`", "global `k2`", "global `x`"]


def test_a_migration_that_keeps_the_old_streams_is_equivalent_without_a_rerun(tmp_path):
    verdict = verify_files(*_pair(tmp_path, DRAWS, OLD_STREAMS), recheck=False)
    assert verdict.status == "equivalent", render_text(verdict)
    assert verdict.streams == {"before": [False], "after": [False], "rerun": False}


def test_the_programs_own_setting_wins_on_the_before_side(tmp_path):
    new = DRAWS.replace("import jax\n", 'import jax\njax.config.update("jax_threefry_partitionable", True)\n')
    verdict = verify_files(*_pair(tmp_path, new, DRAWS), recheck=False)
    assert verdict.status == "equivalent", render_text(verdict)
    assert verdict.streams == {"before": [True], "after": [True], "rerun": False}


def test_a_draw_from_another_key_stays_divergent_after_the_rerun(tmp_path):
    wrong = OLD_STREAMS.replace("normal(k2", "normal(k1").replace(f"{KEEP_LINE}\n", "")
    verdict = verify_files(*_pair(tmp_path, DRAWS, wrong), recheck=False)
    shown = render_text(verdict)
    assert verdict.status == "divergent" and verdict.exit_code == 1, shown
    assert verdict.streams["rerun"] is True, shown
    assert "with the after side drawing as JAX 0.4.x did (re-run): divergent, 1 difference(s); first: global `x`" \
        in verdict.reason, shown


def test_a_pair_that_draws_nothing_is_not_run_again(tmp_path):
    plain = "import jax.numpy as jnp\nx = jnp.arange(3.0) * {}\n"
    verdict = verify_files(*_pair(tmp_path, plain.format(2), plain.format(3)), recheck=False)
    assert verdict.status == "divergent", render_text(verdict)
    assert verdict.streams == {"before": [], "after": [], "rerun": False}
    assert "re-run" not in verdict.reason


@pytest.fixture(scope="module")
def jax_0_4_13():  # module scope: set up before the private cache of each test (conftest)
    python, note = legacy_env.ensure("0.4.13")
    if python is None:
        pytest.skip(f"needs a venv with jax==0.4.13, absent and not buildable here: {note}")
    return python


def test_on_the_real_jax_0_4_13_the_same_pair_says_the_streams_differ(tmp_path, jax_0_4_13, monkeypatch):
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(Path(jax_0_4_13).parents[3]))  # <cache>/legacy-jax/0.4.13/bin/python
    verdict = verify_files(*_pair(tmp_path, DRAWS, DRAWS), recheck=False, legacy_jax="0.4.13")
    assert verdict.legacy.startswith("real JAX 0.4.13"), verdict.legacy
    assert verdict.status == "streams_differ" and verdict.reason.startswith(SAYS), render_text(verdict)
    assert verdict.streams == {"before": [False], "after": [True], "rerun": True}


def test_fix_verify_writes_a_file_whose_streams_differ_and_says_how_to_keep_the_old_numbers(tmp_path):
    target = tmp_path / "draw.py"
    legacy = DRAWS + "y = jax.tree_map(lambda v: v * 2, {'x': x})\n"  # JM601 rewrites the removed alias
    target.write_text(legacy)
    result = CliRunner().invoke(main, ["fix", "--verify", "-j", "1", str(target)])
    assert result.exit_code == 0, result.output
    assert "jax.tree.map(" in target.read_text()  # the migration is proven on the same streams
    assert f"{target}: written; verified on the random streams of JAX 0.4.x" in result.output
    assert f"to keep the old numbers add `{KEEP_LINE}`" in result.output

