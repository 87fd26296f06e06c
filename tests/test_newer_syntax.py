"""A file using syntax newer than the Python running jaxmigrate is still reported (JM000), with a
message saying so and which Python to run jaxmigrate under."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from jaxmigrate.cli import main
from jaxmigrate.core.syntax import newer_syntax, parse_error


def _error(source: str) -> SyntaxError:
    with pytest.raises(SyntaxError) as caught:
        compile(source, "a.py", "exec")
    return caught.value


@pytest.mark.parametrize("line,construct,added", [
    ("type Draw = Callable[[int], int]\n", "`type` alias", (3, 12)),
    ("type Pair[T] = tuple[T, T]\n", "`type` alias", (3, 12)),
    ("def first[T](xs: list[T]) -> T:\n", "generic function", (3, 12)),
    ("class Box[T]:\n", "generic class", (3, 12)),
    ("except* ValueError:\n", "`except*`", (3, 11)),
])
def test_newer_syntax_names_the_construct_and_python(line, construct, added):
    found = newer_syntax(line, running=(3, 10))
    assert found is not None and construct in found[0] and found[1] == added
    assert newer_syntax(line, running=added) is None  # that Python parses it: the error is another one


@pytest.mark.parametrize("line", ["def f(:\n", "type(x) = 1\n", "print 'x'\n", "types = [1\n", None])
def test_other_syntax_errors_get_no_hint(line):
    assert newer_syntax(line, running=(3, 10)) is None


def test_the_message_says_to_run_under_a_newer_python():
    exc = SyntaxError("invalid syntax", ("a.py", 3, 6, "type Draw = int\n", 3, 10))
    assert parse_error(exc, running=(3, 11)) == (
        "could not parse: invalid syntax (line 3): the file uses syntax newer than the Python 3.11 running "
        "jaxmigrate (a `type` alias statement, Python 3.12); run jaxmigrate under Python >= 3.12 to check it")
    assert parse_error(_error("def f(:\n")).startswith("could not parse: ")
    assert "newer" not in parse_error(_error("def f(:\n"))


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses a `type` statement")
def test_check_reports_a_type_statement_file_with_the_python_to_use(tmp_path):
    (tmp_path / "new.py").write_text("from jax.experimental.pjit import pjit\n\ntype Draw = int\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", str(tmp_path)])
    assert result.exit_code == 2
    assert "new.py:3:" in result.output and "JM000 could not parse" in result.output
    assert "run jaxmigrate under Python >= 3.12" in result.output
