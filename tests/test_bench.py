"""The benchmark's parts that are not timings: the generated tree and the report (no clock here)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from jaxmigrate.engine.pipeline import active_rules, analyse
from jaxmigrate.rules import ALL_RULES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import generate  # noqa: E402
import parse_all  # noqa: E402
import run as bench_run  # noqa: E402


def test_generated_tree_is_realistic(tmp_path):
    files, lines, legacy = generate.generate(tmp_path, 30_000, seed=1)
    paths = sorted(tmp_path.rglob("*.py"))
    assert len(paths) == files and lines >= 30_000
    assert 0.15 < legacy / files < 0.40  # a quarter on average; a small tree varies
    flagged = 0
    for path in paths:
        text = path.read_text()
        ast.parse(text)
        assert "distributed under the License" in text
        wanted = active_rules(text.encode(), ALL_RULES)
        findings = analyse(text, str(path), ALL_RULES)
        # a clean module is decided from its bytes; a legacy one is reported
        assert bool(wanted) == bool(findings), path
        flagged += bool(findings)
    assert flagged == legacy
    assert parse_all.parse([str(p) for p in paths]) == files == len(parse_all.files(str(tmp_path)))
    # the floor parses just the files the prefilter passes
    assert parse_all.parse([str(p) for p in paths], prefiltered=True) == legacy


def test_same_seed_same_tree(tmp_path):
    generate.generate(tmp_path / "a", 5_000, seed=3)
    generate.generate(tmp_path / "b", 5_000, seed=3)
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*.py")}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*.py")}
    assert a == b


def test_report_states_each_goal():
    row = {"wall": 1.0, "cpu": 1.0, "rss_mb": 30.0, "tree_rss_mb": 60.0}
    result = {"paths": ["tree"], "files": 10, "lines": 1000, "cores": 2, "jobs": 2, "repeat": 3, "ruff": True,
              "medians": {"ruff": dict(row, wall=0.5), "parse": dict(row, wall=0.5), "cold": dict(row, wall=1.0),
                          "warm": dict(row, wall=0.4), "fix": dict(row, wall=3.0), "one_file": dict(row, wall=0.2)}}
    text = bench_run.report(result)
    assert "cold check / ruff: 2.0x wall" in text and "goal <= 3x wall: met" in text
    assert "floor /" not in text  # measured only when asked
    result["medians"]["floor"] = dict(row, wall=0.75)
    assert "floor / ruff: 1.5x wall" in bench_run.report(result)
    assert "fix / ast.parse: 6.0x wall" in text and "goal <= 4x: NOT met" in text
    assert "one-file check: 0.20 s" in text
    del result["medians"]["ruff"]
    assert "ruff is not installed" in bench_run.report(result)


def test_breakdown_names_every_phase(tmp_path, capsys, monkeypatch):
    import breakdown

    generate.generate(tmp_path, 3_000, seed=2)
    monkeypatch.setattr(sys, "argv", ["breakdown.py", str(tmp_path)])
    breakdown.main()
    out = capsys.readouterr().out
    for phase in ("prefilter, every file", "ast.parse, files that pass", "the one walk", "resolved names", "rule JM", "floor:", "total"):
        assert phase in out, out
