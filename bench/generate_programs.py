"""Generated legacy programs, migrated and judged by the verifier (issue 38; Csmith/YARPGen style).

    python bench/generate_programs.py --n 50 --seed 1            # every family, 50 programs each
    python bench/generate_programs.py --family pjit --n 200 --json report.json

Each program of ``bench/program_grammar.py`` is migrated with ``--unsafe-fixes --target-jax
latest``; then it is a bug when ``fix`` raises, writes text that does not compile, changes the
text again on a second run, leaves a finding that names no code to write, or leaves nothing to
report (JM904's notice aside) and ``verify`` (1 process, and 2 where the program may run on
several) says anything but EQUIVALENT (or a proven STREAMS_DIFFER: the numbers JAX 0.5.0's
streams changed). A program whose legacy side fails is a bug of the grammar, counted apart. The
report: programs tried, per family and feature; the bugs with their programs; the time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from program_grammar import FAMILIES, Program, programs  # noqa: E402


def _notices() -> frozenset:
    """Findings a migration leaves by design (``Rule.notice``: JM904, the numbers JAX 0.5.0's streams changed)."""
    from jaxmigrate.rules import ALL_RULES

    return frozenset(r.code for r in ALL_RULES if r.notice)


@dataclass
class Judgement:
    program: Program
    outcome: str  # "equivalent" | "reported" | "bug" | "invalid program"
    why: str = ""
    after: str = ""
    left: List[str] = field(default_factory=list)


def migrate(text: str):
    """The migration to the latest JAX with unsafe fixes, as ``fix --unsafe-fixes`` makes it."""
    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    settings = Settings(tuple(r.code for r in ALL_RULES), fix=True, write=False, unsafe_fixes=True, target=None)
    out = transform(text.encode("utf-8"), "program.py", settings)
    return (out.text if out.original else text), out.findings


def checked(text: str):
    """What ``check`` reports on the program (the messages of the fixes ``migrate`` applied)."""
    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    return transform(text.encode("utf-8"), "program.py", Settings(tuple(r.code for r in ALL_RULES), target=None)).findings


def _legacy_failed(verdict) -> Optional[str]:
    """Why the before side did not run to the end, where it did not."""
    if verdict.status != "undecidable":
        return None
    if verdict.reason.startswith("the before side raised") or any(
            r.side == "before" and r.result is None for r in verdict.runs):
        return verdict.reason
    return None


def judge(program: Program, folder: Path, timeout: float = 120) -> Judgement:
    from jaxmigrate.verify.report import render_text
    from jaxmigrate.verify.runner import verify_files

    before = folder / "before.py"
    before.write_text(program.text)
    try:
        after_text, findings = migrate(program.text)
    except Exception as exc:  # noqa: BLE001 - the bug this looks for
        return Judgement(program, "bug", f"fix raised {type(exc).__name__}: {exc}")
    try:
        compile(after_text, "after.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Judgement(program, "bug", f"fix wrote code that does not compile: {exc}", after_text)
    again, _ = migrate(after_text)
    if again != after_text:
        return Judgement(program, "bug", "a second fix changes the text again", after_text)
    notices = _notices()
    left = [f"{f.line}: {f.code} {f.message}" for f in findings if f.code not in notices]
    silent = [f for f in findings if f.code not in notices and not f.suggestion and "`" not in f.message]
    if silent:
        return Judgement(program, "bug", "a finding names no code to write", after_text, left)
    after = folder / "after.py"
    after.write_text(after_text)
    for processes in program.processes:
        verdict = verify_files(str(before), str(after), processes=processes, timeout=timeout)
        failed = _legacy_failed(verdict)
        if failed:
            return Judgement(program, "invalid program", f"the legacy side fails: {failed}", after_text, left)
        proven = verdict.status == "streams_differ" and verdict.streams.get("rerun")
        # arrays made eagerly in a `with mesh:` block, replicated by the `jax.set_mesh` that replaced it, as
        # JM702's message said: the values agree and the verifier names each layout as one JAX chose
        chosen = verdict.status == "layout_differs" and all(d.note for d in verdict.differences) \
            and any(f.code == "JM702" and "replicated over the mesh" in f.message for f in checked(program.text))
        if verdict.status != "equivalent" and not proven and not chosen and not left:
            return Judgement(program, "bug", f"0 findings left and {verdict.status.upper()} with {processes} "
                                             f"process(es):\n{render_text(verdict)}", after_text)
    return Judgement(program, "reported" if left else "equivalent", after=after_text, left=left)


def run(families, n: int, seed: int, folder: Path) -> List[Judgement]:
    """``n`` programs of each family, drawn with Hypothesis from ``seed`` (not shrunk: every bug is kept)."""
    from hypothesis import HealthCheck, Phase, given, seed as with_seed, settings

    judged: List[Judgement] = []
    for family in families:
        @with_seed(seed)
        @settings(max_examples=n, phases=[Phase.generate], deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(programs(family))
        def one(program):
            case = Path(tempfile.mkdtemp(dir=folder))
            judged.append(judge(program, case))

        one()
    return judged


def report(judged: List[Judgement], seconds: float) -> Dict:
    by_family: Dict[str, Counter] = {}
    features: Dict[str, Counter] = {}
    for j in judged:
        by_family.setdefault(j.program.family, Counter())[j.outcome] += 1
        for feature in j.program.features:
            features.setdefault(j.program.family, Counter())[feature] += 1
    bugs = [{"family": j.program.family, "outcome": j.outcome, "why": j.why, "program": j.program.text,
             "after": j.after, "left": j.left} for j in judged if j.outcome in ("bug", "invalid program")]
    return {"programs": len(judged), "seconds": round(seconds, 1),
            "outcomes": {f: dict(c) for f, c in by_family.items()},
            "features": {f: dict(c) for f, c in features.items()}, "bugs": bugs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="programs per family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--family", action="append", choices=FAMILIES, help="default: every family")
    parser.add_argument("--json", type=Path, help="write the whole report here")
    args = parser.parse_args(argv)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-generated-") as tmp:
        judged = run(args.family or FAMILIES, args.n, args.seed, Path(tmp))
    out = report(judged, time.monotonic() - start)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    for family, outcomes in out["outcomes"].items():
        print(f"{family}: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    for bug in out["bugs"]:
        print(f"\n--- {bug['family']}: {bug['outcome']}: {bug['why']}\n{bug['program']}")
    print(f"\n{out['programs']} programs in {out['seconds']} s; {len(out['bugs'])} bug(s)")
    return 1 if out["bugs"] else 0


if __name__ == "__main__":
    sys.exit(main())
