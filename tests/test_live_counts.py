"""JM401's count of live buffers, run on the installed JAX: a leak check built on it sees no leak
of its own making (iterating ``addressable_shards`` would create arrays the next count lists)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

AFTER = Path(__file__).resolve().parent.parent / "fixtures" / "JM401" / "leak_check" / "after.py"


def test_the_migrated_leak_check_finds_no_leak():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    code = f"import runpy; g = runpy.run_path({str(AFTER)!r}); print(g['start'], g['leaked'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    start, leaked = map(int, out.stdout.split())
    assert start == 8 and leaked == 0  # one buffer a device of the sharded array; nothing left by the step
