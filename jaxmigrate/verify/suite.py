"""`jaxmigrate verify --pytest BEFORE_DIR AFTER_DIR`: a project's test suite on both sides.

BEFORE_DIR's tests run with the legacy runtime installed in the pytest process, AFTER_DIR's on
the installed JAX, both single-process on CPU devices, at once, each in its own session (a
time-out kills the whole process group). Outcomes are read from pytest's own JUnit XML and
compared per test id: the same tests must exist and end the same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from jaxmigrate.verify.runner import child_environment

_BOOT = (
    "import sys, pytest\n"
    "if sys.argv[1] == 'before':\n"
    "    from jaxmigrate.verify import legacy\n"
    "    legacy.install()\n"
    "sys.exit(pytest.main(sys.argv[2:]))\n"
)


@dataclass
class SuiteVerdict:
    status: str  # "equivalent" | "divergent" | "undecidable"
    before: str
    after: str
    outcomes: Dict[str, Dict[str, str]] = field(default_factory=dict)  # side -> test id -> outcome
    differences: List[str] = field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        return {"equivalent": 0, "divergent": 1, "undecidable": 2}[self.status]


def outcomes_from_junit(path: Path) -> Dict[str, str]:
    """Test id (``classname::name``) → passed / failed / error / skipped."""
    out: Dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        out[test_id] = next((k for k in ("error", "failure", "skipped") if k in kinds), "passed").replace("failure", "failed")
    return out


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the process group of ``proc`` (its own session), also when ``proc`` has exited: what
    the tests started in the background is still in it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # empty: nothing left
        pass


def verify_suites(before_dir: str, after_dir: str, pytest_args: Sequence[str] = (), *, devices: int = 8,
                  timeout: float = 600.0) -> SuiteVerdict:
    start = time.monotonic()
    verdict = SuiteVerdict("undecidable", before_dir, after_dir)
    env = child_environment(devices)
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-suite-") as tmp:
        procs, reports, logs = {}, {}, {}
        for side, folder in (("before", before_dir), ("after", after_dir)):
            reports[side] = Path(tmp) / f"{side}.xml"
            logs[side] = Path(tmp) / f"{side}.log"
            cmd = [sys.executable, "-c", _BOOT, side, "-q", "-p", "no:cacheprovider", f"--junitxml={reports[side]}",
                   *pytest_args]
            with open(logs[side], "wb") as log:
                procs[side] = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        killed: set = set()
        while len(killed) < len(procs):
            for side, p in procs.items():
                if side not in killed and p.poll() is not None:  # a side done: its background processes go now
                    _kill_group(p)
                    killed.add(side)
            if len(killed) == len(procs) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        timed_out = [side for side, p in procs.items() if p.poll() is None]
        for side, p in procs.items():
            if side not in killed:
                _kill_group(p)
            p.wait()
        verdict.seconds = time.monotonic() - start
        if timed_out:
            verdict.reason = f"time-out after {timeout:.0f} s ({', '.join(timed_out)})"
            return verdict
        for side in procs:
            if not reports[side].exists():
                tail = logs[side].read_text(errors="replace")[-2000:]
                verdict.reason = f"the {side} suite did not run (exit {procs[side].returncode}):\n{tail}"
                return verdict
            verdict.outcomes[side] = outcomes_from_junit(reports[side])
    before, after = verdict.outcomes["before"], verdict.outcomes["after"]
    for test_id in sorted(set(before) | set(after)):
        b, a = before.get(test_id, "missing"), after.get(test_id, "missing")
        if b != a:
            verdict.differences.append(f"{test_id}: before {b}, after {a}")
    verdict.status = "divergent" if verdict.differences else "equivalent"
    verdict.reason = (f"{len(verdict.differences)} of {len(set(before) | set(after))} tests differ"
                      if verdict.differences else f"{len(before)} tests, same outcomes")
    return verdict


def render(verdict: SuiteVerdict, max_differences: Optional[int] = 20) -> str:
    lines = [f"{verdict.status.upper()}: tests in {verdict.before} (legacy runtime) vs {verdict.after} "
             f"({verdict.seconds:.1f} s)", f"  {verdict.reason}"]
    shown = verdict.differences[:max_differences] if max_differences else verdict.differences
    lines += [f"  {d}" for d in shown]
    if len(shown) < len(verdict.differences):
        lines.append(f"  ... and {len(verdict.differences) - len(shown)} more")
    return "\n".join(lines)
