"""Run as `python -m mypkg.train`: relative imports, and a sibling named like a standard module."""
import logging

import numpy as np
from jax.experimental.pjit import pjit
from jax.experimental import PartitionSpec as P

from . import logging as pkg_logging
from .util import SCALE, make_mesh

level = logging.getLogger("x").getEffectiveLevel() + pkg_logging.LEVEL
with make_mesh():
    out = pjit(lambda a: a * SCALE, in_axis_resources=P("dp"), out_axis_resources=None)(np.arange(8.0))
