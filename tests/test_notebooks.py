"""Notebooks: code cells are checked and fixed as one module; outputs and metadata stay."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

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


# A fix edits the notebook's own text: the output is the input with the fixed lines replaced.
TREE_MAP = ("y = jax.tree_map(abs, [1])\n", "y = jax.tree.map(abs, [1])\n")
SPLIT_IMPORT = "from jax.experimental.pjit import pjit, with_sharding_constraint\n"


def _fixed(tmp_path, text: str, name: str = "n.ipynb") -> bytes:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    result = CliRunner().invoke(main, ["fix", str(path)])
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def _spelt(line: str, ensure_ascii: bool = False) -> str:
    return json.dumps(line, ensure_ascii=ensure_ascii)


def _plain(*sources, cell=_code):
    return _notebook({"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["Caf\u00e9 `tree_map`\n"]},
                     *(cell(src) for src in sources))


BASE = ("import jax\n", "x = 'caf\u00e9'\n" + TREE_MAP[0] + "z = 2")


def _crlf_tabs():
    return json.dumps(_plain(*BASE), indent="\t", ensure_ascii=False).replace("\n", "\r\n") + "\r\n", False


def _escapes():
    return json.dumps(_plain(*BASE), indent=1, ensure_ascii=True) + "\n", True


def _numbers():
    text = json.dumps(_plain(*BASE), indent=1, ensure_ascii=False)
    text = text.replace('"tags": [', '"scale": 1.50, "big": 1E5, "neg": -0.0, "tags": [', 1)
    return text, False


def _duplicate_keys():
    text = json.dumps(_plain(*BASE), indent=1, ensure_ascii=False)
    text = text.replace('"metadata": {}', '"metadata": {"a": 1},\n   "metadata": {}', 1)  # the markdown cell's
    text = text.replace('"outputs": [],\n   "source"', '"outputs": [],\n   "source": ["old\\n"],\n   "source"', 2)
    return text, False


def _cell_marker_text():
    """A cell holding the text of a marker (`# jaxmigrate-cell-1`): kept, as the cell's own text."""
    nb = _plain("import jax\n", "# jaxmigrate-cell-1\n" + TREE_MAP[0] + "# jaxmigrate-cell-2\nz = 2\n")
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n", False


def _magic_marker_text():
    """Lines ending like a magic's placeholder (`# jaxmigrate-magic-0`) in a notebook with a magic:
    kept, the magic in its own cell."""
    nb = _plain("import jax\n%time w = 1\n", TREE_MAP[0] + "v = 1  # jaxmigrate-magic-0\npass  # jaxmigrate-magic-0\n")
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n", False


def _string_source():
    """`source` as one string (and `\\r\\n` in a cell's lines): the string keeps its escapes and
    each line its break; a cell of `\\r\\n` lines that no fix changed is not touched."""
    nb = _plain("import jax\r\nw = 1\r\n", "x = 'caf\u00e9'\r\n" + TREE_MAP[0].replace("\n", "\r\n") + "z = 2",
                cell=lambda src: dict(_code(src), source=src))
    return json.dumps(nb, indent=2, ensure_ascii=True), True


@pytest.mark.parametrize("build", [_crlf_tabs, _escapes, _numbers, _duplicate_keys, _cell_marker_text,
                                   _magic_marker_text, _string_source])
def test_fix_replaces_only_the_fixed_lines(tmp_path, build):
    text, ensure_ascii = build()
    old, new = TREE_MAP
    if build is _string_source:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    spellings = _spelt(old, ensure_ascii)[1:-1], _spelt(new, ensure_ascii)[1:-1]
    assert text.count(spellings[0]) == 1
    assert _fixed(tmp_path, text).decode("utf-8") == text.replace(*spellings)


def test_lines_a_fix_adds_take_the_list_layout(tmp_path):
    """An import split in two: the new item sits on its own line, indented and broken as the
    others (tabs, CRLF), in isort's order; a one-line notebook stays on one line."""
    nb = _notebook(_code(SPLIT_IMPORT), _code("y = with_sharding_constraint(x, axis_resources=None)\n"))
    text = json.dumps(nb, indent="\t").replace("\n", "\r\n") + "\r\n"
    expected = text.replace(_spelt(SPLIT_IMPORT), '"from jax.experimental.pjit import pjit\\n",\r\n\t\t\t\t'
                            '"from jax.lax import with_sharding_constraint\\n"').replace("axis_resources=None", "None")
    assert _fixed(tmp_path, text).decode() == expected
    one_line = json.dumps(nb)
    expected = one_line.replace(_spelt(SPLIT_IMPORT), '"from jax.experimental.pjit import pjit\\n", '
                                '"from jax.lax import with_sharding_constraint\\n"').replace("axis_resources=None", "None")
    assert _fixed(tmp_path, one_line, "one.ipynb").decode() == expected


def test_an_empty_source_list_gets_the_notebooks_layout():
    from jaxmigrate.engine import notebook

    text = '{\r\n\t"cells": [\r\n\t\t{\r\n\t\t\t"cell_type": "code",\r\n\t\t\t"source": []\r\n\t\t}\r\n\t]\r\n}'
    nb, module = notebook.load(text)
    assert notebook.dump(nb, module.replace("\n", "\nimport jax\n", 1)) == text.replace(
        "[]", '[\r\n\t\t\t\t"import jax"\r\n\t\t\t]')


V3 = {"metadata": {"name": ""}, "nbformat": 3, "nbformat_minor": 0, "worksheets": [{"metadata": {}, "cells": [
    {"cell_type": "code", "collapsed": False, "input": ["import jax\n", TREE_MAP[0]], "language": "python",
     "metadata": {}, "outputs": []}]}]}


@pytest.mark.parametrize("command", ["check", "fix"])
def test_an_nbformat_3_notebook_is_not_supported(tmp_path, command):
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(V3, indent=1) + "\n")
    before = path.read_bytes()
    result = CliRunner().invoke(main, [command, str(path)])
    assert result.exit_code == 2
    assert "JM000" in result.output and "not a supported notebook: nbformat 3" in result.output
    assert path.read_bytes() == before
    # one whose code has nothing to report is not passed unread either (it got "All checks passed")
    path.write_text(json.dumps(dict(V3, worksheets=[{"cells": [dict(V3["worksheets"][0]["cells"][0], input="x = 1")]}])))
    again = CliRunner().invoke(main, [command, str(path)])
    assert again.exit_code == 2 and "not a supported notebook: nbformat 3" in again.output


_LINE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).map(lambda s: "".join(s.splitlines()))


@settings(max_examples=80, deadline=None)
@given(cells=st.lists(st.tuples(st.lists(_LINE, max_size=4), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans(),
                                st.booleans()), min_size=1, max_size=3),
       indent=st.sampled_from([None, 1, 2, "\t"]), crlf=st.booleans(), ensure_ascii=st.booleans())
def test_the_scanner_finds_each_source_and_spells_unchanged_lines_as_they_were(cells, indent, crlf, ensure_ascii):
    """For notebooks in any of these styles, the span found for each cell's `source` holds its
    value, and the value written back from the same lines is the same text."""
    from jaxmigrate.engine.notebook import _encoded, source_spans

    sources = []
    for lines, newline, ends, as_list in cells:
        src = newline.join(lines) + (newline if ends and lines else "")
        sources.append(src.splitlines(keepends=True) if as_list else src)
    nb = _notebook(*({"cell_type": "code", "metadata": {"n": 1.0}, "outputs": [], "source": src} for src in sources))
    text = json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii)
    text = text.replace("\n", "\r\n") if crlf else text
    spans = source_spans(text)
    assert len(spans) == len(sources)
    for i, src in enumerate(sources):
        start, end = spans[i]
        assert json.loads(text[start:end]) == src
        joined = src if isinstance(src, str) else "".join(src)
        assert _encoded(text, start, end, joined.splitlines(keepends=True)) == text[start:end]


def test_a_notebook_that_is_not_json_says_where(tmp_path):
    path = tmp_path / "cut.ipynb"
    path.write_text('{\n "cells": [\n  {"source": "x = jax.tree_map(f, y)"\n')  # cut short
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "JM000 could not parse: not a readable notebook: Expecting ',' delimiter (line 4)" in result.output
    assert "cut.ipynb:4:1: JM000" in result.output  # where the JSON stops, not 1:1


def test_a_syntax_error_in_a_cell_is_reported_at_its_line_in_the_cell(tmp_path):
    """Placed at 1:1 before (issue 28): the cell and its line and column, as findings are given."""
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(_notebook(_code("from jax.experimental.pjit import pjit\n"), _code("x = 1\ndef f(:\n")),
                               indent=1) + "\n")
    for args in (["check", "--format", "json"], ["fix", "--diff", "--format", "json"]):
        result = CliRunner().invoke(main, [*args, str(path)])
        (record,) = json.loads(result.stdout)
        assert (record["code"], record["line"], record["column"]) == ("JM000", 2, 7)
        assert record["message"] == "cell 2: could not parse: invalid syntax (line 2)"
        assert result.exit_code == 2


def test_a_fix_that_loses_a_cell_boundary_or_has_no_source_to_write_is_an_error():
    from jaxmigrate.engine import notebook
    from jaxmigrate.engine.apply import FixError

    nb, module = notebook.load(json.dumps(_notebook(_code("import jax\n"), _code("x = 1\n"))))
    with pytest.raises(FixError, match="boundary"):
        notebook.dump(nb, module.replace(nb.marker(1) + "\n", ""))
    nb, module = notebook.load('{"cells": [{"cell_type": "code", "metadata": {}}]}')
    assert module == nb.marker(0) + "\n"
    with pytest.raises(FixError, match="no `source`"):
        notebook.dump(nb, module + "import jax\n")


def test_imports_a_fix_writes_in_a_cell_take_their_place_in_isort_order(tmp_path):
    """A cell is a module to ruff's isort: the imports the fixes write there are joined and ordered
    as in a .py file (a cell whose imports were sorted stays sorted), cell by cell."""
    sorted_cell = ("import jax\nfrom jax.experimental import PartitionSpec as P\nfrom jax.experimental.maps import Mesh\n"
                   "from jax.experimental.pjit import pjit\n\nprint(jax, P, Mesh, pjit)")
    path = tmp_path / "sharding.ipynb"
    path.write_text(json.dumps(_notebook(_code("x = 1"), _code(sorted_cell)), indent=1) + "\n")
    assert CliRunner().invoke(main, ["fix", "--select", "JM201", str(path)]).exit_code == 0
    cell = "".join(json.loads(path.read_text())["cells"][1]["source"])
    assert cell.startswith("import jax\nfrom jax.experimental.pjit import pjit\nfrom jax.sharding import Mesh\n"
                           "from jax.sharding import PartitionSpec as P\n\n")


def test_a_line_magic_written_without_its_percent_is_kept_as_a_magic(tmp_path):
    """IPython's automagic runs `timeit f(x)` as `%timeit f(x)`: the line is kept as it is, and the
    rest of the notebook is checked and fixed (it was a parse error for the whole file)."""
    cell = "timeit -n 5 jnp.dot(x, x)\ntime = 3\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)"
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(_notebook(_code("from jax.experimental.pjit import pjit\nimport jax.numpy as jnp"),
                                         _code(cell)), indent=1) + "\n")
    assert CliRunner().invoke(main, ["fix", str(path)]).exit_code == 0
    fixed = "".join(json.loads(path.read_text())["cells"][1]["source"])
    assert fixed == cell.replace("in_axis_resources", "in_shardings").replace("out_axis_resources", "out_shardings")
