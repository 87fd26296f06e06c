"""Which code runs when a module is imported (``FileContext.runs_at_import``): a removed name
there stops every import of the module, and its finding says so (issue 37)."""

from __future__ import annotations

import ast

import pytest

from jaxmigrate.analysis.context import FileContext
from tests.conftest import run

SOURCE = '''\
import jax

A = jax.MARK_module
B = [jax.MARK_comprehension for _ in range(2)]


class C:
    attr = jax.MARK_class_body

    def method(self):
        return jax.MARK_method_body


@jax.MARK_decorator
def f(x=jax.MARK_default) -> jax.MARK_annotation:
    return jax.MARK_function_body


g = lambda: jax.MARK_lambda_body  # noqa: E731

if __name__ == "__main__":
    jax.MARK_main_block
'''
AT_IMPORT = {"module", "comprehension", "class_body", "decorator", "default", "annotation"}


@pytest.mark.parametrize("mark", sorted(AT_IMPORT | {"method_body", "function_body", "lambda_body", "main_block"}))
def test_runs_at_import(mark):
    ctx = FileContext(SOURCE)
    (node,) = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Attribute) and n.attr == f"MARK_{mark}"]
    assert ctx.runs_at_import(node) is (mark in AT_IMPORT)


def test_a_removed_name_at_import_says_it_blocks_import_and_one_in_a_function_does_not():
    code = ("import jax\n\nflag = jax.config.define_bool_state('mylib_x', False, 'X.')\n\n\n"
            "def later():\n    return jax.config.define_bool_state('mylib_y', True, 'Y.')\n")
    first, second = [f for f in run(code, fix=False).findings if f.code == "JM801"]
    assert "it runs at import" in first.message and "it runs at import" not in second.message
    assert first.suggestion.endswith("flag = Flag('mylib_x', False, 'X.')") and "class Flag:" in first.suggestion
    assert second.suggestion.endswith("Flag('mylib_y', True, 'Y.')")
    namespace: dict = {}
    exec(first.suggestion + "\n", namespace)  # the code to paste runs, and does what the flag did
    flag = namespace["flag"]
    assert flag.value is False
    with flag(True):
        assert flag.value is True
    assert flag.value is False
