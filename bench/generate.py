"""Generate a synthetic tree of JAX training code: clean modules with legacy pjit-era ones mixed in.

    python bench/generate.py OUT_DIR --lines 600000 [--legacy-share 0.25] [--seed 0]

Files are packages of models, data pipelines, training loops, utilities and tests, 40 to 900
lines each, under a licence header (whose "distributed" a naive prefilter trips on). About a
quarter of them (``--legacy-share``) use removed APIs in the forms real trees have: pjit with
``in_axis_resources``, ``maps.Mesh``, ``experimental.PartitionSpec``, GDA construction and
attributes, ``FROM_GDA``, ``jax_array`` flags, ``live_buffers``, ``jax.tree_map``, ``xmap``,
``jax.experimental.shard_map``, host-local inputs in multi-process code. Clean modules use the
current APIs (``jax.sharding``, ``jax.jit`` with shardings, ``jax.tree_util``, ``jax.config.update``), so the prefilter is
measured on code that looks like the legacy code. Every file parses; the same seed gives the
same tree.
"""

from __future__ import annotations

import argparse
import random
import textwrap
from pathlib import Path
from typing import List, Optional, Set, Tuple

LICENSE = '''\
# Copyright {year} The {org} Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
'''

WORDS = ("encoder", "decoder", "attention", "mlp", "embed", "block", "layer", "head", "router", "expert",
         "batch", "token", "logits", "params", "state", "grads", "opt", "metric", "loss", "mask", "cache",
         "rotary", "norm", "proj", "shard", "replica", "stage", "window", "chunk", "vocab")
AXES = (("data", "model"), ("dp", "mp"), ("batch", "tensor"), ("replica", "data", "mdl"), ("x", "y"))


def _name(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.sample(WORDS, n))


def _camel(rng: random.Random) -> str:
    return "".join(w.capitalize() for w in rng.sample(WORDS, 2))


# Blocks: (imports, code). Clean blocks first ------------------------------------------------
def clean_function(rng: random.Random) -> Tuple[Set[str], str]:
    f, a, b = _name(rng), rng.choice(WORDS), rng.choice(WORDS) + "_scale"
    body = "\n".join(f"    {a}_{i} = jnp.tanh({a}_{i - 1} * {b}) + {rng.random():.3f}" for i in range(1, rng.randint(3, 12)))
    return {"import jax.numpy as jnp"}, f'''
def {f}({a}_0, {b}: float = {rng.random():.2f}):
    """Apply {rng.randint(2, 9)} smooth steps to ``{a}_0``."""
{body}
    return {a}_{rng.randint(1, 2)}
'''


def clean_module_class(rng: random.Random) -> Tuple[Set[str], str]:
    cls, feat = _camel(rng), rng.choice((64, 128, 256, 512, 1024))
    return {"import flax.linen as nn", "import jax.numpy as jnp"}, f'''
class {cls}(nn.Module):
    """A {rng.choice(WORDS)} block with {feat} features."""

    features: int = {feat}
    dropout_rate: float = {rng.random() / 4:.2f}

    @nn.compact
    def __call__(self, x, deterministic: bool = True):
        residual = x
        x = nn.LayerNorm()(x)
        x = nn.Dense(self.features * {rng.choice((2, 4))})(x)
        x = nn.gelu(x)
        x = nn.Dropout(self.dropout_rate)(x, deterministic=deterministic)
        x = nn.Dense(self.features)(x)
        return residual + x
'''


def clean_sharding(rng: random.Random) -> Tuple[Set[str], str]:
    axes = rng.choice(AXES)
    f = _name(rng)
    return {"import jax", "import numpy as np", "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P"}, f'''
jax.config.update("jax_default_matmul_precision", {rng.choice(("'bfloat16'", "'float32'", "'highest'"))})


def {f}_mesh(devices=None):
    devices = np.array(devices if devices is not None else jax.devices()).reshape({(-1,) + (1,) * (len(axes) - 1)})
    return Mesh(devices, {axes!r})


def {f}_step(state, batch, mesh):
    sharding = NamedSharding(mesh, P({axes[0]!r}))
    batch = jax.device_put(batch, sharding)
    step = jax.jit(lambda s, b: (s, jax.tree_util.tree_map(lambda x: x.mean(), b)),
                   in_shardings=(None, sharding), out_shardings=None)
    if jax.process_index() == 0:
        print("step on", mesh.shape)
    return step(state, batch)
'''


def clean_data(rng: random.Random) -> Tuple[Set[str], str]:
    f, n = _name(rng), rng.choice((8, 16, 32, 64))
    return {"import numpy as np", "from typing import Iterator"}, f'''
def {f}_batches(data: np.ndarray, batch_size: int = {n}, seed: int = {rng.randint(0, 999)}) -> Iterator[np.ndarray]:
    """Shuffled batches of ``data``; the last partial batch is dropped."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(data))
    for start in range(0, len(order) - batch_size + 1, batch_size):
        yield data[order[start:start + batch_size]]
'''


def clean_test(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"import jax.numpy as jnp", "import numpy as np"}, f'''
def test_{f}_{rng.randint(0, 99)}():
    x = jnp.arange({rng.randint(4, 64)}, dtype=jnp.float32)
    np.testing.assert_allclose(jnp.cumsum(x)[-1], x.sum(), rtol=1e-6)
'''


def clean_config(rng: random.Random) -> Tuple[Set[str], str]:
    cls = _camel(rng) + "Config"
    fields = "\n".join(f"    {w}_{i}: int = {rng.randint(1, 4096)}" for i, w in enumerate(rng.sample(WORDS, rng.randint(3, 9))))
    return {"import dataclasses"}, f'''
@dataclasses.dataclass(frozen=True)
class {cls}:
{fields}
    learning_rate: float = {rng.random() / 100:.5f}

    def replace(self, **changes) -> "{cls}":
        return dataclasses.replace(self, **changes)
'''


CLEAN = (clean_function, clean_module_class, clean_sharding, clean_data, clean_test, clean_config)


# Legacy blocks --------------------------------------------------------------------------------
def legacy_pjit(rng: random.Random) -> Tuple[Set[str], str]:
    axes, f = rng.choice(AXES), _name(rng)
    return {"from jax.experimental.pjit import pjit", "from jax.experimental import PartitionSpec as P",
            "from jax.experimental.maps import Mesh", "import numpy as np", "import jax"}, f'''
def {f}_train(step_fn, state, batch):
    mesh = Mesh(np.array(jax.devices()).reshape({(-1,) + (1,) * (len(axes) - 1)}), {axes!r})
    p_step = pjit(step_fn, in_axis_resources=(None, P({axes[0]!r})), out_axis_resources=None)
    with mesh:
        return p_step(state, batch)
'''


def legacy_constraint(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"from jax.experimental.pjit import with_sharding_constraint", "from jax.experimental import PartitionSpec"}, f'''
def {f}_constrain(x):
    return with_sharding_constraint(x, axis_resources=PartitionSpec("data", None))
'''


def legacy_maps(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"from jax.experimental import maps", "import numpy as np", "import jax"}, f'''
def {f}_with_mesh(fn, *args):
    devices = np.asarray(jax.devices()).reshape(-1, 1)
    with maps.Mesh(devices, ("dp", "mp")):
        return fn(*args)
'''


def legacy_gda(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"from jax.experimental.global_device_array import GlobalDeviceArray", "import numpy as np"}, f'''
def {f}_to_gda(global_shape, mesh, mesh_axes, host_array: np.ndarray):
    gda = GlobalDeviceArray.from_callback(global_shape, mesh, mesh_axes, lambda index: host_array[index])
    assert isinstance(gda, GlobalDeviceArray)
    return [shard.data for shard in gda.local_shards]
'''


def legacy_config(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"import jax"}, f'''
jax.config.update("jax_array", True)


def {f}_is_array_mode():
    if jax.config.jax_array:
        return "array"
    return "gda"
'''


def legacy_tree(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"import jax"}, f'''
def {f}_norm(tree):
    leaves = jax.tree_leaves(jax.tree_map(lambda x: (x ** 2).sum(), tree))
    return sum(leaves) ** 0.5
'''


def legacy_xmap(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"from jax.experimental.maps import xmap"}, f'''
{f}_xmapped = xmap(lambda x: x * 2, in_axes=["batch", ...], out_axes=["batch", ...], axis_resources={{"batch": "data"}})
'''


def legacy_live_buffers(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"import jax"}, f'''
def {f}_free_memory():
    for buf in jax.devices()[0].client.live_buffers():
        buf.delete()
'''


def legacy_multiprocess(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"import jax", "from jax.experimental.pjit import pjit", "from jax.sharding import PartitionSpec as P"}, f'''
def {f}_eval(step, mesh, params, batch):
    p_step = pjit(step, in_shardings=(None, P("data")), out_shardings=None)
    local = batch[jax.process_index()]
    with mesh:
        return p_step(params, local)
'''


def legacy_shard_map(rng: random.Random) -> Tuple[Set[str], str]:
    f = _name(rng)
    return {"from jax.experimental.shard_map import shard_map", "from jax.sharding import PartitionSpec as P"}, f'''
def {f}_psum(mesh, x):
    return shard_map(lambda b: b.sum(), mesh=mesh, in_specs=P("data"), out_specs=P(), check_rep=False)(x)
'''


LEGACY = (legacy_pjit, legacy_constraint, legacy_maps, legacy_gda, legacy_config, legacy_tree, legacy_xmap,
          legacy_live_buffers, legacy_multiprocess, legacy_shard_map)


# One long legacy file (bench/one_file.py): a block per function, numbered, so that names stay
# unique however long the file is --------------------------------------------------------------
ONE_FILE_IMPORTS = {
    "pjit": ("import jax", "from jax.experimental import PartitionSpec as P", "from jax.experimental.pjit import pjit"),
    "mixed": ("import numpy as np", "", "import jax", "from jax.experimental import PartitionSpec as P",
              "from jax.experimental.global_device_array import GlobalDeviceArray",
              "from jax.experimental.maps import Mesh", "from jax.experimental.pjit import pjit, with_sharding_constraint",
              "from jax.experimental import maps"),
    "multihost": ("import numpy as np", "", "import jax", "from jax.experimental import multihost_utils",
                  "from jax.experimental.maps import xmap", "from jax.experimental.pjit import pjit, FROM_GDA",
                  "from jax.experimental.shard_map import shard_map",
                  "from jax.sharding import Mesh, PartitionSpec as P, PositionalSharding", "",
                  'mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))'),
}


def _one_pjit(i: int) -> str:
    """The issue's module: each function has a ``jax.tree_map`` and a pjit with axis resources."""
    return f'''
def step_{i}(state, batch):
    p_step = pjit(train_{i % 7}, in_axis_resources=(None, P("data")), out_axis_resources=None)
    return p_step(state, jax.tree_map(lambda x: x * {i % 5 + 2}, batch))
'''


def _one_mixed(i: int) -> str:
    """One of several legacy patterns: maps.Mesh and ``with mesh:``, GDA construction and
    attributes, a sharding constraint, config reads, live buffers, the tree aliases."""
    kind = i % 6
    if kind == 0:
        return f'''
def train_{i}(step_fn, state, batch):
    mesh = Mesh(np.array(jax.devices()).reshape(-1, 1), ("data", "model"))
    p_step = pjit(step_fn, in_axis_resources=(None, P("data")), out_axis_resources=None)
    with mesh:
        return p_step(state, batch)
'''
    if kind == 1:
        return f'''
def to_gda_{i}(global_shape, mesh, host_array):
    gda = GlobalDeviceArray.from_callback(global_shape, mesh, P("data"), lambda index: host_array[index])
    assert isinstance(gda, GlobalDeviceArray)
    return [shard.data for shard in gda.local_shards], gda.mesh_axes
'''
    if kind == 2:
        return f'''
def constrain_{i}(x):
    x = with_sharding_constraint(x, axis_resources=P("data", None))
    return jax.tree_map(lambda y: y + {i}, x)
'''
    if kind == 3:
        return f'''
def with_mesh_{i}(fn, *args):
    devices = np.asarray(jax.devices()).reshape(-1, 1)
    with maps.Mesh(devices, ("dp", "mp")):
        return fn(*args)
'''
    if kind == 4:
        return f'''
def free_memory_{i}():
    for buf in jax.devices()[0].client.live_buffers():
        buf.delete()
    return jax.tree_leaves({{"a": {i}}})
'''
    return f'''
def norm_{i}(tree):
    if jax.config.jax_array:
        leaves = jax.tree_leaves(jax.tree_map(lambda x: (x ** 2).sum(), tree))
        return sum(leaves) ** 0.5
    return None
'''


def _one_multihost(i: int) -> str:
    '''Multi-process code under a module-level mesh: host-local pjit inputs, ``FROM_GDA``,
    ``shard_map``, ``PositionalSharding``, ``device_put_sharded`` and ``xmap``.'''
    kind = i % 6
    if kind == 0:
        return f'''
def train_{i}(weights, batch):
    local = batch[jax.process_index()]
    with mesh:
        step = pjit(update_{i % 7}, in_axis_resources=(None, P("data")), out_axis_resources=(None, P("data")))
        weights, out = step(weights, local)
    return weights, out
'''
    if kind == 1:
        return f'''
def evaluate_{i}(params, gda, host):
    f = pjit(loss_{i % 7}, in_axis_resources=(FROM_GDA, P("data")), out_axis_resources=None)
    with mesh:
        return f(gda, host)
'''
    if kind == 2:
        return f'''
def psum_{i}(x):
    return shard_map(lambda b: b.sum(), mesh, in_specs=P("data"), out_specs=P(), check_rep=False)(x)
'''
    if kind == 3:
        return f'''
def place_{i}(x):
    grid = PositionalSharding(jax.devices()).reshape(4, 2)
    return jax.device_put(x, grid.replicate(1))
'''
    if kind == 4:
        return f'''
def shards_{i}(values):
    devices = jax.local_devices()
    return jax.device_put_sharded([v + {i} for v in values], devices)
'''
    return f'''
double_{i} = xmap(lambda x: x * {i}, in_axes=["batch", ...], out_axes=["batch", ...], axis_resources={{"batch": "data"}})
'''


def one_file(lines: int, kind: str = "pjit") -> str:
    """A single legacy module of about ``lines`` lines (deterministic: no randomness), made of
    numbered functions: ``pjit``, the issue's module (a ``jax.tree_map`` and a pjit with axis
    resources in each), ``mixed``, several legacy patterns in turn, or ``multihost``, the
    multi-process ones."""
    block = {"pjit": _one_pjit, "mixed": _one_mixed, "multihost": _one_multihost}[kind]
    parts = [LICENSE.format(year=2022, org="Research"), f'"""A long legacy module ({kind})."""\n\n',
             "\n".join(ONE_FILE_IMPORTS[kind]), "\n"]
    total, i = sum(p.count("\n") for p in parts), 0
    while total < lines:
        code = "\n" + block(i)
        parts.append(code)
        total += code.count("\n")
        i += 1
    return "".join(parts)


def module(rng: random.Random, target_lines: int, legacy: bool) -> str:
    """One module of about ``target_lines`` lines: clean blocks, plus one to three legacy ones."""
    imports: Set[str] = set()
    blocks: List[str] = []
    if legacy:
        for make in rng.sample(LEGACY, rng.randint(1, 3)):
            imps, code = make(rng)
            imports |= imps
            blocks.append(code)
    lines = sum(b.count("\n") for b in blocks)
    while lines < target_lines:
        imps, code = rng.choice(CLEAN)(rng)
        imports |= imps
        blocks.append(code)
        lines += code.count("\n")
    rng.shuffle(blocks)
    plain = sorted(i for i in imports if i.startswith("import "))
    froms = sorted(i for i in imports if i.startswith("from "))
    header = LICENSE.format(year=rng.randint(2019, 2024), org=rng.choice(("Flax", "EasyLM", "Research", "Lab")))
    doc = f'"""{_camel(rng)} {rng.choice(("utilities", "model", "training loop", "input pipeline", "tests"))}."""\n\n'
    return header + doc + "\n".join(plain + froms) + "\n\n" + "\n".join(b.strip("\n") + "\n\n" for b in blocks).rstrip() + "\n"


def generate(out: Path, lines: int, legacy_share: float = 0.25, seed: int = 0,
             max_files: Optional[int] = None) -> Tuple[int, int, int]:
    """Write the tree (at most ``max_files`` files when given); returns (files, lines, legacy files)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    total = files = legacy_files = 0
    while total < lines and (max_files is None or files < max_files):
        package = out / f"{rng.choice(('models', 'data', 'train', 'utils', 'tests', 'serving'))}_{files // 40}"
        package.mkdir(exist_ok=True)
        size = min(int(rng.lognormvariate(5.3, 0.7)), 900)  # median ~200 lines, a long tail
        legacy = rng.random() < legacy_share
        text = module(rng, max(size, 40), legacy)
        prefix = "test_" if package.name.startswith("tests") else ""
        (package / f"{prefix}{_name(rng)}_{files}.py").write_text(text)
        files += 1
        legacy_files += legacy
        total += text.count("\n")
    return files, total, legacy_files


def main() -> None:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=600_000)
    parser.add_argument("--legacy-share", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    files, lines, legacy = generate(args.out, args.lines, args.legacy_share, args.seed)
    print(f"{args.out}: {files} files, {lines} lines, {legacy} with legacy names")


if __name__ == "__main__":
    main()
