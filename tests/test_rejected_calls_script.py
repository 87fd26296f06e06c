"""scripts/rejected_calls.py, the independent count of calls the installed JAX rejects."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("jax")

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "rejected_calls.py"
spec = importlib.util.spec_from_file_location("rejected_calls", SCRIPT)
rejected_calls = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rejected_calls)  # type: ignore[union-attr]

SOURCE = '''\
import jax.numpy as jnp
from jax import jvp, linearize


def squash(x):
    return jnp.clip(x, a_min=0.0)


def shadowed(f, x):
    _, jvp = linearize(f, x)  # a local `jvp`, not jax.jvp
    return jvp(x)


def test_rejects(self):
    self.assertRaises(TypeError, lambda: jnp.arange())
    with self.assertRaises(TypeError):
        jnp.ndarray((1, 1))
'''


def test_counts_rejected_calls_and_sets_apart_the_expected_ones(tmp_path):
    path = tmp_path / "legacy.py"
    path.write_text(SOURCE)
    found, splats = rejected_calls.calls(path)
    assert splats == 0
    assert [(line, name, expected) for line, _, name, _, expected in found] == [
        (6, "jax.numpy.clip", False), (15, "jax.numpy.arange", True), (17, "jax.numpy.ndarray", True)]


def test_findings_match_by_line(tmp_path, capsys):
    path = tmp_path / "legacy.py"
    path.write_text(SOURCE)
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([]))
    assert rejected_calls.main([str(path), "--findings", str(findings)]) == 1
    assert "NOT REPORTED" in capsys.readouterr().out
    findings.write_text(json.dumps([{"path": str(path), "line": 6, "code": "JM804"}]))
    assert rejected_calls.main([str(path), "--findings", str(findings)]) == 0
    out = capsys.readouterr().out
    assert "1 rejected calls, 0 without a finding" in out and "2 more inside assertRaises(TypeError)" in out
