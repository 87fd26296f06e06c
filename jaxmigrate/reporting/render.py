"""Print run results: one finding a line (text) or a JSON array, then a summary."""

from __future__ import annotations

import os
import sys
from typing import Dict, List, Sequence

import click

ERROR_CODE = "JM000"  # a file that could not be read, parsed or processed


def finding_records(results: Sequence) -> List[Dict]:
    """Findings and per-file errors as the JSON objects of the output contract."""
    records = []
    for r in results:
        if r.error:
            line, column = getattr(r, "error_at", (1, 1))
            records.append(dict(path=r.path, line=line, column=column, end_line=line, end_column=column, code=ERROR_CODE,
                                message=r.error, fixable=False, fix_safety=None, suggestion=None))
        for f in r.findings:
            records.append(dict(path=r.path, line=f.line, column=f.column, end_line=f.end_line,
                                end_column=f.end_column, code=f.code, message=f.message, fixable=f.fixable,
                                fix_safety=f.fix_safety, suggestion=f.suggestion))
    return records


def _marker(record: Dict) -> str:
    return {"safe": " [*]", "unsafe": " [~]"}.get(record["fix_safety"] or "", "")


def write_file(path: str, text: str) -> None:
    """Write an output file (``-o``, ``--report``), creating its folder as ruff does; a failure is
    one line and exit 2, never a traceback."""
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        click.echo(f"error: cannot write {path}: {exc.strerror or exc}", err=True)
        sys.exit(2)


def findings(results: Sequence, output_format: str, mode: str, output_file=None, show_statistics: bool = False,
             missing: int = 0, quiet: bool = False, to_stderr: bool = False) -> None:
    """Write the findings in ``output_format`` (to ``output_file``, stdout, or stderr when stdout
    carries fixed code), then a summary (none with ``quiet``).

    The summary goes to stderr whenever stdout carries a machine format or a diff."""
    from jaxmigrate.reporting import formats

    records = finding_records(results)
    if show_statistics:
        body = formats.statistics(records)
    elif output_format == "json":
        import json

        body = json.dumps(records, indent=2)
    elif output_format == "github":
        body = formats.github(records)
    elif output_format == "sarif":
        body = formats.sarif(records)
    else:
        from jaxmigrate.reporting.terminal import finding_line

        body = "\n".join(finding_line(r["path"], r["line"], r["column"], r["code"], _marker(r), r["message"]) for r in records)
        if output_file is not None:  # a file gets plain text, as a pipe does
            body = click.unstyle(body)
    if output_file is not None:
        write_file(output_file, body + "\n" if body else "")
    elif body:
        click.echo(body, err=to_stderr)
    if quiet:
        return
    summary = _summary(results, records, mode, missing)
    if mode != "check":
        summary = "\n".join([summary, *unsafe_fixes_shown(results, mode == "diff")])
    click.echo(summary, err=to_stderr or output_format != "text" or mode == "diff" or output_file is not None)


def fixed_count(results: Sequence) -> int:
    """How many findings the fixes took (or would take), over the files they changed, counted as
    ``check`` counted them (``FileResult.fixed_codes``): the number the summary, ``--show-fixes``
    and ``--report`` give."""
    return sum(sum(r.fixed_codes.values()) for r in results if r.changed and r.fixed_codes)


def unsafe_fixes_shown(results: Sequence, diff: bool) -> List[str]:
    """Each unsafe fix applied (or, with ``diff``, that would be), by rule: what the rule says it
    may change (``Rule.unsafe_note``), then each finding it took, where ``check`` gave it."""
    from jaxmigrate.rules import BY_CODE

    by_code: Dict[str, List[str]] = {}
    for r in results:
        if r.changed:
            for f in r.unsafe_fixed:
                by_code.setdefault(f.code, []).append(f"    {r.path}:{f.line}:{f.column}: {f.message}")
    if not by_code:
        return []
    total = sum(map(len, by_code.values()))
    them = "them" if total != 1 else "it"
    lines = [f"[~] {total} of the fixes {'would be' if diff else 'were'} unsafe fixes, which may change what the code "
             f"does; review {them}:"]
    for code in sorted(by_code):
        rule = BY_CODE.get(code)
        note = rule.unsafe_note if rule is not None and rule.unsafe_note else "see each finding"
        lines.append(f"  {code} ({rule.name if rule else code}): may change: {note}")
        lines += by_code[code]
    return lines


def fixes_shown(results: Sequence, diff: bool) -> str:
    """``--show-fixes``: the fixes applied (or that would be, with ``--diff``), per file and rule;
    unsafe ones with where they are (the summary, printed after, says what they may change)."""
    from jaxmigrate.rules import BY_CODE

    lines = []
    for r in results:
        if not (r.changed and r.fixed_codes):
            continue
        lines.append(f"- {r.path}:")
        unsafe: Dict[str, List[str]] = {}
        for f in r.unsafe_fixed:
            unsafe.setdefault(f.code, []).append(f"{f.line}:{f.column}")
        for code, n in r.fixed_codes.items():
            rule = BY_CODE.get(code)
            where = f" [~] unsafe at {', '.join(unsafe[code])}" if code in unsafe else ""
            lines.append(f"  {n:4d} x {code} ({rule.name if rule else code}){where}")
    if not lines:
        return "No fixes available." if diff else "No fixes applied."
    total = fixed_count(results)
    head = f"{'Would fix' if diff else 'Fixed'} {total} finding{'s' * (total != 1)}:"
    return "\n".join([head, *lines])


def _summary(results: Sequence, records: List[Dict], mode: str, missing: int = 0) -> str:
    errors = sum(1 for r in results if r.error)
    found = [r for r in records if r["code"] != ERROR_CODE]
    files_with = len({r["path"] for r in found})
    parts = []
    if mode == "check":
        if not found and not errors and not missing:
            parts.append(f"All checks passed ({len(results)} file{'s' * (len(results) != 1)}).")
        elif not found and missing and not errors:
            parts.append(f"No findings in the {len(results)} file{'s' * (len(results) != 1)} found." if results
                         else "No file checked.")
        elif not found:
            readable = len(results) - errors
            parts.append(f"No findings in the {readable} file{'s' * (readable != 1)} that could be read.")
        else:
            safe = sum(1 for r in found if r["fix_safety"] == "safe")
            unsafe = sum(1 for r in found if r["fix_safety"] == "unsafe")
            parts.append(f"Found {len(found)} finding{'s' * (len(found) != 1)} in {files_with} file{'s' * (files_with != 1)}.")
            if safe:
                parts.append(f"[*] {safe} fixable with `jaxmigrate fix`.")
            if unsafe:
                parts.append(f"[~] {unsafe} fixable with `jaxmigrate fix --unsafe-fixes`.")
            manual = len(found) - safe - unsafe
            if manual:
                parts.append(f"{manual} need manual changes.")
    else:
        applied = fixed_count(results)
        changed = sum(1 for r in results if r.changed)
        verb = "Would apply" if mode == "diff" else "Applied"
        parts.append(f"{verb} {applied} fix{'es' * (applied != 1)} in {changed} file{'s' * (changed != 1)}; "
                     f"{len(found)} finding{'s' * (len(found) != 1)} left for manual review.")
        # an unsafe fix left where unsafe fixes were allowed did not apply: --unsafe-fixes would not take it either
        unsafe = sum(1 for r in results if not r.unsafe_allowed for f in r.findings if f.fix_safety == "unsafe")
        if unsafe:
            parts.append(f"[~] {unsafe} of them fixable with --unsafe-fixes.")
    if errors:
        parts.append(f"{errors} file{'s' * (errors != 1)} could not be processed.")
    if missing:
        parts.append(f"{missing} named path{' does' if missing == 1 else 's do'} not exist.")
    return " ".join(parts)
