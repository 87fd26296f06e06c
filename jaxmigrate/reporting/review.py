"""`jaxmigrate fix --report FILE`: what a person must still do, as a markdown checklist."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Sequence

from jaxmigrate.core.findings import SUGGESTED_ELSEWHERE
from jaxmigrate.reporting.render import ERROR_CODE, finding_records, fixed_count


def _why(record: Dict) -> str:
    if record["code"] == ERROR_CODE:
        return "the file could not be processed"
    if record["fix_safety"] == "unsafe":
        return "the fix is unsafe (it needs judgement): review it, or apply it with `jaxmigrate fix --unsafe-fixes`"
    return "no automatic rewrite: the case needs a person"


def _n(count: int, word: str, plural: str = "s") -> str:
    return f"{count} {word}{plural * (count != 1)}"


def _suggested(code: str) -> List[str]:
    """A one-line suggestion as a code span; code of several lines as a fenced block inside the
    item (indented to the sub-list's content, so it stays in the item)."""
    if "\n" not in code:
        return [f"  - suggested: `{code}`"]
    return ["  - suggested:", "    ```python", *(f"    {line}" if line else "" for line in code.splitlines()), "    ```"]


def _unsafe(fixed: List, written: bool) -> List[str]:
    """The unsafe fixes applied (or that would be), each an item to check: where, the finding,
    what its rule says it may change."""
    from jaxmigrate.rules import BY_CODE

    lines = [f"## Unsafe fixes {'applied' if written else 'that would be applied'}: review what they change", ""]
    for path, f in fixed:
        rule = BY_CODE.get(f.code)
        lines.append(f"- [ ] `{path}:{f.line}:{f.column}` **{f.code}** {f.message.removesuffix(f'; {SUGGESTED_ELSEWHERE}')}")
        if rule is not None and rule.unsafe_note:
            lines.append(f"  - may change: {rule.unsafe_note}")
    return lines + ["", "## Left for a person", ""]


def render(results: Sequence, written: bool = True) -> str:
    """The checklist; ``written`` False for ``fix --diff``, whose fixes were only shown (its
    findings left are located in the files on disk)."""
    from jaxmigrate.rules import BY_CODE

    records: List[Dict] = finding_records(results)
    lines = ["# jaxmigrate: manual review", ""]
    applied = fixed_count(results)
    changed = sum(1 for r in results if r.changed)
    done = (f"{_n(applied, 'fix', 'es')} applied in {_n(changed, 'file')}" if written else
            f"{_n(applied, 'fix', 'es')} would be applied in {_n(changed, 'file')} (nothing written)")
    unsafe = [(r.path, f) for r in results if r.changed for f in r.unsafe_fixed]
    if unsafe:
        done += f", {len(unsafe)} of them unsafe (review {'them' if len(unsafe) != 1 else 'it'} below)"
    lines += [f"{done}; {_n(len(records), 'item')} left.", ""]
    if unsafe:
        lines += _unsafe(unsafe, written)
    if not records:
        return "\n".join(lines + ["Nothing left to do."]) + "\n"
    lines += ["| rule | name | left |", "|---|---|---|"]
    for code, n in sorted(Counter(r["code"] for r in records).items()):
        name = BY_CODE[code].name if code in BY_CODE else "could not process"
        lines.append(f"| {code} | {name} | {n} |")
    lines.append("")
    for rec in records:
        message = rec["message"].removesuffix(f"; {SUGGESTED_ELSEWHERE}")  # the code follows
        lines.append(f"- [ ] `{rec['path']}:{rec['line']}:{rec['column']}` **{rec['code']}** {message}")
        lines.append(f"  - why not rewritten: {_why(rec)}")
        if rec.get("suggestion"):
            lines += _suggested(rec["suggestion"])
    return "\n".join(lines) + "\n"
