"""docs/changelog-coverage.md: every breaking change and deprecation of JAX's CHANGELOG, with its coverage.

The data (docs/changelog-coverage.toml) is checked on its own in CI: every bullet has a valid coverage, every
rule code exists (or is pending: ``PENDING_CODES``), every fixture exists, every name is dated by the API history
as stated, and the committed document is what the script renders. That the data holds exactly the CHANGELOG's
bullets needs a clone of jax-ml/jax: checked when the local mirror is there, else skipped."""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest

from jaxmigrate.rules import BY_CODE

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "changelog_coverage.py"
_spec = importlib.util.spec_from_file_location("changelog_coverage", SCRIPT)
assert _spec is not None and _spec.loader is not None
cc = importlib.util.module_from_spec(_spec)
sys.modules["changelog_coverage"] = cc  # dataclasses look their module up there
_spec.loader.exec_module(cc)

# a clone of jax-ml/jax (a bare one will do): $JAX_GITDIR, else the local mirror
MIRROR = Path(os.environ.get("JAX_GITDIR", "/work/.mirror/jax-ml+jax/repo"))


@pytest.fixture(scope="module")
def data():
    return cc.load()


def test_every_entry_has_a_valid_coverage_and_real_rules_fixtures_and_names(data):
    assert cc.bullets_of(data), "no bullets in the data"
    assert cc.check_entries(data, cc.known_codes()) == []


def test_known_codes_are_the_rules_plus_the_pending_ones():
    assert set(cc.known_codes()) == set(BY_CODE) | {"JM804"}
    assert "JM999" not in cc.known_codes()


def test_the_entry_checks_catch_what_they_claim_to(data):
    first = next(e for e in cc.bullets_of(data) if e["coverage"] == "names" and e.get("removed"))
    rule = next(e for e in cc.bullets_of(data) if e["coverage"] == "rule")
    bad = [
        dict(first, coverage="unclassified"),
        dict(rule, codes=["JM999"]),
        dict(rule, fixtures=["fixtures/JM101/no_such_case"]),
        dict(first, removed=[first["removed"][0].split("@")[0] + "@0.2.0"]),  # wrong version
        dict(first, removed=["jax.no_such_name_xyz"]),
        dict(first, removed=[], deprecated=[]),
        {k: v for k, v in rule.items() if k != "fixtures"},
    ]
    for entry in bad:
        broken = copy.deepcopy(data)
        broken["bullet"] = [entry]
        assert cc.check_entries(broken, cc.known_codes()), entry


def test_the_committed_document_is_what_the_script_renders(data):
    assert (ROOT / "docs" / "changelog-coverage.md").read_text() == cc.render(data), (
        "docs/changelog-coverage.md is stale: run `python scripts/changelog_coverage.py`")


def test_the_document_states_its_source_and_counts(data):
    text = cc.render(data)
    n = len(cc.bullets_of(data))
    assert data["source"]["bullets"] == n
    assert f"**{n} bullets**" in text and f"`{data['source']['tag']}`" in text
    gaps = [e for e in cc.bullets_of(data) if e["coverage"] == "gap"]
    section = text.split("## Behaviour gaps: the next rules")[1].split("\n## ")[0]
    assert section.count("\n| jax") == len(gaps)


CHANGELOG = textwrap.dedent("""\
    # Change log

    ## Unreleased

    * New features
      * Added `jax.thing`.

    * Breaking changes
      * Removed `jax.old_a`. It did
        nothing.
      * Several names went:
        * `jax.old_b`
        * `jax.old_c`
    * Bug fixes
      * Not counted.

    ## jax 0.4.2 (Jan 1, 2023)
      * Breaking Changes
        * Deleted `jax.old_d`.
        ```python
        * not a bullet, inside a fence
        ```
      * Changes
        * Not counted either.
    * Deprecations & Removals:
      * `jax.old_e` is deprecated.

    ## jaxlib 0.4.2 (Jan 1, 2023)
    * Deletion:
      * Removed a build flag.

    ## jax 0.4.0 (Dec 12, 2022)
    * Breaking changes
      * Before the first release covered.
    """)


def test_the_parser_finds_bullets_under_every_spelling_and_nesting():
    bullets = cc.parse_changelog(CHANGELOG, "0.5.0", first="0.4.1")
    got = [(b.release, b.section, b.depth, " ".join(b.text.split())) for b in bullets]
    assert got == [
        ("jax 0.5.0", "Breaking changes", 0, "Removed `jax.old_a`. It did nothing."),
        ("jax 0.5.0", "Breaking changes", 0, "Several names went:"),
        ("jax 0.5.0", "Breaking changes", 1, "`jax.old_b`"),
        ("jax 0.5.0", "Breaking changes", 1, "`jax.old_c`"),
        ("jax 0.4.2", "Breaking changes", 0,
         "Deleted `jax.old_d`. ```python * not a bullet, inside a fence ```"),
        ("jax 0.4.2", "Deprecations", 0, "`jax.old_e` is deprecated."),
        ("jaxlib 0.4.2", "Deletions", 0, "Removed a build flag."),
    ]
    assert all(b.id == cc.fingerprint(b.text) for b in bullets)


def test_the_fingerprint_ignores_line_breaks_only():
    assert cc.fingerprint("a  b\n   c") == cc.fingerprint("a b c")
    assert cc.fingerprint("a b c") != cc.fingerprint("a b d")
    assert len(cc.fingerprint("x")) == 12


def test_completeness_sees_a_missing_an_extra_and_a_reordered_bullet():
    bullets = cc.parse_changelog(CHANGELOG, "0.5.0")
    entries = [{"release": b.release, "section": b.section, "id": b.id} for b in bullets]
    data = {"source": {"bullets": len(bullets)}, "bullet": entries}
    assert cc.check_complete(data, bullets) == []
    assert cc.check_complete(dict(data, bullet=entries[1:]), bullets)
    assert cc.check_complete(dict(data, bullet=entries + entries[:1]), bullets)
    assert cc.check_complete(dict(data, bullet=entries[::-1]), bullets)
    assert cc.check_complete(dict(data, source={"bullets": 3}), bullets)


def test_no_run_of_words_is_copied():
    bullets = cc.parse_changelog(CHANGELOG, "0.5.0")
    assert cc.copied_runs("Removed `jax.old_a`. It did nothing.", bullets, words=4)
    assert cc.copied_runs("`jax.old_a` removed", bullets, words=4) == []


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no clone of jax-ml/jax at {MIRROR}: the CHANGELOG cannot be read")
def test_the_data_covers_exactly_the_changelogs_bullets_and_copies_none_of_its_text(data):
    tag = data["source"]["tag"]
    bullets = cc.parse_changelog(cc.read_changelog(MIRROR, tag), cc.tag_version(tag), data["source"]["first"])
    assert cc.check_complete(data, bullets) == []
    for path in (cc.DATA, cc.DOC):
        assert cc.copied_runs(path.read_text(), bullets) == [], path
