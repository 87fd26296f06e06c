"""Two jaxmigrates side by side: the one of this working tree and the one of another git revision.

``build(REV)`` installs the jaxmigrate of revision REV of the repository this bench lives in into
a venv of its own, cached by sha (and interpreter) under the bench cache folder: ``git archive``
of REV, ``pip install --no-deps`` of it, first offline (``--no-index --no-build-isolation``, with
this interpreter's setuptools), else with build isolation from the configured index. The venv
has no packages but jaxmigrate: a ``.pth`` file puts this interpreter's site-packages folders
after its own, so it uses the dependencies installed here (libcst, click, ...), as they are. Its
``.pth`` files are not run (only folders are listed), so an editable jaxmigrate installed here
stays out of it. ``current()`` is this working tree's jaxmigrate, run with ``PYTHONPATH`` set to
the tree. Both are checked to import the jaxmigrate they should before anything is timed.

``schedule`` orders the runs: in each round, for each tree and measure, the old version and then
the new one, so that both see the same load on a shared machine; ``medians`` and ``ratio`` make
the table.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BUILT = ".built"

Key = Tuple[str, str, Optional[str]]  # (tree, measure, version label; None for a measure of no version)


@dataclass(frozen=True)
class Version:
    label: str  # short sha, "+" when the working tree's jaxmigrate differs from it
    sha: str
    python: str
    pythonpath: Optional[str]  # the working tree, for the current version; None for a build

    def env(self, base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        env = dict(os.environ if base is None else base)
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath
        return env

    def command(self, *args: str) -> List[str]:
        return [self.python, "-m", "jaxmigrate", *args]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def resolve(rev: str, repo: Path = REPO) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{repo}: no commit {rev}")
    return proc.stdout.strip()


def _imports_from(version: Version, cwd: str) -> Path:
    """The folder of the jaxmigrate package ``version`` imports (run from ``cwd``, as the bench runs it)."""
    out = subprocess.run([version.python, "-c", "import jaxmigrate; print(jaxmigrate.__file__)"],
                         env=version.env(), cwd=cwd, check=True, capture_output=True, text=True).stdout
    return Path(out.strip()).resolve().parent


def dependency_folders() -> List[str]:
    """This interpreter's site-packages folders, where the venv of a build finds its dependencies."""
    return [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)]


def build_dir(sha: str, cache: Path) -> Path:
    """Where the build of ``sha`` for this interpreter lives (a venv is tied to its interpreter and to
    the dependency folders it points at)."""
    interpreter = hashlib.sha1("\n".join([sys.prefix, sys.version, *dependency_folders()]).encode()).hexdigest()[:10]
    return cache / "builds" / f"{sha}-{interpreter}"


def make_venv(venv: Path) -> Path:
    """A venv without packages that finds this interpreter's dependencies after its own; its
    site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_jaxmigrate_bench_deps.pth").write_text("".join(f"{p}\n" for p in dependency_folders()))
    return Path(purelib)


def _pip_install(python: Path, source: Path, log: Callable[[str], None]) -> None:
    offline = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
               str(source)]
    first = subprocess.run(offline, capture_output=True, text=True)
    if first.returncode == 0:
        return
    log("  offline build failed (no `wheel` here?), building with build isolation from the configured index")
    second = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(source)],
                            capture_output=True, text=True)
    if second.returncode:
        raise SystemExit(f"pip install of {source} failed:\n{first.stderr}\n{second.stderr}")


def build(rev: str, cache: Path, repo: Path = REPO, log: Callable[[str], None] = print) -> Version:
    """The jaxmigrate of ``rev``, installed into a venv of its own unless already built there."""
    sha = resolve(rev, repo)
    where = build_dir(sha, cache)
    venv = where / "venv"
    python = venv / "bin" / "python"
    version = Version(sha[:7], sha, str(python), None)
    marker = where / BUILT
    if marker.is_file() and marker.read_text().split() == [sha]:
        return version
    log(f"building jaxmigrate {sha[:12]} ({rev}) into {where}")
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    make_venv(venv)
    with tempfile.TemporaryDirectory(prefix="jaxmigrate-build-") as tmp:
        archive = Path(tmp) / "src.tar"
        with open(archive, "wb") as handle:
            subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", sha], stdout=handle, check=True)
        with tarfile.open(archive) as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python 3.12+: no warning
            tar.extractall(Path(tmp) / "src", **safe)  # type: ignore[arg-type]
        _pip_install(python, Path(tmp) / "src", log)
        package = _imports_from(version, tmp)
    if venv.resolve() not in package.parents:
        raise SystemExit(f"the build of {sha[:12]} imports jaxmigrate from {package}, not from {venv}")
    marker.write_text(sha + "\n")
    return version


def current(repo: Path = REPO) -> Version:
    """This working tree's jaxmigrate (its modules byte-compiled, as an installed package's are)."""
    try:
        sha = git(repo, "rev-parse", "HEAD")
        changed = git(repo, "status", "--porcelain", "--", "jaxmigrate", "pyproject.toml")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        sha, changed = "", "?"
    version = Version((sha[:7] or "working tree") + ("+" if changed else ""), sha, sys.executable, str(repo))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "jaxmigrate")], check=True,
                   stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        package = _imports_from(version, tmp)
    if package != (repo / "jaxmigrate").resolve():
        raise SystemExit(f"with PYTHONPATH={repo}, {sys.executable} imports jaxmigrate from {package}")
    return version


def schedule(trees: Sequence[str], measures: Sequence[str], versions: Sequence[str], repeat: int,
             shared: Sequence[str] = ()) -> List[Tuple[int, str, str, Optional[str]]]:
    """(round, tree, measure, version) in the order to run them: every version in turn for each tree
    and measure of a round (old, new, old, new, ...); a ``shared`` measure (of no version) once."""
    order: List[Tuple[int, str, str, Optional[str]]] = []
    for round_ in range(repeat):
        for tree in trees:
            for measure in measures:
                if measure in shared:
                    order.append((round_, tree, measure, None))
                else:
                    order += [(round_, tree, measure, v) for v in versions]
    return order


def medians(samples: Dict[Key, List[Optional[dict]]]) -> Dict[Key, Optional[dict]]:
    """The median of each number over the rounds; None where a round did not finish."""
    out: Dict[Key, Optional[dict]] = {}
    for key, rounds in samples.items():
        if not rounds or any(r is None for r in rounds):
            out[key] = None
        else:
            out[key] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}  # type: ignore[index]
    return out


def ratio(new: Optional[dict], old: Optional[dict], field: str = "cpu") -> Optional[float]:
    """new / old of ``field``; None when either did not finish or old took no time."""
    if new is None or old is None or not old[field]:
        return None
    return new[field] / old[field]


def over(ratios: Dict[str, Optional[float]], limit: float) -> List[str]:
    """The rows whose ratio exceeds ``limit`` (a row that did not finish is not judged)."""
    return [f"{name} {r:.2f}x" for name, r in ratios.items() if r is not None and r > limit]
