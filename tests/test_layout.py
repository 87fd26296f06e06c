"""Fixed code needs no formatter pass for its blank lines: a fix adds no pycodestyle E30x (blank
lines), W291/W293 (trailing whitespace) or W391 (blank line at the end) that the file did not
have (issue 16, item 14). Checked on every fixture and on the README's example, fixed afresh."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pycodestyle
import pytest

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.statements import delete_statement
from tests.conftest import run
from tests.test_fixtures import CASES, _id, _options

ROOT = Path(__file__).resolve().parent.parent
CODES = ["E301", "E302", "E303", "E304", "E305", "E306", "W291", "W293", "W391"]


class _Collect(pycodestyle.BaseReport):
    def __init__(self, options):
        super().__init__(options)
        self.codes: Counter = Counter()

    def error(self, line_number, offset, text, check):
        code = super().error(line_number, offset, text, check)
        if code:
            self.codes[code] += 1
        return code


def layout_violations(text: str) -> Counter:
    """How many of each blank-line and whitespace violation pycodestyle finds in ``text``."""
    options = pycodestyle.StyleGuide(select=CODES, quiet=True).options
    report = _Collect(options)
    pycodestyle.Checker("fixed.py", lines=text.splitlines(True), options=options, report=report).check_all()
    return report.codes


def test_the_checker_sees_blank_line_violations():
    assert layout_violations("import os\n\n\n\ndef f():\n    x = 1\n\n\n    return x\n") == Counter({"E303": 2})
    assert layout_violations("import os\n\n\ndef f():\n    return 1\n") == Counter()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_a_fixture_fix_adds_no_layout_violation(case: Path):
    opts = _options(case)
    before = case.read_text()
    fixed = run(before, unsafe=opts["unsafe"], target=opts["target"]).text
    assert layout_violations(fixed) - layout_violations(before) == Counter()


def test_the_readme_example_fixed_needs_no_formatter():
    before = (ROOT / "examples" / "legacy_train.py").read_text()
    fixed = run(before, unsafe=True).text
    assert layout_violations(before) == Counter()
    assert layout_violations(fixed) == Counter()


def _delete(source: str, line: int) -> str:
    ctx = FileContext.of(source)
    stmt = next(s for s in ctx.statements if s.lineno == line and not isinstance(s, ast.Module))
    edit = delete_statement(ctx, stmt)
    return source[: edit.start] + edit.text + source[edit.end :]


def test_deleting_a_statement_keeps_the_longer_blank_run_around_it():
    assert _delete("import os\n\nx = 1\n\n\ndef f():\n    pass\n", 3) == "import os\n\n\ndef f():\n    pass\n"
    assert _delete("def f():\n    pass\n\n\nx = 1\n\ny = 2\n", 5) == "def f():\n    pass\n\n\ny = 2\n"
    assert _delete("def f():\n    a = 1\n\n    b = 2\n\n    return a\n", 4) == "def f():\n    a = 1\n\n    return a\n"


def test_deleting_a_statement_leaves_no_blank_line_at_the_end_or_opening_a_block():
    assert _delete("x = 1\n\n\ny = 2\n", 4) == "x = 1\n"
    assert _delete("x = 1\n\n\ny = 2\n\n", 4) == "x = 1\n"
    assert _delete("def f():\n    a = 1\n\n    return a\n", 2) == "def f():\n    return a\n"


def test_deletions_that_meet_leave_one_run_of_blank_lines():
    """Two statements of one fix deleted, each taking the blank lines on its shorter side: where
    their deletions meet, the runs they border are trimmed as for one statement."""
    from jaxmigrate.engine.apply import _apply_text_edits

    source = "x = 0\n\n\na = 1\n\nb = 2\n\n\ny = 3\n"
    ctx = FileContext.of(source)
    edits = [delete_statement(ctx, s) for s in ctx.tree.body[1:3]]
    assert _apply_text_edits(source, edits) == "x = 0\n\n\ny = 3\n"
