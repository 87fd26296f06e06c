"""The Python API: check and fix paths or source text; findings and edits come back as data.

    from jaxmigrate import api

    for f in api.check(["src/"]):                 # what `jaxmigrate check --format json src/` lists
        print(f.path, f.line, f.code, f.message, f.fix_safety, f.suggestion)
    fixed = api.fix_source(text, "train.py")      # the fixed text, its edits, the findings left

Each file gets the settings `check` gives it: its nearest pyproject.toml's [tool.jaxmigrate] (or
``Options.config``), ``Options`` over them, ``target_jax="auto"`` resolved as `--target-jax auto`
is, and the facts that span modules (a pjit whose mesh another module makes) read from the file's
project on disk, through the result cache, as the command line does. Positions are 1-based lines
and columns in characters; an end column is exclusive. Nothing here prints or exits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from jaxmigrate.core.findings import Finding as _Finding, Fix
from jaxmigrate.engine.options import OptionError

__all__ = ["Options", "Finding", "TextEdit", "Fixed", "Workspace", "OptionError", "check", "check_source",
           "fix_source", "edits", "ERROR_CODE"]

ERROR_CODE = "JM000"  # a file that could not be read, parsed or processed


@dataclass(frozen=True)
class Options:
    """The command line's options that change findings. ``target_jax``: a version, ``latest`` or
    ``auto`` (None: the configuration's, else latest; the command line reads $JAXMIGRATE_TARGET_JAX
    for it). ``config``: one settings file for every file, as ``--config``."""

    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    target_jax: Optional[str] = None
    unsafe_fixes: bool = False
    config: Optional[str] = None
    cache: bool = True  # read and write the result cache (.jaxmigrate_cache/), as without --no-cache
    jobs: Optional[int] = None  # worker processes for the cross-module plan (None: the CPU count)


@dataclass(frozen=True)
class Finding:
    """One finding (or a JM000 error), with the fields of `check --format json`; ``fix``: the
    engine's fix, which ``fix_source(only=...)`` applies (None: reported only)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    message: str
    fixable: bool = False
    fix_safety: Optional[str] = None
    suggestion: Optional[str] = None
    fix: Optional[Fix] = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        """The finding as `check --format json` prints it."""
        return dict(path=self.path, line=self.line, column=self.column, end_line=self.end_line,
                    end_column=self.end_column, code=self.code, message=self.message, fixable=self.fixable,
                    fix_safety=self.fix_safety, suggestion=self.suggestion)


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (line, column) to (end_line, end_column) with ``text``."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclass(frozen=True)
class Fixed:
    """What fixing a text gives: the new text (the old one when nothing applies), the edits from
    the old text to it, and the findings left in it."""

    text: str
    edits: Tuple[TextEdit, ...]
    findings: Tuple[Finding, ...]
    applied: int = 0


def _finding(path: str, f: _Finding) -> Finding:
    return Finding(path, f.line, f.column, f.end_line, f.end_column, f.code, f.message, f.fixable, f.fix_safety,
                   f.suggestion, f.fix)


def _display(path: Path) -> str:
    from jaxmigrate.engine.discovery import _display as display

    return display(path)


class Workspace:
    """Checks of files, again and again (an editor's): each folder's configuration looked up once,
    the cross-module plan of a file computed once until ``forget``."""

    def __init__(self, options: Options = Options()) -> None:
        from jaxmigrate.engine import config as config_file

        self.options = options
        try:
            self.configs = config_file.Configs(config_file.load_file(options.config) if options.config else None)
        except config_file.ConfigError as exc:
            raise OptionError(str(exc)) from exc
        self._planned: Dict[Tuple[str, bool], object] = {}

    def forget(self, path: Optional[str] = None) -> None:
        """Compute the plan (and configuration) of ``path``, or of every file, anew: after a save,
        or a change of a pyproject.toml."""
        from jaxmigrate.engine import config as config_file

        if path is None:
            self._planned.clear()
            self.configs = config_file.Configs(self.configs.explicit)
        else:
            key = str(Path(path).resolve())
            for fix in (False, True):
                self._planned.pop((key, fix), None)

    def settings(self, path: str, *, fix: bool = False):
        """The engine's settings for the file at ``path``, its project's facts in (``runner.plan``)."""
        from jaxmigrate.engine import config as config_file, options as run_options
        from jaxmigrate.engine.discovery import SourceFile
        from jaxmigrate.engine.runner import plan

        key = (str(Path(path).resolve()), fix)
        if key not in self._planned:
            file = SourceFile(Path(path), _display(Path(path)))
            o = self.options
            try:
                settings = run_options.settings([file], self.configs, [path], o.select, o.ignore, o.target_jax, fix=fix,
                                                write=False, unsafe_fixes=o.unsafe_fixes)
            except config_file.ConfigError as exc:
                raise OptionError(str(exc)) from exc
            cache = run_options.cache_for(self.configs, [path]) if o.cache else None
            on_disk = [file] if os.path.isfile(path) else []
            if on_disk:
                settings = plan(on_disk, settings, o.jobs, cache, run_options.others_of(on_disk, [path], self.configs,
                                                                                       cache=cache))
            self._planned[key] = settings
        return self._planned[key]

    def check_source(self, text: str, path: str) -> List[Finding]:
        """The findings of ``text`` as the file at ``path`` (which need not exist): what `check`
        gives that file when it holds ``text``; a text that cannot be processed gives one JM000."""
        result = self._process(text, path, fix=False)
        return _records(result)

    def fix_source(self, text: str, path: str, only: Optional[Finding] = None) -> Fixed:
        """``text`` fixed as `fix` would fix the file at ``path`` (unsafe fixes with
        ``Options.unsafe_fixes`` or the configuration's), or with ``only`` one finding's fix (a
        finding of this ``text``, from ``check_source``)."""
        if only is not None:
            return self._fix_one(text, path, only)
        result = self._process(text, path, fix=True)
        if result.error or result.new_bytes is None:
            return Fixed(text, (), tuple(_records(result)))
        new = result.new_bytes.decode("utf-8")
        left = replace(result, findings=result.fixed_findings or [])
        return Fixed(new, edits(text, new), tuple(_records(left)), result.fixes_applied)

    def _fix_one(self, text: str, path: str, finding: Finding) -> Fixed:
        from jaxmigrate.engine.apply import FixError, apply_round

        if finding.fix is None:
            return Fixed(text, (), ())
        try:
            if path.endswith(".ipynb"):  # the fix is an edit of the module of its code cells
                from jaxmigrate.engine import notebook

                nb, module = notebook.load(text)
                fixed_module, applied = apply_round(module, [finding.fix])
                new = notebook.dump(nb, fixed_module)
            else:
                new, applied = apply_round(text, [finding.fix])
        except (FixError, SyntaxError, ValueError):
            return Fixed(text, (), ())
        return Fixed(new, edits(text, new), tuple(self.check_source(new, path)), applied)

    def _process(self, text: str, path: str, *, fix: bool):
        """The engine's result for ``text``, with no cyclic garbage collection meanwhile, as in
        the runner's workers (engine/runner.py: the trees die by reference counting, and the
        collections their allocations trigger cost a quarter of the time); any is done after."""
        import gc

        from jaxmigrate.engine.pipeline import process

        settings = self.settings(path, fix=fix)
        enabled = gc.isenabled()
        gc.disable()
        try:
            return process(Path(path), _display(Path(path)), settings, text.encode("utf-8", "surrogatepass"), stdin=True)
        finally:
            if enabled:
                gc.enable()


def _records(result) -> List[Finding]:
    if result.error:
        line, column = result.error_at
        return [Finding(result.path, line, column, line, column, ERROR_CODE, result.error)]
    return [_finding(result.path, f) for f in result.findings]


def edits(old: str, new: str) -> Tuple[TextEdit, ...]:
    """The edits that make ``new`` of ``old``: one replacement of what lies between their common
    start and end (none when equal)."""
    if old == new:
        return ()
    start = len(os.path.commonprefix([old, new]))
    limit = min(len(old), len(new)) - start
    end = 0
    while end < limit and old[-1 - end] == new[-1 - end]:
        end += 1
    (line, column), (end_line, end_column) = _position(old, start), _position(old, len(old) - end)
    return (TextEdit(line, column, end_line, end_column, new[start:len(new) - end]),)


def _position(text: str, offset: int) -> Tuple[int, int]:
    """The 1-based (line, column) of a character offset (lines end at a newline)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def check(paths: Sequence[str], options: Options = Options()) -> List[Finding]:
    """The findings of the files under ``paths`` (discovery and exclusions as `check`'s), each
    file's errors as JM000 findings, and a JM000 for each path that does not exist."""
    from jaxmigrate.engine import config as config_file, options as run_options
    from jaxmigrate.engine.discovery import discover
    from jaxmigrate.engine.runner import run

    paths = list(paths) or ["."]
    workspace = Workspace(options)
    try:
        files, missing = discover(paths, configs=workspace.configs)
        settings = run_options.settings(files, workspace.configs, paths, options.select, options.ignore,
                                        options.target_jax, fix=False, write=False, unsafe_fixes=False)
    except config_file.ConfigError as exc:
        raise OptionError(str(exc)) from exc
    cache = run_options.cache_for(workspace.configs, paths) if options.cache else None
    results = run(files, settings, options.jobs, cache=cache, others=run_options.others_of(files, paths, workspace.configs,
                                                                                                        cache=cache))
    found = [record for result in results for record in _records(result)]
    return found + [Finding(path, 1, 1, 1, 1, ERROR_CODE, "no such file or directory") for path in missing]


def check_source(text: str, path: str = "stdin.py", options: Options = Options()) -> List[Finding]:
    """The findings of ``text`` as the file at ``path``: `check --stdin-filename PATH -` and more
    (the facts of the file's project on disk are read, as for a file `check` is given)."""
    return Workspace(options).check_source(text, path)


def fix_source(text: str, path: str = "stdin.py", options: Options = Options(),
               only: Optional[Finding] = None) -> Fixed:
    """``text`` fixed as `fix` fixes the file at ``path`` (see ``Workspace.fix_source``)."""
    return Workspace(options).fix_source(text, path, only)
