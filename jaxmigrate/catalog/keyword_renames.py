"""Keyword arguments JAX renamed: (function, old keyword) -> the new keyword.

Hand-kept, pyupgrade style, but without versions: when the old keyword was deprecated and
removed, and since when the new one exists, are read from the signature history
(``catalog/signatures.py``); ``tests/test_call_arguments.py`` checks each row against it. A new
name of ``POSITIONAL`` means: pass the value as the first positional argument.
"""

from __future__ import annotations

from typing import Dict, Tuple

POSITIONAL = ""
#: pjit's keywords removed in JAX 0.4.14, and the ones that replaced them
AXIS_RESOURCES_RENAMES = {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"}

_QUANTILES = ("percentile", "quantile", "nanpercentile", "nanquantile")

KEYWORD_RENAMES: Dict[Tuple[str, str], str] = {
    ("jax.numpy.clip", "a_min"): "min",
    ("jax.numpy.clip", "a_max"): "max",
    ("jax.numpy.clip", "a"): POSITIONAL,
    ("jax.numpy.reshape", "newshape"): "shape",
    **{(f"jax.numpy.{name}", "interpolation"): "method" for name in _QUANTILES},
    ("jax.local_devices", "host_id"): "process_index",
    ("jax.export.export", "lowering_platforms"): "platforms",
    ("jax.export.symbolic_args_specs", "symbolic_scope"): "scope",
    ("jax.export.symbolic_args_specs", "symbolic_constraints"): "constraints",
    ("jax.numpy.linalg.pinv", "rcond"): "rtol",  # as NumPy 2 renamed it: the same cut-off
    ("jax.scipy.special.beta", "x"): "a",
    ("jax.scipy.special.beta", "y"): "b",
}

#: Keywords a function deprecates in a helper its body calls, which the signature history cannot
#: see: (function, keyword) -> (the release from which every call warns, checked by hand at the
#: tags; the code to write instead, ``{value}`` for the keyword's value).
KEYWORD_DEPRECATIONS: Dict[Tuple[str, str], Tuple[str, str]] = {
    # jit runs through pjit's argument parsing from 0.4.4 (jax_jit_pjit_api_merge on), which warns
    ("jax.jit", "backend"): ("0.4.4", "jax.device_put(x, jax.local_devices(backend={value})[0]) on each input"),
    ("jax.jit", "device"): ("0.4.4", "jax.device_put(x, {value}) on each input"),
}

#: Keywords JAX removed whose old default, passed as it is, asked for nothing: (function, keyword)
#: -> (that default's source text, the release from which any value raises, checked at the tags,
#: and the code to write for another value, as JAX's own error message there says). A call that
#: passes the default loses the keyword: exact, and the keyword raises even with its old default.
KEYWORD_NO_OP_DEFAULTS: Dict[Tuple[str, str], Tuple[str, str, str]] = {
    # jax/_src/ad_checkpoint.py at jax-v0.10.0: NotImplementedError for any `concrete` passed
    **{(name, "concrete"): ("False", "0.10.0", "static_argnums=(...) for the arguments the function branches on in "
                            "Python (with `jax.ensure_compile_time_eval()` where jax.numpy computes on them)")
       for name in ("jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint")},
}

#: Keywords JAX replaced by another that spells the same choices with other values: (function,
#: keyword) -> (the new keyword, {an old value's source text: the new value's}). The mapping is
#: the one JAX applied itself while the old keyword was deprecated, so the rewrite is exact; another
#: value (a variable) is reported with the mapping. Where the target's `**kwargs` takes the old
#: keyword once it is gone, the call does not raise but passes it on (checked at the tags).
KEYWORD_VALUE_RENAMES: Dict[Tuple[str, str], Tuple[str, Dict[str, str]]] = {
    # jax/_src/callback.py at jax-v0.4.35: `vmap_method = "legacy_vectorized" if vectorized else
    # "sequential"`; jax-v0.6.0 to 0.9.2 raise ValueError for any `vectorized`; from jax-v0.10.0 the
    # parameter is gone and `**kwargs` hands `vectorized=` to the callback (TypeError in most)
    ("jax.pure_callback", "vectorized"): ("vmap_method", {"True": '"legacy_vectorized"', "False": '"sequential"'}),
}
