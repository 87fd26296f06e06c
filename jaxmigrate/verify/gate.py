"""`jaxmigrate fix --verify`: write a fixed file only if it computes what the original did."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import List, Sequence

from jaxmigrate.engine.writer import write_atomic
from jaxmigrate.verify.runner import Verdict, verify_files


def verify_and_write(results: Sequence, *, devices: int = 8, processes: int = 1, timeout: float = 60.0) -> List[Verdict]:
    """For each changed result, run the original on the legacy runtime and the fixed text on the
    installed JAX; write the fixed text only when they are equivalent. A divergent or
    undecidable file is left untouched and becomes an error on its result."""
    verdicts = []
    for result in results:
        if result.new_bytes is None:
            continue
        with tempfile.TemporaryDirectory(prefix="jaxmigrate-fixed-") as tmp:
            fixed = os.path.join(tmp, os.path.basename(result.path))
            Path(fixed).write_bytes(result.new_bytes)
            verdict = verify_files(result.path, fixed, before_name=result.path, after_name=result.path,
                                   devices=devices, processes=processes, timeout=timeout)
        verdicts.append(verdict)
        if verdict.status == "equivalent":
            write_atomic(Path(result.path), result.new_bytes)
        else:
            result.error = f"not written: verification {verdict.status}: {verdict.reason}"
            result.changed, result.fixes_applied = False, 0
        result.new_bytes = None
    return verdicts
