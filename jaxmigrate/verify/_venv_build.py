"""Building a legacy JAX venv (for ``legacy_env.ensure``): nothing half-built, nothing left running.

- The venv is made in ``<parent>/.<name>.building-<pid>`` beside its target and renamed to
  ``<parent>/<name>`` only once every requirement is installed (the paths in ``bin/`` rewritten
  for its final place first): a build that is stopped leaves nothing at the target.
- Each step (``python -m venv``, ``pip install``) runs in a session and process group of its own,
  with ``TMPDIR`` inside the temporary folder, so pip's own temporary folders go with it. The group
  and the folder are known to the keeper (``_lifeline``): if the builder dies (SIGKILL included),
  the group is killed and the folder removed. SIGTERM, SIGINT and SIGHUP (``ending_on_signals``)
  unwind through ``build``: the group killed, the folder removed, then the signal's exit.
- Progress on stderr: what is installed, and where, at the start; every ``PROGRESS_EVERY`` seconds
  while a step runs, the time so far and the folder's size; and the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from jaxmigrate.verify import _lifeline, _reaper

PROGRESS_EVERY = 10.0  # seconds between two progress lines while a step runs
Say = Callable[[str], None]


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def size_of(folder: Path) -> int:
    """Bytes of the files under ``folder`` (links not followed)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _mb(folder: Path) -> str:
    return f"{size_of(folder) / 1e6:.0f} MB"


def run_step(argv: Sequence[str], *, folder: Path, what: str, started: float, timeout: float,
             say: Say = _say) -> subprocess.CompletedProcess:
    """Run one step in a process group of its own (known to the keeper), its output in a log in
    ``folder``; a progress line every ``PROGRESS_EVERY`` s. Killed, group and all, on the way out."""
    env = dict(os.environ, TMPDIR=str(folder / "tmp"))
    (folder / "tmp").mkdir(exist_ok=True)
    with open(folder / "build.log", "wb+") as log:
        with _lifeline.uninterrupted():  # started and known to the keeper, or not started
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True)
            _reaper.STARTED.add(proc.pid)
            _lifeline.track_group(proc.pid)
        try:
            tick = started + PROGRESS_EVERY * (1 + int((time.monotonic() - started) / PROGRESS_EVERY))
            while proc.poll() is None:
                if time.monotonic() - started > timeout:
                    raise subprocess.TimeoutExpired(list(argv), timeout)
                try:
                    proc.wait(timeout=max(0.01, min(1.0, tick - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
                if proc.returncode is None and time.monotonic() >= tick:
                    say(f"  ... {what}: {time.monotonic() - started:.0f} s so far, {_mb(folder)} in {folder}")
                    tick += PROGRESS_EVERY
        finally:
            with _lifeline.uninterrupted():
                if proc.returncode is None:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    proc.wait()
                _lifeline.forget_group(proc.pid)
                _reaper.STARTED.discard(proc.pid)
        log.seek(0)
        return subprocess.CompletedProcess(list(argv), proc.returncode, log.read().decode(errors="replace"), "")


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def _relocate(folder: Path, target: Path) -> None:
    """Point the scripts and settings in ``bin/`` and ``pyvenv.cfg`` at the venv's final place."""
    old, new = os.fsencode(str(folder)), os.fsencode(str(target))
    for path in [*(folder / "bin").iterdir(), folder / "pyvenv.cfg"]:
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))


def _clear_stale(target: Path) -> None:
    """Folders of earlier builds of ``target`` that were killed (the caller holds the build lock)."""
    for stale in target.parent.glob(f".{target.name}.building-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _finish(venv: Path, target: Path, marker: Dict[str, str]) -> None:
    """Mark the complete venv and rename it into place (an incomplete or outdated one there is
    moved into the build folder first, removed with it)."""
    for name, text in marker.items():
        (venv / name).write_text(text)
    _relocate(venv, target)
    with _lifeline.uninterrupted():
        if target.exists():
            target.rename(venv.parent / "old")
        venv.rename(target)


def build(base: str, target: Path, attempts: List[List[str]], *, what: str, marker: Dict[str, str],
          say: Say = _say) -> Optional[str]:
    """Make the venv ``target`` from the Python ``base``: ``pip install`` each list of
    ``attempts`` in turn until one succeeds, write ``marker`` (file name -> text) in it, and
    rename it into place. None when done, else why not. The caller holds the build lock."""
    started = time.monotonic()
    _clear_stale(target)
    folder = target.parent / f".{target.name}.building-{os.getpid()}"
    with _lifeline.uninterrupted():
        folder.mkdir(mode=0o700)
        _lifeline.track_folder(str(folder))
    say(f"building the environment for {what} (once, reused after): pip install {' '.join(attempts[0])} "
        f"into {target} (made in {folder}, moved there when complete)")
    try:
        step = run_step([base, "-m", "venv", str(folder / "venv")], folder=folder, what=f"making the venv for {what}",
                        started=started, timeout=300, say=say)
        why = f"cannot make an environment for {what}: {_tail(step.stdout)}" if step.returncode else ""
        for i, requirements in enumerate(attempts if not why else []):
            step = run_step([str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                             "--disable-pip-version-check", *requirements], folder=folder,
                            what=f"installing {what}", started=started, timeout=1800, say=say)
            why = f"cannot install {what}: {_tail(step.stdout)}" if step.returncode else ""
            if not why:
                break
            if i + 1 < len(attempts):
                say(f"  pip install {' '.join(requirements)} failed; trying {' '.join(attempts[i + 1])}")
        if not why:
            _finish(folder / "venv", target, marker)
    except subprocess.TimeoutExpired as exc:
        why = f"cannot make an environment for {what}: timed out after {exc.timeout:.0f} s"
    except OSError as exc:
        why = f"cannot make an environment for {what}: {exc}"
    finally:
        _lifeline.remove_folder(str(folder))
    seconds = time.monotonic() - started
    if why:
        say(f"could not build the environment for {what} ({seconds:.0f} s): {why}")
        return why
    say(f"built the environment for {what} in {seconds:.0f} s ({_mb(target)}): {target}")
    return None
