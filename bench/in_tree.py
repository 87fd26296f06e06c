"""What ``check`` of one file costs inside a large project, next to the same file alone.

    python bench/in_tree.py                              # 10,000 files, 3 rounds
    python bench/in_tree.py --files 10000 --repeat 5
    python bench/in_tree.py --against REV                # REV's jaxmigrate beside this one
    python bench/run.py --in-tree --against REV          # the same, from the main benchmark script

The pre-commit case of issue 36: ``check`` of one file reads, for the plan that spans modules
(JM701/JM702's holds), the modules linked to it, and did read every file of its project. The
bench writes a generated tree (bench/generate.py) of ``--files`` files under a ``pyproject.toml``
(one project), and in it a package ``linked/`` of legacy modules linked by imports: ``train.py``,
the file checked, imports ``layers.py`` (which imports ``common.py``), and ``run.py`` imports
``train.py``. It times ``jaxmigrate check FILE`` of ``linked/train.py``:

- alone: the file in a project of its own (its imports find nothing);
- modules: the file with its linked modules, a project of those five files;
- in tree: the file inside the generated tree;

cold (``--no-cache``) and warm (the cache filled by the same command before; files older than 2 s),
and reports the medians of CPU time (user + system), and in tree / alone. The goal: within 2x of
alone, cold and warm. With ``--against REV`` (bench/against.py) REV's jaxmigrate runs too,
alternately, REV first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import against  # noqa: E402
import trees  # noqa: E402
from generate import generate, module  # noqa: E402
from run import measure  # noqa: E402

GOAL = 2.0  # in tree / alone, cold and warm
VARIANTS = ("alone", "modules", "tree")
FILE = "linked/train.py"


def _legacy(rng: random.Random, first: str, lines: int, word: bytes) -> str:
    """A generated legacy module of about ``lines`` lines that says ``word``, ``first`` its first line."""
    while True:
        text = module(rng, lines, legacy=True)
        if word in text.encode():
            return first + "\n" + text


def linked_modules(seed: int = 0) -> Dict[str, str]:
    """The package ``linked/``: train.py imports layers.py, which imports common.py; run.py imports
    train.py. All but common.py use pjit or a mesh."""
    rng = random.Random(seed)
    return {
        "linked/__init__.py": "",
        "linked/common.py": module(rng, 120, legacy=False),
        "linked/layers.py": _legacy(rng, "from linked import common", 250, b"pjit"),
        "linked/train.py": _legacy(rng, "from linked import layers", 300, b"pjit"),
        "linked/run.py": _legacy(rng, "from linked.train import *  # noqa", 150, b"mesh"),
    }


def write(folder: Path, files: Dict[str, str]) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def setup(work: Path, files: int, seed: int) -> Dict[str, Path]:
    """The three folders: the file alone, the file with its modules, the file in the generated tree."""
    modules = linked_modules(seed)
    folders = {name: work / name for name in VARIANTS}
    for folder in folders.values():
        folder.mkdir(parents=True)
    generate(folders["tree"], lines=10 ** 9, seed=seed, max_files=files - len(modules))
    write(folders["tree"], modules)
    write(folders["modules"], modules)
    write(folders["alone"], {FILE: modules[FILE]})
    return folders


def run(versions: Dict[str, "against.Version"], files: int, repeat: int, seed: int = 0) -> dict:
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-in-tree-") as tmp:
        work = Path(tmp)
        folders = setup(work, files, seed)
        count = sum(1 for p in folders["tree"].rglob("*.py"))
        time.sleep(2.1)  # a file modified in the last 2 s is re-read by a cached check (racy mtime)

        def command(label: str, variant: str, cold: bool) -> Optional[dict]:
            version = versions[label]
            env = version.env(dict(os.environ, JAXMIGRATE_CACHE_DIR=str(work / f"cache-{label}-{variant}")))
            args = version.command("check", *(["--no-cache"] if cold else []), FILE)
            return measure(args, cwd=str(folders[variant]), env=env)

        for label in versions:  # fill the caches
            for variant in VARIANTS:
                command(label, variant, cold=False)
        samples: Dict[str, List[dict]] = {}
        for _ in range(repeat):
            for label in versions:
                for variant in VARIANTS:
                    for mode in ("cold", "warm"):
                        sample = command(label, variant, cold=mode == "cold")
                        if sample is not None:
                            samples.setdefault(f"{label} {variant} {mode}", []).append(sample)
    medians = {key: {k: statistics.median(s[k] for s in rows) for k in rows[0]} for key, rows in samples.items()}
    return {"files": count, "repeat": repeat, "versions": {k: v.label for k, v in versions.items()}, "medians": medians}


def report(result: dict) -> str:
    lines = [f"check {FILE}: alone, with its 4 linked modules, and in a generated tree of {result['files']:,} files "
             f"(CPU s, medians of {result['repeat']})", "",
             f"{'':16}{'alone':>8}{'modules':>9}{'in tree':>9}{'tree/alone':>12}"]
    verdicts = []
    for label, name in result["versions"].items():
        for mode in ("cold", "warm"):
            cells = [result["medians"].get(f"{label} {variant} {mode}") for variant in VARIANTS]
            times = [c["cpu"] if c else None for c in cells]
            ratio = times[2] / times[0] if times[0] and times[2] else None
            row = f"{name + ' ' + mode:16}" + "".join(f"{t:>9.2f}" if t is not None else f"{'-':>9}" for t in times)
            lines.append(row.replace("  ", " ", 1) + (f"{ratio:>11.1f}x" if ratio else ""))
            if label == "new" and ratio:
                verdicts.append(f"{mode}: {ratio:.1f}x alone (goal <= {GOAL:g}x: {'met' if ratio <= GOAL else 'NOT met'})")
    return "\n".join(lines + [""] + verdicts)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", metavar="REV", help="also time the jaxmigrate of this git revision")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where bench/against.py keeps its builds")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    versions = {}
    if args.against:
        versions["old"] = against.build(args.against, args.cache_dir or trees.default_cache())
    versions["new"] = against.current()
    result = run(versions, args.files, args.repeat, args.seed)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
