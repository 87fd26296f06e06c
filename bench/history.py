"""What the API history costs: loading its tables and the prefilter over a tree.

    python bench/history.py [PATH ...]        # default: only the loads

Each load runs in a fresh interpreter (what a one-file check pays once). With PATH, the history's
byte prefilter runs over every ``*.py`` file there and the files it lets through that no other
rule wants are counted (each of those is parsed only for JM801-JM803).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # this working tree: its jaxmigrate is the one measured

LOADS = {
    "triggers.tsv (prefilter)": "from jaxmigrate.prefilter import _names; _names()",
    "public.tsv": "from jaxmigrate.catalog.api_history import table; table(False)",
    "private.tsv": "from jaxmigrate.catalog.api_history import table; table(True)",
}


def load_ms(code: str, repeat: int = 5) -> float:
    script = f"import time; import jaxmigrate.rules; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = [float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env).stdout)
            for _ in range(repeat)]
    return 1000 * sorted(runs)[len(runs) // 2]


def prefilter(paths) -> str:
    from jaxmigrate.engine.pipeline import active_rules
    from jaxmigrate.prefilter import history_wants
    from jaxmigrate.rules import ALL_RULES

    others = [r for r in ALL_RULES if not r.rides_along]
    files = [p.read_bytes() for root in paths for p in sorted(Path(root).rglob("*.py"))]
    history_wants(b"jax")  # the load, measured above
    start = time.process_time()
    wanted = [history_wants(data) for data in files]
    spent = time.process_time() - start
    alone = sum(1 for data, w in zip(files, wanted) if w and not active_rules(data, others))
    return (f"{len(files)} files, {sum(len(d) for d in files) / 1e6:.1f} MB: history prefilter {spent:.3f} s CPU; "
            f"{sum(wanted)} pass it, {alone} of them wanted by no other rule")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    for name, code in LOADS.items():
        print(f"load {name}: {load_ms(code):.1f} ms")
    if args.paths:
        print(prefilter(args.paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
