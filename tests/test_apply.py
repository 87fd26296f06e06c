"""Statement edits parse only their statement with LibCST, and come out as a whole-module edit would."""

from __future__ import annotations

import pytest

from jaxmigrate.engine import apply
from tests.conftest import run

FOLDS = {
    "nested_removal": """\
import jax


def f(x):
    y = 1
    # only without jax.Array
    if not jax.config.jax_array:
        y = 2
    return y
""",
    "keep_body_with_strings": '''\
import jax


class Model:
    def setup(self):
        if jax.config.jax_array:
            doc = """
a string at column 0
            """
            self.doc = doc  # keep this comment


    def other(self):
        pass
''',
    "nested_folds": """\
import jax

if jax.config.jax_array:
    def f():
        if not jax.config.jax_array:
            return 1
        else:
            return 2
""",
    "crlf_tabs_no_final_newline": "import jax\r\ndef f():\r\n\tif jax.config.jax_array:\r\n\t\treturn 1\r\n\treturn 2",
    "module_level_only_statement": "import jax\nif not jax.config.jax_array:\n    print('legacy')\n",
    "elif_chain": """\
import jax


def kind(x):
    if not jax.config.jax_array:
        return "DeviceArray"
    elif x.ndim:
        return "Array"
    return "scalar"
""",
}


def _whole_module(monkeypatch):
    """The reference: every statement edit applied on the LibCST tree of the whole module."""
    def whole(ctx, text, node, edits):
        return apply._edit_module(text, {(e.line, e.column): e for e in edits})
    monkeypatch.setattr(apply, "_edit_region", whole)


@pytest.mark.parametrize("name", sorted(FOLDS))
def test_region_edit_equals_whole_module_edit(name, monkeypatch):
    text = FOLDS[name]
    region = run(text)
    assert region.fixes_applied
    _whole_module(monkeypatch)
    assert region.text == run(text).text


def test_only_the_statement_is_parsed(monkeypatch):
    parsed = []
    real = apply._edit_module

    def spy(source, by_position):
        parsed.append(source)
        return real(source, by_position)

    monkeypatch.setattr(apply, "_edit_module", spy)
    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    text = "import jax\n\n" + filler + "def g():\n    if jax.config.jax_array:\n        return 1\n    return 2\n"
    out = run(text)
    assert "if jax" not in out.text and "    return 1\n    return 2\n" in out.text
    assert parsed and all(len(p) < 100 for p in parsed)


def test_a_text_parsed_recently_is_not_parsed_again():
    from jaxmigrate.rules.context import FileContext

    text = "import jax\nx = jax.tree_map(f, y)\n"
    first = FileContext.of(text, "a.py", None)
    assert FileContext.of(text, "a.py", None) is first
    twin = FileContext.of(text, "b.py", (0, 4, 20))
    assert (twin.path, twin.target) == ("b.py", (0, 4, 20)) and (first.path, first.target) == ("a.py", None)
    assert twin.tree is first.tree
    assert FileContext.of(text + "\n").tree is not first.tree
