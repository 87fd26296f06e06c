"""A run's ``Settings`` from its options (``--select``, ``--ignore``, ``--target-jax`` ...) and each
file's configuration: what the command line and the Python API (jaxmigrate/api.py) share, so both
give the same findings for the same file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from jaxmigrate.engine import config as config_file
from jaxmigrate.engine.pipeline import Settings

#: the oldest target: the first release with jax.Array, which every rule migrates towards
OLDEST_TARGET = (0, 4, 1)
_VERSION = r"\d+(\.\d+){0,2}"


class OptionError(ValueError):
    """A bad option or configured value; ``param_hint``: the option it is of (the command line's
    usage error names it), or None."""

    def __init__(self, message: str, param_hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.param_hint = param_hint


def split_codes(values: Sequence[str]) -> List[str]:
    """Comma-separated codes (or patterns), each option given once or more."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def parse_target(value: str, source: str = "") -> Optional[Tuple[int, ...]]:
    """A target JAX: None for the newest; an ``OptionError`` for one before 0.4.1 or after the
    newest release jaxmigrate knows (``source``: where the value comes from, for the message)."""
    if value.lower() == "latest":
        return None
    if not re.fullmatch(_VERSION, value):
        raise OptionError(f"{value!r} is not a JAX version like 0.4.14, 'latest' or 'auto'", "--target-jax")
    version = tuple(int(p) for p in value.split("."))
    where = f" ({source})" if source else ""
    if padded(value) < OLDEST_TARGET:
        raise OptionError(f"{value}{where} is older than 0.4.1, the oldest target: jaxmigrate migrates code to "
                          "jax.Array-era JAX (0.4.1 or newer); name a newer target", "--target-jax")
    newest = newest_known()
    if padded(value) > newest:
        known = ".".join(map(str, newest))
        raise OptionError(f"{value}{where} is newer than {known}, the newest JAX release jaxmigrate knows: name "
                          f"{known} or an older release, or `latest` (a newer jaxmigrate may know {value})",
                          "--target-jax")
    return version


def padded(version: str) -> Tuple[int, ...]:
    parts = tuple(int(p) for p in version.split("."))
    return parts + (0,) * (3 - len(parts))


def newest_known() -> Tuple[int, ...]:
    from jaxmigrate.catalog.api_history import newest_release

    return padded(newest_release())


def settings(files, configs: config_file.Configs, paths: Sequence[str], select: Sequence[str], ignore: Sequence[str],
             target_jax: Optional[str], *, fix: bool, write: bool, unsafe_fixes: bool,
             notice: Optional[Callable[[str], None]] = None) -> Settings:
    """The run's ``Settings``: one variant per configuration that the files come under.
    ``notice(text)`` is told where an `auto` target came from. Raises ``OptionError``."""
    from jaxmigrate.rules import select_rules, unknown_codes

    first = Path(paths[0]).resolve()
    wanted = [configs.for_folder(first if first.is_dir() else first.parent)]  # the first path's, even with no file
    for file in files:
        config = configs.for_file(file.path, file.real)
        if all(config is not seen for seen in wanted):
            wanted.append(config)
    variants = []
    for config in wanted:
        selected = split_codes(select) or list(config.select or [])
        ignored = split_codes(ignore) or list(config.ignore)
        per_file = config_file.per_file_ignores(config)
        bad = unknown_codes(selected + ignored + [c for _, codes in per_file for c in codes])
        if bad:
            where = f" (in {config.root / 'pyproject.toml'})" if config.root and not (select or ignore) else ""
            raise OptionError(f"unknown rule code or prefix: {', '.join(bad)}{where} (see `jaxmigrate rules`)")
        target_text, source = _target(config, target_jax, paths)
        given = f"target-jax in {config.root / 'pyproject.toml'}" if not target_jax and config.target_jax and config.root \
            else ""  # where a value that is not a target came from
        target = parse_target(target_text, source or given)
        if source and notice is not None:
            where = f" for {config.root}" if len(wanted) > 1 and config.root else ""
            notice(f"target JAX{where}: {target_text} ({source})")
        variant = Settings(tuple(r.code for r in select_rules(selected, ignored)), fix=fix, write=write,
                           unsafe_fixes=unsafe_fixes or config.unsafe_fixes, target=target,
                           per_file_ignores=per_file, config_root=str(config.root) if config.root else None)
        variants.append((str(config.root) if config.root and configs.explicit is None else "", variant))
    if len(variants) == 1:
        return variants[0][1]
    variants.sort(key=lambda v: (-len(v[0]), v[0]))  # the deepest folder first, "" last
    if variants[-1][0]:  # no file outside every configuration: the first path's settings are the rest's
        variants.append(("", variants[-1][1]))
    codes = tuple(dict.fromkeys(c for _, v in variants for c in v.rule_codes))
    return Settings(codes, fix=fix, write=write, variants=tuple(variants))


def _target(config: config_file.Config, target_jax: Optional[str], paths: Sequence[str]) -> Tuple[str, str]:
    """The target's text for a configuration and where an `auto` one came from ("" otherwise)."""
    target_text, source = target_jax or config.target_jax or "latest", ""
    if target_text.lower() == "auto":
        from jaxmigrate.engine.target import auto

        version, source = auto(config.root, Path(paths[0]))
        target_text = version or "latest"
        if version and re.fullmatch(_VERSION, version) and padded(version) > newest_known():
            known = ".".join(map(str, newest_known()))  # a project ahead of jaxmigrate's history: its newest
            target_text, source = "latest", f"{source}, newer than {known}, the newest JAX release jaxmigrate knows"
    return target_text, source


def others_of(files, paths: Sequence[str], configs: config_file.Configs, exclude: Optional[Sequence[str]] = None,
              extend_exclude: Sequence[str] = (), cache=None) -> Callable[[], list]:
    """The rest of the files' projects, asked for by the plans that span modules (engine/project.py);
    the walk is kept in ``cache`` while nothing it looked at changes (engine/listing.py)."""
    def others() -> list:
        from jaxmigrate.engine.listing import walk_files_cached
        from jaxmigrate.engine.project import project_folders

        folders = project_folders(files, paths)
        try:
            return walk_files_cached(folders, cache, configs=configs, exclude=exclude,
                                     extend_exclude=extend_exclude) if folders else []
        except config_file.ConfigError:  # another folder's configuration: the plan goes on without those files
            return []

    return others


def cache_for(configs: config_file.Configs, paths: Sequence[str]):
    """The run's result cache: in the first path's configured project root, else the working directory."""
    from jaxmigrate.engine.cache import Cache

    first = Path(paths[0]).resolve()
    return Cache(configs.for_folder(first if first.is_dir() else first.parent).root or Path.cwd())
