"""The pytest plugin of ``verify --pytest`` (``pytest -p jaxmigrate.verify._plugin``), one process of one side.

Set up when pytest imports it, before any conftest: ``sys.path`` entries pointing into the other
side's tree are pointed at this side's (``_origin``); with several processes
``jax.distributed.initialize`` on 127.0.0.1; the legacy runtime on the before side; the recorder.
Before each test: the global generators are seeded. Per test id it records the outcome
(passed / failed / error / skipped), the first error lines, and every compiled call's
observation made during the test's setup, call and teardown; collection errors by node id.
At the end of the session all of it is written as plain data to the open file ``$JAXMIGRATE_VERIFY_OUT_FD``
(``_channel``: a file with no name the verifier gave it). Before all that, the process ties its
life to the verifier's (``_channel.bind_to_parent``).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import pytest

from jaxmigrate.verify import _channel

_SIDE = os.environ.get("JAXMIGRATE_VERIFY_SIDE", "after")
_OUT_FD = os.environ.get("JAXMIGRATE_VERIFY_OUT_FD")
_PROCESSES = int(os.environ.get("JAXMIGRATE_VERIFY_PROCESSES", "1"))
_PROCESS_ID = int(os.environ.get("JAXMIGRATE_VERIFY_PROCESS_ID", "0"))
_PORT = int(os.environ.get("JAXMIGRATE_VERIFY_PORT", "0"))

_tests: Dict[str, Dict[str, Any]] = {}
_collect_errors: Dict[str, str] = {}
_outside: List[Dict[str, Any]] = []  # compiled calls made outside any test (at import, in collection)
_current: Optional[str] = None
_redirected: List[str] = []


def _sink(observation: Dict[str, Any]) -> None:
    (_tests[_current]["calls"] if _current is not None else _outside).append(observation)


def _set_up() -> None:
    from jaxmigrate.verify import _origin

    _redirected[:] = _origin.redirect()
    import jax

    if _PROCESSES > 1:
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{_PORT}", num_processes=_PROCESSES,
                                   process_id=_PROCESS_ID, initialization_timeout=10,
                                   coordinator_bind_address=f"127.0.0.1:{_PORT}")
    jax.distributed.initialize = lambda *a, **k: None  # the suite's own call: done above, or not needed
    if _SIDE == "before" and os.environ.get("JAXMIGRATE_VERIFY_LEGACY") != "real":  # else a real legacy JAX
        from jaxmigrate.verify.legacy import install

        install()
    from jaxmigrate.verify import _recorder
    from jaxmigrate.verify._recorder import install_recorder, seed

    _recorder.SITE_BASE = os.getcwd()  # the suite's folder
    install_recorder(_sink)
    seed()


if _OUT_FD:
    _channel.bind_to_parent()
    _channel.keep_private(int(_OUT_FD))
    _set_up()


def first_error_lines(text: str, count: int = 3) -> str:
    """The lines that say what went wrong: pytest's ``E`` lines, else the last line."""
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    if not lines:
        lines = [line.strip() for line in text.strip().splitlines()[-1:]]
    return "\n".join(lines[:count])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    global _current
    from jaxmigrate.verify._recorder import seed

    _current = item.nodeid
    _tests[item.nodeid] = {"outcome": None, "error": "", "calls": []}
    seed()


def pytest_runtest_logreport(report) -> None:
    global _current
    entry = _tests.setdefault(report.nodeid, {"outcome": None, "error": "", "calls": []})
    if report.skipped and entry["outcome"] is None:
        entry["outcome"] = "skipped"
    elif report.failed:
        if entry["outcome"] in (None, "passed"):
            entry["outcome"] = "failed" if report.when == "call" else "error"
            entry["error"] = first_error_lines(report.longreprtext)
    elif report.when == "call" and entry["outcome"] is None:
        entry["outcome"] = "passed"
    if report.when == "teardown":
        _current = None


def pytest_collectreport(report) -> None:
    if report.failed:
        _collect_errors[report.nodeid or "(session)"] = first_error_lines(report.longreprtext)


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _OUT_FD:
        return
    from jaxmigrate.verify import _origin

    result = {"side": _SIDE, "process": _PROCESS_ID, "tests": _tests, "collect_errors": _collect_errors,
              "outside": _outside, "exitstatus": int(exitstatus), "redirected": _redirected,
              "foreign": _origin.foreign()}
    _channel.write_result(int(_OUT_FD), result)
