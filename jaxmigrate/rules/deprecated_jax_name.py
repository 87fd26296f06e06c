"""JM802: a public JAX name the target release deprecates, from JAX's API history."""

from __future__ import annotations

from jaxmigrate.patterns.api_references import Reference
from jaxmigrate.rules.base import Example, HistoryRule, snippet


class DeprecatedJaxName(HistoryRule):
    """
    ## What it does
    Reports each reference to a public JAX name that the target release still has but
    deprecates (in a module's deprecation table, or a function that warns), with the release
    that deprecated it and the name JAX pointed to. Where that name is the same object, the
    reference is rewritten as JM801 rewrites removed names.

    Names a hand-written rule migrates (`pjit`: JM701, `jax.experimental.shard_map`: JM602) are
    left to it.

    ## Why is this bad?
    A deprecated name warns on every use and is removed a few releases later: the code stops
    importing on the next upgrade. Renames of the same object are safe.
    """

    code = "JM802"
    name = "deprecated-jax-name"
    summary = "public JAX names the target deprecates (API history), renamed where JAX renamed them"
    fix_safety = "safe"
    examples = (
        Example(
            snippet("""
                import jax.numpy as jnp

                total = jnp.product(jnp.arange(4) + 1)
            """),
            snippet("""
                import jax.numpy as jnp

                total = jnp.prod(jnp.arange(4) + 1)
            """),
            title="deprecated in 0.4.12, removed in 0.4.16",
            target="0.4.14",
        ),
        Example(
            snippet("""
                import jax

                hosts = jax.host_ids()
            """),
            snippet("""
                import jax

                hosts = jax.host_ids()
            """),
            flagged=True,
            title="a deprecated name whose replacement is not the same object",
        ),
    )

    def selects(self, ref: Reference) -> bool:
        return ref.status.state == "deprecated" and not ref.status.private
