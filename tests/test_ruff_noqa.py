"""docs/ci.md's advice for running ruff beside jaxmigrate: without `lint.external = ["JM"]`, ruff's
RUF100/RUF102 delete `# noqa: JM...` (which brings the finding back); with it, they stay."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

CI = Path(__file__).resolve().parent.parent / "docs" / "ci.md"
SOURCE = "from jax.experimental.maps import Mesh  # noqa: JM201\n\nprint(Mesh)\n"


def _documented_config() -> str:
    section = CI.read_text().split("### Beside ruff", 1)[1]
    return re.search(r"```toml\n(.*?)```", section, re.S).group(1)


def _ruff_fix(folder: Path) -> str:
    pytest.importorskip("ruff")
    subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "RUF100,RUF102", "--fix", "--exit-zero", "-q",
                    "a.py"], cwd=folder, check=True, capture_output=True)
    return (folder / "a.py").read_text()


def test_ruff_keeps_jaxmigrate_noqa_codes_with_the_documented_configuration(tmp_path):
    bare, configured = tmp_path / "bare", tmp_path / "configured"
    for folder in (bare, configured):
        folder.mkdir()
        (folder / "a.py").write_text(SOURCE)
    (bare / "pyproject.toml").write_text("[tool.ruff]\n")
    (configured / "pyproject.toml").write_text(_documented_config())
    assert "# noqa: JM201" not in _ruff_fix(bare)  # what the documentation warns of
    assert _ruff_fix(configured) == SOURCE
    result = CliRunner().invoke(main, ["check", "--no-cache", str(configured / "a.py")])
    assert result.exit_code == 0, result.output
