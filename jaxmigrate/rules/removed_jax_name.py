"""JM801: a public JAX name the target release no longer has, from JAX's API history."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from jaxmigrate.analysis.context import FileContext
from jaxmigrate.analysis.folding import fold_false
from jaxmigrate.catalog.api_history import is_private, status
from jaxmigrate.core.findings import Finding, Fix
from jaxmigrate.patterns.api_references import Reference
from jaxmigrate.patterns.attribute_guards import attribute_guards
from jaxmigrate.prefilter import raw
from jaxmigrate.rules.base import Example, HistoryRule, snippet


class RemovedJaxName(HistoryRule):
    """
    ## What it does
    Looks up every reference to a public JAX name (every import form, aliases, attribute chains)
    in JAX's API history, generated from JAX's own source at every release tag, and reports
    each one the target release no longer has, at its line, with the release that removed it and
    the name JAX pointed to instead. Where that name is the same object under a new name
    (`jax.numpy.product` → `jax.numpy.prod`, `jax.core.Primitive` → `jax.extend.core.Primitive`)
    or a drop-in that jaxmigrate's table lists (`jax.random.KeyArray` → `jax.Array`,
    `jax.tree_multimap` → `jax.tree_util.tree_map`), the reference is rewritten: a use through
    the old module keeps it (`jnp.product` → `jnp.prod`), a `from` import keeps the local name
    (`from jax.numpy import prod as product`). A few calls change shape: `jax.lax.tie_in(x, y)`
    becomes `y`, `jax.random.shuffle(key, x)` becomes
    `jax.random.permutation(key, x, independent=True)`, and in a `with` statement
    `jax.experimental.enable_x64(v)` / `disable_x64()` become `jax.enable_x64(v)` /
    `jax.enable_x64(False)`, `host_callback.barrier_wait()` becomes `jax.effects_barrier()`,
    and `jax.random.default_prng_impl().key_shape` (or an `impl` read only for `.key_shape`)
    becomes the shape of a default key's data,
    `jax.eval_shape(lambda seed: jax.random.key_data(jax.random.key(seed)), 0).shape`.
    jaxlib's function types (`jax.xla.xe.CompiledFunction`/`PjitFunction`, also under
    `jax.lib.xla_extension`), which libraries test at import to refuse a jitted function, become
    `type(jax.jit(lambda: 0))` (unsafe); `PmapFunction` has no successor (a pmapped function is
    a plain function since 0.8.0) and is dropped from a tuple of classes (unsafe), else reported.
    A set's method on a registry that is no longer a set (`mlir.lowerable_effects.add`) is
    reported too.

    Every replacement named is one the target has, by the history: a name reached through a
    removed module is looked up in the module that replaced it (`jax.pxla.ShardedDeviceArray`:
    not `jax.interpreters.pxla`, which dropped it too, but `jax.Array`); a name JAX gave no
    replacement for whose same name `jax.extend` has at the target is pointed there
    (`jax.core.unsafe_get_axis_names_DO_NOT_USE` → `jax.extend.core....`, reported, not
    rewritten). A name removed and later added back as something else (`jax.ad`: the module
    `jax.interpreters.ad` until 0.4.14, a namespace of new names since 0.10.0) is read as the old
    one where the module it stood for has the member at the target: `jax.ad.deflinear` becomes
    `jax.interpreters.ad.deflinear` (safe: `jax.ad` was that very module), `jax.ad.GradRef` is
    left alone. Calls that have a known rewrite but no drop-in carry the code to write in the
    finding's `suggestion` (JSON, SARIF, `fix --report`), written from the call:
    `hcb.call(fn, x, result_shape=S)` → `jax.experimental.io_callback(fn, S, x)` (or
    `jax.pure_callback` for a pure `fn`), `hcb.id_tap(tap, x)` →
    `jax.experimental.io_callback(lambda a: tap(a, ()), None, x, ordered=True)` (then
    `jax.effects_barrier()` where the taps must have run), `jax.xla_computation(f)(x)` →
    `jax.jit(f).lower(x).compiler_ir('hlo')`. A snapshot of the trace state (a tuple of values
    read from `jax.core.thread_local_state....trace_stack` and `jax.core.cur_sublevel()`, and the
    statements that only feed it) becomes `jax.extend.core.get_opaque_trace_state()`, JAX's
    opaque state that compares with `==` as the tuple did (unsafe: its parts cannot be read);
    other reads of them are reported with that call to write. A trace's `.level`
    (`find_top_trace(args).level`, under any of its names: the level went with the trace stack in
    0.4.36, while `find_top_trace` itself lives on as `jax.extend.core.find_top_trace`) is
    reported at every run, the rename of the function notwithstanding.

    The removed array classes (`DeviceArray`, `ShardedDeviceArray`, `KeyArray`/`PRNGKeyArray`)
    become `jax.Array` in annotations, in an alias only annotations use
    (`Key = jax.random.KeyArray`), and in a guard that only fails for other values
    (`assert isinstance(x, jnp.DeviceArray)`, `assertIsInstance`). Every array and tracer is a
    `jax.Array` now, so elsewhere the rename takes more than the class did. An `isinstance` test
    of a key type is reported with `jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)` to
    write, one of `ShardedDeviceArray` with the migration guide's test,
    `isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and x.is_fully_addressable
    and len(x.sharding.device_set) > 1`. A `DeviceArray` test that told the class from other
    arrays or tracers (a chain, `if`/`elif` or consecutive `if ...: return` statements, with
    another test of the same value for arrays or tracers) is reported with
    `isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer) and x.is_fully_addressable`,
    as is `type(x) is DeviceArray`; another `DeviceArray` test, and a class used as a value (a
    registry keyed by it, `setattr` on it), are unsafe renames whose message says what
    `jax.Array` takes besides (tracers, arrays that span processes) and where those values went
    before. An import of such a class is judged by its name's uses.

    A guard `hasattr(jax, "device_put_sharded")` on a name the target no longer has is False
    there: the condition is folded as the target computes it (`if` keeps its `else`, `if not`
    its body), so the code that runs is the code left.

    An import of a removed name is reported as well as its uses: the import fails first.
    Names a hand-written rule migrates (`maps.Mesh`, `GlobalDeviceArray`, `jax.tree_map`, ...)
    are left to it where it reports them.

    ## Why is this bad?
    The import or attribute access raises on the target release: the module does not even
    import. Fix safety: renames of the same object are safe; an array class rewritten to
    `jax.Array` in a type test or used as a value is unsafe (see above); `tie_in` is safe when
    its dropped first argument is a plain name, `shuffle` → `permutation` is unsafe, the x64
    context managers are safe; `barrier_wait()` → `jax.effects_barrier()` is unsafe (before JAX
    0.4.30, host_callback's own legacy taps are not effects the barrier waits for).
    """

    code = "JM801"
    name = "removed-jax-name"
    summary = "public JAX names the target no longer has (API history), renamed where JAX renamed them"
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
            title="a rename keeps the module it is reached through",
        ),
        Example(
            snippet("""
                from jax.random import KeyArray, split

                def halves(key: KeyArray):
                    return split(key)
            """),
            snippet("""
                from jax import Array as KeyArray
                from jax.random import split

                def halves(key: KeyArray):
                    return split(key)
            """),
            title="a `from` import keeps its local name",
        ),
        Example(
            snippet("""
                import jax
                from jax.interpreters import pxla

                def replicate(state, devices):
                    if isinstance(state, pxla.ShardedDeviceArray):
                        return state
                    return jax.device_put_replicated(state, devices)
            """),
            snippet("""
                import jax
                from jax.interpreters import pxla

                def replicate(state, devices):
                    if isinstance(state, pxla.ShardedDeviceArray):
                        return state
                    return jax.device_put_replicated(state, devices)
            """),
            flagged=True,
            title="a type test that told a removed array class apart is reported with the test to write",
        ),
        Example(
            snippet("""
                from jax.experimental import host_callback as hcb

                def log(x):
                    return hcb.id_print(x)
            """),
            snippet("""
                from jax.experimental import host_callback as hcb

                def log(x):
                    return hcb.id_print(x)
            """),
            flagged=True,
            title="no drop-in replacement: the import and each use are reported",
        ),
        Example(
            snippet("""
                import jax

                y = jax.lax.tie_in(x, jax.numpy.zeros(3))
            """),
            snippet("""
                import jax

                y = jax.numpy.zeros(3)
            """),
            title="a call transform",
        ),
        Example(
            snippet("""
                from jax.experimental import host_callback as hcb

                def run(step, x):
                    step(x)
                    hcb.barrier_wait()
            """),
            snippet("""
                import jax

                def run(step, x):
                    step(x)
                    jax.effects_barrier()
            """),
            unsafe=True,
            title="waiting for the host callbacks",
        ),
        Example(
            snippet("""
                import jax

                mapped = jax.tree_util.tree_map(abs, [-1, 2])
                n = jax.numpy.prod(jax.numpy.arange(3))
            """),
            title="current names",
        ),
    )

    def selects(self, ref: Reference) -> bool:
        return ref.status.state == "removed" and not ref.status.private

    @classmethod
    def wants(cls, data) -> bool:
        """The history's prefilter, or a ``hasattr(m, "name")`` guard in a file that says ``jax``
        (the name asked for is a string, which the history's prefilter may not read as a name)."""
        if super().wants(data):
            return True
        text = raw(data)
        return (b"hasattr" in text and b"jax" in text and _GUARD.search(text) is not None
                or b"find_top_trace" in text and b".level" in text)

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        yield from super().check(ctx)
        if "find_top_trace" in ctx.source and ctx.target_at_least(STACKLESS):
            for attr in ctx.attributes("level"):
                if isinstance(attr.value, ast.Call) and ctx.qualname(attr.value.func) in TOP_TRACE:
                    yield self.finding(ctx, attr, f"a trace has no `level` since JAX {STACKLESS} (tracing keeps no "
                                       "stack of levels): to tell traces apart, compare "
                                       "`jax.extend.core.get_opaque_trace_state()` with `==`")
        for guard in attribute_guards(ctx):
            st = status(guard.qualname, ctx.target)
            if st is None or st.state != "removed" or is_private(guard.qualname):
                continue
            yield self.finding(ctx, guard.call, f"`{guard.qualname}` was removed in JAX {st.version}: this guard is "
                               "False on the target, so the code it selects no longer runs", _false(ctx, guard.call))


STACKLESS = "0.4.36"  # traces lost their levels (and jax.core its trace stack)
TOP_TRACE = ("jax.core.find_top_trace", "jax.extend.core.find_top_trace", "jax._src.core.find_top_trace")
_GUARD = re.compile(rb"\bhasattr\([\s\\]*[\w.]+[\s\\]*,[\s\\]*[\"']\w+[\"']")


def _false(ctx: FileContext, node: ast.expr) -> Fix:
    """The condition ``node``, False on the target, folded as the target computes it: the code
    it selects goes (an ``and`` it stands in is False as a whole); elsewhere it reads ``False``."""
    parent = ctx.parent(node)
    while isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        node, parent = parent, ctx.parent(parent)
    folded = fold_false(ctx, node)
    if folded is None:
        return Fix("safe", edits=(ctx.replace(node, "False"),))
    return Fix("safe", statement_edits=folded[0], edits=folded[1])
