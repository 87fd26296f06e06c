"""Audit `jaxmigrate fix` on a real tree: the "Done when" checks of the core issue, measured.

    python scripts/audit_tree.py PATH [PATH...] [--unsafe-fixes]

Copies each PATH to a temporary folder, runs the installed `jaxmigrate fix` there (never on the
original), and reports:
  - files changed, fixes applied, findings left;
  - every file still parses (ast) if it parsed before;
  - a second `fix` changes nothing (idempotence);
  - files that contain no rule trigger are byte-identical;
  - every remaining legacy-API token in code (not in a comment or string) is on a line that
    `check` reports: "fixed or flagged". Tokens in code that no finding covers are listed for a
    person to judge (a trap correctly left alone, or a miss);
  - names the fix left undefined (ruff's F821/F822/F823, run on the tree before and after: a
    name undefined only after the fix would fail at import or at run time), when ruff is installed.
Exit 1 if a hard check fails (parse, idempotence, untouched files, new undefined names), else 0.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

LEGACY = re.compile(
    r"\b(in_axis_resources|out_axis_resources|with_sharding_constraint\(.*\baxis_resources\s*="
    r"|experimental\.maps\b|experimental import maps\b"
    r"|from jax\.experimental\.maps\b|experimental\.PartitionSpec|experimental import [^\n]*PartitionSpec"
    r"|pjit\.PartitionSpec|pjit import [^\n]*PartitionSpec|pxla\.PartitionSpec|pxla import [^\n]*PartitionSpec"
    r"|pjit\.NamedSharding|pjit import [^\n]*NamedSharding|MeshPspecSharding|OpShardingSharding|gda_serialization"
    r"|jax_array\b|jax_parallel_functions_output_gda|live_buffers"
    r"|GlobalDeviceArray|global_device_array|FROM_GDA|\.local_shards\b|\.local_data\(|MeshAxes)"
)


def jaxmigrate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("jaxmigrate") or sys.executable + " -m jaxmigrate"
    return subprocess.run([*exe.split(), *args], cwd=cwd, capture_output=True, text=True)


def prose_spans(text: str):
    """(line, start_col, end_line, end_col) of comments and strings."""
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                spans.append((*tok.start, *tok.end))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return spans


def in_prose(spans, line: int, col: int) -> bool:
    return any((l0, c0) <= (line, col) < (l1, c1) for l0, c0, l1, c1 in spans)


def parses(data: bytes) -> bool:
    try:
        ast.parse(data)
        return True
    except (SyntaxError, ValueError):
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--unsafe-fixes", action="store_true")
    args = parser.parse_args()
    from jaxmigrate.rules import ALL_RULES

    triggers = [t for r in ALL_RULES for t in r.triggers]
    failed = False
    for raw in args.paths:
        src = Path(raw).resolve()
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / src.name
            shutil.copytree(src, work, symlinks=True)
            before = {p.relative_to(work): p.read_bytes() for p in work.rglob("*.py") if p.is_file()}
            undefined_before = undefined_names(work)
            extra = ["--unsafe-fixes"] if args.unsafe_fixes else []
            initial = json.loads(jaxmigrate("check", "--format", "json", ".", cwd=work).stdout or "[]")
            first = jaxmigrate("fix", "-j", "2", *extra, ".", cwd=work)
            second = jaxmigrate("fix", "-j", "2", *extra, ".", cwd=work)
            check = jaxmigrate("check", "--format", "json", ".", cwd=work)
            findings = json.loads(check.stdout or "[]")
            after = {p: (work / p).read_bytes() for p in before}
            changed = [p for p in before if before[p] != after[p]]
            broke = [p for p in changed if parses(before[p]) and not parses(after[p])]
            no_trigger_touched = [p for p in changed if not any(t in before[p] for t in triggers)]
            covered = {(Path(f["path"]).as_posix(), n) for f in findings for n in range(f["line"], f["end_line"] + 1)}
            unreported, prose = [], 0
            for rel, data in after.items():
                text = data.decode("utf-8", "replace")
                spans = prose_spans(text)
                for lineno, line in enumerate(text.splitlines(), 1):
                    for m in LEGACY.finditer(line):
                        if in_prose(spans, lineno, m.start()):
                            prose += 1
                        elif (rel.as_posix(), lineno) not in covered:
                            unreported.append(f"{rel}:{lineno}: {line.strip()[:110]}")
            print(f"== {src}")
            print(f"   files: {len(before)}, changed: {len(changed)}")
            fixable = ("safe", "unsafe") if args.unsafe_fixes else ("safe",)
            per_code: Dict[str, List[int]] = {}
            for f in initial:
                row = per_code.setdefault(f["code"], [0, 0])
                row[0 if f["fix_safety"] in fixable else 1] += 1
            print("   findings before fix (fixable/reported): "
                  + ", ".join(f"{c} {a}/{b}" for c, (a, b) in sorted(per_code.items())))
            print(f"   first fix:  {first.stdout.strip().splitlines()[-1] if first.stdout.strip() else first.stderr[-300:]}")
            print(f"   second fix: {second.stdout.strip().splitlines()[-1] if second.stdout.strip() else second.stderr[-300:]}")
            print(f"   findings left (check after fix): {len(findings)} "
                  f"({', '.join(f'{c}: {n}' for c, n in sorted(_count(findings).items()))})")
            print(f"   parse broken by fix: {len(broke)} {broke[:5]}")
            print(f"   files without any trigger that changed: {len(no_trigger_touched)} {no_trigger_touched[:5]}")
            print(f"   legacy tokens left in comments/strings (prose, not rewritten): {prose}")
            print(f"   legacy tokens left in code with no finding on their line: {len(unreported)}")
            for item in unreported:
                print(f"     {item}")
            idempotent = "Applied 0 fixes" in second.stdout
            print(f"   idempotent: {idempotent}")
            undefined_after = undefined_names(work)
            new_undefined = [] if undefined_before is None or undefined_after is None else \
                sorted((undefined_after - undefined_before).elements())
            print(f"   names left undefined by the fix (ruff F821/F822/F823): "
                  f"{'ruff not installed' if undefined_after is None else len(new_undefined)}")
            for path, message in new_undefined:
                print(f"     {path}: {message}")
            failed |= bool(broke or no_trigger_touched or not idempotent or new_undefined)
    return 1 if failed else 0


def undefined_names(tree: Path) -> Optional[Counter]:
    """(file, message) of each undefined name ruff finds in ``tree``, or None without ruff."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        return None
    out = subprocess.run([ruff, "check", "--no-cache", "--isolated", "--select", "F821,F822,F823",
                          "--output-format", "json", "--exit-zero", "."], cwd=tree, capture_output=True, text=True)
    return Counter((Path(d["filename"]).relative_to(tree.resolve()).as_posix(), d["message"])
                   for d in json.loads(out.stdout or "[]"))


def _count(findings):
    out: Dict[str, int] = {}
    for f in findings:
        out[f["code"]] = out.get(f["code"], 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
