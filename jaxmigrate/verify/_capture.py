"""A side's process output (stdout and stderr, as they came), read from a pipe and bounded.

A program may print without end: the verifier keeps the first and the last ``LIMIT`` bytes of
each process's output and counts what it cut (said in the text where it was cut). Read from a
pipe, the output needs no disk: a side that fills the disk still has its output kept.
"""

from __future__ import annotations

import os
import select
import time
from typing import Iterable, List

LIMIT = 1 << 20  # bytes kept at each end of one process's output


class Capture:
    """One process's output: ``write_fd`` is handed to the process (closed here once it is
    started), ``pump`` reads what came, ``text`` is what was kept."""

    def __init__(self) -> None:
        self.fd, self.write_fd = os.pipe()
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.open = True

    def started(self) -> None:
        os.close(self.write_fd)
        self.write_fd = -1

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = LIMIT - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > 2 * LIMIT:  # trimmed now and then: each byte moved at most twice
            del self.tail[:-LIMIT]

    def read(self) -> None:
        data = os.read(self.fd, 1 << 16)
        if data:
            self.feed(data)
        else:
            self.close()

    def close(self) -> None:
        for fd in (self.fd, self.write_fd):
            if fd >= 0:
                os.close(fd)
        self.fd = self.write_fd = -1
        self.open = False

    def text(self) -> str:
        tail = bytes(self.tail[-LIMIT:])
        cut = self.total - len(self.head) - len(tail)
        middle = (f"\n[... {cut} bytes of output cut here by jaxmigrate verify ({self.total} in all; the "
                  f"first and last {LIMIT} are kept) ...]\n".encode() if cut else b"")
        return (bytes(self.head) + middle + tail).decode(errors="replace")


def _ready(fds: List[int], timeout: float) -> List[int]:
    """The descriptors with something to read (or at their end); ``poll`` where there is one
    (no limit on descriptor numbers)."""
    if not hasattr(select, "poll"):
        return select.select(fds, [], [], timeout)[0]
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(timeout * 1000)]


def pump(captures: Iterable[Capture], timeout: float) -> None:
    """Read what the open captures have, waiting at most ``timeout`` seconds for something."""
    live = [c for c in captures if c.open]
    if not live:
        time.sleep(timeout)
        return
    ready = _ready([c.fd for c in live], timeout)
    for c in live:
        if c.fd in ready:
            c.read()


def drain(captures: List[Capture], quiet: float = 0.2) -> None:
    """Read the captures to their end (their processes are ended), or until none has had anything
    for ``quiet`` seconds (a writer that outlived the kill)."""
    while any(c.open for c in captures):
        live = [c for c in captures if c.open]
        ready = _ready([c.fd for c in live], quiet)
        if not ready:
            return
        for c in live:
            if c.fd in ready:
                c.read()
