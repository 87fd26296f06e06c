"""`# noqa` and `# jaxmigrate: skip-file` silence findings and their fixes."""

from tests.conftest import run

LEGACY = "from jax.experimental.pjit import pjit\n\n"


def test_bare_noqa_silences_the_line():
    src = LEGACY + "f = pjit(abs, in_axis_resources=None, out_axis_resources=None)  # noqa\n"
    out = run(src)
    assert out.findings == [] and out.text == src


def test_noqa_with_codes_silences_only_those():
    src = (LEGACY + "f = pjit(abs, in_axis_resources=None)  # noqa: JM2\n"
           "from jax.experimental import PartitionSpec  # noqa: JM201\n")
    out = run(src, fix=False)
    assert sorted(f.code for f in out.findings) == ["JM101", "JM701"]  # JM701: pjit itself, for the latest target
    fixed = run(src)
    assert "in_shardings=None" in fixed.text and "from jax.experimental import PartitionSpec  # noqa: JM201" in fixed.text


def test_noqa_inside_a_string_is_not_a_comment():
    src = LEGACY + 'f = pjit(abs, in_axis_resources=None, out_axis_resources="# noqa")\n'
    assert {f.code for f in run(src, fix=False).findings} == {"JM101", "JM701"}


def test_skip_file():
    src = "# jaxmigrate: skip-file\n" + LEGACY + "f = pjit(abs, in_axis_resources=None)\n"
    out = run(src)
    assert out.findings == [] and out.text == src


def test_a_noqa_for_other_tools_costs_no_tokenizing(monkeypatch):
    """`# noqa: F401` on a line jaxmigrate reports silences nothing of ours: the module is not
    tokenized to find out whether it is a comment (on JAX's own tests that was a tenth of check)."""
    from jaxmigrate.core.findings import Finding
    from jaxmigrate.engine import suppression

    def fail(*args):
        raise AssertionError("tokenized")

    source = "from jax.experimental import host_callback  # noqa: F401\nx = 1  # noqa\n"
    finding = Finding("JM801", "removed", 1, 30, 1, 43)
    monkeypatch.setattr(suppression.tokenize, "generate_tokens", fail)
    assert suppression.unsuppressed([finding], source) == [finding]
    monkeypatch.undo()
    bare = Finding("JM801", "removed", 2, 1, 2, 2)
    assert suppression.unsuppressed([finding, bare], source) == [finding]  # a bare noqa silences it
