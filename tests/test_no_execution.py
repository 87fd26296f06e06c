"""`check` and `fix` read code and never run it: a module that writes a marker when imported or
run (and sits where Python would import it from) is checked and fixed, and the marker never appears."""

from __future__ import annotations

from click.testing import CliRunner

from jaxmigrate.cli import main

PAYLOAD = '''import pathlib
pathlib.Path({marker!r}).write_text("ran")
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec

f = pjit(abs, in_axis_resources=None, out_axis_resources=None)
if __name__ == "__main__":
    pathlib.Path({marker!r}).write_text("ran as main")
'''


def test_check_and_fix_never_run_the_code(tmp_path):
    marker = tmp_path / "MARKER"
    for name in ("train.py", "__init__.py", "conftest.py", "setup.py", "__main__.py"):
        (tmp_path / name).write_text(PAYLOAD.format(marker=str(marker)))
    runner = CliRunner()
    assert runner.invoke(main, ["check", str(tmp_path)]).exit_code == 1
    fixed = runner.invoke(main, ["fix", "--unsafe-fixes", "-j", "2", str(tmp_path)])
    assert fixed.exit_code in (0, 1), fixed.output
    assert "jax.jit(abs)" in (tmp_path / "train.py").read_text()  # the fix did happen
    assert not marker.exists()
