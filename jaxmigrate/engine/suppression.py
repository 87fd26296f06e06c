"""`# noqa` and `# jaxmigrate: skip-file`, the flake8/ruff conventions.

`# noqa` on a line silences every finding that starts on it, `# noqa: JM101, JM2` only those
codes (or code prefixes); a silenced finding is neither reported nor fixed. A comment line
`# jaxmigrate: skip-file` anywhere in a file makes jaxmigrate leave the whole file alone.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, List, Optional, Set

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)
_NOQA_TEXT = re.compile(r"noqa", re.IGNORECASE)
SKIP_FILE = re.compile(rb"^[ \t]*#[ \t]*jaxmigrate:[ \t]*skip-file\b", re.MULTILINE)


def skips_file(data: bytes) -> bool:
    return SKIP_FILE.search(data) is not None


def noqa_lines(source: str) -> Dict[int, Optional[Set[str]]]:
    """Line → the codes its `# noqa` names (None: every code)."""
    out: Dict[int, Optional[Set[str]]] = {}
    if "noqa" not in source.lower():
        return out
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = NOQA.search(tok.string)
        if match is None:
            continue
        codes = match.group("codes")
        out[tok.start[0]] = {c.upper() for c in re.split(r"[\s,]+", codes) if c} if codes else None
    return out


def _could_silence(findings: List, source: str, candidates: Set[int]) -> bool:
    """Whether some `noqa` on a finding's line, read as if it were a comment, silences it (only
    then does it matter whether it is one: tokenizing a large module costs more than the rules)."""
    lines = source.split("\n")
    for f in findings:
        if f.line not in candidates:
            continue
        for match in NOQA.finditer(lines[f.line - 1]):
            codes = match.group("codes")
            if not codes or any(f.code.startswith(c.upper()) for c in re.split(r"[\s,]+", codes) if c):
                return True
    return False


def unsuppressed(findings: List, source: str) -> List:
    if not findings:  # nothing to silence: no need to tokenize
        return findings
    candidates = _lines_of(_NOQA_TEXT.finditer(source), source)
    if "\r" not in source and not any(f.line in candidates for f in findings):  # no finding where noqa is
        return findings
    if "\r" not in source and not _could_silence(findings, source, candidates):
        return findings  # e.g. a noqa naming only F401 on an import jaxmigrate reports: no need to tokenize
    lines = noqa_lines(source)
    if not lines:
        return findings
    kept = []
    for f in findings:
        codes = lines.get(f.line, set())
        if codes is None or any(f.code.startswith(c) for c in codes):
            continue
        kept.append(f)
    return kept


def _lines_of(matches, source: str) -> Set[int]:
    """The lines (counted by "\\n") of ``matches``, found in order: each count goes from the match
    before (counting from the file's start each time, a noqa a line cost 10,000 times its size)."""
    lines, line, position = set(), 1, 0
    for m in matches:
        line += source.count("\n", position, m.start())
        position = m.start()
        lines.add(line)
    return lines
