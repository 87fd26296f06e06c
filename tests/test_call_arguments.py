"""The signature history (catalog/signatures.py) and rule JM804 that reads it."""

from __future__ import annotations

import importlib
import inspect
import warnings

import pytest

from jaxmigrate.catalog.keyword_renames import KEYWORD_RENAMES, KEYWORD_VALUE_RENAMES, POSITIONAL
from jaxmigrate.catalog.signatures import Signature, history
from tests.conftest import run


def _at(version: str) -> int:
    return history().index(tuple(int(p) for p in version.split(".")))


# facts checked by hand against the tags (jax/_src/numpy/lax_numpy.py, jax/_src/core.py)
def test_clip_keywords_by_release():
    sigs = history()
    assert sigs.keyword_change("jax.numpy.clip", "a_min", _at("0.10.2")) == ("0.4.27", "0.10.0")
    assert sigs.keyword_since("jax.numpy.clip", "min") == "0.4.27"
    old = sigs.at("jax.numpy.clip", _at("0.4.26"))
    assert old is not None and old.keyword("a_min") is not None and old.keyword("min") is None
    mid = sigs.at("jax.numpy.clip", _at("0.9.0"))
    assert mid is not None and mid.keyword("a_min").deprecated and not mid.keyword("min").deprecated
    new = sigs.at("jax.numpy.clip", _at("0.10.0"))
    assert new is not None and new.keyword("a_min") is None and new.params[0].kind == "positional"


def test_reshape_and_gensym_by_release():
    sigs = history()
    assert sigs.keyword_since("jax.numpy.reshape", "shape") == "0.4.29"  # the tag; the changelog files it under 0.4.28
    assert sigs.keyword_change("jax.numpy.reshape", "newshape", _at("0.10.2")) == ("0.4.29", "0.6.0")
    assert sigs.at("jax.core.gensym", _at("0.4.13")).most_positional == 2  # (jaxprs=None, suffix='')
    assert sigs.at("jax.extend.core.gensym", _at("0.10.2")).most_positional == 0  # `gensym = lambda: Var`


def test_any_keyword_until_the_release_that_named_the_parameters():
    sigs = history()  # cond(*args, **kwargs) until 0.8.2 (jax/_src/lax/control_flow/conditionals.py)
    assert sigs.any_keyword_until("jax.lax.cond", _at("0.8.1")) is None
    assert sigs.any_keyword_until("jax.lax.cond", _at("0.8.2")) == "0.8.2"
    assert sigs.any_keyword_until("jax.numpy.clip", _at("0.10.2")) is None
    assert b"cond" in sigs.any_keyword and b"TokenSet" in sigs.any_keyword


def test_a_keyword_taken_through_kwargs_is_reported_once_the_parameters_are_named():
    text = "from jax import lax\n\ndef f(p, g, x):\n    return lax.cond(p, g, g, x, linear=(True,))\n"
    assert [f.code for f in run(text, ["JM804"], fix=False).findings] == ["JM804"]
    assert run(text, ["JM804"], fix=False, target=(0, 8, 1)).findings == []


def test_a_keyword_kwargs_takes_with_its_old_meaning_passes_and_a_value_rename_does_not():
    # jnp.pad named constant_values until 0.2.8 and takes it through **kwargs since, meaning the same
    assert run("import jax.numpy as jnp\ny = jnp.pad(x, 1, constant_values=2.0)\n", ["JM804"], fix=False).findings == []
    # pure_callback's **kwargs hands vectorized= to the callback from 0.10.0
    text = "import jax\ny = jax.pure_callback(f, out, x, vectorized=True)\n"
    assert run(text, ["JM804"]).text == 'import jax\ny = jax.pure_callback(f, out, x, vmap_method="legacy_vectorized")\n'


def test_signature_text_round_trip():
    sig = Signature.parse("arr=,/,min=,max=,*,a=!,a_min=!,**kw")
    assert [p.kind for p in sig.params] == ["positional", "either", "either", "keyword", "keyword", "varkw"]
    assert sig.keyword("arr") is None and sig.keyword("a").deprecated and sig.var_keywords
    assert sig.most_positional == 3
    assert Signature.parse("fun,*args,key=").most_positional is None


@pytest.mark.parametrize("row", sorted(KEYWORD_RENAMES.items()), ids=lambda r: f"{r[0][0]}:{r[0][1]}")
def test_every_rename_is_in_the_history(row):
    (qualname, old), new = row
    sigs = history()
    newest = len(sigs.versions) - 1
    assert sigs.keyword_change(qualname, old, newest) is not None, f"{qualname} never took `{old}`"
    now = sigs.at(qualname, newest)
    assert now is not None
    if new == POSITIONAL:
        assert now.params and now.params[0].kind in ("positional", "either")
    else:
        assert now.keyword(new) is not None and sigs.keyword_since(qualname, new) is not None


@pytest.mark.parametrize("row", sorted(KEYWORD_VALUE_RENAMES.items()), ids=lambda r: f"{r[0][0]}:{r[0][1]}")
def test_every_value_rename_is_in_the_history(row):
    (qualname, old), (new, values) = row
    sigs = history()
    newest = len(sigs.versions) - 1
    assert sigs.keyword_change(qualname, old, newest) is not None, f"{qualname} never took `{old}`"
    now = sigs.at(qualname, newest)
    assert now is not None and now.keyword(new) is not None and sigs.keyword_since(qualname, new) is not None
    assert values and all(isinstance(a, str) and isinstance(b, str) for a, b in values.items())


def test_breaking_words_hold_the_renamed_keywords():
    sigs = history()
    assert {"a_min", "a_max", "newshape", "interpolation", "host_id"} <= sigs.keywords
    assert "jax.numpy.clip" in sigs.dropped["a_min"] and "jax.local_devices" in sigs.dropped["host_id"]
    assert {"gensym", "clip"} <= sigs.functions  # clip took 4 positional arguments until 0.4.27, 3 since


@pytest.mark.parametrize("text, wanted", [
    (b"import jax.numpy as jnp\ny = jnp.clip(x, a_min=0)\n", True),
    (b"import jax.numpy as jnp\ny = jnp.clip(x,\n    a_max = 1)\n", True),
    (b"import jax\na_min = 0\nif a_min == 1: pass\n", False),  # the word, never passed as a keyword
    (b"from jax import core\nnew = core.gensym('_x')\n", True),
    (b"from jax import core\nnew = core.gensym()\n", False),  # no argument: fits every release
    (b"import numpy as np\ny = np.clip(x, a_min=0)\n", False),  # no jax at all
    (b"import jax\ny = jax.numpy.sum(x, a_min=0)\n", False),  # no function that dropped `a_min` is named
    (b"import jax\nf = jax.jit(g, static_argnums=(0,))\n", False),  # jit(fun, /, *, ...): one positional fits
    (b"import jax\nf = jax.jit(g, (0,))\n", True),  # static_argnums by position, as before 0.4.x
    # lax.cond took any keyword (`cond(*args, **kwargs)`) until 0.8.2
    (b"from jax import lax\ny = lax.cond(p, f, g, x, linear=(True,))\n", True),
    (b"from jax import lax\ny = lax.cond(p, f, g, x)\n", False),
])
def test_prefilter(text, wanted):
    from jaxmigrate.rules.call_arguments import CallArguments

    assert CallArguments.wants(text) is wanted


@pytest.mark.parametrize("args, count", [
    (b"f)", 1), (b"f, (0, 1), x=2)", 2), (b"f, x=g(1, 2), y=3)", 1), (b")", 0), (b"a, b, )", 2),
    (b"'a,b', \"c)\", d)", 3), (b"a,  # a comment, with a comma\n b)", 2), (b"a == 1, b)", 2),
    (b"a, 'unclosed", 1 << 30), (b"lambda s, b: (s, b), x)", 2), (b"*args)", 1 << 30), (b"x, **kw)", 1 << 30),
])
def test_positional_count(args, count):
    from jaxmigrate.rules.call_arguments import _positional_count

    assert _positional_count(b"f(" + args, 2) == count


def _installed_release():
    jax = pytest.importorskip("jax")
    version = jax.__version__
    sigs = history()
    if version not in sigs.versions:
        pytest.skip(f"installed JAX {version} is not a release of the history")
    return sigs, sigs.versions.index(version)


def test_history_matches_the_installed_jax():
    """Static signatures at the installed release against ``inspect.signature`` of the real
    functions: the parameter names a keyword can bind must agree for nearly all of them."""
    sigs, at = _installed_release()
    checked, differ = 0, []
    warnings.simplefilter("ignore")
    for qualname in ("jax.numpy.clip", "jax.numpy.reshape", "jax.numpy.percentile", "jax.local_devices",
                     "jax.jit", "jax.numpy.sum", "jax.lax.scan", "jax.random.split", "jax.numpy.einsum",
                     "jax.make_mesh", "jax.device_put", "jax.lax.with_sharding_constraint"):
        static = sigs.at(qualname, at)
        if static is None:
            continue
        module, _, name = qualname.rpartition(".")
        real = inspect.signature(getattr(importlib.import_module(module), name))
        names = {p.name for p in real.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        mine = {p.name for p in static.params if p.kind in ("either", "keyword")}
        checked += 1
        if names != mine:
            differ.append((qualname, sorted(names ^ mine)))
    assert checked >= 8
    assert not differ


def _messages(text, target=None, fix=False):
    return [f.message for f in run(text, fix=fix, target=target).findings if f.code == "JM804"]


def test_clip_gated_on_target():
    code = "import jax.numpy as jnp\ny = jnp.clip(x, a_min=0)\n"
    assert run(code, target=(0, 4, 27)).text == "import jax.numpy as jnp\ny = jnp.clip(x, min=0)\n"
    assert run(code, target=(0, 4, 26)).text == code
    (message,) = _messages(code, target=(0, 4, 26))
    assert "needs jax>=0.4.27" in message


def test_a_keyword_never_taken_is_left_to_python():
    assert _messages("import jax.numpy as jnp\ny = jnp.sum(x, no_such_keyword=1)\n") == []


def test_a_partial_binds_arguments_as_a_call_does_and_leaves_the_rest_to_later_calls():
    """`functools.partial(f, ...)` is checked as a call of `f` with what it binds (a decorator in
    2022 code: `@functools.partial(jax.jit, backend="cpu")`), and no parameter it leaves unbound
    is reported: later calls pass it."""
    code = ("import functools\nimport jax\nimport jax.numpy as jnp\n\n"
            "jitted = functools.partial(jax.jit, backend='cpu', static_argnums=0)\n"
            "clipper = functools.partial(jnp.clip, a_min=0)\n"
            "spread = functools.partial(jax.lax.broadcast_in_dim, shape=(2, 3))\n")
    messages = _messages(code)
    assert len(messages) == 2 and "`backend` of `jax.jit`" in messages[0] and "`a_min`" in messages[1]
    assert "clipper = functools.partial(jnp.clip, min=0)\n" in run(code).text


@pytest.mark.parametrize("target", [(0, 4, 13), (0, 8, 2), None])
def test_checkpoint_concrete_false_is_removed_and_true_says_what_to_write(target):
    code = ("import functools\nimport jax\n\n\n@functools.partial(jax.checkpoint, concrete=False)\ndef f(x):\n"
            "    return x\n\n\ng = jax.remat(f, concrete=True)\n")
    out = run(code, target=target)
    if target == (0, 4, 13):  # not deprecated yet: quiet
        assert out.text == code and out.findings == []
        return
    assert "@jax.checkpoint\ndef f(x):" in out.text and "jax.remat(f, concrete=True)" in out.text
    (finding,) = out.findings
    assert "static_argnums" in finding.message and finding.suggestion == "static_argnums=(...)"
