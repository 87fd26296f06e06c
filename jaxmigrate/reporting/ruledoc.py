"""Render a rule's documentation (markdown) from its own docstring, metadata and examples."""

from __future__ import annotations

from typing import List, Type

from jaxmigrate.rules import Rule

FIX_TEXT = {
    "safe": "Fix is always available and safe: it keeps what the code computes.",
    "unsafe": "Fix is available with `--unsafe-fixes`: it may change behaviour, review it.",
    None: "No automatic fix: the finding says what to write.",
}


def render_rule(rule: Type[Rule]) -> str:
    out: List[str] = [f"# {rule.code}: {rule.name}", "", rule.summary, ""]
    versions = []
    if rule.deprecated_in:
        versions.append(f"deprecated in JAX {rule.deprecated_in}")
    if rule.removed_in:
        versions.append(f"removed in JAX {rule.removed_in}")
    if rule.replacement_since:
        versions.append(f"replacement available since JAX {rule.replacement_since}")
    out += [f"**Fix safety**: {FIX_TEXT[rule.fix_safety]}", ""]
    if rule.unsafe_note:  # what `fix --unsafe-fixes` says beside each unsafe fix of the rule it applies
        out += [f"**An unsafe fix may change**: {rule.unsafe_note}.", ""]
    if versions:
        out += [f"**JAX versions**: {'; '.join(versions)}.", ""]
    out += [rule.documentation(), ""]
    for ex in rule.examples:
        heading = f" ({ex.title})" if ex.title else ""
        if ex.target:
            heading += f" (`--target-jax {ex.target}`)"
        if ex.is_valid:
            out += [f"## Left alone{heading}", "", "```python", ex.before.rstrip(), "```", ""]
        elif ex.flagged:
            out += [f"## Reported, not rewritten{heading}", "", "```python", ex.before.rstrip(), "```", ""]
        else:
            unsafe = " (with `--unsafe-fixes`)" if ex.unsafe else ""
            out += [f"## Example{heading}", "", "```python", ex.before.rstrip(), "```", "",
                    f"Use instead{unsafe}:", "", "```python", (ex.after or "").rstrip(), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def render_index(rules) -> str:
    lines = [
        "# jaxmigrate rules",
        "",
        "Generated from the rules themselves (`python -m jaxmigrate.reporting.ruledoc docs/rules`);",
        "a test fails when these pages are stale.",
        "",
        "| code | name | fix | summary |",
        "|---|---|---|---|",
    ]
    for rule in rules:
        lines.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.fix_safety or 'report only'} | {rule.summary} |")
    return "\n".join(lines) + "\n"


def expected_pages() -> dict:
    """File name → content of every generated page under docs/rules/."""
    from jaxmigrate.rules import ALL_RULES

    pages = {f"{rule.code}.md": render_rule(rule) for rule in ALL_RULES}
    pages["README.md"] = render_index(ALL_RULES)
    return pages


if __name__ == "__main__":  # pragma: no cover - a maintenance entry point
    import sys
    from pathlib import Path

    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in expected_pages().items():
        (folder / name).write_text(text)
