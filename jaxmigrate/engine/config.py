"""`[tool.jaxmigrate]` in each file's nearest `pyproject.toml` (or the `--config` file): defaults
that the command line overrides.

Keys: `select`, `ignore`, `per-file-ignores` (glob → codes), `exclude` (replaces the default
excluded folders), `extend-exclude` (adds to them), `target-jax`, `unsafe-fixes`. Patterns are
gitignore-style and relative to the folder of that `pyproject.toml`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KEYS = {"select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "target-jax", "unsafe-fixes"}


class ConfigError(Exception):
    pass


@dataclass
class Config:
    root: Optional[Path] = None  # the folder of the pyproject.toml it came from
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: Optional[List[str]] = None
    extend_exclude: List[str] = field(default_factory=list)
    target_jax: Optional[str] = None
    unsafe_fixes: bool = False


DEFAULT = Config()


def _table(pyproject: Path) -> Optional[dict]:
    """The [tool.jaxmigrate] table of a pyproject.toml, None if it has none."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: {exc}") from exc
    return data.get("tool", {}).get("jaxmigrate")


def find(paths: Sequence[str]) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.jaxmigrate] table, from the first path upwards."""
    start = Path(paths[0] if paths else ".").resolve()
    return Configs().nearest(start if start.is_dir() else start.parent)


def load(paths: Sequence[str]) -> Config:
    """The configuration of the first path (its nearest [tool.jaxmigrate]), or the defaults."""
    pyproject = find(paths)
    return Config() if pyproject is None else parse(pyproject, _table(pyproject) or {})


def load_file(path: str) -> Config:
    """``--config PATH``: a pyproject.toml's [tool.jaxmigrate], or a TOML file that is that table
    (a ``jaxmigrate.toml``). Patterns are relative to the file's folder."""
    pyproject = Path(path).resolve()
    if not pyproject.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    table = data.get("tool", {}).get("jaxmigrate") if "tool" in data else data
    if table is None:
        raise ConfigError(f"{path}: no [tool.jaxmigrate] table")
    return parse(pyproject, table)


class Configs:
    """Each file's settings, like ruff's: those of its nearest pyproject.toml with a
    [tool.jaxmigrate] table (looked up once per folder), or of ``--config`` for every file."""

    def __init__(self, explicit: Optional[Config] = None) -> None:
        self.explicit = explicit
        self._nearest: Dict[Path, Optional[Path]] = {}
        self._parsed: Dict[Path, Config] = {}
        self._by_folder: Dict[str, Config] = {}  # a real folder -> its configuration

    def nearest(self, folder: Path) -> Optional[Path]:
        """The pyproject.toml with a [tool.jaxmigrate] table nearest to ``folder`` (resolved), upwards."""
        if folder not in self._nearest:
            pyproject = folder / "pyproject.toml"
            if pyproject.is_file() and _table(pyproject) is not None:
                self._nearest[folder] = pyproject
            else:
                self._nearest[folder] = None if folder.parent == folder else self.nearest(folder.parent)
        return self._nearest[folder]

    def for_folder(self, folder: Path) -> Config:
        if self.explicit is not None:
            return self.explicit
        pyproject = self.nearest(folder)
        if pyproject is None:
            return DEFAULT
        if pyproject not in self._parsed:
            self._parsed[pyproject] = parse(pyproject, _table(pyproject) or {})
        return self._parsed[pyproject]

    def for_file(self, path: Path, real: str = "") -> Config:
        """The configuration of the file at ``path`` (``real``: its real path where known, as
        discovery finds it: each folder is then looked up once, with no system call per file)."""
        if not real:
            return self.for_folder(Path(path).resolve().parent)
        folder = os.path.dirname(real)
        config = self._by_folder.get(folder)
        if config is None:
            config = self._by_folder[folder] = self.for_folder(Path(folder))
        return config


def parse(pyproject: Path, table: dict) -> Config:
    """A [tool.jaxmigrate] table, checked: unknown keys and wrong types are errors."""
    unknown = set(table) - KEYS
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.jaxmigrate]: {', '.join(sorted(unknown))}")

    def codes(key: str) -> List[str]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{pyproject}: `{key}` must be a list of strings")
        return value

    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict) or not all(isinstance(v, list) for v in per_file.values()):
        raise ConfigError(f"{pyproject}: `per-file-ignores` must map patterns to lists of codes")
    return Config(
        root=pyproject.parent,
        select=codes("select") if "select" in table else None,
        ignore=codes("ignore"),
        per_file_ignores={k: list(v) for k, v in per_file.items()},
        exclude=codes("exclude") if "exclude" in table else None,
        extend_exclude=codes("extend-exclude"),
        target_jax=str(table["target-jax"]) if "target-jax" in table else None,
        unsafe_fixes=bool(table.get("unsafe-fixes", False)),
    )


def per_file_ignores(config: Config) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    return tuple((pattern, tuple(c.upper() for c in codes)) for pattern, codes in config.per_file_ignores.items())
