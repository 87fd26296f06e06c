"""The before side on the real JAX of its era: a cached virtual environment per JAX version.

``verify --legacy-jax VERSION|auto|emulated`` (and ``fix --verify --legacy-jax ...``):

- ``emulated`` (the default): the before side runs on jaxmigrate's legacy runtime on the
  installed JAX (``jaxmigrate.verify.legacy``), as always.
- ``VERSION`` (``0.4.13`` or later: PyPI has no older jaxlib): the before side runs in a virtual
  environment holding ``jax==VERSION``, ``jaxlib==VERSION`` (and, below 0.4.26, ``numpy<2`` and
  ``scipy<1.12``) and pytest, with no emulation at all; the after side on the installed JAX.
- ``auto``: the project's declared JAX requirement (``jax==V`` or the lower bound of
  ``jax>=V``/``~=V`` in pyproject.toml, setup.py, setup.cfg or requirements*.txt) when it is
  installable and has every JAX name the before side uses; else the oldest installable release
  that has all of them (JAX's API history, ``jaxmigrate.catalog.api_history``); else the emulation
  (GDA, ``FROM_GDA`` and the GDA-mode pjit are in no installable JAX).

Multi-process runs need JAX 0.5.1 or later on the legacy side (gloo CPU collectives); below it the
emulation is used. When the environment cannot be made (no Python 3.11 or older, no registry, no
wheel), an explicit version is an error (``Unavailable``: the CLI exits 2); ``auto`` uses the
emulation. The verdict says which legacy side ran and why.

The environments live under ``$JAXMIGRATE_CACHE_DIR`` or ``$XDG_CACHE_HOME/jaxmigrate`` (default
``~/.cache/jaxmigrate``), in ``legacy-jax/<version>``, built once (about 20 s with a warm pip
cache; progress on stderr; in a folder beside it, renamed into place when complete, see
``_venv_build``) and reused. Build one ahead (CI)::

    python -m jaxmigrate.verify.legacy_env 0.4.13

``JAXMIGRATE_LEGACY_JAX_NO_BUILD=1`` uses existing environments only.
"""

from __future__ import annotations

import ast
import fcntl
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Set, Tuple

OLDEST = (0, 4, 13)  # the oldest jaxlib PyPI still serves
MULTI_PROCESS = (0, 5, 1)  # the first JAX whose CPU backend runs several processes (gloo)
NUMPY2 = (0, 4, 26)  # below: numpy<2, scipy<1.12 (measured with 0.4.13)
MAX_SCANNED = 2000  # files read for the names a suite uses
_MARKER = ".installed"


def parse(version: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def cache_root() -> Path:
    given = os.environ.get("JAXMIGRATE_CACHE_DIR")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jaxmigrate"


def venv_dir(version: str) -> Path:
    return cache_root() / "legacy-jax" / version


def requirements(version: str, jaxlib_exact: bool = True) -> List[str]:
    pins = ["numpy<2", "scipy<1.12"] if parse(version) < NUMPY2 else []
    # pytest for --pytest; rich for jax.debug.visualize_array_sharding, which the seeds call
    return [f"jax=={version}", f"jaxlib=={version}" if jaxlib_exact else f"jaxlib<={version}", *pins, "pytest",
            "rich"]


def _base_pythons() -> Iterable[str]:
    """Pythons a venv can be made from (3.11 or older: jax 0.4.13 has wheels for 3.8-3.11)."""
    if sys.version_info[:2] <= (3, 11):
        yield sys.executable
    root = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv")))
    for minor in ("3.11", "3.10", "3.9"):
        for candidate in sorted(root.glob(f"versions/{minor}.*"), reverse=True):
            if (candidate / "bin" / "python").exists():
                yield str(candidate / "bin" / "python")
    for name in ("python3.11", "python3.10"):
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            if folder and os.access(os.path.join(folder, name), os.X_OK):
                yield os.path.join(folder, name)


def _complete(venv: Path, version: str) -> bool:
    """Whether ``venv`` is a finished build holding today's requirements for ``version``."""
    try:
        return (venv / "bin" / "python").exists() and (venv / _MARKER).read_text() == _marker_text(version)
    except OSError:
        return False


def _marker_text(version: str) -> str:
    return "\n".join(requirements(version)) + "\n"


def ensure(version: str, build: bool = True) -> Tuple[Optional[str], str]:
    """The python of the venv for ``version`` (built if needed and allowed, see ``_venv_build``),
    and a note: what was done, or why there is none."""
    if parse(version) < OLDEST:
        return None, f"JAX {version} cannot be installed (PyPI has no jaxlib older than 0.4.13)"
    venv = venv_dir(version)
    python = venv / "bin" / "python"
    if _complete(venv, version):
        return str(python), f"cached in {venv}"
    if not build or os.environ.get("JAXMIGRATE_LEGACY_JAX_NO_BUILD"):
        return None, f"no environment for JAX {version} in {venv} (build it: python -m jaxmigrate.verify.legacy_env {version})"
    base = next(iter(_base_pythons()), None)
    if base is None:
        return None, f"no Python 3.9-3.11 to make an environment for JAX {version} with"
    venv.parent.mkdir(parents=True, exist_ok=True)
    from jaxmigrate.verify._reaper import busy
    from jaxmigrate.verify._venv_build import build as build_venv

    with busy(), open(venv.parent / f"{version}.lock", "w") as lock:  # busy: its pip is no verifier's orphan
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time (another process may be building it)
        if _complete(venv, version):
            return str(python), f"cached in {venv}"
        # some jax releases have no jaxlib of the same number: then another one <= it
        why = build_venv(base, venv, [requirements(version, True), requirements(version, False)],
                         what=f"JAX {version}", marker={_MARKER: _marker_text(version)})
    return (None, why) if why else (str(python), f"built in {venv}")


# -- auto -----------------------------------------------------------------------------------------

_REQUIREMENT = re.compile(r"""(?<![\w.-])jax(?:\[[\w,\s-]*\])?\s*(==|>=|~=)\s*(\d+\.\d+\.\d+)""")


def declared_version(project: Optional[str]) -> Optional[str]:
    """The JAX version a project declares (``jax==V``, else the lower bound of ``jax>=V``/``~=V``)."""
    if not project:
        return None
    found: List[Tuple[str, str]] = []
    names = ["pyproject.toml", "setup.py", "setup.cfg"] + sorted(p.name for p in Path(project).glob("requirements*.txt"))
    for name in names:
        path = Path(project) / name
        if path.is_file():
            found += _REQUIREMENT.findall(path.read_text(errors="replace"))
    for operator in ("==", ">=", "~="):
        for op, version in found:
            if op == operator:
                return version
    return None


def used_names(paths: Sequence[str]) -> Set[str]:
    """The JAX names the code uses: its imports of jax modules and names, and attribute chains
    on them (``jnp.product`` -> ``jax.numpy.product``)."""
    out: Set[str] = set()
    for path in paths:
        try:
            tree = ast.parse(Path(path).read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "jax":
                        out.add(alias.name)
                        aliases[alias.asname or "jax"] = alias.name if alias.asname else "jax"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "jax":
                out.add(str(node.module))
                for alias in node.names:
                    if alias.name != "*":
                        out.add(f"{node.module}.{alias.name}")
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts = [node.attr]
                inner = node.value
                while isinstance(inner, ast.Attribute):
                    parts.append(inner.attr)
                    inner = inner.value
                if isinstance(inner, ast.Name) and inner.id in aliases:
                    out.add(".".join([aliases[inner.id], *reversed(parts)]))
    return out


#: keywords and option names the API history (names only) does not know, and the release that removed them
_REMOVED_WORDS = {"in_axis_resources": (0, 4, 14), "out_axis_resources": (0, 4, 14), "jax_array": (0, 4, 14),
                  "axis_resources": (0, 4, 11),  # with_sharding_constraint(x, axis_resources=...) (and xmap)
                  "jax_parallel_functions_output_gda": (0, 4, 14)}


def removed_words(paths: Sequence[str]) -> Tuple[Optional[Tuple[int, ...]], List[str], bool]:
    """The first release that lacks a keyword or option the code uses (pjit's
    ``in_axis_resources``, ``"jax_array"``), those words, and whether the code turns jax.Array off
    (``update("jax_array", False)``: the GDA mode no installable JAX has)."""
    bound: Optional[Tuple[int, ...]] = None
    words: Set[str] = set()
    gda_mode = False
    for path in paths:
        try:
            tree = ast.parse(Path(path).read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            word = None
            if isinstance(node, ast.keyword) and node.arg in _REMOVED_WORDS:
                word = node.arg
            elif isinstance(node, ast.Constant) and node.value in _REMOVED_WORDS and isinstance(node.value, str):
                word = node.value
            elif (isinstance(node, ast.Call) and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value == "jax_array" and isinstance(node.args[1], ast.Constant)
                  and node.args[1].value is False):
                gda_mode = True
            if word:
                words.add(word)
                bound = min(bound or _REMOVED_WORDS[word], _REMOVED_WORDS[word])
    return bound, sorted(words), gda_mode


def _missing(names: Set[str], version: str) -> List[str]:
    from jaxmigrate.catalog import api_history

    return sorted(n for n in names if api_history.entry(n) is not None and not api_history.exists(n, parse(version)))


def _installed_jax() -> Tuple[int, ...]:
    from importlib.metadata import version

    try:
        return parse(".".join(version("jax").split(".")[:3]))
    except Exception:  # noqa: BLE001 - no installed JAX: every release is a candidate
        return (99,)


def auto_version(paths: Sequence[str], project: Optional[str], processes: int = 1) -> Tuple[Optional[str], str]:
    """The JAX release ``auto`` picks for code in ``paths`` (None: the emulation), and why."""
    from jaxmigrate.catalog import api_history

    names = used_names(paths)
    declared = declared_version(project)
    if processes > 1 and not (declared and parse(declared) >= MULTI_PROCESS):
        # several processes: the GDA era's host-local pjit contract, which the emulation keeps, is in no
        # installable JAX, and JAX runs several CPU processes only from 0.5.1: a declared 0.5.1+ only
        return None, "several processes: the real legacy side needs a project declaring jax 0.5.1 or later"
    bound, words, gda_mode = removed_words(paths)
    if gda_mode:
        return None, 'the code turns jax.Array off (update("jax_array", False)): no installable JAX has that mode'
    oldest = MULTI_PROCESS if processes > 1 else OLDEST
    candidates = [v for v in api_history.table(False).versions
                  if oldest <= parse(v) <= _installed_jax() and (bound is None or parse(v) < bound)]
    if declared and declared in candidates:
        missing = _missing(names, declared)
        if not missing:
            return declared, f"the project declares jax {declared}"
    for version in candidates:
        if not _missing(names, version):
            why = f"the oldest installable release with every JAX name the code uses ({len(names)} names)"
            return version, why + (f"; the declared jax {declared} lacks some" if declared else "")
    missing = _missing(names, candidates[0]) if candidates else []
    era = "JAX 0.5.1 (multi-process on CPU)" if processes > 1 else "JAX 0.4.13"
    why = f"no installable JAX ({era} or later) has every name the code uses"
    if words:
        why += f" and {', '.join(words)} (gone in {'.'.join(map(str, bound or ()))})"
    return None, why + (f"; missing: {', '.join(missing[:3])}" if missing else "")


@dataclass
class LegacySide:
    """Which JAX the before side runs on: ``python`` None means the emulation."""

    python: Optional[str]
    version: Optional[str]
    note: str

    @property
    def label(self) -> str:
        if self.python is None:
            return f"emulated (jaxmigrate's legacy runtime on the installed JAX): {self.note}"
        return f"real JAX {self.version} ({self.note})"

    def ran(self, runs) -> str:
        """The label, checked against the JAX version the before side's processes reported."""
        ran = next((r.result.get("jax_version") for r in runs if r.result), None)
        if self.python is not None and ran and ran != self.version:
            return f"real JAX {ran}, not {self.version} as asked ({self.note})"
        return self.label


class Unavailable(Exception):
    """``--legacy-jax VERSION`` asked for a JAX that cannot be had: an error, never the emulation."""


def choose(option: str, paths: Sequence[str], project: Optional[str], processes: int = 1) -> LegacySide:
    """The before side for ``--legacy-jax OPTION`` (``emulated``, ``auto`` or a version). An
    explicit version that cannot be had raises ``Unavailable``; ``auto`` falls back to the
    emulation and its note says so."""
    if option == "emulated":
        return LegacySide(None, None, "--legacy-jax emulated")
    if option == "auto":
        version, why = auto_version(paths, project, processes)
        if version is None:
            return LegacySide(None, None, why)
    else:
        version, why = option, "--legacy-jax " + option
        if processes > 1 and parse(version) < MULTI_PROCESS:
            raise Unavailable(f"--legacy-jax {version}: JAX {version} cannot run several processes on CPU "
                              "(0.5.1 or later can)")
    python, note = ensure(version)
    if python is None and option == "auto":
        return LegacySide(None, None, f"--legacy-jax auto chose JAX {version} ({why}), which cannot be had: {note}")
    if python is None:
        raise Unavailable(f"--legacy-jax {version}: {note}")
    return LegacySide(python, version, f"{why}; {note}")


def _version(text: str) -> str:
    if not re.fullmatch(r"\d+\.\d+\.\d+", text):
        import argparse

        raise argparse.ArgumentTypeError(f"not a JAX version (X.Y.Z): {text!r}")
    return text


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m jaxmigrate.verify.legacy_env VERSION...``: build (or find) each environment."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m jaxmigrate.verify.legacy_env",
        description="Build (or find) the cached virtual environment of each real JAX version that "
                    "`jaxmigrate verify --legacy-jax VERSION` runs the before side on.")
    parser.add_argument("versions", nargs="+", type=_version, metavar="VERSION", help="a JAX release, 0.4.13 or later")
    versions = parser.parse_args(argv).versions
    import signal

    from jaxmigrate.verify import _lifeline

    code = 0
    with _lifeline.ending_on_signals():  # stopped: pip's group killed, the unfinished venv removed
        try:
            for version in versions:
                python, note = ensure(version)
                print(f"JAX {version}: {python} ({note})" if python else f"JAX {version}: {note}")
                code = code or (python is None)
        except (KeyboardInterrupt, _lifeline.Ended) as stop:
            signum = getattr(stop, "signum", signal.SIGINT)
            print(f"Interrupted ({signal.Signals(signum).name}): nothing half-built is left", file=sys.stderr)
            return 128 + signum
    return code


if __name__ == "__main__":
    sys.exit(main())
