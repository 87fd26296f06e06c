"""What a file's syntax error says to a user: where the file uses syntax that a newer Python than
the one running jaxmigrate parses (a ``type`` alias statement, Python 3.12), the error says so and
which Python to run jaxmigrate under. The file is still reported, never skipped."""

from __future__ import annotations

import re
import sys
from typing import Optional, Tuple

#: (what the line starts with, the construct, the Python that added it), read from the error's line
_NEWER = (
    (re.compile(r"\s*type\s+[A-Za-z_]\w*\s*(=|\[)"), "a `type` alias statement", (3, 12)),
    (re.compile(r"\s*(async\s+)?def\s+[A-Za-z_]\w*\s*\["), "a generic function (`def f[T](...)`)", (3, 12)),
    (re.compile(r"\s*class\s+[A-Za-z_]\w*\s*\["), "a generic class (`class C[T]: ...`)", (3, 12)),
    (re.compile(r"\s*except\s*\*"), "an `except*` clause", (3, 11)),
)


def newer_syntax(line: Optional[str], running: Tuple[int, int] = sys.version_info[:2]) -> Optional[Tuple[str, Tuple[int, int]]]:
    """(the construct, the Python that added it) where ``line`` (the source line of a syntax
    error) starts with syntax newer than the ``running`` Python; None otherwise."""
    if not line:
        return None
    for pattern, construct, added in _NEWER:
        if added > running and pattern.match(line):
            return construct, added
    return None


def parse_error(exc: SyntaxError, running: Tuple[int, int] = sys.version_info[:2]) -> str:
    """The message of a file that could not be parsed."""
    text = f"could not parse: {exc.msg} (line {exc.lineno})"
    newer = newer_syntax(exc.text, running)
    if newer is not None:
        construct, (major, minor) = newer
        text += (f": the file uses syntax newer than the Python {running[0]}.{running[1]} running jaxmigrate "
                 f"({construct}, Python {major}.{minor}); run jaxmigrate under Python >= {major}.{minor} to check it")
    return text
