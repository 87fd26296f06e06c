"""`jaxmigrate fix --report FILE`: what a person must still do, as a markdown checklist."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Sequence

from jaxmigrate.reporting.render import ERROR_CODE, finding_records


def _why(record: Dict) -> str:
    if record["code"] == ERROR_CODE:
        return "the file could not be processed"
    if record["fix_safety"] == "unsafe":
        return "the fix is unsafe (it needs judgement): review it, or apply it with `jaxmigrate fix --unsafe-fixes`"
    return "no automatic rewrite: the case needs a person"


def render(results: Sequence) -> str:
    from jaxmigrate.rules import BY_CODE

    records: List[Dict] = finding_records(results)
    lines = ["# jaxmigrate: manual review", ""]
    applied = sum(r.fixes_applied for r in results)
    changed = sum(1 for r in results if r.changed)
    lines += [f"{applied} fixes applied in {changed} files; {len(records)} items left.", ""]
    if not records:
        return "\n".join(lines + ["Nothing left to do."]) + "\n"
    lines += ["| rule | name | left |", "|---|---|---|"]
    for code, n in sorted(Counter(r["code"] for r in records).items()):
        name = BY_CODE[code].name if code in BY_CODE else "could not process"
        lines.append(f"| {code} | {name} | {n} |")
    lines.append("")
    for rec in records:
        lines.append(f"- [ ] `{rec['path']}:{rec['line']}:{rec['column']}` **{rec['code']}** {rec['message']}")
        lines.append(f"  - why not rewritten: {_why(rec)}")
        if rec.get("suggestion"):
            lines.append(f"  - suggested: `{rec['suggestion']}`")
    return "\n".join(lines) + "\n"
