"""The rule pages under docs/rules are generated from the rules and must not go stale."""

from pathlib import Path

from jaxmigrate.reporting.ruledoc import expected_pages

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def test_rule_docs_are_current():
    pages = expected_pages()
    for name, text in pages.items():
        path = DOCS / name
        assert path.exists() and path.read_text() == text, (
            f"docs/rules/{name} is stale: run `python -m jaxmigrate.reporting.ruledoc docs/rules`"
        )
    extra = {p.name for p in DOCS.glob("*.md")} - set(pages)
    assert not extra, f"pages for rules that no longer exist: {extra}"
