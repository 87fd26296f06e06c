"""Where a cold ``check`` spends its CPU, phase by phase, in one process.

    python bench/breakdown.py PATH [PATH ...]

Reads every ``*.py`` file under the paths, then times (CPU seconds of this process, cyclic
garbage collection off as in the workers): the byte prefilter over every file, ``ast.parse`` of
the files that pass it, the one walk that indexes nodes and binds names (``rules/scopes.walk``),
the resolved names of each module (``FileContext.qualified``) and each rule's ``check``. The
parse and the walk are the floor of any analysis on Python's ``ast``: compare their sum, spread
over the cores, with ``ruff check`` from ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import ast
import collections
import gc
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # this working tree: its jaxmigrate is the one measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))

    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.scopes import walk
    from jaxmigrate.engine.pipeline import active_rules
    from jaxmigrate.rules import ALL_RULES

    gc.disable()
    files = sorted(p for root in args.paths for p in ([root] if root.is_file() else root.rglob("*.py")))
    data = [p.read_bytes() for p in files]
    cost: "collections.Counter[str]" = collections.Counter()

    start = time.process_time()
    chosen = [(d, rules) for d in data for rules in [active_rules(d, ALL_RULES)] if rules]
    cost["prefilter, every file"] = time.process_time() - start
    lines = sum(d.count(b"\n") for d, _ in chosen)
    nodes = 0
    for raw, rules in chosen:
        text = raw.decode("utf-8", "replace")
        start = time.process_time()
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        cost["ast.parse, files that pass"] += time.process_time() - start
        start = time.process_time()
        walk(tree)
        cost["the one walk (index, parents, scopes)"] += time.process_time() - start
        nodes += sum(1 for _ in ast.walk(tree))
        ctx = FileContext(text)
        ctx.resolver  # noqa: B018 - its walk, timed above on the same text
        start = time.process_time()
        ctx.qualified()
        cost["resolved names and chains"] += time.process_time() - start
        for rule in rules:
            start = time.process_time()
            list(rule().check(ctx))
            cost[f"rule {rule.code}"] += time.process_time() - start
        del ctx, tree
    print(f"{len(files)} files; {len(chosen)} pass the prefilter ({lines:,} lines, {nodes:,} nodes)")
    print(f"{'phase':45} {'cpu s':>7}")
    for phase, seconds in cost.most_common():
        print(f"{phase:45} {seconds:7.3f}")
    floor = cost["prefilter, every file"] + cost["ast.parse, files that pass"] + cost["the one walk (index, parents, scopes)"]
    print(f"{'floor: prefilter + parse + walk':45} {floor:7.3f}")
    print(f"{'total':45} {sum(cost.values()):7.3f}")


if __name__ == "__main__":
    main()
