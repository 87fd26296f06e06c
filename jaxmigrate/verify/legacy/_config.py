"""The removed options ``jax_array`` and ``jax_parallel_functions_output_gda``, and ``jax.config`` the module.

Both are real options of the installed JAX's config in the legacy side's process, so
``jax.config.update(name, value)``, ``jax.config.<name>`` and the 0.4.1 context managers
``jax._src.config.jax_array(...)`` work. Defaults are JAX 0.4.1's: ``jax_array=True`` (its default
since 0.4.1; the emulated arrays are ``jax.Array``s, so code branching on the flag takes its
``jax.Array`` branch), ``jax_parallel_functions_output_gda=False``. The pjit contract is the GDA
era's (host-local inputs and outputs) unless the program itself selects ``jax_array=True``
(``jax_array_selected``): then pjit takes and returns global arrays, as 0.4.1 did in that mode.
Setting it to False makes unspecified in/out specs an error, as it did in 0.4.1.
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Dict, Optional

import jax
from jax._src import config as _config_module

_DEPRECATED = (
    "DeviceArray, ShardedDeviceArray, and GlobalDeviceArray have been deprecated. Please use "
    "`jax.Array`. See https://jax.readthedocs.io/en/latest/jax_array_migration.html on how to "
    "migrate to `jax.Array`."
)


_selected: Dict[str, Optional[bool]] = {"global": None, "local": None}  # what the program set, None where it did not


def _warn_if_disabled(value) -> None:
    if value is not None and not value:
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=3)


def _on_global(value) -> None:
    _selected["global"] = None if value is None else bool(value)
    _warn_if_disabled(value)


def _on_local(value) -> None:
    _selected["local"] = None if value is None else bool(value)
    _warn_if_disabled(value)


def install() -> None:
    if not hasattr(_config_module, "parallel_functions_output_gda"):
        _config_module.jax_array = _config_module.bool_state(
            name="jax_array", default=True, upgrade=True,
            update_global_hook=_on_global, update_thread_local_hook=_on_local,
            help="If True, new pjit behavior will be enabled and `jax.Array` will be used.",
        )
        _config_module.parallel_functions_output_gda = _config_module.bool_state(
            name="jax_parallel_functions_output_gda", default=False, help="If True, pjit will output GDAs."
        )
        _selected.update({"global": None, "local": None})  # setting the default is not the program's choice
    if "jax.config" not in sys.modules:
        # `from jax.config import config`: a module in sys.modules only, so the attribute
        # `jax.config` stays the Config object (as in 0.4.1, where the two shared the name).
        module = types.ModuleType("jax.config", "Legacy alias: `from jax.config import config`.")
        module.config = jax.config
        sys.modules["jax.config"] = module


def jax_array_enabled() -> bool:
    return bool(jax.config.jax_array)


def jax_array_selected() -> bool:
    """Whether the program itself selected jax.Array mode (``jax_array=True`` by update or
    context): pjit then takes and returns global arrays, as 0.4.1 did in that mode."""
    local = _selected["local"]
    return bool(local if local is not None else _selected["global"])


def output_gda() -> bool:
    return bool(jax.config.jax_parallel_functions_output_gda)
