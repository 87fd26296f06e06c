"""The baseline: read and ``ast.parse`` every ``*.py`` file of a tree, on N processes, and nothing else.

    python bench/parse_all.py PATH [PATH ...] [--jobs N]

Walks like jaxmigrate does by default (skips dot-folders and the usual tool folders), splits the
files into chunks over a process pool of ``--jobs`` workers (default: CPU count), the same
parallelism ``jaxmigrate check`` uses, and prints how many files parsed.
"""

from __future__ import annotations

import argparse
import ast
import os
from multiprocessing import Pool

SKIP = {"build", "dist", "node_modules", "site-packages", "__pycache__", "venv"}


def files(root: str) -> list:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP)
        out += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return out


def parse(paths: list) -> int:
    parsed = 0
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
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
    args = parser.parse_args()
    paths = [p for root in args.paths for p in files(root)]
    size = max(1, len(paths) // (args.jobs * 16))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            parsed = sum(pool.map(parse, chunks))
    else:
        parsed = sum(map(parse, chunks))
    print(f"{parsed} of {len(paths)} files parsed")


if __name__ == "__main__":
    main()
