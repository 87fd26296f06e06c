"""A real project's own test suite, three ways: legacy JAX, current JAX as it is, current JAX after `fix` (issue 37).

    python scripts/real_suites.py PROJECT MIRROR [--work DIR] [--jobs N] [--only PATTERN ...]
    python scripts/real_suites.py dm-haiku /path/to/dm-haiku.git --markdown docs-part.md

PROJECT names an entry of ``PROJECTS`` (its commit, test files and pinned dependencies); MIRROR is
a git directory holding that commit (no work tree needed). The tree at the commit is extracted to
WORK/src and copied to WORK/fixed, where ``jaxmigrate fix --unsafe-fixes --no-cache --target-jax
latest`` runs (this checkout's jaxmigrate, with the Python running this script). Then the project's
tests run with pytest (``--junitxml``, native tracebacks, the tree on ``PYTHONPATH``, not installed)
in three virtual environments, cached under WORK/venvs by their requirements:

- legacy: the real JAX of ``LEGACY_JAX`` (the oldest PyPI serves) with the project's era pins, on WORK/src;
- current: the JAX this script runs with, with the dependencies' current releases, on WORK/src;
- fixed: the same environment as current, on WORK/fixed.

Per test: passed or not on each side, and for one that passes on the legacy side and not after
`fix`, the first error (its innermost frame in the project's own files, file:line, and the
exception's line), the jaxmigrate finding `check` still reports at that line if any, whether `fix`
changed that line, and a class:

  reported       the line has a finding `fix` did not fix
  wrong fix      `fix` changed the line
  dependency     the error is another library's (NumPy, an import of a package the environment lacks)
  internals      the line uses JAX internals (`jax._src`, `jax.core`, `jax.interpreters`, `jax.linear_util`)
  silent         none of these: a JAX change nothing reported

The classes are a first sort, made from the traceback; the report lists the evidence beside each.
A dependency no registry serves (``Project.stand_ins``: flaxformer, for vision_transformer) gets a
stand-in, written to WORK/stand-ins (outside the trees, which are not changed) and put on
``PYTHONPATH`` after the tree on every side: its modules import, and calling any name they hold
raises ``ModuleNotFoundError`` saying so. The tests that reach it fail on every side; the report
lists them apart, as dependency, and they are not compared.

WORK/report.json holds everything; the text report is a table and a list per class.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from compare_upstream import extract  # noqa: E402

from jaxmigrate.verify import legacy_env  # noqa: E402

LEGACY_JAX = "0.4.13"
PYTEST = ["pytest", "pytest-xdist", "pytest-timeout"]


@dataclass(frozen=True)
class Project:
    commit: str
    tests: Tuple[str, ...]  # globs of test files, relative to the tree
    legacy: Tuple[str, ...]  # pins of the project's era, beside legacy_env.requirements(LEGACY_JAX)
    current: Tuple[str, ...]  # the same dependencies, current releases
    pytest_args: Tuple[str, ...] = ()
    notes: str = ""
    paths: Tuple[str, ...] = ()  # the parts of the tree extracted (and so fixed and on PYTHONPATH); () is all of it
    env: Tuple[Tuple[str, str], ...] = ()  # environment variables the tests run with, on every side
    stand_ins: Tuple[str, ...] = ()  # modules of a dependency no registry serves (a stand-in each, see STAND_IN)


_JAX_TESTS = ("pjit", "pmap", "array", "multi_device", "mesh_utils", "random", "tree_util", "x64_context", "xmap")
_JAX_LEGACY = ("absl-py==1.4.0", "numpy<1.25", "scipy<1.11", "opt_einsum==3.3.0", "ml_dtypes==0.2.0", "cloudpickle==2.2.1")
_JAX_CURRENT = ("absl-py", "numpy", "scipy", "opt_einsum", "ml_dtypes", "cloudpickle")
_JAX_ENV = (("XLA_FLAGS", "--xla_force_host_platform_device_count=8"), ("JAX_NUM_GENERATED_CASES", "1"),
            ("JAX_SKIP_SLOW_TESTS", "1"))

PROJECTS: Dict[str, Project] = {
    # JAX's own tests of the legacy sharding APIs (and a few public ones beside them) at the tag
    # jax-v0.4.1 (December 2022). Only tests/ and the root conftest.py are extracted: the tree's
    # jax/ must not shadow the installed JAX on any side. The root pytest.ini is left out too: its
    # filterwarnings=error would fail on 0.4.13's deprecation warnings of 0.4.1's APIs. XLA_FLAGS
    # as the files' own setUpModule sets it (JAX's CI at the tag relied on that), once for the
    # process; JAX_NUM_GENERATED_CASES and JAX_SKIP_SLOW_TESTS as the CI's test job set them.
    # Most of these files import JAX internals of 0.4.1 (jax._src.util.prod, jax._src.lib.xla_bridge,
    # jax._src.device_array) or jax.experimental.global_device_array, all gone by 0.4.13: on the
    # legacy side only random, tree_util and x64_context import.
    "jax-v0.4.1": Project(
        commit="jax-v0.4.1",
        paths=("tests", "conftest.py"),
        tests=tuple(f"tests/{name}_test.py" for name in (*_JAX_TESTS, "global_device_array")),
        legacy=_JAX_LEGACY, current=_JAX_CURRENT, env=_JAX_ENV,
        notes="tests/ of the tag only (JAX's own source is not extracted); jtu is the installed JAX's own "
              "jax._src.test_util, different on each side; 7 of the 10 files fail to import on 0.4.13",
    ),
    # The same files at the legacy side's own tag (global_device_array_test.py was gone by then):
    # its jtu and internals are the ones the tests were written against, so the legacy side is
    # JAX's own CI's; the sharding APIs are still the legacy ones (jax.experimental.pjit, xmap, maps).
    "jax-v0.4.13": Project(
        commit="jax-v0.4.13",
        paths=("tests", "conftest.py"),
        tests=tuple(f"tests/{name}_test.py" for name in _JAX_TESTS),
        legacy=_JAX_LEGACY, current=_JAX_CURRENT, env=_JAX_ENV,
        notes="tests/ of the tag only, as jax-v0.4.1",
    ),
    # the last commit before March 2023; requirements.txt and requirements-test.txt of that commit
    # (tensorflow 2.9.1, for jax2tf_test.py alone, is left out: its one test file fails to import on
    # every side and is listed as such)
    "dm-haiku": Project(
        commit="0ff3249",
        tests=("haiku/_src/*_test.py", "haiku/_src/*/*_test.py", "examples/*_test.py", "examples/*/*_test.py"),
        legacy=("absl-py<1.5", "jmp==0.0.4", "tabulate==0.9.0", "chex==0.1.6", "cloudpickle==2.2.1", "dill==0.3.6",
                "mock==5.0.1", "dm-tree==0.1.8", "optax==0.1.4", "numpy<1.25", "scipy<1.11"),
        current=("absl-py", "jmp", "tabulate", "chex", "cloudpickle", "dill", "mock", "dm-tree", "optax"),
        notes="tensorflow is not installed: haiku/_src/integration/jax2tf_test.py needs it",
    ),
    # the last commit before March 2023; vit_jax/requirements.txt of that commit, pinned to releases
    # of early-to-mid 2023 that resolve with JAX 0.4.13 and Python 3.11. TensorFlow 2.12 (March 2023),
    # not 2.13: tensorflow-text 2.13.0 has no Python 3.11 wheel; `tensorflow`, not `tensorflow-cpu`:
    # tensorflow-text requires it. The pins below tensorflow-hub keep the resolver from the releases of
    # 2024-2026 (tf-keras 2.15, orbax-checkpoint 0.5, ml-dtypes 0.5, etils 1.15), which JAX 0.4.13
    # and TensorFlow 2.12 predate. flaxformer (LiT's BERT tower) is on no registry: a stand-in. tensorboard
    # on the current side: clu.metric_writers imports it, and TensorFlow 2.20 stopped requiring it.
    "vision_transformer": Project(
        commit="85c4f53",
        tests=("vit_jax/*_test.py",),
        legacy=("absl-py<1.5", "flax==0.6.10", "optax==0.1.5", "chex==0.1.7", "clu==0.0.9", "ml-collections==0.1.1",
                "einops==0.6.1", "tensorflow==2.12.1", "tensorflow-text==2.12.1", "tensorflow-datasets==4.9.2",
                "tensorflow-hub==0.13.0", "tensorflow-metadata==1.13.1", "orbax-checkpoint==0.2.3",
                "tensorstore==0.1.36", "ml-dtypes==0.2.0", "etils==1.3.0", "array-record==0.4.0", "numpy<1.25",
                "scipy<1.11", "pandas<2.1"),
        current=("absl-py", "flax", "optax", "chex", "clu", "ml-collections", "einops", "tensorflow", "tensorflow-text",
                 "tensorflow-datasets", "numpy", "scipy", "pandas", "tensorboard"),
        stand_ins=("flaxformer.architectures.bert.bert", "flaxformer.architectures.bert.configs"),
        notes="flaxformer is on no registry (requirements.txt installs it from GitHub): a stand-in that fails "
              "when LiT's BERT tower is built; train_test's tfds case downloads cifar10, which this machine cannot",
    ),
    # the last commit before March 2023; the core library's own tests (scenic/*/tests/test_*.py, not
    # scenic/projects/). setup.py of that commit pins nothing ("jax>=0.4.3", "flax>=0.4.0", optax from
    # GitHub's master, "tensorflow>=2.7", ...): these are releases of early-to-mid 2023 that resolve with
    # JAX 0.4.13 on Python 3.11, as vision_transformer's (TensorFlow 2.12.1 and the tfds pins below it for
    # the same reasons), with ott-jax 0.3.1 (the last with ott.tools.transport, which scenic's sinkhorn matcher
    # imports; 0.4.0 of February 2023 dropped it), shapely 2.0.1 (test_box_utils) and dill 0.3.6 (tfds.testing imports it;
    # test_classification_trainer's mock_data). Left out: train_lib/transfer's
    # test_fewshot_utils.py (compares with big_vision, which no registry serves) and train_lib_deprecated's
    # test_segmentation_trainer.py (flax.optim, gone from flax before 0.6.10, and sklearn).
    "scenic": Project(
        commit="abf121a",
        tests=("scenic/common_lib/tests/test_*.py", "scenic/dataset_lib/tests/test_*.py",
               "scenic/dataset_lib/*/tests/test_*.py", "scenic/model_lib/tests/test_*.py",
               "scenic/model_lib/*/tests/test_*.py", "scenic/train_lib/tests/test_*.py",
               "scenic/train_lib_deprecated/tests/test_lr_schedules.py"),
        legacy=("absl-py<1.5", "flax==0.6.10", "optax==0.1.5", "chex==0.1.7", "clu==0.0.9", "ml-collections==0.1.1",
                "immutabledict==2.2.3", "ott-jax==0.3.1", "shapely==2.0.1", "dm-tree==0.1.8", "pillow<10",
                "tensorflow==2.12.1", "tensorflow-datasets==4.9.2", "tensorflow-metadata==1.13.1",
                "orbax-checkpoint==0.2.3", "tensorstore==0.1.36", "ml-dtypes==0.2.0", "etils==1.3.0",
                "array-record==0.4.0", "dill==0.3.6", "numpy<1.25", "scipy<1.11", "pandas<2.1"),
        current=("absl-py", "flax", "optax", "chex", "clu", "ml-collections", "immutabledict", "ott-jax", "shapely",
                 "dm-tree", "pillow", "tensorflow", "tensorflow-datasets", "dill", "numpy", "scipy", "pandas",
                 "tensorboard"),
        notes="scenic's core tests only; test_fewshot_utils.py (big_vision) and train_lib_deprecated's "
              "test_segmentation_trainer.py (flax.optim) are left out",
    ),
}

STAND_IN_MARK = "a stand-in of scripts/real_suites.py"
STAND_IN = f'''"""{STAND_IN_MARK}: the package is not installable here; its names fail when used."""


class _Missing:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise ModuleNotFoundError(f"No module named {{self._name.split('.')[0]!r}} ({STAND_IN_MARK}: "
                                  f"{{self._name}} was called)")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(f"{{self._name}}.{{attr}}")


def __getattr__(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Missing(f"{{__name__}}.{{attr}}")
'''

CLASSES = ("reported", "wrong fix", "dependency", "internals", "silent")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.M)
_PYTEST_FRAME = re.compile(r"^(\S+\.py):(\d+): in ", re.M)  # a collection error's traceback (pytest's own format)
_INTERNALS = re.compile(r"\bjax\._src\b|\bjax\.core\b|\bjax\.interpreters\b|\bjax\.linear_util\b|\blu\.|\bjax_core\b|"
                        r"\bcore\.(?:Trace|MainTrace|find_top_trace|new_main|cur_sublevel|Sublevel)")
_DEPENDENCY = re.compile(r"numpy|No module named|ModuleNotFoundError|tensorflow|keras|"
                         r"cannot import name '\w+' from '(?!jax)")  # an ImportError of another package's name


# -- environments ---------------------------------------------------------------------------------

def venv(work: Path, requirements: Sequence[str], python: str) -> str:
    """The python of a virtual environment holding ``requirements``, made once under WORK/venvs."""
    key = hashlib.sha256("\n".join([python, *requirements]).encode()).hexdigest()[:12]
    folder = work / "venvs" / key
    marker = folder / ".installed"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(folder)], check=True)
        print(f"[real_suites] installing into {folder}: {' '.join(requirements)}", file=sys.stderr, flush=True)
        subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        *requirements], check=True)
        marker.write_text("\n".join(requirements) + "\n")
    return str(folder / "bin" / "python")


def legacy_python() -> str:
    """A Python old enough for JAX ``LEGACY_JAX`` (3.11 or older)."""
    base = next(iter(legacy_env._base_pythons()), None)
    if base is None:
        raise SystemExit(f"no Python 3.9-3.11 for JAX {LEGACY_JAX}")
    return base


def current_requirements(project: Project) -> List[str]:
    import jax
    import jaxlib

    return [f"jax=={jax.__version__}", f"jaxlib=={jaxlib.__version__}", *project.current, *PYTEST]


def write_stand_ins(folder: Path, modules: Sequence[str]) -> None:
    """A stand-in module for each of ``modules``, and its parent packages, under ``folder``."""
    shutil.rmtree(folder, ignore_errors=True)
    for module in modules:
        parts = module.split(".")
        for depth in range(1, len(parts)):
            init = folder.joinpath(*parts[:depth], "__init__.py")
            if not init.exists():
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{STAND_IN_MARK}: a package of stand-ins."""\n')  # no __getattr__: its
                # submodules are imported, not stood in for by an attribute
        folder.joinpath(*parts[:-1], parts[-1] + ".py").write_text(STAND_IN)


# -- running --------------------------------------------------------------------------------------

def test_files(tree: Path, project: Project, only: Sequence[str]) -> List[str]:
    found = sorted({str(p.relative_to(tree)) for glob in project.tests for p in tree.glob(glob)})
    return [f for f in found if not only or any(o in f for o in only)]


def run_tests(python: str, tree: Path, files: Sequence[str], junit: Path, jobs: int, project: Project,
              stand_ins: Optional[Path] = None) -> dict:
    """Run pytest on ``files`` of ``tree``; each test's outcome and, when it fails, its report text."""
    path = os.pathsep.join([str(tree), *([str(stand_ins)] if stand_ins else [])])
    env = dict(os.environ, PYTHONPATH=path, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1", **dict(project.env))
    env.pop("PYTHONHOME", None)
    args = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=native", "-o", "junit_family=xunit1",
            f"--junitxml={junit}", "--timeout=600", "--continue-on-collection-errors", "-rN",
            *(["-n", str(jobs)] if jobs > 1 else []), *project.pytest_args, *files]
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True)
    (junit.with_suffix(".log")).write_text(done.stdout + done.stderr)
    return parse_junit(junit, tree)


def parse_junit(junit: Path, tree: Path) -> dict:
    """test id -> {"passed": bool, "skipped": bool, "text": failure text}; a file that failed to
    import (pytest's collection error) is one entry, ``FILE::<import>``."""
    out: Dict[str, dict] = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        classname = case.get("classname", "")
        test = f"{file}::{classname.rsplit('.', 1)[-1]}::{case.get('name')}" if classname else f"{file}::<import>"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped") is not None
        out[test] = {"passed": bad is None and not skipped, "skipped": skipped,
                     "text": ((bad.get("message") or "") + "\n" + (bad.text or "")) if bad is not None else ""}
    return out


def expand_import_errors(sides: Dict[str, dict]) -> None:
    """A test of a file that failed to import on a side, and so never ran there, counts as failed
    there with that error (the ids come from the sides where the file imported)."""
    every = {t for results in sides.values() for t in results if not t.endswith("::<import>")}
    for results in sides.values():
        broken = {t[:-len("::<import>")]: r for t, r in results.items() if t.endswith("::<import>")}
        for test in every:
            file = test.split("::", 1)[0]
            if test not in results and file in broken:
                results[test] = dict(broken[file], passed=False, skipped=False)


# -- reading a failure ----------------------------------------------------------------------------

def first_error(text: str, tree: Path) -> dict:
    """The innermost frame in the project's files, the innermost frame at all, and the exception line."""
    root = str(tree.resolve()) + os.sep
    frames = [(path, int(line)) for path, line in _FRAME.findall(text)]
    if not frames:  # pytest's frames are relative to the tree
        frames = [(path if os.path.isabs(path) else root + path, int(line)) for path, line in _PYTEST_FRAME.findall(text)]
    own = [(p, n) for p, n in frames if os.path.abspath(p).startswith(root) and "site-packages" not in p]
    lines = [re.sub(r"^E\s+", "", line.strip()) for line in text.strip().splitlines() if line.strip()]
    exception = next((line.strip() for line in reversed(lines) if re.match(r"^[\w.]+(Error|Exception|Warning|Exit)\b",
                                                                           line.strip())), lines[-1].strip() if lines else "")
    where = None
    if own:
        path, line = own[-1]
        where = (os.path.relpath(os.path.abspath(path), tree), line)
    return {"where": where, "innermost": frames[-1] if frames else None, "exception": exception[:300]}


def changed_lines(src: Path, fixed: Path, file: str) -> set:
    """The lines of ``fixed/file`` that `fix` wrote (1-based)."""
    try:
        before = (src / file).read_text().splitlines()
        after = (fixed / file).read_text().splitlines()
    except OSError:
        return set()
    out: set = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            out.update(range(j1 + 1, max(j2, j1 + 1) + 1))
    return out


def classify(error: dict, fixed: Path, src: Path, findings: Dict[Tuple[str, int], List[str]]) -> Tuple[str, str]:
    """The class of a failure after `fix`, and the finding at its line if any."""
    where = error["where"]
    text = ""
    if where is not None:
        try:
            text = (fixed / where[0]).read_text().splitlines()[where[1] - 1]
        except (OSError, IndexError):
            text = ""
    finding = "; ".join(findings.get(tuple(where), [])) if where else ""
    innermost = (error["innermost"] or ("", 0))[0]
    if finding:
        return "reported", finding
    if where is not None and where[1] in changed_lines(src, fixed, where[0]):
        return "wrong fix", finding
    if _DEPENDENCY.search(error["exception"]) or ("site-packages" in innermost and not re.search(r"/(jax|jaxlib)/", innermost)):
        return "dependency", finding
    if _INTERNALS.search(text):
        return "internals", finding
    return "silent", finding


def remaining_findings(fixed: Path) -> Dict[Tuple[str, int], List[str]]:
    """(file, line) -> the findings `check` still reports on the fixed tree."""
    done = subprocess.run([sys.executable, "-m", "jaxmigrate", "check", "--no-cache", "--target-jax", "latest",
                           "--format", "json", "."], cwd=fixed, capture_output=True, text=True)
    out: Dict[Tuple[str, int], List[str]] = {}
    try:
        data = json.loads(done.stdout)
    except ValueError:
        print(f"[real_suites] check gave no JSON: {done.stderr[-500:]}", file=sys.stderr)
        return out
    for f in data if isinstance(data, list) else data.get("findings", []):
        path = f.get("filename") or f.get("path") or ""
        line = (f.get("location") or {}).get("row") or f.get("line")
        out.setdefault((os.path.relpath(path, fixed) if os.path.isabs(path) else path, int(line or 0)), []).append(
            f"{f.get('code')} {f.get('message', '')[:160]}")
    return out


# -- the report -----------------------------------------------------------------------------------

@dataclass
class Report:
    project: str
    commit: str
    sides: Dict[str, dict] = field(default_factory=dict)
    failures: List[dict] = field(default_factory=list)
    stood_in: List[str] = field(default_factory=list)  # tests failing on the legacy side at a stand-in

    def counts(self) -> Dict[str, Tuple[int, int]]:
        tests = {side: {t: r for t, r in results.items() if not t.endswith("::<import>")}
                 for side, results in self.sides.items()}
        return {side: (sum(r["passed"] for r in results.values()), len(results)) for side, results in tests.items()}

    def text(self) -> str:
        rows = [f"## {self.project} at {self.commit}", "", "| side | passed | tests |", "|---|---:|---:|"]
        for side, (passed, total) in self.counts().items():
            rows.append(f"| {side} | {passed} | {total} |")
        legacy, fixed = self.sides.get("legacy", {}), self.sides.get("fixed", {})
        current = self.sides.get("current", {})
        gained = sum(1 for t, r in fixed.items() if r["passed"] and not current.get(t, {}).get("passed"))
        rows += ["", f"After `fix`, {gained} tests pass that fail on current JAX unmigrated; "
                     f"{len(self.failures)} that pass on JAX {LEGACY_JAX} fail after `fix`.", ""]
        if self.stood_in:
            rows += [f"### dependency, on every side: a package no registry serves, stood in ({len(self.stood_in)})", "",
                     *[f"- `{t}`" for t in sorted(self.stood_in)], ""]
        for name in CLASSES:
            these = [f for f in self.failures if f["class"] == name]
            if not these:
                continue
            rows.append(f"### {name} ({len(these)})")
            rows.append("")
            for f in sorted(these, key=lambda f: (str(f["where"]), f["test"]))[:60]:
                where = f"{f['where'][0]}:{f['where'][1]}" if f["where"] else "-"
                rows.append(f"- `{f['test']}`: {where}: {f['exception']}" + (f" [{f['finding']}]" if f["finding"] else ""))
            if len(these) > 60:
                rows.append(f"- ... and {len(these) - 60} more (report.json)")
            rows.append("")
        del legacy
        return "\n".join(rows)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("project", choices=sorted(PROJECTS))
    parser.add_argument("mirror", help="a git directory holding the project's commit")
    parser.add_argument("--work", type=Path, default=None, help="default: $JAXMIGRATE_CACHE_DIR/real-suites/PROJECT")
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers per side")
    parser.add_argument("--only", nargs="*", default=(), help="test files whose path holds one of these")
    parser.add_argument("--sides", nargs="*", default=("legacy", "current", "fixed"),
                        help="the sides to run; the others are read from an earlier run's WORK/SIDE.xml")
    parser.add_argument("--markdown", type=Path, help="also write the text report here")
    args = parser.parse_args(argv)
    project = PROJECTS[args.project]
    work = (args.work or legacy_env.cache_root() / "real-suites" / args.project).resolve()
    src, fixed = work / "src", work / "fixed"
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(fixed, ignore_errors=True)
    src.mkdir(parents=True)
    missing = extract(args.mirror, project.commit, src, project.paths)
    if missing:
        print(f"[real_suites] {len(missing)} blobs missing from the mirror: {missing[:5]}", file=sys.stderr)
    shutil.copytree(src, fixed)
    fixing = subprocess.run([sys.executable, "-m", "jaxmigrate", "fix", "--unsafe-fixes", "--no-cache", "--target-jax",
                             "latest", "."], cwd=fixed, capture_output=True, text=True)
    (work / "fix.log").write_text(fixing.stdout + fixing.stderr)
    print(f"[real_suites] fix: exit {fixing.returncode}; {(fixing.stdout.strip().splitlines() or [''])[-1]}", file=sys.stderr)
    files = test_files(src, project, args.only)
    stand_ins = work / "stand-ins" if project.stand_ins else None
    if stand_ins:
        write_stand_ins(stand_ins, project.stand_ins)
    pythons = {"legacy": lambda: venv(work, [*legacy_env.requirements(LEGACY_JAX), *project.legacy, *PYTEST], legacy_python()),
               "current": lambda: venv(work, current_requirements(project), sys.executable)}
    report = Report(args.project, project.commit)
    for side in ("legacy", "current", "fixed"):
        tree = fixed if side == "fixed" else src
        if side not in args.sides:  # an earlier run's results, when there are some
            report.sides[side] = parse_junit(work / f"{side}.xml", tree)
            continue
        python = pythons["legacy" if side == "legacy" else "current"]()
        print(f"[real_suites] {side}: {len(files)} test files", file=sys.stderr, flush=True)
        report.sides[side] = run_tests(python, tree, files, work / f"{side}.xml", args.jobs, project, stand_ins)
    expand_import_errors(report.sides)
    findings = remaining_findings(fixed)
    legacy = report.sides.get("legacy", {})
    report.stood_in = [t for t, r in legacy.items() if not r["passed"] and STAND_IN_MARK in r["text"]]
    for test, result in sorted(report.sides.get("fixed", {}).items()):
        if result["passed"] or not legacy.get(test, {}).get("passed"):
            continue
        error = first_error(result["text"], fixed)
        name, finding = classify(error, fixed, src, findings)
        report.failures.append({"test": test, "class": name, "finding": finding, **error})
    (work / "report.json").write_text(json.dumps({"project": args.project, "commit": project.commit,
                                                  "counts": report.counts(), "failures": report.failures,
                                                  "stood_in": report.stood_in,
                                                  "notes": project.notes}, indent=1, default=str) + "\n")
    text = report.text()
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
