"""A person at a terminal: a progress bar on long runs, colour in findings and diffs.

Plain and quiet otherwise: no bar and no colour when the stream is not a terminal, in CI (`CI`
set) or with `NO_COLOR` set. click drops the colour codes by itself when writing to a pipe.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

import click

MIN_FILES_FOR_PROGRESS = 50


def interactive(stream=None) -> bool:
    stream = stream or sys.stderr
    return stream.isatty() and not os.environ.get("CI") and not os.environ.get("NO_COLOR")


@contextmanager
def progress(total_files: int) -> Iterator[Optional[Callable[[int, int], None]]]:
    """A callback drawing a rich progress bar on stderr, or None when it would only be noise."""
    if total_files < MIN_FILES_FOR_PROGRESS or not interactive():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("jaxmigrate"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("files", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def finding_line(path: str, line: int, column: int, code: str, marker: str, message: str) -> str:
    return (f"{click.style(path, bold=True)}:{line}:{column}: {click.style(code, fg='red', bold=True)}"
            f"{click.style(marker, fg='cyan')} {message}")


def diff(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            out.append(click.style(line, bold=True))
        elif line.startswith("+"):
            out.append(click.style(line, fg="green"))
        elif line.startswith("-"):
            out.append(click.style(line, fg="red"))
        elif line.startswith("@@"):
            out.append(click.style(line, fg="cyan"))
        else:
            out.append(line)
    return "".join(out)
