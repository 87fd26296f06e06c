"""Machine formats: GitHub Actions annotations and SARIF 2.1.0 (GitHub code scanning)."""

from __future__ import annotations

from typing import Dict, List

from jaxmigrate import __version__
from jaxmigrate.core.findings import SUGGESTED_ELSEWHERE

DOCS_URL = "https://github.com/jaxmigrate/jaxmigrate/blob/main/docs/rules/{code}.md"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: what a GitHub annotation adds for a finding with a fix (the text output's `[*]` and `[~]`)
_FIXABLE = {"safe": " (fixable with `jaxmigrate fix`)", "unsafe": " (fixable with `jaxmigrate fix --unsafe-fixes`)"}


def github(records: List[Dict]) -> str:
    """One workflow command a finding: ``::warning file=...,line=...,col=...,title=CODE::message``."""
    lines = []
    for r in records:
        level = "error" if r["code"] == "JM000" else "warning"
        props = (f"file={_escape_property(r['path'])},line={r['line']},col={r['column']},"
                 f"endLine={r['end_line']},endColumn={r['end_column']},title={_escape_property(r['code'])}")
        message = r["message"] + _FIXABLE.get(r["fix_safety"] or "", "")
        lines.append(f"::{level} {props}::{_escape_data(message)}")
    return "\n".join(lines)


def sarif(records: List[Dict]) -> str:
    """A SARIF 2.1.0 log with one run; ``tool.driver.rules`` carries each rule's help and docs link."""
    import json  # here: the text output does not need it

    from jaxmigrate.reporting.ruledoc import render_rule
    from jaxmigrate.rules import ALL_RULES

    rules = [dict(
        id=rule.code,
        name=rule.name,
        shortDescription=dict(text=rule.summary),
        fullDescription=dict(text=rule.documentation().split("\n## ")[1].partition("\n")[2].strip()
                             if "\n## " in rule.documentation() else rule.summary),
        help=dict(text=rule.summary, markdown=render_rule(rule)),
        helpUri=DOCS_URL.format(code=rule.code),
        properties={"fix_safety": rule.fix_safety or "none"},
    ) for rule in ALL_RULES]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for r in records:
        result = dict(
            ruleId=r["code"],
            level="error" if r["code"] == "JM000" else "warning",
            message=dict(text=r["message"]),
            locations=[dict(physicalLocation=dict(
                artifactLocation=dict(uri=r["path"].replace("\\", "/"), uriBaseId="%SRCROOT%"),
                region=dict(startLine=r["line"], startColumn=r["column"], endLine=r["end_line"], endColumn=r["end_column"]),
            ))],
        )
        if r["code"] in index:
            result["ruleIndex"] = index[r["code"]]
        if r["suggestion"]:
            _suggest(result, r["suggestion"])
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [dict(tool=dict(driver=dict(name="jaxmigrate", version=__version__,
                                            informationUri="https://github.com/jaxmigrate/jaxmigrate", rules=rules)),
                      results=results)],
    }
    return json.dumps(log, indent=2)


def _suggest(result: Dict, code: str) -> None:
    """Put a finding's suggested code on its SARIF result: whole in the property bag (for tools, as
    JSON's ``suggestion``) and, when it has several lines, as a fenced block in ``message.markdown``
    (SARIF 2.1.0 3.11.4: a viewer that renders markdown shows it instead of ``text``). Not as
    ``fixes``: a SARIF fix is an exact replacement a tool may apply, and a suggestion is code for a
    person to adapt (placeholders, a place to choose), or the name a fix puts in."""
    result["properties"] = {"suggestion": code}
    if "\n" in code:
        text = result["message"]["text"].removesuffix(f"; {SUGGESTED_ELSEWHERE}")
        result["message"]["markdown"] = f"{text}; suggested code:\n\n```python\n{code}\n```"


def statistics(records: List[Dict]) -> str:
    """Counts per code, most frequent first, with the rule's name and how many are fixable
    (ruff's --statistics): ``    3  JM101  [*] in-axis-resources  (3 fixable)``."""
    from jaxmigrate.rules import BY_CODE

    counts: Dict[str, List[int]] = {}
    for r in records:
        row = counts.setdefault(r["code"], [0, 0, 0])
        row[0] += 1
        row[1] += r["fix_safety"] == "safe"
        row[2] += r["fix_safety"] == "unsafe"
    lines = []
    for code, (n, safe, unsafe) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0])):
        rule = BY_CODE.get(code)
        name = rule.name if rule is not None else "could-not-process"
        marker = "[*]" if safe else "[~]" if unsafe else "[ ]"
        fixable = [f"{safe} fixable"] * bool(safe) + [f"{unsafe} with --unsafe-fixes"] * bool(unsafe)
        lines.append(f"{n:5d}  {code}  {marker} {name}" + (f"  ({', '.join(fixable)})" if fixable else ""))
    return "\n".join(lines)
