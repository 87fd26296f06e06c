"""Suggestions that exist, and versions from one source (issue 27, parts 4 and 5).

- Every finding whose message names a replacement ("use `x`", "moved to `x`", "rewrite ... with
  `x`", "suggested: ...") carries the code in ``suggestion`` (JSON, SARIF), over every fixture.
- Every replacement a finding names exists at the target, as JAX's API history knows: over the
  whole history at every release a finding can be reported for, and over every fixture's findings.
- A finding that says when a JAX name was deprecated or removed says what the history says.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

import pytest

from jaxmigrate.catalog import api_history
from jaxmigrate.catalog.api_history import exists, is_private, parse_version, status
from jaxmigrate.catalog.moves import MOVES, REMOVED_NAMES, applies, best_for_uses, premature
from jaxmigrate.catalog.renames import CALL_CODE, CALLS, DROP_INS, TYPE_TESTS
from jaxmigrate.patterns.history_findings import replacement_name
from jaxmigrate.rules import ALL_RULES, BY_CODE
from tests.conftest import run
from tests.test_fixtures import CASES, PROJECTS, _options, run_project

#: what a message says when it names the code to write
NAMES_REPLACEMENT = re.compile(r"\buse `|\bmoved to `|\b(?:replace|rewrite)\b[^;:]*? with `|; suggested:")
#: a dotted JAX name in backticks or at the start of a suggestion
JAX_NAME = re.compile(r"(?<![\w.])(jax(?:\.[A-Za-z_]\w*)+)")


def _fixture_findings() -> Iterator[Tuple[str, Optional[Tuple[int, ...]], object]]:
    """(case, target, finding) for every finding ``check`` reports on a fixture, and what is left after its fix."""
    for case in CASES:
        opts = _options(case)
        name = f"{case.parent.parent.name}/{case.parent.name}"
        for fixed in (False, True):
            result = run(case.read_text(), fix=fixed, unsafe=opts["unsafe"], target=opts["target"])
            for f in result.findings:
                yield name, opts["target"], f
    for project in PROJECTS:
        opts = _options(project / "before.py")
        _, found = run_project(project / "before", fix=False, unsafe=opts["unsafe"], target=opts["target"])
        for findings in found.values():
            for f in findings:
                yield f"{project.parent.name}/{project.name}", opts["target"], f


@pytest.fixture(scope="module")
def fixture_findings():
    return list(_fixture_findings())


def test_a_named_replacement_is_the_suggestion(fixture_findings):
    named = [(case, f) for case, _, f in fixture_findings if NAMES_REPLACEMENT.search(f.message)]
    assert len(named) > 100  # the pattern reads what the messages say
    missing = [f"{case}:{f.line} {f.code} {f.message}" for case, f in named if f.suggestion is None]
    assert not missing, "\n".join(missing)


def test_suggested_jax_names_exist_at_the_target(fixture_findings):
    """Every JAX name in a suggestion is one the target has (or newer than the history knows: an
    attribute of a name it has)."""
    wrong = []
    for case, target, f in fixture_findings:
        for name in JAX_NAME.findall(f.suggestion or ""):
            if status(name, target) is not None and status(name, target).state == "removed":  # type: ignore[union-attr]
                wrong.append(f"{case}:{f.line} {f.code} suggests `{name}`, gone at {target or 'latest'}")
    assert not wrong, "\n".join(wrong)


# the whole history --------------------------------------------------------------------------
FLOOR = parse_version("0.4.1")  # the oldest --target-jax


def _targets() -> List[Optional[Tuple[int, ...]]]:
    versions = api_history.table(False).versions
    return [parse_version(v) for v in versions if parse_version(v) >= FLOOR] + [None]


def test_every_history_replacement_exists_at_each_target():
    """For every name of the history that a finding reports at some release (removed or
    deprecated there), the name the finding tells to use exists at that release."""
    targets = _targets()
    checked, wrong = 0, []
    for private in (False, True):
        history = api_history.table(private)
        for name in history.names():
            row = history.entry(name)
            if row is None or not (row.replacement or name in DROP_INS or name in TYPE_TESTS):
                continue
            for target in targets:
                st = status(name, target)
                if st is None:
                    continue
                new, how, _ = replacement_name(name, st, target)
                checked += 1
                if new is not None and not exists(new, target):
                    wrong.append(f"{name} at {target}: {how} `{new}`")
    assert checked > 1000
    assert not wrong, "\n".join(wrong[:50])


def test_replacements_through_a_moved_module():
    """`jax.pxla.X`: `jax.pxla` became `jax.interpreters.pxla`, where `X` may be gone too."""
    st = status("jax.pxla.ShardedDeviceArray", None)
    assert st is not None and st.qualname == "jax.pxla"
    assert replacement_name("jax.pxla.ShardedDeviceArray", st, None)[0] == "jax.Array"
    st = status("jax.pxla.Mesh", None)
    assert st is not None
    assert replacement_name("jax.pxla.Mesh", st, None)[0] in (None, "jax.sharding.Mesh")


def test_same_name_moves_come_from_the_data():
    st = status("jax.core.unsafe_get_axis_names_DO_NOT_USE", None)
    assert st is not None and st.replacement is None  # JAX named none
    assert replacement_name(st.qualname, st, None)[:2] == ("jax.extend.core.unsafe_get_axis_names_DO_NOT_USE", "same-name")


def test_hand_tables_name_what_the_target_has():
    """The drop-ins, call transforms and call rewrites name JAX objects the history knows, present
    at every release their old name is reported at; a move's new name exists wherever it applies."""
    wrong = []
    for old, new in DROP_INS.items():
        for target in _targets():
            if status(old, target) is not None and not exists(new, target):
                wrong.append(f"DROP_INS {old} -> {new} at {target}")
    needs = {old: [t.partition("/")[0]] for old, t in CALLS.items() if not t.startswith("second-argument")}
    needs.update({old: list(names) for old, (names, _) in CALL_CODE.items()})
    for test in TYPE_TESTS:
        needs.setdefault(test, []).append("jax.dtypes.prng_key")
    for old, names in needs.items():
        assert api_history.entry(old) is not None, old
        for name in names:
            assert api_history.entry(name) is not None, name
    for move in MOVES:
        for target in _targets():
            if applies(move, target) and not premature(move, target):
                for new in {move.new, best_for_uses(move, target)}:
                    if api_history.entry(new) is not None and not exists(new, target):
                        wrong.append(f"MOVES {move.old} -> {new} at {target}")
    assert not wrong, "\n".join(wrong)


# versions from one source ---------------------------------------------------------------------
#: "`jax.x` was removed in JAX 0.4.8", "`x` is deprecated since JAX 0.8.0 and removed in 0.10.0",
#: "`FROM_GDA` inside a pytree or a variable was removed in JAX 0.4.8"
STATED = re.compile(r"`([\w.]+)`(?::\s`([\w.]+)`)?[^`;:]*? (was removed in|is deprecated since|was deprecated in) JAX "
                    r"(\d+(?:\.\d+)+)(?: and removed in (\d+(?:\.\d+)+))?")


def _history_versions(name: str) -> Tuple[Optional[str], Optional[str]]:
    """(deprecated in, removed in) by the history, for a name it knows."""
    history = api_history.table(is_private(name))
    row = history.entry(name)
    assert row is not None, name
    deprecated = history.versions[row.deprecated] if row.deprecated >= 0 else None
    # the last release that removed it (a name added back later, `jax.ad`, was removed before that)
    ends = [end for _, end in row.intervals if end != -1]
    removed = history.versions[max(ends)] if ends else None
    return deprecated, removed


def _subject(code: str, said: str) -> Optional[str]:
    """The JAX name a message's subject stands for: itself, or the rule's name with that last part."""
    if api_history.entry(said) is not None:
        return said
    return next((n for n in BY_CODE[code].history_names if n.rpartition(".")[2] == said.rpartition(".")[2]), None)


def test_findings_state_the_history_versions(fixture_findings):
    compared, wrong = 0, []
    for case, _, f in fixture_findings:
        for match in STATED.finditer(f.message):
            name = _subject(f.code, match.group(2) or match.group(1))
            if name is None:
                continue  # not a name the history knows (an attribute, a keyword)
            deprecated, removed = _history_versions(name)
            if deprecated is None and removed is None:
                continue  # a name the history knows no change of (`jax.config`: the submodule and the object)
            expected = removed if match.group(3) == "was removed in" else deprecated
            compared += 1
            if match.group(4) != expected or (match.group(5) and match.group(5) != removed):
                wrong.append(f"{case}:{f.line} {f.code}: {match.group(0)!r}; history of {name}: deprecated "
                             f"{deprecated}, removed {removed}")
    assert compared > 50
    assert not wrong, "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.history_names], ids=lambda r: r.code)
def test_rule_versions_are_the_history_s(rule):
    """A hand-written rule's versions (its docs, its messages) are the history's, where it knows them."""
    for name in rule.history_names:
        deprecated, removed = _history_versions(name)
        if deprecated is not None and rule.deprecated_in is not None:
            assert rule.deprecated_in == deprecated, name
        if removed is not None:
            assert rule.removed_in == removed, name


def test_hand_versions_are_the_history_s():
    """The removal versions the hand tables keep are the history's."""
    for name, version in REMOVED_NAMES.items():
        assert _history_versions(name)[1] == version, name


# the code, in JSON and SARIF ------------------------------------------------------------------
CALLBACKS = '''import jax
from jax.experimental import host_callback as hcb


def step(x, f, g):
    y = hcb.call(f, x, result_shape=x)
    z = hcb.id_tap(g, y)
    hcb.barrier_wait()
    return jax.xla_computation(f)(z), jax.pxla.ShardedDeviceArray
'''


def test_history_findings_carry_the_code_in_json_and_sarif(tmp_path):
    """The API-history findings' code (null before): the text output is the message alone."""
    import json

    from click.testing import CliRunner

    from jaxmigrate.cli import main

    (tmp_path / "cb.py").write_text(CALLBACKS)

    def check(*args):
        return CliRunner().invoke(main, ["check", "--select", "JM801", *args, str(tmp_path)]).stdout

    records = {r["line"]: r for r in json.loads(check("--format", "json"))}
    assert records[6]["suggestion"] == "jax.experimental.io_callback(f, x, x)"
    assert records[7]["suggestion"] == ("jax.experimental.io_callback(lambda a: g(a, ()), None, y, ordered=True)"
                                        "  # id_tap returned y")
    assert records[8]["suggestion"] == "jax.effects_barrier()" and records[8]["fix_safety"] == "unsafe"
    assert records[9]["suggestion"] in ("jax.jit(f).lower(z).compiler_ir('hlo')", "jax.Array")
    assert {r["suggestion"] for r in json.loads(check("--format", "json")) if r["line"] == 9} == {
        "jax.jit(f).lower(z).compiler_ir('hlo')", "jax.Array"}
    sarif = json.loads(check("--format", "sarif"))
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in sarif["runs"][0]["results"]}
    assert by_line[8]["properties"]["suggestion"] == "jax.effects_barrier()"
    assert "suggested" not in check()  # the message already names it: the text output is unchanged


def test_an_attribute_of_a_removed_type_names_the_type_s_drop_in():
    st = status("jax._src.device_array.DeviceArray.item", None)
    assert st is not None and st.qualname == "jax._src.device_array.DeviceArray"
    assert replacement_name("jax._src.device_array.DeviceArray.item", st, None)[:2] == ("jax.Array", "history")
