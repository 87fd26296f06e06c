"""``jax.ad`` as JAX 0.4.13 had it: the module ``jax.interpreters.ad`` itself.

JAX 0.4.14 removed the alias; 0.10.0 made ``jax.ad`` a namespace of new names (``GradRef``, ...).
Given back: a namespace with today's names that reads any other from ``jax.interpreters.ad``, so
``jax.ad.deflinear(...)`` runs as it did and the new names stay.
"""

from __future__ import annotations

import types


class _AdNamespace(types.SimpleNamespace):
    def __getattr__(self, name):
        import jax.interpreters.ad

        return getattr(jax.interpreters.ad, name)


def install() -> None:
    import jax
    current = vars(jax).get("ad")
    if isinstance(current, types.SimpleNamespace) and not isinstance(current, _AdNamespace):  # JAX >= 0.10.0
        jax.ad = _AdNamespace(**vars(current))
