"""The baseline: read and ``ast.parse`` every ``*.py`` file of a tree, on N processes, and nothing else.

    python bench/parse_all.py PATH [PATH ...] [--jobs N] [--prefiltered]

Walks like jaxmigrate does by default (skips dot-folders and the usual tool folders), splits the
files into chunks over a process pool of ``--jobs`` workers (default: CPU count), the same
parallelism ``jaxmigrate check`` uses, and prints how many files parsed.

``--prefiltered`` parses only the files jaxmigrate's byte prefilter lets through (the files with
legacy names), with garbage collection off as in jaxmigrate's workers: the least any analysis
on Python's ``ast`` must do, before it walks a tree or runs a rule.
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import sys
from multiprocessing import Pool
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # this working tree: its jaxmigrate is the one measured
SKIP = {"build", "dist", "node_modules", "site-packages", "__pycache__", "venv"}


def files(root: str) -> list:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP)
        out += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return out


def parse(paths: list, prefiltered: bool = False) -> int:
    if prefiltered:
        import gc

        collecting = gc.isenabled()
        gc.disable()
        try:
            return _parse(paths, prefiltered)
        finally:
            if collecting:
                gc.enable()
    return _parse(paths, prefiltered)


def _parse(paths: list, prefiltered: bool) -> int:
    if prefiltered:
        from jaxmigrate.engine.pipeline import active_rules
        from jaxmigrate.rules import ALL_RULES
    parsed = 0
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        if prefiltered and not active_rules(data, ALL_RULES):
            continue
        try:
            ast.parse(data, filename=path)
            parsed += 1
        except (SyntaxError, ValueError):
            pass
    return parsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--prefiltered", action="store_true", help="only the files jaxmigrate's byte prefilter passes")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # --prefiltered: workers are forked from here
    paths = [p for root in args.paths for p in files(root)]
    size = max(1, len(paths) // (args.jobs * 16))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    work = functools.partial(parse, prefiltered=args.prefiltered)
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            parsed = sum(pool.map(work, chunks))
    else:
        parsed = sum(map(work, chunks))
    print(f"{parsed} of {len(paths)} files parsed")


if __name__ == "__main__":
    main()
