"""Replacements the API history cannot show as the same object, chosen by hand from JAX's
changelog, and call transforms for names whose call changes shape. Facts only: names, versions.

``DROP_INS``: old name -> new name that takes the same arguments, or is the type an annotation
means; a rewrite of an ``isinstance``/``issubclass`` test to ``jax.Array`` is unsafe (every array
is one now), and for the names of ``TYPE_TESTS`` not made at all. ``CALLS``: old callable -> how
its calls become the new one (see ``jaxmigrate/patterns/renames.py``). ``CALL_CODE``: removed
callables with no drop-in whose calls have a known rewrite, and the names it needs.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

DROP_INS: Dict[str, str] = {
    "jax.random.KeyArray": "jax.Array",
    "jax.random.PRNGKeyArray": "jax.Array",
    "jax.numpy.DeviceArray": "jax.Array",
    "jax.interpreters.xla.DeviceArray": "jax.Array",
    "jax.interpreters.xla._DeviceArray": "jax.Array",
    "jax._src.device_array.DeviceArray": "jax.Array",
    "jax.interpreters.pxla.ShardedDeviceArray": "jax.Array",
    "jax.tree_multimap": "jax.tree_util.tree_map",  # tree_multimap(f, tree, *rest): tree_map's signature
    "jax.tree_util.tree_multimap": "jax.tree_util.tree_map",
    "jax.numpy.trapz": "jax.scipy.integrate.trapezoid",  # trapz(y, x=None, dx=1.0, axis=-1): the same
}

#: names of ``jax`` that were bound to the very module JAX's deprecation pointed to (on JAX 0.4.13
#: ``jax.ad is jax.interpreters.ad``, and so for ``pxla`` and ``xla``): a member reached through one
#: is the module's own member, so ``jax.ad.deflinear`` -> ``jax.interpreters.ad.deflinear`` is a
#: rename of the same object where the target still has it
MODULE_ALIASES = frozenset({"jax.ad", "jax.pxla", "jax.xla"})

#: call transforms: ``tie_in(x, y)`` returned ``y`` (a no-op since JAX 0.2.0's omnistaging);
#: ``shuffle(key, x, axis)`` was removed in favour of ``permutation(key, x, axis, independent=True)``;
#: ``with jax.experimental.enable_x64(v):`` / ``disable_x64()`` became the ``jax.enable_x64``
#: option's own context manager, ``with jax.enable_x64(v):`` / ``jax.enable_x64(False)``
CALLS: Dict[str, str] = {
    "jax.lax.tie_in": "second-argument",
    "jax.random.shuffle": "jax.random.permutation/independent",
    "jax.experimental.enable_x64": "jax.enable_x64/with",
    "jax.experimental.disable_x64": "jax.enable_x64/with-False",
    # barrier_wait() waited for the host callbacks to run; JAX's own barrier_wait called
    # jax.effects_barrier() once host_callback ran on io_callback (the default from 0.4.30)
    "jax.experimental.host_callback.barrier_wait": "jax.effects_barrier/no-arguments",
    # default_prng_impl() gave the default PRNGImpl, read for its `key_shape`: the shape of a default
    # key's data (haiku's own migration of its key check)
    "jax.random.default_prng_impl": "jax.eval_shape/key-shape",
    # PRNGImpl(...) -> define_prng_impl(...) (see CALL_CODE); seed_with_impl(impl, seed) was
    # random_seed(seed, impl=impl): jax.random.key(seed, impl=impl), which takes both kinds of impl
    "jax.prng.PRNGImpl": "jax.extend.random.define_prng_impl/from-prng-impl",
    "jax.prng.seed_with_impl": "jax.random.key/seed-with-impl",
    # rbg_key(seed) and the others made a key of that implementation: JAX's own deprecation message
    # (jax/random.py at 0.4.23) says `jax.random.PRNGKey(seed, 'rbg')`, not the default PRNGKey; `impl` is
    # keyword-only there (from 0.4.14)
    **{f"jax.random.{impl}_key": f"jax.random.PRNGKey/impl:{impl}" for impl in ("rbg", "unsafe_rbg", "threefry2x32")},
}

#: drop-ins to ``jax.Array`` that hold in annotations only: in an ``isinstance`` test every array
#: and tracer is a ``jax.Array`` now, so the test is reported, not rewritten, with what to test
#: instead (``{0}``: the tested value), or None where nothing tells the old type apart
TYPE_TESTS: Dict[str, Optional[str]] = {
    # a typed key has a key dtype; a raw key (uint32) never was a PRNGKeyArray
    "jax.random.KeyArray": "jax.dtypes.issubdtype({0}.dtype, jax.dtypes.prng_key)",
    "jax.random.PRNGKeyArray": "jax.dtypes.issubdtype({0}.dtype, jax.dtypes.prng_key)",
    "jax.interpreters.pxla.ShardedDeviceArray": None,
}

#: removed callables without a drop-in whose calls have a known rewrite (JAX's deprecation notes,
#: projects' own migrations): old name -> (the names the rewrite needs at the target, the
#: message's advice). The code is written from each call in ``patterns/call_advice.py``.
CALL_CODE: Dict[str, Tuple[Tuple[str, ...], str]] = {
    # call(fn, arg, result_shape=S) ran fn(arg) on the host: io_callback(fn, S, arg) does
    "jax.experimental.host_callback.call": (
        ("jax.experimental.io_callback", "jax.pure_callback"),
        "`jax.experimental.io_callback` (or `jax.pure_callback` when the function is pure)"),
    # id_tap(tap, x) called tap(x, transforms) and returned x; JAX's io_callback-based id_tap
    # passed transforms=()
    "jax.experimental.host_callback.id_tap": (
        ("jax.experimental.io_callback", "jax.effects_barrier"),
        "`jax.experimental.io_callback(..., ordered=True)`, and `jax.effects_barrier()` where the "
        "taps must have run (id_tap returned its argument)"),
    # xla_computation(f)(*args): JAX 0.4.30's changelog names jax.jit(f).lower(*args).compiler_ir('hlo')
    "jax.xla_computation": (
        ("jax.jit",),
        "`jax.jit(f).lower(*args)` (`.compiler_ir('hlo')`, `.cost_analysis()`)"),
    # a comparable snapshot of JAX's trace state (haiku's JaxTraceLevel: the trace stack's levels and
    # the sublevel, gone with the stackless tracing of 0.4.36): JAX's opaque trace state, compared
    # with `==`, is what haiku's own migration reads
    **{name: (("jax.extend.core.get_opaque_trace_state",),
              "`jax.extend.core.get_opaque_trace_state()` to compare trace states (levels are gone; the state "
              "is opaque and compares with `==`)")
       for name in ("jax.core.thread_local_state", "jax.core.cur_sublevel")},
    # PRNGImpl(key_shape, seed, split, random_bits, fold_in, tag='?') made a PRNG implementation; JAX
    # replaced the constructor with define_prng_impl (keyword-only), which returns an opaque
    # implementation that `jax.random.key(seed, impl=...)` and `wrap_key_data` take
    "jax.prng.PRNGImpl": (
        ("jax.extend.random.define_prng_impl",),
        "`jax.extend.random.define_prng_impl(key_shape=..., seed=..., split=..., random_bits=..., fold_in=...)` "
        "(its result is opaque: pass it as `impl=` to `jax.random.key`; `split` is given a shape now, not a count)"),
    # a library's own flags: JAX's deprecation (jax/_src/config.py at 0.4.20-0.4.24) says "Please
    # use other libraries for configuration instead"; what define_*_state returned had `.value`
    # and was a context manager for a block (`with flag(True):`)
    **{f"jax.config.define_{kind}_state": (
        (), "a flag of the module's own (`.value` and `with flag(v):` as before, not through `jax.config`)")
       for kind in ("bool", "enum", "int", "string")},
}

#: jaxlib's types of the functions ``jax.jit`` and ``jax.pmap`` returned, as ``jax.xla.xe`` (and
#: ``jax.lib.xla_extension``) named them; both paths are gone. Old name -> its type at the target
#: as code (``{jit}``: how the module names ``jax.jit``), or None where none exists: a pmapped
#: function is a plain Python function since JAX 0.8 (pmap runs as jit of shard_map), so no type
#: tells it apart. (Haiku's own note for the same test: ``type(jax.jit(lambda: 0))``.)
FUNCTION_TYPES: Dict[str, Optional[str]] = {
    f"{module}.{name}": ("type({jit}(lambda: 0))" if name != "PmapFunction" else None)
    for module in ("jax.xla.xe", "jax.interpreters.xla.xe", "jax.lib.xla_extension", "jax._src.lib.xla_extension")
    for name in ("CompiledFunction", "PjitFunction", "PmapFunction")
}
