"""docs/ci.md's setup, run for real: its pre-commit config and `pre-commit autoupdate` command with
real pre-commit against a clone of this repository, its workflow's `pip install` line, and the
workflow itself against the GitHub workflow schema (check-jsonschema's copy of schemastore's).

Each snippet is read from docs/ci.md, so the documentation and what is tested cannot drift: only
the repository URL is replaced, by the clone's path. The clone holds this checkout as it is on
disk (uncommitted changes committed in the clone), so the hooks tested are the ones being edited.
pre-commit and check-jsonschema come with the `test` extra, which CI installs: nothing here is
skipped when they are missing, the tests fail.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent
CI_DOC = ROOT / "docs" / "ci.md"
URL = "https://github.com/jaxmigrate/jaxmigrate"  # the repository URL the docs use
LEGACY = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n"
FIXED = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_shardings=None, out_shardings=None)\n"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=dict(os.environ, **GIT_ENV)).stdout


def doc_block(first_line: str, lang: str = "yaml") -> str:
    """The fenced ``lang`` block of docs/ci.md whose first line is ``first_line``."""
    blocks = re.findall(rf"^```{lang}\n(.*?)^```", CI_DOC.read_text(), re.MULTILINE | re.DOTALL)
    found = [b for b in blocks if b.splitlines()[0].strip() == first_line]
    assert len(found) == 1, f"docs/ci.md has {len(found)} {lang} blocks starting with {first_line!r}"
    return found[0]


def doc_command(prefix: str) -> str:
    """The one line of docs/ci.md's bash blocks that starts with ``prefix``."""
    blocks = re.findall(r"^```bash\n(.*?)^```", CI_DOC.read_text(), re.MULTILINE | re.DOTALL)
    found = [line for b in blocks for line in b.splitlines() if line.startswith(prefix)]
    assert len(found) == 1, f"docs/ci.md has {len(found)} commands starting with {prefix!r}"
    return found[0]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clone of this repository whose branch `main` holds this checkout as it is on disk."""
    assert shutil.which("git"), "git is needed (pre-commit and pip install from git)"
    clone = tmp_path_factory.mktemp("clone") / "jaxmigrate"
    _git(ROOT, "clone", "-q", "--no-hardlinks", str(ROOT), str(clone))
    _git(clone, "checkout", "-q", "-B", "main")
    changed = _git(ROOT, "ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0")
    deleted = set(_git(ROOT, "ls-files", "-z", "--deleted").split("\0"))
    for name in filter(None, changed):
        if name in deleted:
            (clone / name).unlink(missing_ok=True)
        else:
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    _git(clone, "add", "-A")
    if _git(clone, "status", "--porcelain").strip():
        _git(clone, "commit", "-q", "-m", "the checkout's uncommitted changes")
    return clone


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    """One pre-commit cache for the module: the hook's environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path, config: str) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "train.py").write_text(LEGACY)
    (work / ".pre-commit-config.yaml").write_text(config)
    _git(work, "add", ".")
    return work


def _pre_commit(work, home, *args):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), **GIT_ENV)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=600)


def test_documented_config_and_autoupdate_run_against_a_clone(clone, pre_commit_home, tmp_path):
    """docs/ci.md's config as written (the URL aside), pinned by its `pre-commit autoupdate` command
    to the clone's HEAD sha, then `pre-commit run`: the check hook fails on legacy code."""
    config = doc_block("# .pre-commit-config.yaml")
    assert URL in config and URL in doc_command("pre-commit autoupdate")
    work = _project(tmp_path, config.replace(URL, str(clone)))
    argv = shlex.split(doc_command("pre-commit autoupdate").replace(URL, str(clone)))
    assert argv[:2] == ["pre-commit", "autoupdate"]
    update = _pre_commit(work, pre_commit_home, *argv[1:])
    assert update.returncode == 0, update.stdout + update.stderr
    head = _git(clone, "rev-parse", "HEAD").strip()
    pinned = yaml.safe_load((work / ".pre-commit-config.yaml").read_text())
    assert pinned["repos"][0]["rev"] == head  # no tags: autoupdate pins the newest commit, as documented
    assert (work / ".pre-commit-config.yaml").read_text() == config.replace(URL, str(clone)).replace(
        re.search(r"rev: (\S+)", config).group(0), f"rev: {head}")  # the rest of the file as documented
    _git(work, "add", ".")
    check = _pre_commit(work, pre_commit_home, "run", "--all-files")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:3:15: JM101" in check.stdout
    assert "mutable reference" not in check.stdout + check.stderr  # a sha, not a branch


def test_check_hook_fails_on_legacy_code_and_fix_hook_rewrites_it(clone, pre_commit_home, tmp_path):
    head = _git(clone, "rev-parse", "HEAD").strip()
    work = _project(tmp_path, f"repos:\n- repo: {clone}\n  rev: {head}\n  hooks:\n  - id: jaxmigrate\n  - id: jaxmigrate-fix\n")
    check = _pre_commit(work, pre_commit_home, "run", "jaxmigrate", "--all-files")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:3:15: JM101" in check.stdout
    fix = _pre_commit(work, pre_commit_home, "run", "jaxmigrate-fix", "--all-files")
    assert fix.returncode == 1  # pre-commit fails a hook that modified files
    assert (work / "train.py").read_text() == FIXED
    _git(work, "add", ".")
    assert _pre_commit(work, pre_commit_home, "run", "jaxmigrate", "--all-files").returncode == 0


# the GitHub Actions workflow ---------------------------------------------------------------------
def _workflow() -> str:
    return doc_block("# .github/workflows/jaxmigrate.yml")


def _schema_check(tmp_path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / ".github" / "workflows" / "jaxmigrate.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_documented_workflow_is_valid_by_the_github_workflow_schema(tmp_path):
    result = _schema_check(tmp_path, _workflow())
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path):
    """The check is not vacuous: the same workflow without its job's `runs-on` is refused."""
    broken = re.sub(r"^\s+runs-on: .*\n", "", _workflow(), flags=re.MULTILINE)
    assert broken != _workflow()
    result = _schema_check(tmp_path, broken)
    assert result.returncode == 1 and "runs-on" in result.stdout + result.stderr, result.stdout + result.stderr


def _install_lines():
    """(where, the `pip install` command from git, the environment it runs in)."""
    workflow = yaml.safe_load(_workflow())
    runs = [s["run"] for job in workflow["jobs"].values() for s in job["steps"] if "run" in s]
    installs = [r for r in runs if r.startswith("pip install")]
    assert len(installs) == 1, runs
    readme = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("pip install") and URL in line]
    assert len(readme) == 1, readme
    return {"workflow": (installs[0], {k: str(v) for k, v in workflow.get("env", {}).items()}), "README": (readme[0], {})}


@pytest.mark.parametrize("where, pin", [("workflow", False), ("workflow", True), ("README", False), ("README", True)])
def test_documented_pip_install_line_installs_jaxmigrate_from_git(clone, tmp_path, where, pin):
    """The `pip install` line of docs/ci.md's workflow and of the README, the URL replaced by the
    clone's (with the host `localhost`: pip 23.2 refuses a git+file URL without one) and variables
    expanded as the runner's shell would: pip installs jaxmigrate at that commit. Pinned: the
    revision given as the clone's HEAD sha, as the docs say to."""
    line, env = _install_lines()[where]
    assert URL in line
    head = _git(clone, "rev-parse", "HEAD").strip()
    if pin and where == "workflow":
        env = {**env, "JAXMIGRATE_REV": head}
    elif pin:
        line = line.replace(f"{URL}@main", f"{URL}@{head}")
        assert head in line
    expanded = subprocess.run(["bash", "-c", f"printf '%s\\0' {line.replace(URL, 'file://localhost' + str(clone))}"],
                              env=dict(os.environ, **env), capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
    assert expanded[:2] == ["pip", "install"] and len(expanded) == 3, expanded
    target = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                             expanded[2]], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (target / "jaxmigrate" / "cli.py").is_file()
    direct_url = json.loads(next(target.glob("jaxmigrate-*.dist-info/direct_url.json")).read_text())
    assert direct_url["vcs_info"]["commit_id"] == head
