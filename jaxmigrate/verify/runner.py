"""Run both sides of a script pair and decide: equivalent, divergent, layout_differs, streams_differ
or undecidable.

The processes are handled by ``_procs`` (fresh processes per side, both sides at once, killed by
process group, loopback only). Undecidable: a side gave no observations, the before side raised,
or nothing was compared. Layout_differs (exit 3): every difference is one of layout alone. A first
comparison with differences runs the before side again; what
differs between its two runs is unstable, left out and listed. Streams_differ (exit 4): a
divergent pair whose sides drew random numbers under different streams (``_streams``) agrees once
the after side is run again drawing as JAX 0.4.x did.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Dict, List, Optional, Set, Tuple

from jaxmigrate.verify import _lifeline, _origin, _streams
from jaxmigrate.verify._files import remove_created, settle_outside, shared_folder
from jaxmigrate.verify._layout import locate
from jaxmigrate.verify._procs import ProcessRun, child_environment, free_port, run_launches, script_launch  # noqa: F401
from jaxmigrate.verify.compare import Difference, compare_process, only_layouts
from jaxmigrate.verify.observe import by_value

EXIT_EQUIVALENT, EXIT_DIVERGENT, EXIT_UNDECIDABLE, EXIT_LAYOUT, EXIT_STREAMS = 0, 1, 2, 3, 4
_EXIT = {"equivalent": EXIT_EQUIVALENT, "divergent": EXIT_DIVERGENT, "undecidable": EXIT_UNDECIDABLE,
         "layout_differs": EXIT_LAYOUT, "streams_differ": EXIT_STREAMS}


@dataclass
class Verdict:
    status: str  # "equivalent" | "divergent" | "layout_differs" | "streams_differ" | "undecidable"
    reason: str
    before: str
    after: str
    devices: int
    processes: int
    seconds: float
    differences: List[Difference] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    compared: str = ""
    # deprecation warnings the after side caused: migrated code that still warns is not done
    deprecations: List[str] = field(default_factory=list)
    # observations that differed between two runs of the before side: left out of the comparison
    unstable: List[str] = field(default_factory=list)
    renamed: List[str] = field(default_factory=list)  # globals found after under another name
    # legacy names the before side read that the legacy runtime gave back from JAX's API history
    trusted: List[str] = field(default_factory=list)
    legacy: str = ""  # which JAX the before side ran on (a real one in a venv, or the emulation) and why
    legacy_asked: str = "emulated"  # the --legacy-jax option
    # globals only the before side binds, which it never reads (``_unread``): listed, not a difference
    unread: List[str] = field(default_factory=list)
    # files written outside the working folder and not compared (elsewhere; in the project, not shared by both sides)
    elsewhere: List[str] = field(default_factory=list)
    # the program's own output (its stdout and stderr, interleaved), per side and process: shown with -v
    output: List[Dict[str, Any]] = field(default_factory=list)
    # the random streams each side drew under (``_streams.summary``) and whether the after side was re-run on the old
    streams: Dict[str, Any] = field(default_factory=dict)
    runs: List[ProcessRun] = field(default_factory=list, repr=False)

    @property
    def exit_code(self) -> int:
        return _EXIT[self.status]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "executed": [self.before, self.after],  # verify ran their code
            "verdict": self.status, "exit_code": self.exit_code, "reason": self.reason,
            "before": self.before, "after": self.after, "devices": self.devices, "processes": self.processes,
            "seconds": round(self.seconds, 3), "compared": self.compared,
            "differences": [d.to_dict() for d in self.differences], "errors": self.errors,
            "deprecations": self.deprecations, "unstable": self.unstable, "renamed": self.renamed,
            "trusted": self.trusted, "legacy": self.legacy, "unread": self.unread,
            "elsewhere": self.elsewhere, "streams": self.streams, "output": self.output,
        }


def run_sides(scripts: Dict[str, tuple], *, devices: int, processes: int, timeout: float,
              trees: Optional[Dict[str, str]] = None, legacy_python: Optional[str] = None,
              env: Optional[Dict[str, str]] = None, alone: Optional[bool] = None) -> Dict[str, List[ProcessRun]]:
    """Run each side (``{side: (script, filename)}``) at once; their process runs by side.
    What a side wrote into its project folder outside its working folders is observed only when
    it ran alone (``_files.settle_outside``). ``trees`` (``{side: folder}``, both sides) are the
    trees each side must import its code from (``_origin``). ``legacy_python``: the before side's
    interpreter, a venv with a real legacy JAX (``legacy_env``; None: the emulation on the
    installed JAX). ``env``: more environment for every side; ``alone``: observe the project files
    as when a side ran alone (default: when it does)."""
    if devices < 1 or processes < 1 or devices % processes:
        raise ValueError(f"{devices} devices cannot be split evenly over {processes} processes")
    env = dict(child_environment(devices // processes), **(env or {}))
    launches = {}
    for side, (script, filename) in scripts.items():
        side_env = env
        if trees:
            value = _origin.trees_value(trees[side], trees["after" if side == "before" else "before"])
            side_env = dict(env, **{_origin.ENV: value}) if value else env
        python = legacy_python if side == "before" else None
        launches[side] = script_launch(side, script, filename, processes, side_env, python=python)
    runs = run_launches(launches, processes=processes, timeout=timeout)
    # what a side wrote outside its working folders: observed only when it ran alone (else the other
    # side may have written the same files at once)
    settle_outside(runs, {side: locate(filename).base for side, (_, filename) in scripts.items()},
                   observe=len(scripts) == 1 if alone is None else alone)
    return runs


def program_output(runs: List[ProcessRun]) -> List[Dict[str, Any]]:
    """What each process of each side printed (stdout and stderr, as they came), kept for ``-v``."""
    return [{"side": r.side, "process": r.process, "text": r.output} for r in runs]


def _failure(run: ProcessRun, timeout: float) -> Optional[str]:
    if run.result is not None:
        return None
    what = run.ended(timeout)
    if not what and run.returncode is not None and run.returncode < 0:
        what = f"was killed by signal {-run.returncode}"
    what = what or f"exited with code {run.returncode} without observations"
    tail = "\n".join(run.output.strip().splitlines()[-15:])
    return f"the {run.side} side (process {run.process}) {what}" + (f":\n{tail}" if tail else "")


def set_apart_unread(verdict: Verdict, unread: AbstractSet[str]) -> None:
    """A global only the before side has, which it never reads (``_unread``), is listed, not a
    difference: nothing the program computed or printed depends on it."""
    kept = []
    for d in verdict.differences:
        name = d.where[len("global `"):-1] if d.where.startswith("global `") else None
        if name in unread and d.what == "not defined after":
            verdict.unread.append(f"`{name}`" + (f" (process {d.process})" if d.process else "") + f": {d.before}")
        else:
            kept.append(d)
    verdict.differences = kept


def decide(runs: Dict[str, List[ProcessRun]], *, before: str, after: str, devices: int, processes: int,
           timeout: float, seconds: float, legacy: str = "", legacy_asked: str = "emulated",
           unread: AbstractSet[str] = frozenset()) -> Verdict:
    """The verdict on both sides' runs. ``unread``: the globals the before file never reads
    (listed, not a difference, when the after side lacks them)."""
    verdict = Verdict("equivalent", "", before, after, devices, processes, seconds,
                      runs=runs["before"] + runs["after"], legacy=legacy, legacy_asked=legacy_asked)
    verdict.output = program_output(verdict.runs)
    failures = [f for r in verdict.runs if (f := _failure(r, timeout))]
    if failures:
        verdict.status = "undecidable"
        verdict.reason = failures[0].splitlines()[0].rstrip(":")
        verdict.errors = failures
        return verdict
    pairs = list(zip(runs["before"], runs["after"]))
    foreign = [(r.side, r.finished["foreign"]) for r in runs["after"] + runs["before"] if r.finished.get("foreign")]
    if foreign:  # a side that ran the other side's code verified nothing
        side, found = foreign[0]
        verdict.status = "undecidable"
        verdict.reason = _origin.refusal(side, found, "before" if side == "after" else "after")
        return verdict
    verdict.trusted = sorted({name for b, _ in pairs for name in b.finished.get("trusted", ())})
    verdict.streams = _streams.summary([b.finished for b, _ in pairs], [a.finished for _, a in pairs])
    sides_of: Dict[str, List[str]] = {}
    for run in verdict.runs:
        for path in run.finished.get("outside_unobserved", ()):
            sides = sides_of.setdefault(path, [])
            if run.side not in sides:
                sides.append(run.side)
    verdict.elsewhere = [f"{path} ({', '.join(sides)})" for path, sides in sorted(sides_of.items())]
    for _, a in pairs:
        verdict.deprecations += [d for d in a.finished.get("deprecations", ()) if d not in verdict.deprecations]
    raised = [b.finished["exception"] for b, _ in pairs if b.finished["exception"]]
    for b, a in pairs:
        verdict.differences += compare_process(b.finished, a.finished, b.process, prefix_only=bool(raised),
                                               renamed=verdict.renamed)
    set_apart_unread(verdict, unread)
    verdict.compared = compared_text(pairs)
    if raised:
        verdict.status = "undecidable"
        under = "the legacy runtime" if not verdict.legacy.startswith("real") else verdict.legacy.split(" (")[0]
        verdict.reason = f"the before side raised under {under}: {raised[0]['type']}: {raised[0]['message']}"
        verdict.errors = [raised[0]["traceback"]]
        after_exc = next((a.finished["exception"] for _, a in pairs if a.finished["exception"]), None)
        if after_exc:
            verdict.errors.append(f"the after side raised too: {after_exc['type']}: {after_exc['message']}")
        return verdict
    _conclude(verdict, nothing=not any(_observed(b.finished, a.finished, b.process) for b, a in pairs))
    return verdict


def _counts(before: Dict[str, Any], after: Dict[str, Any], process: int = 0,
            unstable: AbstractSet[Tuple[int, str]] = frozenset()) -> Tuple[int, int, int]:
    """The calls, globals and files of one process both sides made that are compared by value
    (a call returning only opaque objects is not), leaving out the unstable ones."""
    calls = sum(1 for i, (x, y) in enumerate(zip(before["calls"], after["calls"]), start=1)
                if (by_value(x) or by_value(y)) and (process, f"call #{i}") not in unstable)
    names = [n for n in set(before["globals"]) & set(after["globals"]) if (process, f"global `{n}`") not in unstable]
    files = [n for n in set(before.get("files", {})) | set(after.get("files", {}))
             if (process, f"file `{n}`") not in unstable]
    return calls, len(names), len(files)


def _observed(before: Dict[str, Any], after: Dict[str, Any], process: int = 0,
              unstable: AbstractSet[Tuple[int, str]] = frozenset()) -> int:
    """How many observations both sides made that are compared (calls, shared globals, files)."""
    return sum(_counts(before, after, process, unstable)) + (after.get("exception") is not None)


def compared_text(pairs, unstable: AbstractSet[Tuple[int, str]] = frozenset()) -> str:
    """What was compared, per process (the first process's counts)."""
    calls, names, files = _counts(pairs[0][0].finished, pairs[0][1].finished, pairs[0][0].process, unstable)
    return f"{calls} compiled call value(s), {names} global(s), {files} file(s)"


def _conclude(verdict: Verdict, nothing: bool) -> None:
    """Divergent on any difference of value; layout_differs when every difference is one of layout
    alone (values, outputs and files agree); undecidable when nothing at all was compared."""
    if verdict.differences:
        first = verdict.differences[0]
        where = f"first: {first.where} (process {first.process}): {first.what}"
        if only_layouts(verdict.differences):
            verdict.status = "layout_differs"
            chosen = sum(1 for d in verdict.differences if d.note)
            verdict.reason = (f"values, outputs and files agree; only layouts differ: {len(verdict.differences)} "
                              "layout difference(s), " + (f"{chosen} of them chosen by JAX (eager values under "
                                                          "jax.set_mesh); " if chosen else "") + where)
        else:
            verdict.status = "divergent"
            verdict.reason = f"{len(verdict.differences)} difference(s); {where}"
    elif nothing:
        verdict.status = "undecidable"
        verdict.reason = ("nothing was compared: neither side made a compiled call, left an observable "
                          "global or wrote a file")
    else:
        verdict.status = "equivalent"
        verdict.reason = f"compared per process: {verdict.compared}"


def verify_files(before: str, after: str, *, devices: int = 8, processes: int = 1, timeout: float = 60.0,
                 before_name: Optional[str] = None, after_name: Optional[str] = None,
                 recheck: bool = True, trees: Optional[Dict[str, str]] = None,
                 legacy_jax: str = "emulated", streams: bool = True) -> Verdict:
    """Run ``before`` on the legacy runtime and ``after`` on the installed JAX; compare.

    With ``recheck`` (the default) a divergent first comparison runs the before side again and
    leaves out what differs between its two runs (unstable); without it a difference stands. With
    ``streams`` (the default) a divergent pair whose sides drew under different random streams
    runs the after side again on the old streams: agreeing then, it is streams_differ.

    ``*_name`` is the file name each runs under (``__file__``, its directory is the working
    directory and ``sys.path[0]``), for a migrated text written to a temporary file. ``trees``
    (``{"before": folder, "after": folder}``): each side must import its code from its own folder,
    not from the other (a run that does is undecidable; see ``_origin``). ``legacy_jax``:
    ``emulated``, ``auto`` or a JAX version for the before side (``legacy_env``).
    """
    from jaxmigrate.verify._layout import project_root
    from jaxmigrate.verify._unread import unread_globals
    from jaxmigrate.verify.legacy_env import choose

    start = time.monotonic()
    before_name, after_name = before_name or before, after_name or after
    scripts = {"before": (os.path.abspath(before), os.path.abspath(before_name)),
               "after": (os.path.abspath(after), os.path.abspath(after_name))}
    legacy = choose(legacy_jax, [before], project_root(os.path.dirname(os.path.abspath(before_name))), processes)
    sides: Dict[str, Any] = dict(devices=devices, processes=processes, timeout=timeout, trees=trees,
                                 legacy_python=legacy.python)
    runs = run_sides(scripts, **sides)
    alone = shared_folder(runs)
    if alone:  # both wrote into one folder of the project at once: one side after the other
        remove_created(runs)
        first = run_sides({"before": scripts["before"]}, **sides)
        remove_created(first)
        runs = {"before": first["before"], "after": run_sides({"after": scripts["after"]}, **sides)["after"]}
    options: Dict[str, Any] = dict(before=before_name, after=after_name, devices=devices, processes=processes,
                                   timeout=timeout, legacy=legacy.ran(runs["before"]), legacy_asked=legacy_jax)
    with open(before, encoding="utf-8", errors="replace") as f:
        options["unread"] = unread_globals(f.read())
    verdict = decide(runs, seconds=time.monotonic() - start, **options)
    again = None
    if recheck and verdict.status in ("divergent", "layout_differs"):  # is it the program's own randomness?
        remove_created(runs)  # the second run starts from the tree as the first did
        again = run_sides({"before": scripts["before"]}, **sides)
        drop_unstable(verdict, runs["before"], again["before"])
    if streams and verdict.status == "divergent" and _streams.differ(verdict.streams):  # JAX's new streams?
        remove_created(again or runs)
        old = run_sides({"after": scripts["after"]}, **sides, env=_streams.OLD_STREAMS, alone=alone)
        settle_streams(verdict, runs["before"], old["after"], again["before"] if again else None, options)
    verdict.seconds = time.monotonic() - start
    return verdict


def unstable_observations(first: List[ProcessRun], second: List[ProcessRun]) -> set:
    """``(process, where)`` of each observation that differs between two runs of one side."""
    out: Set[Tuple[int, str]] = set()
    for a, b in zip(first, second):
        if a.result is None or b.result is None:
            continue
        out.update((d.process, d.where) for d in compare_process(a.result, b.result, a.process))
    return out


def drop_unstable(verdict: Verdict, first: List[ProcessRun], second: List[ProcessRun]) -> None:
    """Leave the observations that differ between two runs of the before side out; list them."""
    unstable = unstable_observations(first, second)
    if not unstable:
        return
    verdict.unstable = [f"{where} (process {process})" for process, where in sorted(unstable)]
    verdict.differences = [d for d in verdict.differences if (d.process, d.where) not in unstable]
    pairs = list(zip(first, [r for r in verdict.runs if r.side == "after"]))
    stable = sum(_observed(b.finished, a.finished, b.process, unstable) for b, a in pairs)
    verdict.compared = compared_text(pairs, unstable)
    _conclude(verdict, nothing=stable <= 0)
    if verdict.status == "undecidable":
        verdict.reason = "nothing stable was compared: every observation differed between two runs of the before side"


def settle_streams(verdict: Verdict, before: List[ProcessRun], old: List[ProcessRun],
                   again: Optional[List[ProcessRun]], options: Dict[str, Any]) -> None:
    """A divergent pair compared again with the after side's run on the 0.4.x streams (``old``),
    leaving out what was unstable between the before side's runs (``again``): agreeing, the
    verdict is streams_differ, its differences those of the new streams; else it stays divergent."""
    second = decide({"before": before, "after": old}, seconds=0.0, **options)
    if again and second.status in ("divergent", "layout_differs"):
        drop_unstable(second, before, again)
    verdict.streams["rerun"] = True
    if second.status == "equivalent":
        verdict.status, verdict.reason = "streams_differ", _streams.reason(verdict.reason)
    else:
        verdict.reason += f"; with the after side drawing as JAX 0.4.x did (re-run): {second.status}, {second.reason}"


def verify_migration(path: str, **options) -> Verdict:
    """Migrate ``path`` in memory with every rule (unsafe fixes on) and verify it against itself."""
    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    data = Path(path).read_bytes()
    settings = Settings(tuple(r.code for r in ALL_RULES), fix=True, write=False, unsafe_fixes=True)
    outcome = transform(data, path, settings)
    migrated_bytes = outcome.text.encode(outcome.encoding) if outcome.changed else data
    with _lifeline.private_folder("jaxmigrate-migrated-") as tmp:
        migrated = os.path.join(tmp, os.path.basename(path))
        Path(migrated).write_bytes(migrated_bytes)
        verdict = verify_files(path, migrated, before_name=path, after_name=path, **options)
    verdict.after = f"{path} (migrated in memory{'' if outcome.changed else ', unchanged'})"
    return verdict
