"""How the verifier ends: nothing it started outlives it, however it ends.

- **Signals** (``ending_on_signals``, around the ``verify`` command): SIGTERM and SIGHUP raise
  ``Ended`` in the main thread, SIGINT ``KeyboardInterrupt``; the run unwinds through its
  ``finally`` clauses (each side's process groups killed, temporary folders removed) and the
  command exits 128 + the signal. A signal arriving while a process is being started or a
  side cleaned up (``uninterrupted``) is held until that is done; a second one while the first
  unwinds is ignored, so the clean-up is not cut short. A signal ignored when the command
  started (``nohup``, a shell's background job) stays ignored.
- **The keeper** (``_keeper``, for SIGKILL and every other end no handler sees): a small process
  of its own session, started with the first group or folder, told each process group and
  temporary folder as it is made and as it is gone (and each process seen below a side's, by
  pid and start time), through a pipe only this process writes.
  When this process ends the pipe's end of file tells it to kill the groups and remove the
  folders still listed. A forked child closes its copy of the pipe (``os.register_at_fork``).
  The sides' own processes die with the verifier too (``_channel.bind_to_parent``).
- **Folders** (``private_folder``): made 0700, known to the keeper, removed on the way out.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Set, Tuple

from jaxmigrate.verify import _reaper

_KEEPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_keeper.py")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Ended(BaseException):
    """The verifier was told to stop (SIGTERM, SIGHUP): unwind, clean up, exit 128 + ``signum``."""

    def __init__(self, signum: int):
        super().__init__(f"ended by {signal.Signals(signum).name}")
        self.signum = signum


class _State:
    installed = False
    ending = False  # the first signal is being acted on: later ones are ignored
    held: Optional[int] = None  # a signal that came during an uninterrupted section
    depth = 0  # uninterrupted sections the main thread is in


_state = _State()


def _raise(signum: int) -> None:
    _state.ending = True
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Ended(signum)


def _handler(signum, frame) -> None:
    if _state.ending or _state.held is not None:
        return
    if _state.depth:
        _state.held = signum
        return
    _raise(signum)


@contextmanager
def ending_on_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP unwind the run (see the module docstring), in the main thread;
    elsewhere, or nested, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or _state.installed:
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    for signum, old in previous.items():
        if old is not signal.SIG_IGN:
            signal.signal(signum, _handler)
    _state.installed, _state.ending, _state.held, _state.depth = True, False, None, 0
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
        _state.installed = False


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A signal arriving inside is acted on when the outermost such section is left."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if not _state.depth and _state.held is not None and not _state.ending:
            held, _state.held = _state.held, None
            _raise(held)


class _Keeper:
    """The client of the keeper process: what it must end if this process ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fd = -1  # the pipe's writing end (no file object: a forked child closes it safely)
        self.process: Optional[subprocess.Popen] = None
        self.live: Dict[Tuple[str, str], None] = {}

    def _start(self) -> None:
        read, write = os.pipe()  # not inheritable: only this process holds the writing end
        try:
            self.process = subprocess.Popen([sys.executable, "-I", "-S", _KEEPER], stdin=read,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                                            start_new_session=True)
            _reaper.STARTED.add(self.process.pid)
        except OSError:
            os.close(write)
            return
        finally:
            os.close(read)
        self.fd = write
        if not self._send([f"+{kind} {value}" for kind, value in self.live]):
            self._drop()

    def _send(self, lines: List[str]) -> bool:
        data = "".join(f"{line}\n" for line in lines).encode()
        try:
            while data:
                data = data[os.write(self.fd, data):]
            return True
        except OSError:  # the keeper is gone (killed)
            return False

    def _drop(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.fd, self.process = -1, None

    def tell(self, sign: str, kind: str, value: str) -> None:
        with self.lock:
            if sign == "+":
                self.live[(kind, value)] = None
            else:
                self.live.pop((kind, value), None)
            if self.fd >= 0 and self._send([f"{sign}{kind} {value}"]):
                return
            self._drop()
            if self.live:  # none yet, or it was killed: a new one, told all that is live
                self._start()

    def forked(self) -> None:
        """In a forked child: its copy of the pipe must not keep the keeper waiting."""
        self._drop()
        self.lock, self.live = threading.Lock(), {}


_keeper = _Keeper()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_keeper.forked)


def track_group(pgid: int) -> None:
    _keeper.tell("+", "g", str(pgid))


def forget_group(pgid: int) -> None:
    _keeper.tell("-", "g", str(pgid))


def track_process(pid: int, start: int) -> None:
    """A process below a side's (``_reaper``), by pid and start time: killed by the keeper if
    this process dies first, whatever group or session it moved to."""
    _keeper.tell("+", "p", f"{pid}:{start}")


def forget_process(pid: int, start: int) -> None:
    _keeper.tell("-", "p", f"{pid}:{start}")


def _hex(path: str) -> str:
    return os.fsencode(path).hex()


@contextmanager
def private_folder(prefix: str) -> Iterator[str]:
    """A new folder (mode 0700) in the temporary folder, removed on the way out, and by the
    keeper if this process dies first."""
    folder = make_folder(prefix)
    try:
        yield folder
    finally:
        remove_folder(folder)


def make_folder(prefix: str) -> str:
    with uninterrupted():
        folder = tempfile.mkdtemp(prefix=prefix)
        track_folder(folder)
    return folder


def remove_folder(folder: str) -> None:
    with uninterrupted():
        shutil.rmtree(folder, ignore_errors=True)
        forget_folder(folder)


def track_folder(folder: str) -> None:
    """A folder the keeper removes if this process dies first."""
    _keeper.tell("+", "d", _hex(folder))


def forget_folder(folder: str) -> None:
    _keeper.tell("-", "d", _hex(folder))


def tracked() -> Set[Tuple[str, str]]:
    """What the keeper would end now (for tests)."""
    with _keeper.lock:
        return set(_keeper.live)
