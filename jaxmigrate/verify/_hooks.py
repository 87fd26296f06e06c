"""Where the values of compiled calls go, shared by the child's recorder and the legacy runtime.

The child sets the sink; the legacy pjit records its own (global) result and suppresses the
recording of the modern ``jax.jit`` it runs underneath, so a legacy call is recorded once.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

_local = threading.local()
_sink: Optional[Callable[[Any, tuple, str], None]] = None


def set_sink(sink: Optional[Callable[[Any, tuple, str], None]]) -> None:
    global _sink
    _sink = sink


def is_suppressed() -> bool:
    return getattr(_local, "depth", 0) > 0


@contextmanager
def suppressed() -> Iterator[None]:
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def record(value: Any, donated: tuple = (), name: str = "") -> None:
    """Record the value of one compiled call of the function ``name``, and the positions of the
    inputs it deleted (ignored inside a legacy call or without a sink)."""
    if _sink is not None and not is_suppressed():
        _sink(value, donated, name)
