"""The engine around the analysis: discovery's listing and what the runner hands back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jaxmigrate.engine.discovery import discover
from tests.test_cli import CLEAN, LEGACY, MANUAL

pytestmark = pytest.mark.usefixtures("pinned_target")


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text(LEGACY)
    (tmp_path / "pkg" / "sub" / "b.py").write_text(MANUAL)
    (tmp_path / "pkg" / "notes.txt").write_text("")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "alias")  # a second way to sub/
    os.symlink(tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "z_link.py")  # a second way to a.py
    (tmp_path / "egg.egg-info").mkdir()
    (tmp_path / "egg.egg-info" / "c.py").write_text(CLEAN)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "d.py").write_text(CLEAN)
    return tmp_path


def test_discovery_lists_each_real_file_once_sorted(linked, monkeypatch):
    monkeypatch.chdir(linked)
    files, missing = discover(["pkg", "pkg/sub/b.py", "nowhere", "."])
    assert missing == ["nowhere"]
    # the first way found wins: alias/ is walked before sub/, a.py before z_link.py
    assert [f.display.replace(os.sep, "/") for f in files] == ["pkg/a.py", "pkg/alias/b.py"]
    assert all(isinstance(f.path, Path) and f.path.is_file() for f in files)


def test_discovery_of_a_file_named_first(linked, monkeypatch):
    monkeypatch.chdir(linked)
    files, _ = discover(["pkg/z_link.py", "pkg"])
    assert [f.display.replace(os.sep, "/") for f in files] == ["pkg/alias/b.py", "pkg/z_link.py"]


def test_discovery_exclude_patterns_see_paths_relative_to_the_root(linked):
    files, _ = discover([str(linked)], root=linked, extend_exclude=["pkg/sub/"])
    assert [f.path.name for f in files] == ["a.py"]  # sub/ excluded, and alias/, which resolves to it
    files, _ = discover([str(linked)], root=linked, exclude=[])  # no default skips: tool folders are walked
    assert sorted(f.path.name for f in files) == ["a.py", "b.py", "c.py", "d.py"]
