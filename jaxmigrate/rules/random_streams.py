"""JM904: a module of a JAX before 0.5.0 that draws random numbers, which the new default streams change."""

from __future__ import annotations

from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.catalog.changed_defaults import KEEP_OLD_STREAMS, STREAMS_CHANGED_IN, STREAMS_FLAG
from jaxmigrate.core.findings import Finding
from jaxmigrate.patterns.random_streams import first_draw, sets_streams, written_before_new_streams
from jaxmigrate.rules.base import Example, HistoryRule, Rule, snippet


class RandomStreams(Rule):
    """
    ## What it does
    Reports, once per module, the first random draw (`jax.random.split`, `fold_in`, `normal`,
    `uniform`, ... any call that hashes a key) of a module that ran on a JAX before 0.5.0, for a
    target from 0.5.0 on. A module ran before 0.5.0 when it uses a name JAX removed in 0.5.0 or
    earlier (`jax.numpy.product`, `jax.random.KeyArray`, `jax.xla`, ...; it cannot run on a
    later release) or is written for GDA-era pjit; the evidence is named in the message, and
    `fix` keeps reporting it after its fixes removed that evidence. A module that sets
    `jax_threefry_partitionable` itself has chosen: nothing is reported.

    ## Why is this bad?
    JAX 0.5.0 made `jax_threefry_partitionable` True by default, so the same key draws other
    numbers: after `k1, k2 = jax.random.split(jax.random.PRNGKey(1))`, `jax.random.normal(k2,
    (3,))` is `[0.511, 2.276, 0.240]` on 0.4.13 and `[-0.244, 0.123, -0.763]` on 0.10.2. Nothing
    in the source shows it: tests with golden values fail, a statistical test may, and runs
    before and after the upgrade differ. The new streams are JAX's numbers from now on, so
    `fix` does not write the option: to keep the old numbers, add
    `jax.config.update("jax_threefry_partitionable", False)` where the program starts (a test
    suite's `conftest.py`), not in a library's modules, which would change every importer's
    numbers; to take the new ones, nothing to change (silence the report with `# noqa: JM904`
    or `ignore = ["JM904"]`). Report only: no fix.
    """

    code = "JM904"
    name = "random-streams"
    summary = "random draws of a module that ran before JAX 0.5.0, whose default streams changed the numbers"
    triggers = (b"jax",)
    requires = ((b"random",),)
    notice = True  # a removed name inside the draw (`jax.random.shuffle`, an argument) is JM801's to report
    examples = (
        Example(
            snippet("""
                import jax

                def init(seed, shape):
                    weights = jax.random.normal(jax.random.PRNGKey(seed), shape)
                    return weights, jax.numpy.product(weights)
            """),
            snippet("""
                import jax

                def init(seed, shape):
                    weights = jax.random.normal(jax.random.PRNGKey(seed), shape)
                    return weights, jax.numpy.prod(weights)
            """),
            flagged=True,
            title="the draw is reported (the removed name, JM801, is renamed)",
        ),
        Example(
            snippet("""
                import jax

                jax.config.update("jax_threefry_partitionable", False)

                def init(seed, shape):
                    weights = jax.random.normal(jax.random.PRNGKey(seed), shape)
                    return weights, jax.numpy.prod(weights)
            """),
            title="the module keeps the old streams itself",
        ),
    )

    @classmethod
    def wants(cls, data) -> bool:
        """A file that draws and may use a name some release removed (the history's prefilter, asked
        once per file for JM801-JM803 too): a file of today's JAX alone is not even parsed for it."""
        return super().wants(data) and HistoryRule.wants(data)

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not ctx.target_at_least(STREAMS_CHANGED_IN):
            return
        draw = first_draw(ctx)
        if draw is None or sets_streams(ctx):
            return
        evidence = written_before_new_streams(ctx)
        if evidence is None:
            return
        call, name = draw
        yield self.finding(
            ctx, call,
            f"`{name}` draws other numbers since JAX {STREAMS_CHANGED_IN} (`{STREAMS_FLAG}` became the default) than "
            f"on the JAX this module ran on ({evidence}); to keep them, add `{KEEP_OLD_STREAMS}` at program start",
            replacement=KEEP_OLD_STREAMS)
