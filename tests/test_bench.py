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
    for phase in ("prefilter, every file", "ast.parse, files that pass", "the one walk", "resolved names", "rule JM", "floor:",
                  "total"):
        assert phase in out, out


def test_one_file_modules(tmp_path):
    """bench/one_file.py's modules: deterministic, parse, about the lines asked for, and legacy
    throughout (findings of many rules, in every part of the file)."""
    for kind in ("pjit", "mixed", "multihost"):
        text = generate.one_file(3_000, kind)
        assert text == generate.one_file(3_000, kind)
        assert 3_000 <= text.count("\n") < 3_020
        ast.parse(text)
        findings = analyse(text, f"{kind}.py", ALL_RULES)
        codes = {f.code for f in findings}
        assert len(codes) >= (2 if kind == "pjit" else 6), (kind, codes)
        assert max(f.line for f in findings) > 2_900 and len(findings) > 100


def test_one_file_report_states_each_goal():
    import one_file

    def row(kind, lines, check, fix, unsafe):
        cells = {c: {"wall": w, "cpu": w, "rss_mb": 50.0} for c, w in (("check", check), ("fix", fix), ("unsafe", unsafe))}
        return {"kind": kind, "lines": lines, **cells}

    result = {"repeat": 1, "cores": 2, "timeout": 60.0, "rows": [
        row("pjit", 10_000, 1.0, 2.0, 2.0), row("pjit", 50_000, 4.0, 13.0, 10.0), row("pjit", 100_000, 8.0, 26.0, 21.0)]}
    text = one_file.report(result)
    assert "pjit check, 10,000 -> 50,000 lines (5.0x): 4.0x cpu" in text and "goal <= 6.0x: met" in text
    assert "pjit fix, 10,000 -> 50,000 lines (5.0x): 6.5x cpu, 6.5x wall (goal <= 6.0x: NOT met)" in text
    assert "pjit fix --unsafe-fixes, 50,000 -> 100,000 lines (2.0x): 2.1x cpu, 2.1x wall (goal <= 2.4x: met)" in text
    assert "pjit check of 50,000 lines: 4.00 s wall, 4.00 s cpu (goal < 5 s: met)" in text
    result["rows"][2]["fix"] = None
    assert "stopped after 60 s: pjit 100,000 lines fix (NOT met)" in one_file.report(result)
