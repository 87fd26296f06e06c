"""Shared helpers: run the engine on text in memory."""

from __future__ import annotations

from typing import Optional, Sequence

import pytest

from jaxmigrate.engine.pipeline import Outcome, Settings, transform
from jaxmigrate.rules import ALL_RULES


def settings(codes: Optional[Sequence[str]] = None, *, fix: bool = True, unsafe: bool = False, target=None) -> Settings:
    codes = tuple(codes) if codes else tuple(r.code for r in ALL_RULES)
    return Settings(codes, fix=fix, write=False, unsafe_fixes=unsafe, target=target)


def run(text: str, codes=None, *, fix: bool = True, unsafe: bool = False, target=None) -> Outcome:
    out = transform(text.encode("utf-8"), "example.py", settings(codes, fix=fix, unsafe=unsafe, target=target))
    if not out.original:  # prefilter: nothing to do
        out.original = out.text = text
    return out


def assert_parses(text: str) -> None:
    """Parses and compiles (compile also rejects e.g. a repeated keyword argument)."""
    compile(text, "<fixed>", "exec", dont_inherit=True)



@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test's command-line runs cache into a folder of their own, never the repository."""
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def pinned_target(monkeypatch):
    """For tests of the engine and its outputs rather than of the rule set: pin the target before
    pjit's deprecation (0.8.0), so a pjit sample's fix is complete and safe there, whatever
    current-JAX rules (JM7xx) say about the latest target. Children (pre-commit) inherit it."""
    monkeypatch.setenv("JAXMIGRATE_TARGET_JAX", "0.7.0")


#: the report a migration leaves by design: JM904, random draws whose numbers JAX 0.5.0's default
#: streams changed (the code needs no change; the line that keeps the old numbers is the user's call)
NOTICES = frozenset(r.code for r in ALL_RULES if r.notice)


def streams_proven(verdict) -> bool:
    """A STREAMS_DIFFER verdict whose sides drew under different streams and agree once the after side
    draws as JAX 0.4.x did: the code's migration is proven, the numbers moved with JAX 0.5.0."""
    return verdict.status == "streams_differ" and verdict.streams == {"before": [False], "after": [True], "rerun": True}
