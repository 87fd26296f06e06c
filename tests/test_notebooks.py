"""Notebooks: code cells are checked and fixed as one module; outputs and metadata stay."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main

pytestmark = pytest.mark.usefixtures("pinned_target")  # engine tests: see tests/conftest.py


def _notebook(*cells):
    return {"cells": list(cells), "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}


def _code(src, outputs=()):
    return {"cell_type": "code", "execution_count": 1, "id": "x", "metadata": {"tags": ["keep"]},
            "outputs": list(outputs), "source": src.splitlines(keepends=True)}


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["in_axis_resources=None\n"]}
NB = _notebook(
    {"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["Uses `in_axis_resources`.\n"]},
    _code("from jax.experimental.pjit import pjit\n%load_ext autoreload"),
    _code("%%time\nx = 1"),
    _code("!pip list\nf = pjit(abs, in_axis_resources=None,\n         out_axis_resources=None)", [OUTPUT]),
)


def test_check_reports_cell_and_line(tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(NB, indent=1) + "\n")
    result = CliRunner().invoke(main, ["check", "--format", "json", str(path)])
    records = json.loads(result.stdout)
    assert [(r["line"], r["column"], r["message"][:7]) for r in records] == [(2, 15, "cell 4:"), (3, 10, "cell 4:")]


def test_fix_changes_only_code_sources(tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(NB, indent=1) + "\n")
    assert CliRunner().invoke(main, ["fix", str(path)]).exit_code == 0
    fixed = json.loads(path.read_text())
    expected = json.loads(json.dumps(NB))
    expected["cells"][3]["source"] = ["!pip list\n", "f = pjit(abs, in_shardings=None,\n", "         out_shardings=None)"]
    assert fixed == expected  # markdown, magics, outputs, metadata untouched
    before = path.read_bytes()
    assert CliRunner().invoke(main, ["fix", str(path)]).exit_code == 0
    assert path.read_bytes() == before  # idempotent


def test_clean_notebook_is_byte_identical(tmp_path):
    path = tmp_path / "clean.ipynb"
    text = json.dumps(_notebook(_code("import jax\nprint(jax.__version__)")), indent=2)
    path.write_text(text)
    assert CliRunner().invoke(main, ["fix", str(tmp_path)]).exit_code == 0
    assert path.read_text() == text


COLAB = _notebook(
    _code("#@title install\n%%bash\nset -e\nUSE=$1\n"),  # a cell magic after a form title: not Python
    _code("!wget -q https://example.org/a.tar \\\n  --directory=params\nPATH = %env PATH\nfiles = !ls\n"),
    _code("  import jax.numpy as jnp\n  total = jnp.product(jnp.arange(3))\n"),  # IPython strips a leading indent
)


def test_colab_forms_parse_and_an_indented_cell_keeps_its_indent(tmp_path):
    """Cell magics after `#@title`, shell escapes continued with `\\`, assignments from magics and
    cells indented as a whole are IPython, not parse errors; the fix keeps the cell's indent."""
    path = tmp_path / "colab.ipynb"
    path.write_text(json.dumps(COLAB, indent=1) + "\n")
    result = CliRunner().invoke(main, ["check", "--format", "json", str(path)])
    assert [r["code"] for r in json.loads(result.stdout)] == ["JM801"]
    CliRunner().invoke(main, ["fix", str(path)])
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[2]["source"]) == "  import jax.numpy as jnp\n  total = jnp.prod(jnp.arange(3))\n"
    assert cells[0]["source"] == COLAB["cells"][0]["source"] and cells[1]["source"] == COLAB["cells"][1]["source"]
