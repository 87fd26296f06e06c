"""`jaxmigrate verify --pytest BEFORE_DIR AFTER_DIR`: a project's test suite on both sides.

Each side runs pytest in its folder in ``processes`` processes (every process runs the whole
suite, as every host of a multi-host job does), BEFORE's with the legacy runtime installed, all
at once, each in its own session (a time-out kills the whole process group). The plugin
``jaxmigrate.verify._plugin`` records per test id the outcome, the first error lines and every
compiled call's value; they are compared per process and per test id: the same tests must exist,
end the same way and compute the same values. A suite where no test ran, or whose session
stopped early (pytest's internal error, an interruption), is undecidable.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Dict, List, Optional, Sequence, Set, Tuple

from jaxmigrate.verify import _origin
from jaxmigrate.verify._procs import ProcessRun, child_environment, real_legacy, run_launches
from jaxmigrate.verify.compare import Difference, call_difference, diff, layout_only, site_text
from jaxmigrate.verify.observe import by_value
from jaxmigrate.verify.report import abridge, difference_lines, output_lines, summarize

MAX_SCANNED = 2000  # files read for the JAX names a suite uses (--legacy-jax auto)
DEFAULT_TIMEOUT = 600.0  # a whole suite: `--timeout` when given, else this
FAILED = ("failed", "error")
SHOWN_IDS = 10  # failing test ids named in the reason line; all of them in `failed_on_both`


@dataclass
class SuiteVerdict:
    status: str  # "equivalent" | "divergent" | "undecidable"
    before: str
    after: str
    outcomes: Dict[str, Dict[str, str]] = field(default_factory=dict)  # side -> test id -> outcome (process 0)
    differences: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # tests erroring on both sides, with both first lines
    failed_on_both: List[str] = field(default_factory=list)  # test ids failing (or erroring) on both sides
    redirected: List[str] = field(default_factory=list)  # sys.path entries pointed at the side's own tree
    legacy: str = ""  # which JAX the before side ran on, and why
    legacy_asked: str = "emulated"
    unstable: List[str] = field(default_factory=list)
    reason: str = ""
    compared: str = ""
    seconds: float = 0.0
    processes: int = 1
    output: List[Dict[str, Any]] = field(default_factory=list)  # pytest's output per side and process (-v)

    @property
    def exit_code(self) -> int:
        return {"equivalent": 0, "divergent": 1, "undecidable": 2}[self.status]

    def to_dict(self) -> Dict[str, Any]:
        return dict(executed=[self.before, self.after],  # verify ran the tests in both folders
                    verdict=self.status, exit_code=self.exit_code, reason=self.reason, compared=self.compared,
                    differences=self.differences, errors=self.errors, failed_on_both=self.failed_on_both,
                    unstable=self.unstable, redirected=self.redirected, legacy=self.legacy,
                    outcomes=self.outcomes, seconds=round(self.seconds, 3), output=self.output)


def _launch(side: str, folder: str, pytest_args: Sequence[str], processes: int, env: Dict[str, str],
            other: Optional[str] = None, python: Optional[str] = None):
    trees = _origin.trees_value(folder, other) if other else None
    if trees:
        env = dict(env, **{_origin.ENV: trees})

    def launch(i: int, port: int, own: Path, out_fd: int):
        cmd = [python or sys.executable, "-m", "pytest", "-p", "jaxmigrate.verify._plugin", "-p", "no:cacheprovider",
               "-p", "no:randomly", "-q", "--continue-on-collection-errors", *pytest_args]
        child_env = dict(env, JAXMIGRATE_VERIFY_SIDE=side, JAXMIGRATE_VERIFY_OUT_FD=str(out_fd),
                         JAXMIGRATE_VERIFY_PROCESSES=str(processes), JAXMIGRATE_VERIFY_PROCESS_ID=str(i),
                         JAXMIGRATE_VERIFY_PORT=str(port))
        return cmd, folder, (real_legacy(child_env, own) if python else child_env)

    return launch


def _failure(run: ProcessRun, timeout: float) -> Optional[str]:
    if run.result is not None:
        return None
    what = run.ended(timeout) or f"exited with code {run.returncode} before the end of its session"
    tail = "\n".join(run.output.strip().splitlines()[-15:])
    return f"the {run.side} suite (process {run.process}) {what}" + (f":\n{tail}" if tail else "")


_STOPPED = {2: "interrupted", 3: "internal error", 4: "usage error"}  # pytest exit statuses that end a session early


def _stopped(run: ProcessRun) -> Optional[str]:
    """Why a side's session ended before running every test (pytest's exit status), if it did."""
    status = run.finished.get("exitstatus")
    if status not in _STOPPED:
        return None
    last = [line for line in run.output.splitlines() if line.startswith(("INTERNALERROR>", "ERROR:", "E "))][-1:]
    return (f"the {run.side} suite (process {run.process}) stopped early: pytest exit status {status} "
            f"({_STOPPED[status]}) after {len(run.finished['tests'])} tests" + (f": {last[0]}" if last else ""))


def _outcome(tests: Dict[str, Any], test_id: str) -> str:
    entry = tests.get(test_id)
    return "missing" if entry is None else (entry["outcome"] or "error")


def _both(b: Dict[str, Any], a: Dict[str, Any], test_id: str) -> str:
    """Both sides' first error lines (as a continuation of a difference), or nothing."""
    if not any((tests.get(test_id) or {}).get("error") for tests in (b, a)):
        return ""
    lines = [""]
    for side, tests in (("before", b), ("after", a)):
        error = (tests.get(test_id) or {}).get("error") or ""
        lines.append(f"    {side}: {abridge(error.replace(chr(10), ' | ')) if error else '(no error)'}")
    return "\n".join(lines)


def compare_suites(before: Dict[str, Any], after: Dict[str, Any], process: int) -> Dict[str, Any]:
    """Differences (``(key, text)``), both-side errors, the number of tests passing on both
    sides, the ids of those failing on both, and the keys of the calls compared by value (a call
    returning only opaque objects is not) for one process."""
    where = f" (process {process})" if process else ""
    out: Dict[str, Any] = {"differences": [], "errors": [], "passed": 0, "failed": [], "calls": []}
    b_tests, a_tests = before["tests"], after["tests"]
    for test_id in sorted(set(before["collect_errors"]) | set(after["collect_errors"])):
        b_err, a_err = before["collect_errors"].get(test_id), after["collect_errors"].get(test_id)
        sides = "on both sides" if b_err and a_err else "before only" if b_err else "after only"
        text = f"{test_id}{where}: collection error {sides}"
        both = (f"    before: {abridge((b_err or '(none)').replace(chr(10), ' | '))}\n"
                f"    after: {abridge((a_err or '(none)').replace(chr(10), ' | '))}")
        entry = (f"collect {test_id}", f"{text}\n{both}")
        (out["errors"] if b_err and a_err else out["differences"]).append(entry)
    for test_id in sorted(set(b_tests) | set(a_tests)):
        b, a = _outcome(b_tests, test_id), _outcome(a_tests, test_id)
        if b != a:
            out["differences"].append((f"outcome {test_id}",
                                       f"{test_id}{where}: before {b}, after {a}{_both(b_tests, a_tests, test_id)}"))
            continue
        if b in FAILED:
            out["errors"].append((f"outcome {test_id}", f"{test_id}{where}: {b} on both sides{_both(b_tests, a_tests, test_id)}"))
            out["failed"].append(test_id)
        out["passed"] += b == "passed"
        if b == "missing":
            continue
        calls_b, calls_a = b_tests[test_id]["calls"], a_tests[test_id]["calls"]
        for i, (x, y) in enumerate(zip(calls_b, calls_a), start=1):
            if by_value(x) or by_value(y):
                out["calls"].append(f"call {test_id} {i}")
            what = diff(x, y)
            if what:
                found = call_difference(process, f"call #{i}", what, x, y)
            elif x.get("donated") != y.get("donated"):
                found = Difference(process, f"call #{i}", "donated inputs differ", summarize(x), summarize(y),
                                   site=site_text(x, y))
            else:
                continue
            out["differences"].append((f"call {test_id} {i}", f"{test_id}{where}: call #{i}: {found.what}\n"
                                       + "\n".join(difference_lines(found))))
        if len(calls_b) != len(calls_a):
            out["differences"].append((f"calls {test_id}", f"{test_id}{where}: number of compiled calls differs: "
                                       f"before {len(calls_b)}, after {len(calls_a)}"))
    out["differences"].sort(key=lambda entry: layout_only(entry[1].splitlines()[0].rsplit(" ", 1)[0]))
    return out


def _unstable(first: List[ProcessRun], second: List[ProcessRun]) -> set:
    keys: Set[Tuple[int, str]] = set()
    for a, b in zip(first, second):
        if a.result is not None and b.result is not None:
            keys.update((a.process, key) for key, _ in compare_suites(a.result, b.result, a.process)["differences"])
    return keys


def _decide(verdict: SuiteVerdict, runs: Dict[str, List[ProcessRun]], unstable: AbstractSet[Any] = frozenset()) -> None:
    verdict.differences, verdict.errors = [], []
    passed = calls = 0
    for b, a in zip(runs["before"], runs["after"]):
        found = compare_suites(b.finished, a.finished, b.process)
        verdict.differences += [text for key, text in found["differences"] if (b.process, key) not in unstable]
        verdict.errors += [text for _, text in found["errors"]]
        if b.process == 0:
            passed, verdict.failed_on_both = found["passed"], found["failed"]
            calls = sum(1 for key in found["calls"] if (0, key) not in unstable)
    verdict.unstable = sorted(f"{key} (process {p})" for p, key in unstable)
    first = runs["before"][0].finished
    verdict.outcomes = {side: {t: _outcome(runs[side][0].finished["tests"], t) for t in runs[side][0].finished["tests"]}
                        for side in ("before", "after")}
    collected = len(set(first["tests"]) | set(runs["after"][0].finished["tests"]))
    failed, errors = len(verdict.failed_on_both), len(first["collect_errors"])
    verdict.compared = (f"{passed} of {collected} tests pass on both sides, {failed} fail on both, "
                        f"{calls} compiled call value(s), {errors} collection error(s) before")
    stopped = [why for side in ("before", "after") for run in runs[side] if (why := _stopped(run))]
    verdict.redirected = sorted({f"{side}: {entry}" for side in ("before", "after") for run in runs[side]
                                 for entry in run.finished.get("redirected", ())})
    foreign = [(side, run.finished["foreign"]) for side in ("after", "before") for run in runs[side]
               if run.finished.get("foreign")]
    if foreign:  # a side that ran the other side's code verified nothing
        side, found = foreign[0]
        verdict.status = "undecidable"
        verdict.reason = _origin.refusal(side, found, "before" if side == "after" else "after")
    elif stopped:  # the tests it did not run are not comparable
        verdict.status = "undecidable"
        verdict.reason = stopped[0]
        verdict.errors = stopped[1:] + verdict.errors
    elif verdict.differences:
        verdict.status = "divergent"
        verdict.reason = f"{len(verdict.differences)} difference(s)"
    elif passed == 0:  # tests failing on both sides prove nothing about the migration
        verdict.status = "undecidable"
        verdict.reason = (f"no test passed on both sides ({collected} collected, {failed} failing on both, "
                          f"{errors} collection error(s)): nothing was verified")
    else:
        verdict.status = "equivalent"
        verdict.reason = f"equivalent on {passed} test(s) that pass on both sides (same outcomes and values)"
        if failed:
            names = ", ".join(verdict.failed_on_both[:SHOWN_IDS])
            more = f" and {failed - SHOWN_IDS} more" if failed > SHOWN_IDS else ""
            verdict.reason += (f"; {failed} fail on both sides, not verified beyond the values they computed "
                               f"before failing: {names}{more}")


def _python_files(folder: str) -> List[str]:
    out: List[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "site-packages", "venv")]
        out += [os.path.join(root, f) for f in files if f.endswith(".py")]
        if len(out) >= MAX_SCANNED:
            break
    return out[:MAX_SCANNED]


def verify_suites(before_dir: str, after_dir: str, pytest_args: Sequence[str] = (), *, devices: int = 8,
                  processes: int = 1, timeout: float = DEFAULT_TIMEOUT, legacy_jax: str = "emulated") -> SuiteVerdict:
    """Run both suites (``processes`` processes each, ``devices`` CPU devices in all) and compare.
    ``legacy_jax``: ``emulated``, ``auto`` or a JAX version for the before side (``legacy_env``)."""
    from jaxmigrate.verify._layout import project_root
    from jaxmigrate.verify.legacy_env import choose

    if devices < 1 or processes < 1 or devices % processes:
        raise ValueError(f"{devices} devices cannot be split evenly over {processes} processes")
    start = time.monotonic()
    verdict = SuiteVerdict("undecidable", before_dir, after_dir, processes=processes, legacy_asked=legacy_jax)
    scanned = _python_files(before_dir) if legacy_jax == "auto" else []
    legacy = choose(legacy_jax, scanned, project_root(before_dir), processes)
    env = child_environment(devices // processes)
    launches = {side: _launch(side, folder, pytest_args, processes, env, other,
                              legacy.python if side == "before" else None)
                for side, folder, other in (("before", before_dir, after_dir), ("after", after_dir, before_dir))}
    runs = run_launches(launches, processes=processes, timeout=timeout)
    verdict.legacy = legacy.ran(runs["before"])
    verdict.output = [{"side": r.side, "process": r.process, "text": r.output} for side in runs for r in runs[side]]
    failures = [f for side in runs for r in runs[side] if (f := _failure(r, timeout))]
    if failures:
        verdict.reason, verdict.errors = failures[0].splitlines()[0].rstrip(":"), failures
    else:
        _decide(verdict, runs)
        if verdict.status == "divergent":  # the suite's own randomness? run the before side again
            again = run_launches({"before": launches["before"]}, processes=processes, timeout=timeout)
            if not any(_failure(r, timeout) for r in again["before"]):
                _decide(verdict, runs, _unstable(runs["before"], again["before"]))
    verdict.seconds = time.monotonic() - start
    return verdict


def render(verdict: SuiteVerdict, max_differences: Optional[int] = 20, verbose: bool = False) -> str:
    """The verdict for people; ``verbose`` adds pytest's output of both sides (the tests' own
    prints show there as pytest shows them: captured, unless ``-- -s``)."""
    procs = f"{verdict.processes} processes each, " if verdict.processes > 1 else ""
    status = verdict.status.upper()
    if verdict.status == "equivalent" and verdict.failed_on_both:
        status += f" ({len(verdict.failed_on_both)} test(s) fail on both sides)"
    legacy = "legacy runtime" if verdict.legacy_asked == "emulated" else "legacy side"
    lines = [f"{status}: tests in {verdict.before} ({legacy}) vs {verdict.after} "
             f"({procs}{verdict.seconds:.1f} s)", f"  {verdict.reason}"]
    if verdict.legacy_asked != "emulated" and verdict.legacy:
        lines.append(f"  legacy side: {verdict.legacy}")
    if verdict.compared:
        lines.append(f"  compared per process: {verdict.compared}")
    shown = verdict.differences[:max_differences] if max_differences else verdict.differences
    lines += ["  " + d.replace("\n", "\n  ") for d in shown]
    if len(shown) < len(verdict.differences):
        lines.append(f"  ... and {len(verdict.differences) - len(shown)} more")
    if verdict.errors:
        lines.append("  failing on both sides (each side's first error lines):" if verdict.compared else "  errors:")
        lines += ["    " + e.replace("\n", "\n    ") for e in verdict.errors[:max_differences or None]]
    if verdict.redirected:
        lines.append("  sys.path entries pointing into the other side's tree, pointed at the side's own: "
                     + ", ".join(verdict.redirected))
    if verdict.unstable:
        lines.append("  left out, unstable (they differ between two runs of the before side): " + ", ".join(verdict.unstable))
    lines += output_lines(verdict.output, verbose, hint=False)  # pytest always prints
    return "\n".join(lines)
