"""The code to write for a call of a removed callable that has no drop-in but a known rewrite
(``catalog.renames.CALL_CODE``): host_callback's ``call`` and ``id_tap``, ``jax.xla_computation``.

The code is written from the call as the file spells it where its arguments are plain (no
``*args``/``**kwargs``, no option the rewrite does not carry), else with placeholders; a reference
that is not called (an import, a function passed around) gets the placeholder form.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from jaxmigrate.analysis.context import FileContext

#: the code with placeholders, for a reference whose call is not visible or not plain
GENERIC: Dict[str, str] = {
    "jax.experimental.host_callback.call": "jax.experimental.io_callback(fn, result_shape, arg)",
    "jax.experimental.host_callback.id_tap": "jax.experimental.io_callback(lambda a: tap(a, ()), None, arg, ordered=True)",
    "jax.xla_computation": "jax.jit(f).lower(*args).compiler_ir('hlo')",
    "jax.prng.PRNGImpl": "jax.extend.random.define_prng_impl(key_shape=key_shape, seed=seed, "
                         "split=lambda key, shape: split(key, *shape), random_bits=random_bits, fold_in=fold_in)",
    "jax.core.thread_local_state": "jax.extend.core.get_opaque_trace_state()",
    "jax.core.cur_sublevel": "jax.extend.core.get_opaque_trace_state()",
}

#: a library's own flag, as ``jax.config.define_*_state`` made it: ``.value``, ``with flag(v):``
FLAG_CLASS = '''import contextlib


class Flag:
    """A flag of this library: `.value`, and `with flag(value):` for a block."""

    def __init__(self, name, default, help=""):
        self.name, self.value, self.help = name, default, help

    @contextlib.contextmanager
    def __call__(self, value):
        before, self.value = self.value, value
        try:
            yield
        finally:
            self.value = before
'''
#: each ``define_*_state``'s parameters before ``default`` and ``help``
_STATE_PARAMETERS = {"bool": ["name", "default", "help"], "int": ["name", "default", "help"],
                     "string": ["name", "default", "help"], "enum": ["name", "enum_values", "default", "help"]}
for _kind in _STATE_PARAMETERS:
    GENERIC[f"jax.config.define_{_kind}_state"] = FLAG_CLASS + '\n\nflag = Flag("name", default, "help")'


def call_code(ctx: FileContext, qualname: str, node: ast.AST) -> str:
    """The code to write in place of the reference ``node`` to ``qualname`` (a key of ``GENERIC``)."""
    call = ctx.parent(node)
    written = None
    if isinstance(call, ast.Call) and call.func is node and _plain(call):
        if qualname == "jax.experimental.host_callback.call":
            written = _hcb_call(ctx, call)
        elif qualname == "jax.experimental.host_callback.id_tap":
            written = _id_tap(ctx, call)
        elif qualname == "jax.xla_computation":
            written = _xla_computation(ctx, call)
        elif qualname == "jax.prng.PRNGImpl":
            written = _prng_impl(ctx, call)
        elif qualname.startswith("jax.config.define_"):
            written = _flag(ctx, call, qualname)
    return written or GENERIC[qualname]


def _prng_impl(ctx: FileContext, call: ast.Call) -> Optional[str]:
    return prng_impl_call(ctx, call, "jax.extend.random.define_prng_impl")


#: ``PRNGImpl``'s fields in order (JAX 0.4.13 ``jax/_src/prng.py``: a NamedTuple, ``tag='?'``)
PRNG_IMPL_FIELDS = ["key_shape", "seed", "split", "random_bits", "fold_in", "tag"]


def prng_impl_call(ctx: FileContext, call: ast.Call, callee: str) -> Optional[str]:
    """``PRNGImpl(key_shape, seed, split, random_bits, fold_in, tag=...)`` as ``callee``'s keywords
    (define_prng_impl takes keywords only), its ``split`` wrapped (``split_wrapper``). None where
    the arguments are not plain."""
    found = prng_impl_arguments(call)
    if found is None:
        return None
    texts = {name: ctx.text(node) for name, node in found.items()}
    texts["split"] = split_wrapper(ctx, found["split"])
    return f"{callee}(" + ", ".join(f"{k}={v}" for k, v in texts.items()) + ")"


def prng_impl_arguments(call: ast.Call) -> Optional[Dict[str, ast.expr]]:
    """Each argument of a ``PRNGImpl(...)`` call by its field, or None where one is missing or unknown."""
    if len(call.args) > len(PRNG_IMPL_FIELDS) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    found = dict(zip(PRNG_IMPL_FIELDS, call.args))
    for kw in call.keywords:
        if kw.arg not in PRNG_IMPL_FIELDS or kw.arg in found:
            return None
        found[kw.arg] = kw.value
    return None if set(PRNG_IMPL_FIELDS[:5]) - set(found) else found


def split_wrapper(ctx: FileContext, split: ast.expr) -> str:
    """The ``split`` to give define_prng_impl for a PRNGImpl's: that one took a count
    (``split(key, 2)``), JAX passes a shape since (``split(key, (2,))``), so the old function is
    called with the count, as every call of the old API made it (``jax.random.split(key, num)``, a
    shape of one dimension). A name or a lambda is called as it is; another expression is
    evaluated once, bound as a default (where the call evaluated it)."""
    taken = {n.id for n in ast.walk(split) if isinstance(n, ast.Name)}
    taken |= {a.arg for n in ast.walk(split) if isinstance(n, ast.Lambda) for a in ast.walk(n.args)
              if isinstance(a, ast.arg)}
    key, shape, old = (next(n for n in (base, base[0], base + "_", base + "__") if n not in taken)
                       for base in ("key", "shape", "split"))
    text = ctx.text(split)
    if isinstance(split, ast.Lambda):
        return f"lambda {key}, {shape}: ({text})({key}, *{shape})"
    if isinstance(split, (ast.Name, ast.Attribute)):
        return f"lambda {key}, {shape}: {text}({key}, *{shape})"
    return f"lambda {key}, {shape}, {old}={text}: {old}({key}, *{shape})"


def _plain(call: ast.Call) -> bool:
    return not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg is not None for k in call.keywords)


def arguments(ctx: FileContext, call: ast.Call, names: List[str]) -> Optional[Dict[str, str]]:
    """The source text of each argument by its parameter name (positional ones in ``names``
    order), or None if a keyword is not one of ``names``."""
    if len(call.args) > len(names):
        return None
    found = {name: ctx.text(arg) for name, arg in zip(names, call.args)}
    for kw in call.keywords:
        if kw.arg not in names or kw.arg in found:
            return None
        found[kw.arg] = ctx.text(kw.value)
    return found


def _hcb_call(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """``call(fn, arg, result_shape=S)`` ran ``fn(arg)`` on the host: ``io_callback(fn, S, arg)``
    (``result_shape`` None: a function that returns nothing)."""
    found = arguments(ctx, call, ["callback_func", "arg", "result_shape"])
    if found is None or "callback_func" not in found:
        return None
    return (f"jax.experimental.io_callback({found['callback_func']}, {found.get('result_shape', 'None')}, "
            f"{found.get('arg', '()')})")


def _id_tap(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """``id_tap(tap, x)`` called ``tap(x, transforms)`` and returned ``x`` (or ``result``)."""
    found = arguments(ctx, call, ["tap_func", "arg", "result"])
    if found is None or "tap_func" not in found or "arg" not in found:
        return None
    tap = found["tap_func"]
    if not (tap.isidentifier() or all(p.isidentifier() for p in tap.split("."))):
        tap = f"({tap})"
    return (f"jax.experimental.io_callback(lambda a: {tap}(a, ()), None, {found['arg']}, ordered=True)"
            f"  # id_tap returned {found.get('result', found['arg'])}")


def _xla_computation(ctx: FileContext, call: ast.Call) -> Optional[str]:
    """``xla_computation(f)(*args)``: ``jax.jit(f).lower(*args).compiler_ir('hlo')``."""
    if len(call.args) != 1 or call.keywords:
        return None
    outer = ctx.parent(call)
    args = "*args"
    if isinstance(outer, ast.Call) and outer.func is call and _plain(outer):
        args = ", ".join([ctx.text(a) for a in outer.args] + [f"{k.arg}={ctx.text(k.value)}" for k in outer.keywords])
    return f"jax.jit({ctx.text(call.args[0])}).lower({args}).compiler_ir('hlo')"


def _flag(ctx: FileContext, call: ast.Call, qualname: str) -> Optional[str]:
    """``x = jax.config.define_bool_state(name, default, help, ...)``: ``FLAG_CLASS`` and
    ``x = Flag(name, default, help)`` (the hooks and other options have no counterpart)."""
    kind = qualname[len("jax.config.define_"):-len("_state")]
    names = _STATE_PARAMETERS[kind]
    found = arguments(ctx, call, names + ["update_global_hook", "update_thread_local_hook", "upgrade",
                                           "extra_description"])
    if found is None or not {"name", "default"} <= found.keys() or set(found) - set(names) - {"extra_description"}:
        return None
    holder = ctx.parent(call)
    target = ctx.text(holder.targets[0]) if isinstance(holder, ast.Assign) and len(holder.targets) == 1 \
        and isinstance(holder.targets[0], ast.Name) else None
    made = f"Flag({found['name']}, {found['default']}, {found.get('help', repr(''))})"
    return FLAG_CLASS + "\n\n" + (f"{target} = {made}" if target else made)
