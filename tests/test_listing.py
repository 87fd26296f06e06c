"""The project walk kept in the cache (engine/listing.py): the same files as a walk, and a new walk
whenever what the walk looked at changed."""

from __future__ import annotations

import os
import time

import pytest

from jaxmigrate.engine import listing
from jaxmigrate.engine.cache import Cache
from jaxmigrate.engine.config import Configs
from jaxmigrate.engine.discovery import walk_files


def _age(root, seconds: float = 10.0) -> None:
    """Every file and folder under ``root`` (and ``root``) modified ``seconds`` ago."""
    when = time.time() - seconds
    for folder, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(os.path.join(folder, name), (when, when))
    os.utime(root, (when, when))


@pytest.fixture
def tree(tmp_path, monkeypatch):
    project = tmp_path / "project"
    for rel in ["a/b/c/one.py", "a/two.py", "gen/skip.py", "top.py"]:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("x = 1\n")
    (project / ".gitignore").write_text("gen/\n")
    (project / ".git").mkdir()
    (project / "a" / "pyproject.toml").write_text("[tool.jaxmigrate]\n")
    _age(project)
    monkeypatch.chdir(project)
    return project


def _walks(monkeypatch):
    calls = []
    real = listing.walk_files

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(listing, "walk_files", counted)
    return calls


def _listed(project, cache):
    return listing.walk_files_cached([str(project)], cache, configs=Configs())


def test_a_second_run_takes_the_walk_from_the_cache(tree, tmp_path, monkeypatch):
    cache = Cache(tmp_path / "cache")
    calls = _walks(monkeypatch)
    first = _listed(tree, cache)
    assert first == walk_files([str(tree)], configs=Configs())
    assert {d for _, d in first} == {"a/b/c/one.py", "a/two.py", "top.py"}
    cache.save()
    again = Cache(tmp_path / "cache")
    assert _listed(tree, again) == first and len(calls) == 1


@pytest.mark.parametrize("change", ["new file deep down", "gitignore edited, time set back", "config above",
                                    "config inside edited, time set back"])
def test_what_the_walk_looked_at_changing_makes_it_walk_again(tree, tmp_path, monkeypatch, change):
    cache = Cache(tmp_path / "cache")
    _listed(tree, cache)
    calls = _walks(monkeypatch)
    if change == "new file deep down":
        (tree / "a" / "b" / "c" / "three.py").write_text("y = 2\n")
        expected = {"a/b/c/one.py", "a/b/c/three.py", "a/two.py", "top.py"}
    elif change == "gitignore edited, time set back":  # as `cp -p` leaves it: only the change time says so
        stat = os.stat(tree / ".gitignore")
        (tree / ".gitignore").write_text("gen/\na/\n")
        os.utime(tree / ".gitignore", ns=(stat.st_atime_ns, stat.st_mtime_ns))
        expected = {"top.py"}
    elif change == "config inside edited, time set back":
        stat = os.stat(tree / "a" / "pyproject.toml")
        (tree / "a" / "pyproject.toml").write_text('[tool.jaxmigrate]\nextend-exclude = ["b"]\n')
        os.utime(tree / "a" / "pyproject.toml", ns=(stat.st_atime_ns, stat.st_mtime_ns))
        expected = {"a/two.py", "top.py"}
    else:  # a configuration in the folder above the project, excluding a folder of it
        (tree.parent / "pyproject.toml").write_text('[tool.jaxmigrate]\nextend-exclude = ["project/a"]\n')
        expected = {"top.py"}
    found = {d for _, d in _listed(tree, cache)}
    assert found == expected and len(calls) == 1
    assert found == {d for _, d in walk_files([str(tree)], configs=Configs())}


def test_folders_above_the_walk_count_by_their_rule_files_only(tree, tmp_path, monkeypatch):
    """A folder above the project (the temp folder, a home) changes all the time: only its
    .gitignore, .git and pyproject.toml decide the walk, and a new file beside the project walks
    nothing again."""
    (tree / ".git").rmdir()  # no checkout: the .gitignore chain goes on above the project
    _age(tree)
    cache = Cache(tmp_path / "cache")
    _listed(tree, cache)
    calls = _walks(monkeypatch)
    (tree.parent / "elsewhere.txt").write_text("x\n")
    assert {d for _, d in _listed(tree, cache)} == {"a/b/c/one.py", "a/two.py", "top.py"} and not calls


def test_a_walk_of_folders_changed_in_the_last_two_seconds_is_not_kept(tree, tmp_path, monkeypatch):
    cache = Cache(tmp_path / "cache")
    (tree / "a" / "fresh.py").write_text("z = 3\n")  # a/ modified now: a change in the same tick would not show
    _listed(tree, cache)
    assert not [k for k in cache.facts if k.startswith("walk:")]
