"""A small library of early 2023 whose modules read removed JAX names as they are imported."""
from tracelib import keys, levels, transform
from tracelib.keys import KEY_SHAPE, check_key
from tracelib.levels import TraceLevel
from tracelib.transform import refuse_jitted

__all__ = ["KEY_SHAPE", "TraceLevel", "check_key", "keys", "levels", "refuse_jitted", "transform"]
