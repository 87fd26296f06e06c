"""`[tool.jaxmigrate]` in the nearest `pyproject.toml`: defaults that the command line overrides.

Keys: `select`, `ignore`, `per-file-ignores` (glob → codes), `exclude` (replaces the default
excluded folders), `extend-exclude` (adds to them), `target-jax`, `unsafe-fixes`. Patterns are
gitignore-style and relative to the folder of that `pyproject.toml`.
"""

from __future__ import annotations

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


def find(paths: Sequence[str]) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.jaxmigrate] table, from the first path upwards."""
    start = Path(paths[0] if paths else ".").resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in [folder, *folder.parents]:
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{pyproject}: {exc}") from exc
            if "jaxmigrate" in data.get("tool", {}):
                return pyproject
    return None


def load(paths: Sequence[str]) -> Config:
    pyproject = find(paths)
    if pyproject is None:
        return Config()
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["jaxmigrate"]
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
