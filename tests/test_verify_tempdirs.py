"""Files written under a folder the program made with ``tempfile`` (issue 40, item 2) are
compared by their path inside it, both sides' folders under one name (``<tempdir 1>``): a
2-process checkpoint writer saving its shards into a ``tempfile.mkdtemp()`` folder in the wrong
order is divergent (it was equivalent: "written outside the working folder, not compared"), the
right one equivalent; a global holding the folder's path reads the same on both sides."""

from __future__ import annotations

import pytest

pytest.importorskip("jax", reason='needs the verify extra: pip install "jaxmigrate[verify]"')

from jaxmigrate.verify.report import render_text  # noqa: E402
from jaxmigrate.verify.runner import verify_files  # noqa: E402

BEFORE = '''\
"""A GDA-era checkpoint writer on 2 processes: each saves its shards into a folder of its own."""
import os
import tempfile

import numpy as np
import jax
from jax.experimental import PartitionSpec as P
from jax.experimental.global_device_array import GlobalDeviceArray
from jax.experimental.maps import Mesh

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(16.0).reshape(8, 2)
params = GlobalDeviceArray.from_callback(data.shape, mesh, P("x"), lambda idx: data[idx])
ckpt = tempfile.mkdtemp(prefix="ckpt-")
shards = sorted((s for s in params.local_shards if s.replica_id == 0), key=lambda s: s.index[0].start)
for i, shard in enumerate(shards):
    np.save(os.path.join(ckpt, f"shard_{jax.process_index()}_{i}.npy"), np.asarray(shard.data))
del shards, shard, i
'''

AFTER = '''\
import os
import tempfile

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
data = np.arange(16.0).reshape(8, 2)
params = jax.make_array_from_callback(data.shape, NamedSharding(mesh, P("x")), lambda idx: data[idx])
ckpt = tempfile.mkdtemp(prefix="ckpt-")
shards = sorted((s for s in params.addressable_shards if s.replica_id == 0), key=lambda s: s.index[0].start)
for i, shard in enumerate({order}):
    np.save(os.path.join(ckpt, f"shard_{{jax.process_index()}}_{{i}}.npy"), np.asarray(shard.data))
del shards, shard, i
'''


def _verify(tmp_path, order: str):
    (tmp_path / "before.py").write_text(BEFORE)
    (tmp_path / "after.py").write_text(AFTER.format(order=order))
    verdict = verify_files(str(tmp_path / "before.py"), str(tmp_path / "after.py"), processes=2, timeout=120,
                           recheck=False)
    return verdict, render_text(verdict)


def test_a_two_process_checkpoint_in_a_mkdtemp_folder_in_the_wrong_order_is_divergent(tmp_path):
    verdict, shown = _verify(tmp_path, "reversed(shards)")
    assert verdict.status == "divergent", shown
    assert sorted((d.process, d.where) for d in verdict.differences) == [
        (p, f"file `<tempdir 1>/shard_{p}_{i}.npy`") for p in (0, 1) for i in (0, 1)], shown
    assert not verdict.elsewhere, shown


def test_the_right_two_process_checkpoint_in_a_mkdtemp_folder_is_equivalent(tmp_path):
    verdict, shown = _verify(tmp_path, "shards")
    assert verdict.status == "equivalent", shown
    assert verdict.compared.endswith("2 file(s)"), shown  # each process's two shards
    assert not verdict.elsewhere, shown
