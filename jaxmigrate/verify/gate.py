"""`jaxmigrate fix --verify`: write a fixed file only if it computes what the original did.

The fixed files of one project are verified together, the way the project runs (``_layout``):
a copy of the project (Python files copied, others linked) gets every fixed text, and each
changed file runs from the original tree on the legacy runtime and from the copy on the
installed JAX, so a package module imports its fixed siblings, relative imports work and
nothing runs from the user's folder with half its files migrated.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from jaxmigrate.engine.pipeline import write_or_say_why
from jaxmigrate.verify import _lifeline
from jaxmigrate.verify._layout import copy_project, locate
from jaxmigrate.verify.runner import Verdict, verify_files


def _settle(result) -> None:
    """The findings a result reports once verification decided: those left in the fixed text when
    it was written, every finding of the file on disk when it was not (its file keeps them)."""
    if result.changed:
        result.findings = result.fixed_findings if result.fixed_findings is not None else result.findings
    elif result.on_disk is not None:
        result.findings = result.on_disk
    result.new_bytes = result.original = result.fixed_findings = result.on_disk = None


def _write(result) -> None:
    """Write a verified file; a refusal or a failed write is its error (it keeps its findings)."""
    result.error = write_or_say_why(Path(result.path), result.new_bytes, expected=result.original)
    if result.error:
        result.changed, result.fixes_applied = False, 0


def _verify_one(result, options) -> Verdict:
    """One file on its own: the fixed text in a temporary file run under the original's name."""
    with _lifeline.private_folder("jaxmigrate-fixed-") as tmp:
        fixed = os.path.join(tmp, os.path.basename(result.path))
        Path(fixed).write_bytes(result.new_bytes)
        return verify_files(result.path, fixed, before_name=result.path, after_name=result.path, **options)


def _verify_tree(base: str, results: Sequence, options) -> Dict[int, Verdict]:
    with _lifeline.private_folder("jaxmigrate-fixed-") as tmp:
        tree = copy_project(base, Path(tmp) / "tree")
        if tree is None:
            return {id(r): _verify_one(r, options) for r in results}
        copies = {}
        for result in results:
            copy = tree / os.path.relpath(os.path.abspath(result.path), base)
            copy.write_bytes(result.new_bytes)
            copies[id(result)] = copy
        out = {}
        for result in results:
            verdict = verify_files(result.path, str(copies[id(result)]), trees={"before": base, "after": str(tree)},
                                   **options)
            verdict.after = f"{result.path} (fixed, in a copy of {base})"
            out[id(result)] = verdict
        return out


def verify_and_write(results: Sequence, *, devices: int = 8, processes: int = 1, timeout: float = 60.0,
                     legacy_jax: str = "emulated") -> List[Tuple[Verdict, Any]]:
    """For each changed result, run the original on the legacy runtime and the fixed text on the
    installed JAX; write the fixed text when they are equivalent, or agree once the fixed side
    draws random numbers as JAX 0.4.x did (streams_differ: the code's migration is proven, the
    numbers moved with JAX 0.5.0; ``streams_notice`` says so). A file with any other verdict is
    left untouched and becomes an error on its result."""
    options = dict(devices=devices, processes=processes, timeout=timeout, legacy_jax=legacy_jax)
    changed = [r for r in results if r.new_bytes is not None]
    by_base: Dict[str, list] = {}
    for result in changed:
        by_base.setdefault(locate(result.path).base, []).append(result)
    verdicts: Dict[int, Verdict] = {}
    for base, group in by_base.items():
        verdicts.update(_verify_tree(base, group, options))
    for result in changed:
        verdict = verdicts[id(result)]
        if verdict.status in ("equivalent", "streams_differ"):  # streams: the code is right, JAX's numbers moved
            _write(result)
        else:
            result.error = f"not written: verification {verdict.status}: {verdict.reason}"
            result.changed, result.fixes_applied = False, 0
        _settle(result)
    return [(verdicts[id(r)], r) for r in changed]


def verify_suite_and_write(results: Sequence, tests: str, *, devices: int = 8, processes: int = 1,
                           timeout: float = 600.0, legacy_jax: str = "emulated"):
    """`fix --verify --pytest TESTS`: run the project's tests (TESTS, a folder or file inside the
    project) on the original tree (legacy runtime) and on a copy with every fix applied
    (installed JAX); write the fixed files only when the suites are equivalent (outcomes and
    per-test values), else none, each reported with the verdict."""
    from jaxmigrate.verify._layout import project_root
    from jaxmigrate.verify.suite import verify_suites

    changed = [r for r in results if r.new_bytes is not None]
    if not changed:
        return None
    tests_abs = os.path.abspath(tests)
    base = project_root(tests_abs if os.path.isdir(tests_abs) else os.path.dirname(tests_abs))
    base = base or os.path.commonpath([os.path.dirname(tests_abs)] + [os.path.abspath(r.path) for r in changed])
    outside = [r for r in changed if not os.path.abspath(r.path).startswith(base.rstrip(os.sep) + os.sep)]
    with _lifeline.private_folder("jaxmigrate-fixed-") as tmp:
        tree = copy_project(base, Path(tmp) / "tree")
        verdict = None
        if tree is not None and not outside:
            for result in changed:
                (tree / os.path.relpath(os.path.abspath(result.path), base)).write_bytes(result.new_bytes)
            verdict = verify_suites(base, str(tree), [os.path.relpath(tests_abs, base)], devices=devices,
                                    processes=processes, timeout=timeout, legacy_jax=legacy_jax)
    for result in changed:
        if verdict is not None and verdict.status == "equivalent":
            _write(result)
        else:
            where = "outside the project " + base if outside else "project too large to copy"
            why = (f"verification {verdict.status}: {verdict.reason.splitlines()[0]}" if verdict is not None
                   else f"cannot verify through the tests: {where}")
            result.error = f"not written: {why}"
            result.changed, result.fixes_applied = False, 0
        _settle(result)
    return verdict


def streams_notice(path: str) -> str:
    """What ``fix --verify`` says of a file it wrote whose verdict was streams_differ."""
    from jaxmigrate.verify._streams import FLAG, KEEP_LINE

    return (f"{path}: written; verified on the random streams of JAX 0.4.x: the numbers it draws differ on the "
            f"installed JAX (JAX 0.5.0 made `{FLAG}` the default); to keep the old numbers add `{KEEP_LINE}` "
            "at program start (or in conftest.py)")
