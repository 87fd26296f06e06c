"""Defaults JAX changed, so that the same code computes other values: facts only (names, versions).

Random streams: JAX 0.5.0 made ``jax_threefry_partitionable`` True, so the same key draws other
numbers (``split``, ``fold_in`` and every sampler hash the key). The option still exists and keeps
the old streams when set False. ``DRAWS``: the functions of ``jax.random`` that hash a key (every
one but those that make, wrap or unwrap keys), as 0.4.13 to 0.10.2 have them.
"""

from __future__ import annotations

STREAMS_CHANGED_IN = "0.5.0"
STREAMS_FLAG = "jax_threefry_partitionable"
KEEP_OLD_STREAMS = f'jax.config.update("{STREAMS_FLAG}", False)'

DRAWS = tuple(f"jax.random.{name}" for name in (
    "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare", "choice",
    "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma", "generalized_normal",
    "geometric", "gumbel", "laplace", "loggamma", "logistic", "lognormal", "maxwell", "multinomial",
    "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson", "rademacher",
    "randint", "rayleigh", "shuffle", "split", "t", "triangular", "truncated_normal", "uniform", "wald",
    "weibull_min",
))
