"""Terminal niceties stay out of pipes and CI: colour only on a terminal, a bar only on long runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main
from jaxmigrate.reporting import terminal

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py

LEGACY = "from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None)\n"


def test_plain_output_has_no_colour_codes(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    plain = CliRunner().invoke(main, ["fix", "--diff", str(tmp_path)])
    assert "\x1b[" not in plain.output
    coloured = CliRunner().invoke(main, ["fix", "--diff", str(tmp_path)], color=True)
    assert "\x1b[32m+f = pjit(abs, in_shardings=None)" in coloured.output
    assert "\x1b[31m" in CliRunner().invoke(main, ["check", str(tmp_path)], color=True).output


def test_progress_only_when_interactive_and_long(monkeypatch):
    monkeypatch.setattr(terminal, "interactive", lambda stream=None: True)
    with terminal.progress(10) as update:
        assert update is None  # a short run
    with terminal.progress(500) as update:
        assert update is not None
        update(1, 500)
    monkeypatch.setattr(terminal, "interactive", lambda stream=None: False)
    with terminal.progress(500) as update:
        assert update is None  # a pipe or CI


def test_ci_environment_is_not_interactive(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.setenv("CI", "true")
    assert not terminal.interactive(Tty())
    monkeypatch.delenv("CI")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert terminal.interactive(Tty())


@pytest.mark.parametrize("at_a_terminal", [True, False])
def test_long_run_with_the_bar(tmp_path, monkeypatch, at_a_terminal):
    """On a terminal (rich forced to one) the bar is drawn on stderr, ends at 3/3 and is erased;
    the findings on stdout stay clean. Off a terminal nothing is drawn."""
    monkeypatch.setattr(terminal, "interactive", lambda stream=None: at_a_terminal)
    monkeypatch.setattr(terminal, "MIN_FILES_FOR_PROGRESS", 2)
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: the captured stream is a terminal
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(LEGACY)
    result = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", str(tmp_path)])
    assert result.exit_code == 1 and "Found 3 findings in 3 files." in result.stdout
    assert "━" not in result.stdout and "\x1b[2K" not in result.stdout
    if at_a_terminal:
        last = result.stderr.rsplit("\r", 2)[-2]  # the final frame, drawn when the run ends
        assert last.startswith("\x1b[2Kjaxmigrate ") and "━" in last and "3/3" in last
        assert result.stderr.endswith("\x1b[2K")  # transient: erased when done
    else:
        assert result.stderr == ""
