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


# --- the side-by-side benchmark: bench/trees.py, bench/against.py, run.py and one_file.py --against ---

import os  # noqa: E402
import subprocess  # noqa: E402

import against  # noqa: E402
import one_file as bench_one_file  # noqa: E402
import pytest  # noqa: E402
import trees  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=dict(os.environ, **GIT_ENV)).stdout.strip()


def _commit(repo, files) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "c")
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def tiny_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    first = _commit(repo, {"a.py": "import jax\n", "pkg/b.py": "x = 1\n", "nb.ipynb": "{}\n", "pyproject.toml": "[x]\n",
                           "setup.cfg": "[y]\n", "README.md": "no\n", "data.txt": "no\n", "pkg/tools.toml": "no\n"})
    os.symlink("a.py", repo / "link.py")
    second = _commit(repo, {"a.py": "import jax.numpy\n", "pkg/c.py": "y = 2\n"})
    return repo, first, second


def _written(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_trees_materialise_only_sources_and_skip_when_there(tiny_repo, tmp_path):
    repo, first, second = tiny_repo
    out = tmp_path / "trees" / "tiny"
    done = trees.materialise(repo / ".git", first, out)
    assert done == {"path": str(out), "skipped": False, "files": 5, "missing": 0}
    assert _written(out) == [".bench-tree", "a.py", "nb.ipynb", "pkg/b.py", "pyproject.toml", "setup.cfg"]
    assert (out / "a.py").read_text() == "import jax\n" and (out / trees.MARKER).read_text() == first + "\n"
    # again at the same sha: left as it is (a file put there stays)
    (out / "mine.py").write_text("")
    assert trees.materialise(repo / ".git", first, out)["skipped"] is True
    assert (out / "mine.py").exists()
    # another sha replaces the folder; the symlink is not a source file
    assert trees.materialise(repo / ".git", second, out)["files"] == 6
    assert not (out / "mine.py").exists() and not (out / "link.py").exists()
    assert (out / "a.py").read_text() == "import jax.numpy\n" and (out / "pkg" / "c.py").exists()
    assert not out.with_name("tiny.part").exists()


def test_trees_skip_a_blob_the_mirror_lacks(tiny_repo, tmp_path):
    repo, first, _ = tiny_repo
    blob = _git(repo, "rev-parse", f"{first}:pkg/b.py")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose objects: the commit just made them
    done = trees.materialise(repo / ".git", first, tmp_path / "t")
    assert (done["files"], done["missing"]) == (4, 1) and not (tmp_path / "t" / "pkg" / "b.py").exists()


def test_trees_name_an_unknown_commit(tiny_repo, tmp_path):
    repo, _, _ = tiny_repo
    with pytest.raises(SystemExit, match="no commit 0000000"):
        trees.materialise(repo / ".git", "0" * 40, tmp_path / "t")


def test_trees_are_pinned_and_mirrors_overridable(tmp_path):
    import argparse

    assert set(trees.TREES) == {"jax041", "easylm", "maxtext", "mtj", "colabfold"}
    for tree in trees.TREES.values():
        assert len(tree.sha) == 40 and all(c in "0123456789abcdef" for c in tree.sha), tree
    parser = argparse.ArgumentParser()
    trees.add_arguments(parser)
    args = parser.parse_args(["--mirror-root", str(tmp_path), "--mtj", "/elsewhere/mtj.git"])
    assert trees.mirror_of(trees.TREES["jax041"], args) == tmp_path / "jax-ml+jax" / "repo"
    assert trees.mirror_of(trees.TREES["mtj"], args) == Path("/elsewhere/mtj.git")


def test_schedule_alternates_versions_within_each_tree_and_round():
    order = against.schedule(["t1", "t2"], ["parse", "check", "fix"], ["old", "new"], 2, shared=["parse"])
    assert len(order) == 2 * 2 * (1 + 2 * 2)
    assert order[:5] == [(0, "t1", "parse", None), (0, "t1", "check", "old"), (0, "t1", "check", "new"),
                         (0, "t1", "fix", "old"), (0, "t1", "fix", "new")]
    versions = [v for _, _, m, v in order if m != "parse"]
    assert versions == ["old", "new"] * (len(versions) // 2)
    assert [r for r, *_ in order] == sorted(r for r, *_ in order)  # a round ends before the next begins


def test_medians_ratios_and_the_limit():
    samples = {("t", "check", "old"): [{"cpu": 3.0, "wall": 9.0}, {"cpu": 1.0, "wall": 1.0}, {"cpu": 2.0, "wall": 5.0}],
               ("t", "check", "new"): [{"cpu": 5.0, "wall": 5.0}, None]}
    med = against.medians(samples)
    assert med[("t", "check", "old")] == {"cpu": 2.0, "wall": 5.0}
    assert med[("t", "check", "new")] is None  # a round that did not finish
    assert against.ratio({"cpu": 3.0}, {"cpu": 2.0}) == 1.5
    assert against.ratio(None, {"cpu": 2.0}) is None and against.ratio({"cpu": 1.0}, {"cpu": 0.0}) is None
    assert against.over({"a check": 1.5, "a fix": 1.1, "b check": None}, 1.2) == ["a check 1.50x"]


def _versions(repo_path):
    here = against.Version("aaaaaaa", "a" * 40, sys.executable, str(repo_path))
    return {"old": here, "new": against.Version("bbbbbbb+", "b" * 40, sys.executable, str(repo_path))}


def test_run_against_alternates_and_fixes_fresh_copies(tmp_path, monkeypatch):
    """The commands run (old, new in turn), with their flags, environment and a fresh copy for fix."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text("a = 1\nb = 2\n")
    calls = []

    def fake(argv, cwd=None, env=None, timeout=None):
        if "fix" in argv:
            copy = Path(argv[-1])
            assert copy != tree and (copy / "m.py").read_text() == "a = 1\nb = 2\n"
            (copy / "m.py").write_text("changed\n")
        calls.append((argv, env))
        return {"wall": 1.0, "cpu": 2.0 if env and env.get("PYTHONPATH") == "new" else 1.0, "rss_mb": 1.0,
                "tree_rss_mb": 1.0}

    monkeypatch.setattr(bench_run, "measure", fake)
    versions = {"old": against.Version("o", "o" * 40, "py-old", None), "new": against.Version("n", "n" * 40, "py", "new")}
    result = bench_run.run_against({"tree": str(tree)}, versions, 2, 3, tmp_path / "work")
    assert (tree / "m.py").read_text() == "a = 1\nb = 2\n"
    pythons = [argv[0] for argv, _ in calls]
    assert pythons == [sys.executable, "py-old", "py", "py-old", "py"] * 2
    check_old = calls[1][0]
    assert check_old == ["py-old", "-m", "jaxmigrate", "check", "--no-cache", "-j", "1", str(tree)]
    assert calls[3][0][:7] == ["py-old", "-m", "jaxmigrate", "fix", "--no-cache", "-j", "3"]
    assert "PYTHONPATH" not in calls[1][1] and calls[2][1]["PYTHONPATH"] == "new"
    row = result["trees"][0]
    assert (row["files"], row["lines"]) == (1, 2)
    assert row["check"]["new"]["cpu"] == 2.0 and row["fix"]["old"]["cpu"] == 1.0
    assert bench_run.against_ratios(result) == {"tree check": 2.0, "tree fix": 2.0}


def test_run_against_runs_both_versions(tmp_path):
    """The real plumbing, once: both versions here (this working tree), one round, on a tiny tree."""
    tree = tmp_path / "tree"
    tree.mkdir()
    legacy = "from jax.experimental.pjit import pjit\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"
    (tree / "m.py").write_text(legacy)
    repo = Path(bench_run.HERE).parent
    result = bench_run.run_against({"tree": str(tree)}, _versions(repo), 1, 1, tmp_path / "work")
    assert (tree / "m.py").read_text() == legacy
    row = result["trees"][0]
    assert all(row[m][k]["cpu"] > 0 for m in ("check", "fix") for k in ("old", "new")) and row["parse"]["cpu"] > 0
    assert result["versions"]["new"] == {"label": "bbbbbbb+", "sha": "b" * 40}


def test_current_version_imports_this_working_tree():
    version = against.current()
    repo = Path(bench_run.HERE).parent
    assert version.pythonpath == str(repo) and version.sha == _git(repo, "rev-parse", "HEAD")
    assert version.label.rstrip("+") == version.sha[:7]


def test_build_venv_prefers_its_own_packages(tmp_path):
    """A build's venv finds this interpreter's dependencies, but its own jaxmigrate first."""
    purelib = against.make_venv(tmp_path / "venv")
    (purelib / "jaxmigrate").mkdir()
    (purelib / "jaxmigrate" / "__init__.py").write_text("")
    version = against.Version("x", "x" * 40, str(tmp_path / "venv" / "bin" / "python"), None)
    assert against._imports_from(version, str(tmp_path)) == (purelib / "jaxmigrate").resolve()
    found = subprocess.run([version.python, "-c", "import libcst; print(libcst.__file__)"], env=version.env(),
                           cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    assert Path(found.strip()).resolve().parent.parent != purelib.resolve()  # from here, not installed there


def test_build_is_cached_by_sha(tiny_repo, tmp_path, monkeypatch):
    repo, first, second = tiny_repo
    where = against.build_dir(first, tmp_path)
    assert where != against.build_dir(second, tmp_path) and first in where.name
    where.mkdir(parents=True)
    (where / against.BUILT).write_text(first + "\n")
    monkeypatch.setattr(against, "make_venv", lambda venv: pytest.fail("rebuilt"))
    version = against.build(first[:7], tmp_path, repo=repo, log=lambda _: None)
    assert (version.sha, version.label, version.python) == (first, first[:7], str(where / "venv" / "bin" / "python"))
    with pytest.raises(SystemExit, match="no commit"):
        against.build("nothere", tmp_path, repo=repo)


def test_report_against_puts_both_versions_side_by_side():
    def cell(cpu):
        return {"wall": cpu, "cpu": cpu, "rss_mb": 1.0, "tree_rss_mb": 1.0}

    def tree(name, parse, check, fix):
        return {"name": name, "path": name, "files": 10, "lines": 1000, "parse": cell(parse),
                "check": {"old": cell(check[0]), "new": cell(check[1])}, "fix": {"old": cell(fix[0]), "new": cell(fix[1])}}

    result = {"versions": {"old": {"label": "91d78c7", "sha": "9" * 40}, "new": {"label": "709038e", "sha": "7" * 40}},
              "repeat": 3, "jobs": 2, "cores": 2, "timeout": None,
              "trees": [tree("jax041", 1.0, (2.0, 8.0), (4.0, 12.0)), tree("easylm", 1.0, (1.0, 1.0), (1.0, 1.5))]}
    text = bench_run.report_against(result)
    assert "old = 91d78c7, new = 709038e" in text
    lines = {line.split()[0]: line.split() for line in text.splitlines() if line[:1].isalpha() and len(line.split()) == 12}
    assert lines["jax041"][4:] == ["2.00", "8.00", "4.00x", "4.00", "12.00", "3.00x", "4.00x", "12.00x"]
    assert lines["total"][1:5] == ["20", "2,000", "2.00", "3.00"] and lines["total"][6] == "3.00x"
    assert "fix / ast.parse at 91d78c7: 2.50x cpu (goal <= 2x: NOT met)" in text
    assert bench_run.against.over(bench_run.against_ratios(result), 2.0) == [
        "jax041 check 4.00x", "jax041 fix 3.00x", "total check 3.00x", "total fix 2.70x"]
    result["trees"][0]["check"]["old"] = None
    result["timeout"] = 60.0
    assert "> 60 s" in bench_run.report_against(result)


def test_one_file_against_stops_a_row_after_its_first_timeout(monkeypatch):
    ran = []

    def fake(argv, cwd=None, env=None, timeout=None):
        ran.append((argv[0], argv[3]))
        return None if argv[0] == "py-old" and argv[3] == "fix" else {"wall": 1.0, "cpu": 1.0, "rss_mb": 1.0}

    monkeypatch.setattr(bench_one_file, "measure", fake)
    versions = {"old": against.Version("o", "o" * 40, "py-old", None), "new": against.Version("n", "n" * 40, "py", "x")}
    result = bench_one_file.run_against(versions, [300], ["pjit"], repeat=3, commands=("check", "fix"), timeout=5.0)
    assert ran[:4] == [("py-old", "check"), ("py", "check"), ("py-old", "fix"), ("py", "fix")]
    assert ran.count(("py-old", "fix")) == 1 and ran.count(("py", "fix")) == 3
    check, fix = result["rows"]
    assert fix["old"] is None and fix["new"]["cpu"] == 1.0 and check["old"]["cpu"] == 1.0
    text = bench_one_file.report_against(dict(result, versions={"old": {"label": "91d78c7"}, "new": {"label": "709038e"}}))
    assert "> 5 s" in text and "1.00x" in text


def test_tree_names_are_unique():
    assert bench_run.tree_names(["/a/x", "/b/y", "/c/x"]) == {"x": "/a/x", "y": "/b/y", "x#3": "/c/x"}
