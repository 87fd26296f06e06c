"""The verifier records ``jax.pmap`` calls as compiled calls, paired with their replacement.

A legacy program's pmap calls and the ``jax.jit(jax.shard_map(...))`` calls that replaced them
(the body takes each mapped argument's ``[0]`` and returns ``out[None]``, so the device axis is
kept) are compared call by call: values, shapes, dtypes, the device map and donation. Every
``jax.pmap`` form the user's code writes is recorded: a call, a decorator,
``functools.partial(jax.pmap, axis_name=...)``, ``static_broadcasted_argnums``, ``donate_argnums``.
"""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402


def _pair(tmp_path, before: str, after: str):
    (tmp_path / "before.py").write_text(textwrap.dedent(before))
    (tmp_path / "after.py").write_text(textwrap.dedent(after))
    return verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"))


def _expect(verdict, status: str, *texts: str) -> str:
    shown = render_text(verdict)
    assert verdict.status == status, shown
    for text in texts:
        assert text in shown, shown
    return shown


def _line(source: str, text: str) -> int:
    """The 1-based line of ``source`` holding ``text``."""
    return next(i for i, line in enumerate(source.splitlines(), start=1) if text in line)


# -- every form of pmap, migrated exactly -------------------------------------------------------

FORMS = """\
import functools
import jax
import numpy as np
from jax import lax, pmap

inner = jax.jit(lambda v: v * v)  # the user's jit inside a mapped body: traced, not a call of its own


def scale(x):
    return x * 2 + lax.psum(x, "i")


double = jax.pmap(scale, axis_name="i")


@jax.pmap
def square(x):
    return inner(x)


@functools.partial(jax.pmap, axis_name="j")
def centre(x):
    return x - lax.pmean(x, "j")


def times(x, k):
    return x * k


times_k = pmap(times, static_broadcasted_argnums=1)
bump = jax.pmap(lambda x: x + 1, donate_argnums=0)

x = np.arange(24, dtype=np.float32).reshape(8, 3)
a = double(x)
b = square(a)
c = centre(b)
d = times_k(c, 3)
e = bump(d)
"""

MIGRATED = """\
import functools
import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P

inner = jax.jit(lambda v: v * v)
mesh_i = Mesh(np.array(jax.devices()), ("i",))
mesh_j = Mesh(np.array(jax.devices()), ("j",))


def per_device(f, mesh, **options):
    axis = mesh.axis_names[0]
    body = lambda *args: f(*(v[0] for v in args))[None]  # noqa: E731
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P(axis), out_specs=P(axis)), **options)


def scale(x):
    return x * 2 + lax.psum(x, "i")


def square(x):
    return inner(x)


def centre(x):
    return x - lax.pmean(x, "j")


def times(x, k):
    return x * k


double = per_device(scale, mesh_i)
square = per_device(square, mesh_i)
centre = per_device(centre, mesh_j)
times_3 = per_device(functools.partial(times, k=3), mesh_i)
bump = per_device(lambda x: x + 1, mesh_i, DONATE)

x = np.arange(24, dtype=np.float32).reshape(8, 3)
a = double(x)
b = square(a)
c = centre(b)
d = times_3(c)
e = bump(d)
"""


def test_every_pmap_form_is_a_compiled_call_equal_to_its_jit_of_shard_map(tmp_path):
    """Five pmap calls (call form, decorator, partial decorator, static argument, donation) are
    five compiled calls, each equal to the jit(shard_map) that replaced it: its (8, 3) output
    split one row per device is the same device map."""
    after = MIGRATED.replace("DONATE", "donate_argnums=0")
    _expect(_pair(tmp_path, FORMS, after), "equivalent", "5 compiled call value(s)")


def test_a_replacement_that_drops_pmaps_donation_is_divergent(tmp_path):
    after = MIGRATED.replace(", DONATE", "")
    _expect(_pair(tmp_path, FORMS, after), "divergent",
            "2 difference(s); first: call #5 (process 0): donated inputs differ",
            "deleted input leaves [0]", "no input deleted")


def test_a_replacement_that_drops_the_device_axis_differs_in_shape(tmp_path):
    """``f(a[0])`` without ``[None]``: the per-device rows are concatenated, (24,) not (8, 3)."""
    after = MIGRATED.replace("DONATE", "donate_argnums=0").replace(
        "double = per_device(scale, mesh_i)",
        'double = jax.jit(jax.shard_map(lambda v: scale(v[0]), mesh=mesh_i, in_specs=P("i"), out_specs=P("i")))')
    _expect(_pair(tmp_path, FORMS, after), "divergent", "first: call #1 (process 0): shape differs",
            "float32[8x3]", "float32[24]")


# -- a data-parallel training step --------------------------------------------------------------

STEP = """\
import functools
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@functools.partial(jax.pmap, axis_name="batch")
def train_step(w, x, y):
    grads = lax.pmean(jax.grad(loss)(w, x, y), "batch")
    return w - 0.1 * grads, grads


n = jax.device_count()
w = jax.device_put_replicated(jnp.ones((3,)), jax.devices())
x = np.arange(n * 2 * 3, dtype=np.float32).reshape(n, 2, 3) / 10
y = np.ones((n, 2), np.float32)
for _ in range(2):
    w, g = train_step(w, x, y)
"""

STEP_AFTER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec as P


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


mesh = Mesh(np.array(jax.devices()), ("batch",))
n = jax.device_count()
x = np.arange(n * 2 * 3, dtype=np.float32).reshape(n, 2, 3) / 10
y = np.ones((n, 2), np.float32)
"""

# params replicated P(): the gradient of a replicated value is already summed over the devices,
# and pmean of it leaves it summed: 8x the pmap step's mean gradient
SCALED = STEP_AFTER + """\


def train_step(w, x, y):
    grads = lax.pmean(jax.grad(loss)(w, x[0], y[0]), "batch")
    return (w - 0.1 * grads)[None], grads[None]


train_step = jax.jit(jax.shard_map(train_step, mesh=mesh, in_specs=(P(), P("batch"), P("batch")),
                                   out_specs=P("batch")))
w = jnp.ones((3,))
for _ in range(2):
    ws, g = train_step(w, x, y)
    w = ws[0]
"""

# the device axis kept: each device's params, its own gradient, pmean as pmap had it
EXACT = STEP_AFTER + """\


def train_step(w, x, y):
    grads = lax.pmean(jax.grad(loss)(w[0], x[0], y[0]), "batch")
    return (w[0] - 0.1 * grads)[None], grads[None]


train_step = jax.jit(jax.shard_map(train_step, mesh=mesh, in_specs=P("batch"), out_specs=P("batch")))
w = jnp.broadcast_to(jnp.ones((3,)), (n, 3))
for _ in range(2):
    w, g = train_step(w, x, y)
"""


def test_a_migration_that_scales_the_gradient_diverges_at_the_step(tmp_path):
    verdict = _pair(tmp_path, STEP, SCALED)
    site = (f"`train_step` at before.py:{_line(STEP, 'w, g = train_step(')} (before) | "
            f"after.py:{_line(SCALED, 'ws, g = train_step(')} (after)")
    shown = _expect(verdict, "divergent", "first: call #1 (process 0): [0] values differs", site)
    assert "compiled calls (process 0): number differs" not in shown, shown


def test_the_exact_migration_of_the_step_is_equivalent(tmp_path):
    _expect(_pair(tmp_path, STEP, EXACT), "equivalent", "2 compiled call value(s)")
