"""The result cache serves a file's findings only for the same bytes, settings and tool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jaxmigrate.engine import cache as cache_module, runner
from jaxmigrate.engine.cache import Cache
from jaxmigrate.engine.discovery import SourceFile
from jaxmigrate.engine.pipeline import Settings
from jaxmigrate.rules import ALL_RULES
from tests.test_cli import CLEAN, LEGACY, MANUAL, invoke

pytestmark = pytest.mark.usefixtures("pinned_target")  # command-line runs too: see tests/conftest.py
ALL = tuple(r.code for r in ALL_RULES)
PINNED = (0, 7, 0)  # before pjit's deprecation: the samples' findings are JM1xx/JM2xx only (see conftest)


def _settings(**options) -> Settings:
    return Settings(options.pop("codes", ALL), target=options.pop("target", PINNED), **options)


def _check(tmp_path: Path, files, settings=None, cache=None):
    cache = cache if cache is not None else Cache(tmp_path)
    return runner.run([SourceFile(f, f.name) for f in files], settings or _settings(), jobs=1, cache=cache)


def _no_analysis(monkeypatch):
    """Make every analysis fail loudly: what still comes out was served from the cache."""
    def refuse(*args, **kwargs):
        raise AssertionError("analysed although cached")
    monkeypatch.setattr(runner, "process", refuse)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv("JAXMIGRATE_CACHE_DIR")
    (tmp_path / "legacy.py").write_text(LEGACY)
    (tmp_path / "manual.py").write_text(MANUAL)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_second_run_is_served_from_the_cache(project, monkeypatch):
    files = sorted(project.glob("*.py"))
    first = _check(project, files)
    assert (project / ".jaxmigrate_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    _no_analysis(monkeypatch)
    second = _check(project, files)
    assert [(r.path, r.findings) for r in second] == [(r.path, r.findings) for r in first]
    assert [f.fix_safety for r in second for f in r.findings] == [f.fix_safety for r in first for f in r.findings]


def test_changed_content_is_analysed_again(project):
    legacy = project / "legacy.py"
    assert _check(project, [legacy])[0].findings
    legacy.write_text(CLEAN)
    assert _check(project, [legacy])[0].findings == []
    legacy.write_text(LEGACY + "g = pjit(abs, in_axis_resources=None)\n")
    assert len(_check(project, [legacy])[0].findings) == 3


def _uncached(files, settings):
    return runner.run([SourceFile(f, f.name) for f in files], settings, jobs=1, cache=None)


def test_changed_settings_are_analysed_again(project):
    """Each run with the cache reports exactly what an uncached run with its settings does."""
    legacy = project / "legacy.py"
    sequence = [_settings(), _settings(codes=("JM102",)), _settings(target=(0, 4, 1)),  # JM101 is quiet before 0.4.9
                _settings(target=(0, 4, 9)), _settings(target=(0, 4, 1)), _settings()]
    seen = []
    for settings in sequence:
        cached = _check(project, [legacy], settings)[0].findings
        assert cached == _uncached([legacy], settings)[0].findings
        seen.append(len(cached))
    assert seen[0] and not seen[1] and not seen[2] and seen[3]  # the settings matter here


def test_another_target_misses_the_cache(project, monkeypatch):
    """A result stored for one target JAX is never served for another (the key holds the target)."""
    legacy = project / "legacy.py"
    _check(project, [legacy], _settings(target=(0, 4, 9)))
    _no_analysis(monkeypatch)
    assert _check(project, [legacy], _settings(target=(0, 4, 9)))[0].findings  # same target: served
    for other in ((0, 4, 1), (0, 4, 14), PINNED, "latest"):
        with pytest.raises(AssertionError, match="analysed although cached"):
            _check(project, [legacy], _settings(target=other))


def test_per_file_ignores_are_part_of_the_key(project):
    legacy = project / "legacy.py"
    assert _check(project, [legacy])[0].findings
    ignoring = _settings(per_file_ignores=(("legacy.py", ("JM1",)),), config_root=str(project))
    assert _check(project, [legacy], ignoring)[0].findings == []


def test_a_damaged_cache_file_is_ignored_and_replaced(project):
    legacy = project / "legacy.py"
    expected = _check(project, [legacy])[0].findings
    cached = Cache(project)
    for damage in (b"", b"JMC1" + b"\0" * 40, cached.path.read_bytes()[:-3]):
        cached.path.write_bytes(damage)
        assert Cache(project).entries == {}
        assert _check(project, [legacy])[0].findings == expected
    assert Cache(project).entries


def test_another_tool_version_does_not_read_old_results(project, monkeypatch):
    _check(project, [project / "legacy.py"])
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    assert Cache(project).entries == {}


def test_fix_uses_the_cache_only_to_skip_clean_files(project):
    _check(project, sorted(project.glob("*.py")))  # fills the cache: legacy has findings
    results = runner.run([SourceFile(project / "legacy.py", "legacy.py")], _settings(fix=True), jobs=1,
                         cache=Cache(project))
    assert results[0].changed and results[0].fixes_applied == 2
    assert "in_shardings" in (project / "legacy.py").read_text()


def test_cli_writes_the_cache_in_the_project_root_and_no_cache_skips_it(project):
    (project / "pyproject.toml").write_text("[tool.jaxmigrate]\nselect = ['JM']\n")
    sub = project / "sub"
    sub.mkdir()
    (sub / "more.py").write_text(LEGACY)
    first = invoke("check", str(sub), "--no-cache")
    assert first.exit_code == 1 and not (project / ".jaxmigrate_cache").exists()
    cached = invoke("check", str(sub))
    assert (project / ".jaxmigrate_cache").is_dir() and not (sub / ".jaxmigrate_cache").exists()
    again = invoke("check", str(sub))
    assert first.output == cached.output == again.output


def test_cache_dir_from_the_environment(project, monkeypatch, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(elsewhere))
    _check(project, [project / "legacy.py"])
    assert list((elsewhere / ".jaxmigrate_cache").glob("*.cache")) and not (project / ".jaxmigrate_cache").exists()


def test_a_shared_cache_dir_keeps_what_others_put_there(project, monkeypatch, tmp_path_factory):
    """JAXMIGRATE_CACHE_DIR names a folder others use too (it once lost every `*.cache` file in it,
    and got a `.gitignore` of `*`: with `JAXMIGRATE_CACHE_DIR=.` a whole repository was ignored):
    the cache makes a folder of its own there, and deletes only its own old files in it."""
    shared = tmp_path_factory.mktemp("shared")
    (shared / "someone.cache").write_bytes(b"not ours")
    (shared / "notes.txt").write_text("keep\n")
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(shared))
    _check(project, [project / "legacy.py"])
    own = shared / ".jaxmigrate_cache"
    assert sorted(p.name for p in shared.iterdir()) == [".jaxmigrate_cache", "notes.txt", "someone.cache"]
    assert (own / ".gitignore").read_text().splitlines()[-1] == "*" and (own / "CACHEDIR.TAG").exists()
    stale = own / "0.0.1-0123456789abcdef.cache"  # an older version's: removed on the next save
    stale.write_bytes(b"JMC2" + b"\0" * 20)
    lookalike = own / "9-not-ours.cache"  # named like one, not one
    lookalike.write_bytes(b"other data")
    (project / "legacy.py").write_text(CLEAN)
    _check(project, [project / "legacy.py"])
    assert not stale.exists() and lookalike.exists() and (shared / "someone.cache").exists()


def test_a_folder_of_that_name_made_by_someone_else_is_only_added_to(project, monkeypatch, tmp_path_factory):
    shared = tmp_path_factory.mktemp("shared")
    foreign = shared / ".jaxmigrate_cache"
    foreign.mkdir()
    (foreign / "1-theirs.cache").write_bytes(b"JMC3 theirs")
    monkeypatch.setenv("JAXMIGRATE_CACHE_DIR", str(shared))
    _check(project, [project / "legacy.py"])
    names = sorted(p.name for p in foreign.iterdir())
    assert "1-theirs.cache" in names and ".gitignore" not in names and len(names) == 2


def test_a_copy_that_sets_the_old_time_back_is_read_again(project, monkeypatch):
    """A same-size edit whose modification time is set back (cp -p, rsync -t, a restored backup)
    changes the inode's change time, which the cache compares too (as git's index does)."""
    legacy = project / "legacy.py"
    same_size = LEGACY.replace("in_axis_resources", "in_axis_resourcez")  # one finding fewer
    _age(legacy)
    first = _check(project, [legacy])[0].findings
    st = os.stat(legacy)
    legacy.write_text(same_size)
    os.utime(legacy, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime as before
    assert (os.stat(legacy).st_size, os.stat(legacy).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    second = _check(project, [legacy])[0].findings
    assert len(second) == len(first) - 1


def test_each_file_is_read_once_and_cached_under_those_bytes(project, monkeypatch):
    legacy = project / "legacy.py"
    reads = _count_reads(monkeypatch)
    _check(project, [legacy])
    assert [r for r in reads if r.suffix == ".py"] == [legacy]  # prefilter, cache key and analysis all see the same bytes
    entry = Cache(project).entries[str(legacy.resolve())]
    assert entry[0] == cache_module.content_digest(LEGACY.encode())
    assert entry[0] != cache_module.content_digest(CLEAN.encode())
    assert entry[1] == cache_module.settings_digest(ALL, PINNED, False)


def test_the_settings_digest_tells_every_setting_apart():
    """Codes, target and notebook-ness each change the key: none is left out of it."""
    digest = cache_module.settings_digest
    keys = {digest(ALL, PINNED, False), digest(ALL[:-1], PINNED, False), digest(ALL, (0, 4, 14), False),
            digest(ALL, "latest", False), digest(ALL, PINNED, True)}
    assert len(keys) == 5


def _age(*paths: Path, seconds: int = 60) -> None:
    for path in paths:
        past = path.stat().st_mtime - seconds
        os.utime(path, (past, past))


def _count_reads(monkeypatch) -> list:
    original_read = Path.read_bytes
    reads = []

    def read_bytes(self):
        reads.append(self)
        return original_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    return reads


def test_untouched_files_are_not_even_read(project, monkeypatch):
    files = sorted(project.glob("*.py"))
    _age(*files)
    first = _check(project, files)
    assert len(Cache(project).entries) == 3  # the clean file too: decided once, never read again
    reads = _count_reads(monkeypatch)
    _no_analysis(monkeypatch)
    second = _check(project, files)
    assert [r for r in reads if r.suffix == ".py"] == []
    assert [r.findings for r in second] == [r.findings for r in first]


def test_an_edit_that_keeps_the_size_is_seen(project):
    legacy = project / "legacy.py"
    _age(legacy)
    assert _check(project, [legacy])[0].findings
    legacy.write_text(LEGACY.replace("in_axis_resources", "in_shardings_xxxx"))  # same size, new mtime
    assert legacy.stat().st_size == len(LEGACY)
    assert [f.code for f in _check(project, [legacy])[0].findings] == ["JM101"]


def test_a_recent_file_is_checked_by_content(project, monkeypatch):
    """Written in the same clock tick as it was read, a file's mtime cannot vouch for it (racy)."""
    legacy = project / "legacy.py"
    _check(project, [legacy])  # just written: its mtime is within RACY_NS of the read
    reads = _count_reads(monkeypatch)
    _check(project, [legacy])
    assert [r for r in reads if r.suffix == ".py"] == [legacy]
