"""Put an upstream hand migration next to what `jaxmigrate fix` does to the same tree (issue 18).

    python scripts/compare_upstream.py MIRROR COMMIT --target-jax T [--workdir DIR] [--files GLOB ...]

MIRROR is a git directory (no work tree is needed). The parent tree COMMIT^ is extracted into
WORKDIR/before (blobs missing from the mirror are skipped and listed), copied to WORKDIR/fixed, and
there `jaxmigrate fix --unsafe-fixes --no-cache --target-jax T` runs on the whole tree. `check` runs on
WORKDIR/before, and `fix --diff` on it gives the findings a fix leaves, on the lines of COMMIT^.

For each .py/.ipynb file COMMIT changes, the changed regions of both diffs (upstream: COMMIT^ ->
COMMIT; jaxmigrate: COMMIT^ -> fixed) are merged where they touch, and every region is printed with
the upstream lines, jaxmigrate's lines, and the findings on those lines. A region is tagged:
  identical  both sides the same text, whitespace aside (every upstream site in it is identical);
  differs    upstream changed it and jaxmigrate did something else or nothing: a person classifies;
  extra      only jaxmigrate changed it: a person decides whether it is safe.
Notebooks are compared by their code cells' sources (markdown cells are not code).
Files COMMIT changes that jaxmigrate does not read (.md, .rst, ...) are listed, not compared.
This is a review aid, not a test: it runs the tool from the checkout this script lives in.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent


def git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True, text=True).stdout


def extract(mirror: str, rev: str, dest: Path, paths: Sequence[str] = ()) -> list:
    """Write the tree at rev (only ``paths`` of it, when given) under dest; return the paths whose
    blobs the mirror lacks."""
    entries = [line.split("\t", 1) for line in git(mirror, "ls-tree", "-r", "-z", rev, "--", *paths).split("\0") if line]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    batch = subprocess.run(["git", "-C", mirror, "cat-file", "--batch"], input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
                           check=True, capture_output=True).stdout
    missing, pos = [], 0
    for _sha, path in blobs:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].decode().split()
        pos = end + 1
        if header[-1] == "missing":
            missing.append(path)
            continue
        size = int(header[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        pos += size + 1
    return missing


def jaxmigrate(cwd: Path, *args: str) -> list:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "jaxmigrate", *args, "--no-cache", "--format", "json", "-q", "."],
                         check=False, cwd=cwd, env=env, capture_output=True, text=True)
    try:
        records = json.loads(run.stdout or "[]")
    except json.JSONDecodeError:  # `fix --diff` prints the diff before the findings
        records = json.loads(run.stdout[run.stdout.index("\n[") + 1:])
    if run.returncode == 2:
        errors = [f"{r['path']}: {r['message']}" for r in records if r["code"] == "JM000"]
        print(f"# jaxmigrate {' '.join(args)}: exit 2 {run.stderr.strip()} {errors}")
    return records


def code_lines(text: str, path: str) -> list:
    """The lines compared: a .py file's lines, a notebook's code cells with a marker line each."""
    if not path.endswith(".ipynb"):
        return text.splitlines()
    lines = []
    for n, cell in enumerate(json.loads(text).get("cells", [])):
        if cell.get("cell_type") == "code":
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            lines += [f"# %% cell {n}", *src.splitlines()]
    return lines


def changed(a: list, b: list) -> list:
    """(i1, i2, j1, j2) of each non-equal opcode of a line diff."""
    return [op[1:] for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]


def map_range(ops: list, i1: int, i2: int) -> tuple:
    """The new-side lines for old lines [i1, i2), a region from regions(): a change starting at i1 or
    ending by i2 lies inside it, any other lies wholly before or after it."""
    start = [b2 - a2 for a1, a2, b1, b2 in ops if a1 < i1]
    end = [b2 - a2 for a1, a2, b1, b2 in ops if a1 <= i2]
    return i1 + (start[-1] if start else 0), i2 + (end[-1] if end else 0)


def regions(up: list, jm: list) -> list:
    """Merge touching changed ranges (old-side lines) of both diffs: (i1, i2, n_up_sites, n_jm_changes)."""
    spans = sorted([(i1, i2, 1, 0) for i1, i2, _, _ in up] + [(i1, i2, 0, 1) for i1, i2, _, _ in jm])
    merged: list = []
    for i1, i2, u, j in spans:
        if merged and i1 <= merged[-1][1]:
            m = merged[-1]
            merged[-1] = (m[0], max(m[1], i2), m[2] + u, m[3] + j)
        else:
            merged.append((i1, i2, u, j))
    return merged


def squash(lines: list) -> str:
    """The text without whitespace and without a trailing comma before a closing bracket."""
    text = "".join("".join(lines).split())
    for close in ")]}":
        text = text.replace("," + close, close)
    return text


def compare_file(path: str, old: list, new: list, fixed: list, left: dict, before: dict) -> dict:
    up, jm = changed(old, new), changed(old, fixed)
    reformatted = [op for op in up if squash(old[op[0]:op[1]]) == squash(new[op[2]:op[3]])]
    up = [op for op in up if op not in reformatted]  # upstream's formatting-only changes are no sites
    counts = {"identical": 0, "differs": 0, "extra": 0, "sites": len(up), "reformatted": len(reformatted)}
    for i1, i2, n_up, n_jm in regions(up, jm):
        u1, u2 = map_range(up, i1, i2)
        f1, f2 = map_range(jm, i1, i2)
        tag = "extra" if not n_up else "identical" if squash(new[u1:u2]) == squash(fixed[f1:f2]) else "differs"
        counts[tag] += n_up if tag != "extra" else n_jm
        print(f"\n== {path}:{i1 + 1}-{max(i1 + 1, i2)} [{tag}] upstream sites: {n_up}, jaxmigrate changes: {n_jm}")
        if tag == "identical":
            print("".join(f"   -{line}\n" for line in old[i1:i2]) + "".join(f"   +{line}\n" for line in new[u1:u2]), end="")
            continue
        print("  C^:\n" + "".join(f"   {i1 + k + 1:5} {line}\n" for k, line in enumerate(old[i1:i2])), end="")
        print("  upstream:\n" + "".join(f"         {line}\n" for line in new[u1:u2]), end="")
        print("  jaxmigrate:\n" + "".join(f"         {line}\n" for line in fixed[f1:f2]), end="")
        for label, found in (("left after fix", left), ("check on C^", before)):
            hits = [f"{ln}: {code} {msg[:160]}" for ln, code, msg in found.get(path, []) if i1 - 1 <= ln - 1 <= i2]
            if hits:
                print(f"  {label}:\n" + "".join(f"         {h}\n" for h in hits), end="")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirror")
    ap.add_argument("commit")
    ap.add_argument("--target-jax", required=True)
    ap.add_argument("--workdir", help="keep the trees here (default: a temporary folder, removed)")
    ap.add_argument("--files", nargs="*", default=["*"], help="only changed files matching these globs")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="compare_upstream."))
    before, fixed = work / "before", work / "fixed"
    for d in (before, fixed):
        shutil.rmtree(d, ignore_errors=True)
    missing = extract(args.mirror, f"{args.commit}^", before)
    shutil.copytree(before, fixed, symlinks=True)
    print(f"# {args.commit}: {git(args.mirror, 'log', '-1', '--format=%H %ad %s', args.commit).strip()}")
    print(f"# target jax {args.target_jax}; trees in {work}; blobs missing from the mirror: {missing or 'none'}")

    def by_line(records):
        out: dict = {}
        for r in records:
            out.setdefault(r["path"].removeprefix("./"), []).append((r["line"], r["code"], r["message"]))
        return out
    opts = ("--target-jax", args.target_jax)
    before_findings = by_line(jaxmigrate(before, "check", *opts))
    left = by_line(jaxmigrate(before, "fix", "--diff", "--unsafe-fixes", *opts))
    jaxmigrate(fixed, "fix", "--unsafe-fixes", *opts)

    total = {"identical": 0, "differs": 0, "extra": 0, "sites": 0, "reformatted": 0}
    for line in git(args.mirror, "diff", "--name-status", "--no-renames", f"{args.commit}^", args.commit).splitlines():
        status, path = line.split("\t")
        if not any(fnmatch.fnmatch(path, g) for g in args.files):
            continue
        if not path.endswith((".py", ".ipynb")):
            print(f"\n== {path} [{status}] not a file jaxmigrate reads")
            continue
        old = code_lines((before / path).read_text(), path) if status != "A" else []
        new = code_lines(git(args.mirror, "show", f"{args.commit}:{path}"), path) if status != "D" else []
        fix = code_lines((fixed / path).read_text(), path) if status != "A" else []
        counts = compare_file(path, old, new, fix, left, before_findings)
        print(f"-- {path}: {counts}")
        for k in total:
            total[k] += counts[k]
    print(f"\n# total: upstream sites {total['sites']}: auto-identical {total['identical']}, to classify "
          f"{total['differs']}; jaxmigrate-only changes {total['extra']}; upstream formatting-only changes "
          f"(not sites, not shown) {total['reformatted']}")
    if not args.workdir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
