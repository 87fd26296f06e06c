"""Devices as the legacy era named them."""

from __future__ import annotations

from typing import Any


def patch_cpu_device_names() -> None:
    """``str(device)`` of a CPU device: ``TFRT_CPU_0`` until JAX 0.10.0 (``cpu:0`` since)."""
    import jax

    device_type: Any = type(jax.devices("cpu")[0])
    if getattr(device_type, "_jaxmigrate_legacy", False) or not str(jax.devices("cpu")[0]).startswith("cpu:"):
        return
    original: Any = device_type.__str__

    def __str__(self: Any) -> str:
        return f"TFRT_CPU_{self.id}" if self.platform == "cpu" else original(self)

    device_type.__str__ = __str__
    device_type._jaxmigrate_legacy = True
