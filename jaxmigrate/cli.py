"""Command line: parse options, call the engine, print. Heavy imports happen inside commands."""

from __future__ import annotations

import os
import sys
from typing import Optional

import click

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
_exit_prepared = False


def common_options(func):
    options = [
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (comma-separated)."),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes (comma-separated)."),
        click.option("--target-jax", default=None, metavar="VERSION|latest|auto", envvar="JAXMIGRATE_TARGET_JAX",
                     help="The JAX version the code should run on; auto: the project's jax requirement (a range's "
                          "floor), else the installed jax [default: $JAXMIGRATE_TARGET_JAX, else target-jax in pyproject.toml, "
                          "else latest]."),
        click.option("--no-cache", is_flag=True,
                     help="Do not read or write the result cache (.jaxmigrate_cache/ in the project root)."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: CPU count]."),
        click.option("--format", "output_format", type=click.Choice(["text", "json", "github", "sarif"]), default="text",
                     show_default=True, help="github: workflow annotations; sarif: SARIF 2.1.0 for code scanning."),
        click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None,
                     help="Write the findings to this file instead of stdout."),
        click.option("--statistics", "show_statistics", is_flag=True, help="Print counts per rule instead of findings."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain (errors still exit 2)."),
        click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                     help="Settings for every file from this pyproject.toml ([tool.jaxmigrate]) or TOML file, "
                          "instead of each file's nearest pyproject.toml."),
        click.option("--exclude", "exclude", multiple=True, metavar="PATTERNS",
                     help="Skip these paths (comma-separated gitignore-style patterns, relative to the working "
                          "directory), instead of the configured and default ones."),
        click.option("--extend-exclude", "extend_exclude", multiple=True, metavar="PATTERNS",
                     help="Skip these paths too (comma-separated gitignore-style patterns, relative to the working "
                          "directory)."),
        click.option("-q", "--quiet", is_flag=True, help="Print the findings (or the diff) and nothing else."),
        click.option("--stdin-filename", default=None, metavar="PATH",
                     help="With `-` as the path: the name of the file read from stdin (for messages, settings and "
                          "per-file-ignores)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jaxmigrate")
def main() -> None:
    """Migrate and lint legacy pjit-era JAX code.

    `check` reports deprecated JAX APIs, `fix` rewrites what can be rewritten. Neither runs
    your code; `verify` does (see `jaxmigrate verify --help`).
    """


def _prepare_exit() -> None:
    """At exit, Python's last garbage collection goes through every object still alive, although
    they all go with the process (12 ms after checking 2,000 files): freezing them first, in an
    exit handler, leaves it nothing to go through. Objects are still freed as before."""
    global _exit_prepared
    if not _exit_prepared:
        import atexit
        import gc

        atexit.register(gc.freeze)
        _exit_prepared = True


def _run(paths, select, ignore, target_jax, jobs, *, fix: bool, write: bool, unsafe_fixes: bool, no_cache: bool,
         options: Optional[dict] = None):
    """Run the engine: each file with its nearest [tool.jaxmigrate]'s settings (or ``--config``'s),
    the command line's options over them."""
    _prepare_exit()
    from jaxmigrate.engine import config as config_file
    from jaxmigrate.engine.discovery import discover
    from jaxmigrate.engine.runner import Interrupted, run

    options = options or {}
    paths = list(paths) or ["."]
    try:
        configs = config_file.Configs(config_file.load_file(options["config"]) if options.get("config") else None)
        if options.get("stdin") is not None:
            return _run_stdin(options, configs, select, ignore, target_jax, fix=fix, unsafe_fixes=unsafe_fixes)
        files, missing = discover(paths, configs=configs, exclude=options.get("exclude"),
                                  extend_exclude=options.get("extend_exclude", ()))
        settings = _settings(files, configs, paths, select, ignore, target_jax, fix=fix, write=write,
                             unsafe_fixes=unsafe_fixes, quiet=options.get("quiet", False))
    except config_file.ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    for path in missing:
        click.echo(f"error: {path}: no such file or directory", err=True)
    from jaxmigrate.engine.options import cache_for, others_of
    from jaxmigrate.reporting.terminal import progress

    cache = None if no_cache else cache_for(configs, paths)
    others = others_of(files, paths, configs, options.get("exclude"), options.get("extend_exclude", ()), cache)
    with progress(0 if options.get("quiet") else len(files)) as update:
        try:
            return run(files, settings, jobs, progress=update, cache=cache, others=others), missing
        except Interrupted as stop:
            _interrupted(stop.results, write=fix and write)


def _run_stdin(options: dict, configs, select, ignore, target_jax, *, fix: bool, unsafe_fixes: bool):
    """`-`: the file read from stdin, named ``--stdin-filename`` (its settings are that path's);
    nothing is written."""
    from pathlib import Path

    from jaxmigrate.engine.discovery import SourceFile
    from jaxmigrate.engine.pipeline import process

    name = options.get("stdin_filename") or "-"
    path = Path(name if name != "-" else "stdin.py")
    source = SourceFile(path, name)
    settings = _settings([source], configs, [name if name != "-" else "."], select, ignore, target_jax, fix=fix,
                         write=False, unsafe_fixes=unsafe_fixes, quiet=options.get("quiet", False))
    return [process(path, name, settings, options["stdin"], stdin=True)], []


def _settings(files, configs, paths, select, ignore, target_jax, *, fix: bool, write: bool, unsafe_fixes: bool,
              quiet: bool):
    """The run's ``Settings`` (engine/options.py); a bad option or configured value is a usage error."""
    from jaxmigrate.engine import options

    try:
        return options.settings(files, configs, paths, select, ignore, target_jax, fix=fix, write=write,
                                unsafe_fixes=unsafe_fixes, notice=None if quiet else lambda text: click.echo(text, err=True))
    except options.OptionError as exc:
        if exc.param_hint:
            raise click.BadParameter(str(exc), param_hint=exc.param_hint) from exc
        raise click.UsageError(str(exc)) from exc


def _interrupted(results, *, write: bool) -> None:
    """Ctrl-C during a run: the files under way were finished (a write is atomic: a file is either
    fixed or as it was), no other was started. Say what was written; exit 130 as shells do."""
    processed = [r for r in results if r is not None]
    if write:
        written = sum(1 for r in processed if r.changed)
        untouched, unreached = len(results) - written, len(results) - len(processed)
        click.echo(f"Interrupted: {written} file{'s' * (written != 1)} written; the other {untouched} "
                   f"{'is' if untouched == 1 else 'are'} untouched ({unreached} not reached).", err=True)
    else:
        click.echo(f"Interrupted: {len(processed)} of {len(results)} files processed; nothing written.", err=True)
    sys.exit(EXIT_INTERRUPTED)


@main.command()
@common_options
def check(paths, select, ignore, target_jax, no_cache, jobs, output_format, output_file, show_statistics, exit_zero,
          **options):
    """Report deprecated JAX API uses. Exit 0: none, 1: findings, 2: errors."""
    from jaxmigrate.reporting import render

    results, missing = _run(paths, select, ignore, target_jax, jobs, fix=False, write=False, unsafe_fixes=False,
                            no_cache=no_cache, options=_options(paths, options))
    render.findings(results, output_format, mode="check", output_file=output_file, show_statistics=show_statistics,
                    missing=len(missing), quiet=options["quiet"])
    sys.exit(_exit_code(results, missing, exit_zero))


def _legacy_jax_option(ctx, param, value: str) -> str:
    """`--legacy-jax`: `emulated`, `auto` or a JAX version (X.Y.Z)."""
    import re

    if value in ("emulated", "auto") or re.fullmatch(r"\d+\.\d+\.\d+", value):
        return value
    raise click.BadParameter("give `emulated`, `auto` or a JAX version such as 0.4.13")


@main.command()
@common_options
@click.option("--diff", is_flag=True, help="Print a unified diff of the fixes and write nothing.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes marked unsafe.")
@click.option("--verify", "verify_fixes", is_flag=True,
              help="RUN each changed file before and after (see `jaxmigrate verify`) and write it only if equivalent.")
@click.option("--pytest", "verify_tests", type=click.Path(exists=True), default=None,
              help="With --verify: verify through the project's tests at this path (both trees, per-test values); "
                   "write every fixed file only if the suites are equivalent.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None,
              help="Write a markdown checklist of what is left for a person (counts, file:line, why, suggested code).")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied (or, with --diff, that would be), per file and rule.")
@click.option("--legacy-jax", "legacy_jax", default="emulated", show_default=True, callback=_legacy_jax_option,
              help="With --verify: the before side's JAX, as for `jaxmigrate verify`.")
def fix(paths, select, ignore, target_jax, no_cache, jobs, output_format, output_file, show_statistics, exit_zero, diff,
        unsafe_fixes, verify_fixes, verify_tests, report_file, show_fixes, legacy_jax, **options):
    """Rewrite deprecated JAX API uses in place. Exit 0: nothing left, 1: findings remain, 2: errors.

    With --diff nothing is written; the exit code is 1 when there is anything to change. With
    --verify a changed file is written only if it computes what the original did (this runs the
    files, and needs the `verify` extra); a divergent or undecidable one is left as it was and
    reported as an error.
    """
    from jaxmigrate.reporting import render

    if verify_fixes and diff:
        raise click.UsageError("--verify writes verified files; it cannot be combined with --diff")
    if verify_tests and not verify_fixes:
        raise click.UsageError("--pytest TESTS goes with --verify")
    if verify_fixes:
        _require_jax()
    options = _options(paths, options)
    if options.get("stdin") and verify_fixes:
        raise click.UsageError("--verify needs files on disk, not `-`")
    results, missing = _run(paths, select, ignore, target_jax, jobs, fix=True, write=not (diff or verify_fixes),
                            unsafe_fixes=unsafe_fixes, no_cache=no_cache, options=options)
    if options.get("stdin") and not diff:  # the fixed code to stdout, what is left to stderr (like ruff)
        result = results[0]
        out = result.new_bytes if result.new_bytes is not None else options["stdin"]
        click.echo(out.decode("utf-8"), nl=False)
        if result.fixed_findings is not None:
            result.findings = result.fixed_findings
        output_format = output_format if output_file else "text"
        render.findings(results, output_format, mode="fix", output_file=output_file, show_statistics=show_statistics,
                        missing=len(missing), quiet=options["quiet"], to_stderr=True)
        sys.exit(_exit_code(results, missing, exit_zero))
    if verify_fixes:
        _verify_and_write(results, verify_tests, legacy_jax)
    if diff:
        from jaxmigrate.reporting.terminal import diff as coloured

        for r in results:
            if r.diff:
                click.echo(coloured(r.diff), nl=False)
    if show_fixes and not options["quiet"]:
        click.echo(render.fixes_shown(results, diff), err=True)
    render.findings(results, output_format, mode="diff" if diff else "fix", output_file=output_file,
                    show_statistics=show_statistics, missing=len(missing), quiet=options["quiet"])
    if report_file:
        from jaxmigrate.reporting import review

        render.write_file(report_file, review.render(results, written=not diff))
    code = _exit_code(results, missing, exit_zero)
    if diff and code == EXIT_OK and not exit_zero and any(r.changed for r in results):
        code = EXIT_FINDINGS
    sys.exit(code)


def _options(paths, options: dict) -> dict:
    """The command line's file options, checked: patterns split at commas; `-` reads stdin."""
    from jaxmigrate.engine.options import split_codes

    out = dict(options)
    out["exclude"] = split_codes(options.get("exclude") or ()) or None
    out["extend_exclude"] = split_codes(options.get("extend_exclude") or ())
    if "-" in paths:
        if len(paths) != 1:
            raise click.UsageError("`-` (stdin) cannot be combined with other paths")
        out["stdin"] = sys.stdin.buffer.read()
    elif options.get("stdin_filename"):
        raise click.UsageError("--stdin-filename goes with `-` as the path")
    return out


def _verify_and_write(results, verify_tests, legacy_jax) -> None:
    """fix --verify: RUN each changed file before and after (or the tests), write what verifies. It
    says first that it runs code; Ctrl-C, SIGTERM or SIGHUP end every process it started, remove its
    temporary folders and exit 128 + the signal; nothing is written then (writes follow the verdicts)."""
    import signal

    from jaxmigrate.verify import _lifeline, gate, legacy_env

    changed = sum(1 for r in results if r.changed)
    if changed:
        what = f"the tests at {verify_tests}" if verify_tests else "each changed file"
        click.echo(f"jaxmigrate fix --verify runs the given code: {what}, before and after the fix of {changed} "
                   "file(s), in processes of their own", err=True)
    with _lifeline.ending_on_signals():
        try:
            if verify_tests:
                verdict = gate.verify_suite_and_write(results, verify_tests, legacy_jax=legacy_jax)
                if verdict is not None:
                    from jaxmigrate.verify import suite

                    click.echo(suite.render(verdict), err=True)
            else:
                for verdict, result in gate.verify_and_write(results, legacy_jax=legacy_jax):
                    if verdict.status == "streams_differ":
                        click.echo(gate.streams_notice(result.path), err=True)
        except legacy_env.Unavailable as exc:
            _legacy_unavailable(exc)
        except (KeyboardInterrupt, _lifeline.Ended) as stop:
            signum = getattr(stop, "signum", signal.SIGINT)
            click.echo(f"Interrupted ({signal.Signals(signum).name}): fix --verify stopped; its processes are ended "
                       "and its temporary folders removed; no file was written (files are written once all are verified).",
                       err=True)
            sys.exit(128 + signum)


def _legacy_unavailable(exc: Exception) -> None:
    """An explicit ``--legacy-jax VERSION`` that cannot be had: exit 2, nothing verified or written."""
    click.echo(f"error: {exc}. The before side would not run on the JAX asked for, so nothing was verified "
               "(--legacy-jax auto or emulated runs the emulation instead)", err=True)
    sys.exit(2)


def _verify_suites(args, devices, processes, timeout, output_format, legacy_jax="emulated", verbose=False):
    import json

    from jaxmigrate.verify import suite

    folders, pytest_args = list(args[:2]), list(args[2:])
    if len(folders) != 2 or not all(os.path.isdir(f) for f in folders):
        raise click.UsageError("--pytest takes BEFORE_DIR AFTER_DIR [-- PYTEST_ARGS]")
    verdict = suite.verify_suites(folders[0], folders[1], pytest_args, devices=devices, processes=processes,
                                  timeout=suite.DEFAULT_TIMEOUT if timeout is None else timeout, legacy_jax=legacy_jax)
    if output_format == "json":
        click.echo(json.dumps(verdict.to_dict(), indent=2))
    else:
        click.echo(suite.render(verdict, verbose=verbose))
    sys.exit(verdict.exit_code)


def _require_jax() -> None:
    import importlib.util

    if importlib.util.find_spec("jax") is None or importlib.util.find_spec("numpy") is None:
        click.echo('error: verifying runs JAX, which is not installed: pip install "jaxmigrate[verify]"', err=True)
        sys.exit(EXIT_ERROR)


def _exit_code(results, missing, exit_zero: bool = False) -> int:
    if missing or any(r.error for r in results):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(r.findings for r in results) and not exit_zero else EXIT_OK


@main.command("rules")
def list_rules():
    """List every rule: code, name, fix safety, summary."""
    from jaxmigrate.rules import ALL_RULES

    for rule in ALL_RULES:
        click.echo(f"{rule.code}  {rule.name:<38} {rule.fix_safety or 'report':<7} {rule.summary}")


@main.command()
@click.argument("code")
def explain(code):
    """Print the documentation of one rule."""
    from jaxmigrate.reporting.ruledoc import render_rule
    from jaxmigrate.rules import BY_CODE

    rule = BY_CODE.get(code.upper())
    if rule is None:
        raise click.UsageError(f"unknown rule {code!r} (see `jaxmigrate rules`)")
    click.echo(render_rule(rule))


@main.command("server")
def language_server():
    """Run the language server (LSP over stdio) for editors: diagnostics, quick fixes, hover.

    Needs the `server` extra (pip install "jaxmigrate[server]"); docs/editors.md says how each
    editor starts it."""
    try:
        from jaxmigrate import server
    except ImportError as exc:
        click.echo(f'error: the language server needs pygls ({exc}): pip install "jaxmigrate[server]"', err=True)
        sys.exit(EXIT_ERROR)
    server.main()


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--devices", type=click.IntRange(min=1), default=8, show_default=True, help="CPU devices in total.")
@click.option("--processes", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes per side; the devices are split evenly over them.")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds before both sides are killed (undecidable). Default: 60 for scripts, 600 with --pytest "
                   "(the whole suite).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--pytest", "suites", is_flag=True,
              help="BEFORE_DIR AFTER_DIR [-- PYTEST_ARGS]: run both test suites and compare outcomes per test id.")
@click.option("--legacy-jax", "legacy_jax", default="emulated", show_default=True, callback=_legacy_jax_option,
              help="The before side's JAX: `emulated` (jaxmigrate's legacy runtime on the installed JAX), a version "
                   "(0.4.13 or later: the real one, in a cached venv) or `auto` (the project's declared one, else the "
                   "oldest with every JAX name the code uses, else emulated).")
@click.option("-v", "--verbose", is_flag=True,
              help="Also show the program's own output (stdout and stderr) of each side and process.")
def verify(files, devices, processes, timeout, output_format, suites, legacy_jax, verbose):
    """RUN legacy code and its migration side by side and compare what they compute.

    `verify BEFORE.py AFTER.py` runs BEFORE on jaxmigrate's legacy JAX runtime (the removed
    pjit-era APIs with their GDA-era semantics) and AFTER on the installed JAX, both on CPU
    devices in fresh processes, and compares every compiled call's value, the module globals at
    exit and any uncaught exception. `verify FILE.py` migrates FILE in memory with every rule
    (unsafe fixes included) and compares it with that.

    `verify --pytest BEFORE_DIR AFTER_DIR [-- PYTEST_ARGS]` runs a project's pytest suite in
    each folder (BEFORE's with the legacy runtime installed; in every one of --processes
    processes) and compares per test id the outcome and every compiled call's value.

    This command EXECUTES the given files. Exit 0: equivalent, 1: divergent, 2: undecidable (a
    side could not run, BEFORE raised under the legacy runtime, or a time-out), 3: layout_differs
    (values, outputs and files agree, array layouts do not; BEFORE AFTER pairs), 4: streams_differ
    (values agree once the AFTER side draws random numbers as JAX 0.4.x did); 128 + the signal
    when stopped before a verdict (130: Ctrl-C, 143: SIGTERM), with no process of it left.
    """
    _require_jax()
    if devices % processes:
        raise click.BadParameter(f"{devices} devices cannot be split evenly over {processes} processes",
                                 param_hint="--devices/--processes")
    if suites and not (len(files) >= 2 and all(os.path.isdir(f) for f in files[:2])):
        raise click.UsageError("--pytest takes BEFORE_DIR AFTER_DIR [-- PYTEST_ARGS]")
    if not suites and len(files) > 2:
        raise click.UsageError("give BEFORE.py AFTER.py, or one FILE.py")
    for name in files if not suites else ():
        if not os.path.isfile(name):
            raise click.BadParameter(f"{name!r} is not a file", param_hint="FILES")
    import signal

    from jaxmigrate.verify import _lifeline, legacy_env, report

    notice = report.running_notice(files[0], files[1] if len(files) > 1 else files[0], legacy_jax, suites=suites,
                                   migrated=len(files) == 1)
    click.echo(notice, err=True)  # before anything runs
    with _lifeline.ending_on_signals():
        try:
            if suites:
                return _verify_suites(files, devices, processes, timeout, output_format, legacy_jax, verbose)
            _verify_scripts(files, devices, processes, timeout, output_format, legacy_jax, verbose)
        except legacy_env.Unavailable as exc:
            _legacy_unavailable(exc)
        except (KeyboardInterrupt, _lifeline.Ended) as stop:  # Ctrl-C, SIGTERM, SIGHUP: all cleaned up by now
            signum = getattr(stop, "signum", signal.SIGINT)
            click.echo(f"Interrupted ({signal.Signals(signum).name}): verify stopped before a verdict; its "
                       "processes are ended and its temporary folders removed.", err=True)
            sys.exit(128 + signum)


def _verify_scripts(files, devices, processes, timeout, output_format, legacy_jax, verbose=False) -> None:
    from jaxmigrate.verify import report, runner

    options = dict(devices=devices, processes=processes, timeout=60.0 if timeout is None else timeout,
                   legacy_jax=legacy_jax)
    if len(files) == 2:
        verdict = runner.verify_files(files[0], files[1], **options)
    else:
        verdict = runner.verify_migration(files[0], **options)
    text = report.render_json(verdict) if output_format == "json" else report.render_text(verdict, verbose=verbose)
    if output_format != "json" and len(files) == 2:
        text += _left_in(files[1])
    click.echo(text)
    sys.exit(verdict.exit_code)


def _left_in(after: str) -> str:
    """A line for the verdict when the AFTER file still holds findings (a migration that stopped
    at safe fixes, say, with JM504's host-local inputs left): what a divergence may come from."""
    from collections import Counter

    from jaxmigrate.engine.pipeline import Settings, transform
    from jaxmigrate.rules import ALL_RULES

    try:
        with open(after, "rb") as handle:
            findings = transform(handle.read(), after, Settings(tuple(r.code for r in ALL_RULES))).findings
    except (OSError, SyntaxError, ValueError):
        return ""
    if not findings:
        return ""
    codes = ", ".join(f"{code} x{n}" for code, n in sorted(Counter(f.code for f in findings).items()))
    unsafe = sum(1 for f in findings if f.fix_safety == "unsafe")
    hint = f"; {unsafe} of them fixable with `jaxmigrate fix --unsafe-fixes`" if unsafe else ""
    return (f"\n  the after file still has {len(findings)} finding(s) ({codes}{hint}): "
            f"`jaxmigrate check {after}` lists them")


if __name__ == "__main__":  # pragma: no cover
    main()
