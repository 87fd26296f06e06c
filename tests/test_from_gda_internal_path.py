"""``FROM_GDA`` imported from ``jax._src.pjit`` (where JAX 0.4.x defined it; ``jax.experimental.pjit``
re-exported it) is the same object as ``jax.experimental.pjit.FROM_GDA``: JM503 drops it, and
JM504 does not take the inputs it marks as global for host-local ones.

Not a fixture: the legacy runtime of ``verify`` emulates ``jax._src.pjit.pjit`` but not
``jax._src.pjit.FROM_GDA``, so the program could not run there."""

from __future__ import annotations

from jaxmigrate.rules import BY_CODE
from tests.conftest import run

LEGACY = '''\
from functools import partial
import jax
from {module} import pjit, FROM_GDA
from jax.sharding import PartitionSpec as P

def run(mesh, gda):
    with mesh:
        @partial(pjit, in_shardings=FROM_GDA, out_shardings=P("x"))
        def f(x):
            return x
        return f(gda), jax.process_index()
'''


def _outcome(module: str, unsafe: bool):
    return run(LEGACY.format(module=module), unsafe=unsafe)


def test_from_gda_of_jax_src_pjit_is_handled_like_the_public_one():
    for unsafe in (False, True):
        internal = _outcome("jax._src.pjit", unsafe)
        public = _outcome("jax.experimental.pjit", unsafe)
        assert internal.text == public.text.replace("jax.experimental.pjit", "jax._src.pjit")
        assert "FROM_GDA" not in internal.text and "multihost_utils" not in internal.text
    codes = [f.code for f in run(LEGACY.format(module="jax._src.pjit"), fix=False).findings]
    assert "JM503" in codes and "JM504" not in codes


def test_prefilter_wants_the_internal_spelling():
    data = LEGACY.format(module="jax._src.pjit").encode()
    assert BY_CODE["JM503"].wants(data)
