"""The pmap-era programs (programs/pmap_*; see programs/README.md) against hand migrations.

``tests/test_programs.py`` judges each program's migration by ``fix``; here a hand migration of JAX
101's data-parallel training loop that makes the classic mistake, kept beside the program as
``hand_scaled_after.py``: the parameters passed once, replicated as ``P()``, into a jit of
shard_map that keeps ``jax.lax.pmean`` of the gradients. Inside shard_map the gradient of a
replicated value is already summed over the devices, so each step moves the parameters 8 times too
far, and the verifier must say so at the update step's first call, naming it and its line. Nothing
here depends on the rules: the pair is written by hand. Last, a pmap over this process's devices only
(``devices=jax.local_devices()``) on two processes, migrated by ``fix``: a strict xfail, the verifier's
pmap's output its own (not a global array over every process's devices); an unmapped Python float on
two processes keeping its weak type; and a donated state on two processes, a strict xfail: the legacy
runtime's pmap leaves the donated array alive where the migration deletes it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402
from tests.conftest import run  # noqa: E402

LOOP = Path(__file__).resolve().parent.parent / "programs" / "pmap_training_loop"


def _line(path: Path, text: str) -> int:
    """The 1-based line of ``path`` holding ``text`` (the first)."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_the_training_loop_migrated_with_replicated_params_scales_the_gradient():
    before, after = LOOP / "before.py", LOOP / "hand_scaled_after.py"
    verdict = verify_files(str(before), str(after), timeout=120)
    shown = render_text(verdict)
    assert verdict.status == "divergent", shown
    # the step's new parameters differ from its first call on; the step's loss (taken before the
    # update) is the same, and the calls pair one for one
    assert "first: call #1 (process 0): [0] [0] values differs" in shown, shown
    site = (f"call of `update` at before.py:{_line(before, 'loss = update(replicated_params, x_split')} (before) | "
            f"hand_scaled_after.py:{_line(after, 'loss = update(params, x_split')} (after)")
    assert site in shown, shown
    assert "compiled calls (process 0): number differs" not in shown, shown


def _verified_on_two_processes(folder: Path, text: str):
    """``text`` against its migration by ``fix`` (every rule, unsafe fixes), on 2 processes x 4 devices."""
    before, after = folder / "before.py", folder / "after.py"
    before.write_text(text)
    after.write_text(run(text, unsafe=True, target=None).text)
    return verify_files(str(before), str(after), processes=2, timeout=120)


PER_HOST = '''import jax
import numpy as np

x = np.arange(jax.local_device_count() * 2, dtype=np.float32).reshape(-1, 2) + 10 * jax.process_index()
local_sum = jax.pmap(lambda v: jax.lax.psum(v, "d"), axis_name="d", devices=jax.local_devices())(x)
'''


def test_a_per_host_pmap_on_two_processes_is_equivalent(tmp_path):
    """A pmap over this process's devices only (its psum sums 4 rows on 2 x 4 devices) migrates to a
    mesh of those devices; the values agree on each process (the verifier took the before side's
    output for a global float32[8x2] over every process's devices: DIVERGENT)."""
    verdict = _verified_on_two_processes(tmp_path, PER_HOST)
    assert verdict.status == "equivalent", render_text(verdict)


UNMAPPED_SCALAR = '''import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.pmap, axis_name="i", in_axes=(0, None))
def scale(x, s):
    return x * s


out = scale(jnp.ones((jax.local_device_count(), 2), dtype=jnp.bfloat16), 0.5)
print("dtype", out.dtype)
'''


def test_an_unmapped_python_scalar_keeps_its_weak_type_on_two_processes(tmp_path):
    """bfloat16 * 0.5 stays bfloat16 on two processes, as on one (and on the real JAX 0.4.13): the
    migration's helper passes a Python number through as it is (it made it a strong float32, which
    the verifier could not see: its legacy side, the installed JAX's pmap, did the same)."""
    verdict = _verified_on_two_processes(tmp_path, UNMAPPED_SCALAR)
    printed = [line for o in verdict.output if o["side"] == "after" for line in o["text"].splitlines()
               if line.startswith("dtype")]
    assert printed == ["dtype bfloat16", "dtype bfloat16"], render_text(verdict)


DONATED = '''import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.pmap, axis_name="i", donate_argnums=(0,))
def step(state, x):
    return state + x


x = np.ones((jax.local_device_count(), 2), np.float32)
state = jax.pmap(jnp.zeros_like)(x)
new_state = step(state, x)
donated = state.is_deleted()
'''


def test_a_donated_state_on_two_processes_is_equivalent(tmp_path):
    """Both sides delete the donated state. Before issue 40 the legacy side left it alive (`donated`
    False: DIVERGENT): the verifier, reading the pmap output `state`, made JAX keep a single-device
    array per shard alive with it, so its buffers could not be donated; it now reads a copy."""
    verdict = _verified_on_two_processes(tmp_path, DONATED)
    assert verdict.status == "equivalent", render_text(verdict)
