"""Legacy JAX programs from a grammar of each era's features (issue 38), as Hypothesis strategies.

``programs(family)`` draws a whole program: a module that runs on the legacy runtime (the API of
JAX 0.4.x before jax.Array, as ``verify`` emulates it) and leaves what it computes in globals,
which the verifier compares. A program records the features it was built from, so a report can
say what was tried, and how many processes it runs on (pmap and host-local code: 1 and 2).

Families (each covers the rules named):

- ``pjit``: meshes (``maps.Mesh``, ``Mesh`` over ``mesh_utils.create_device_mesh``), pjit's
  import forms, ``in/out_axis_resources`` as keywords, positionally, in a ``**`` dict, or through
  ``functools.partial`` as a decorator, specs of every form, ``static_argnums``, ``with mesh:``
  (JM101, JM102, JM201, JM701, JM702);
- ``pmap``: ``jax.pmap`` called and as a decorator, ``in_axes``/``out_axes``, collectives,
  ``static_broadcasted_argnums``, ``device_put_replicated``/``device_put_sharded`` (JM704, JM706);
- ``buffers``: the migration guide's leak check, ``live_buffers()`` of a device or of the
  backend counted before and after work on one device, sharded over a mesh, or kept in a list
  (JM401);
- ``positional``: ``PositionalSharding`` over ``mesh_utils.create_device_mesh`` or the device
  list, reshaped, replicated, transposed, placing values made in the module, by a function of it,
  or unpacked from a list a comprehension built, with ``device_put``, ``jit``'s shardings and
  ``with_sharding_constraint``; the sharding also handed to a function (JM703);
- ``gda``: ``GlobalDeviceArray.from_callback``/``from_batched_callback``, pjit with ``FROM_GDA``
  beside specs for NumPy inputs, outputs as GDAs (``jax_parallel_functions_output_gda``) read
  through ``local_shards``, ``mesh_axes``, ``local_data``, ``isinstance`` tests (JM301, JM501-JM503);
- ``hostlocal``: each process's own NumPy batch (from a loader function, a generator, a dict of
  batches) handed to pjit, which took host-local inputs and gave host-local outputs, with
  replicated parameters; 1 and 2 processes (JM504, JM701, JM702);
- ``names``: removed and deprecated names in ordinary code (JM601, JM801, JM802): those the
  legacy runtime gives back, the names JAX's history shows were the very object of a name JAX
  still has (not ``jnp.trapz``, whose replacement is jaxmigrate's choice, not JAX's history).

The shapes are multiples of 8, so every spec divides them on 8 devices, and on 2 processes x 4.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

from hypothesis import strategies as st

FAMILIES = ("pjit", "pmap", "names", "buffers", "positional", "gda", "hostlocal")


@dataclass
class Program:
    family: str
    text: str
    features: Tuple[str, ...]
    processes: Tuple[int, ...] = (1,)


@dataclass
class _Module:
    """A program being written: its imports (in order, once each), body lines and features."""

    imports: Dict[str, None] = field(default_factory=dict)
    lines: List[str] = field(default_factory=list)
    features: List[str] = field(default_factory=list)

    def need(self, *imports: str) -> None:
        for line in imports:
            self.imports.setdefault(line, None)

    def text(self, doc: str) -> str:
        return f'"""{doc}"""\n' + "\n".join(self.imports) + "\n\n" + "\n".join(self.lines) + "\n"


# -- pjit -----------------------------------------------------------------------------------------

#: spec text -> the rank it needs at least (a spec names one mesh axis per dimension)
_SPECS = {"None": 0, "P()": 0, 'P("x")': 1, 'P("x", "y")': 2, 'P(None, "y")': 2, 'P(("x", "y"))': 1,
          'P("y", None)': 2}
#: body -> rank of the result (arguments a, b: float32 [8, 8])
_BODIES = {"a + b": 2, "a @ b": 2, "jnp.tanh(a) * b": 2, "jnp.sum(a * b, axis=0)": 1, "(a - b).mean()": 0,
           "jnp.maximum(a, b).T": 2}
_MESHES = {
    "maps.Mesh": ("from jax.experimental import maps", 'maps.Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))'),
    "Mesh(create_device_mesh)": ("from jax.experimental import mesh_utils\nfrom jax.sharding import Mesh",
                                 'Mesh(mesh_utils.create_device_mesh((2, 4)), ("x", "y"))'),
    "Mesh(reshape)": ("from jax.sharding import Mesh", 'Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))'),
}
_PJIT_IMPORTS = {
    "from pjit import pjit": ("from jax.experimental.pjit import pjit", "pjit"),
    "pjit module": ("from jax.experimental import pjit as pjit_lib", "pjit_lib.pjit"),
    "import jax.experimental.pjit": ("import jax.experimental.pjit", "jax.experimental.pjit.pjit"),
}
_SPEC_IMPORTS = {
    "jax.sharding.PartitionSpec": "from jax.sharding import PartitionSpec as P",
    "jax.experimental.PartitionSpec": "from jax.experimental import PartitionSpec as P",
    "pjit.PartitionSpec": "from jax.experimental.pjit import PartitionSpec as P",
}


def _spec(draw, rank: int) -> str:
    return draw(st.sampled_from([s for s, need in _SPECS.items() if need <= rank]))


@st.composite
def _pjit_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp")
    mesh_form = draw(st.sampled_from(sorted(_MESHES)))
    mesh_import, mesh_expr = _MESHES[mesh_form]
    m.need(*mesh_import.split("\n"))
    pjit_form = draw(st.sampled_from(sorted(_PJIT_IMPORTS)))
    pjit_import, pjit = _PJIT_IMPORTS[pjit_form]
    m.need(pjit_import)
    spec_form = draw(st.sampled_from(sorted(_SPEC_IMPORTS)))
    m.need(_SPEC_IMPORTS[spec_form])
    m.features += [f"mesh: {mesh_form}", f"pjit import: {pjit_form}", f"spec import: {spec_form}"]
    m.lines += [f"mesh = {mesh_expr}", "x = np.arange(64, dtype=np.float32).reshape(8, 8)",
                "y = np.linspace(0.0, 1.0, 64, dtype=np.float32).reshape(8, 8)", ""]
    calls = draw(st.integers(1, 3))
    results = []
    for i in range(calls):
        body = draw(st.sampled_from(sorted(_BODIES)))
        ins = draw(st.sampled_from(["one", "per-argument"]))
        in_spec = _spec(draw, 2) if ins == "one" else f"({_spec(draw, 2)}, {_spec(draw, 2)})"
        out_spec = _spec(draw, _BODIES[body])
        form = draw(st.sampled_from(["keywords", "positional", "dict", "partial decorator"]))
        static = draw(st.booleans())
        m.features += [f"body: {body}", f"in specs: {ins}", f"in spec: {in_spec}", f"out spec: {out_spec}",
                       f"pjit form: {form}"] + (["static_argnums"] if static else [])
        params, args = ("a, b, k", "x, y, 2.0") if static else ("a, b", "x, y")
        result = f"({body}) * k" if static else body
        extra = ", static_argnums=2" if static else ""
        name = f"f{i}"
        if form == "partial decorator":
            m.need("from functools import partial")
            m.lines += [f"@partial({pjit}, in_axis_resources={in_spec}, out_axis_resources={out_spec}{extra})",
                        f"def {name}({params}):", f"    return {result}", ""]
            call = f"{name}({args})"
        else:
            m.lines += [f"def {name}({params}):", f"    return {result}", ""]
            if form == "keywords":
                call = f"{pjit}({name}, in_axis_resources={in_spec}, out_axis_resources={out_spec}{extra})({args})"
            elif form == "positional":
                call = f"{pjit}({name}, {in_spec}, {out_spec}{extra})({args})"
            else:
                m.lines += [f"specs{i} = dict(in_axis_resources={in_spec}, out_axis_resources={out_spec}{extra})"]
                call = f"{pjit}({name}, **specs{i})({args})"
        results.append(f"out{i} = {call}")
    context = draw(st.sampled_from(["with mesh:", "a function under with mesh:"]))
    m.features.append(f"context: {context}")
    if context == "with mesh:":
        m.lines += ["with mesh:"] + [f"    {r}" for r in results]
    else:
        names = [r.split(" = ", 1)[0] for r in results]
        m.lines += ["def run():", "    with mesh:"] + [f"        {r}" for r in results]
        m.lines += [f"    return {', '.join(names)}{',' if len(names) == 1 else ''}", "", "results = run()"]
    return Program("pjit", m.text("A generated pjit-era program (bench/program_grammar.py)."), tuple(m.features))


# -- pmap -----------------------------------------------------------------------------------------

#: mapped function body over x (this device's row, float32 [3]) and w (a float32 [3] weight) ->
#: whether its result is the same on every device (so out_axes=None may return it)
_PMAP_BODIES = {"x * 2.0": False, "x * w": False, 'jax.lax.psum(x, "i")': True, 'x - jax.lax.pmean(x, "i")': False,
                'jax.lax.pmax(x.max(), "i")': True, 'jax.lax.psum(x * w, "i")': True, "jnp.sin(x) + w": False}


@st.composite
def _pmap_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp")
    m.lines += ["n = jax.local_device_count()", "xs = jnp.arange(n * 3, dtype=jnp.float32).reshape(n, 3)",
                "w = jnp.array([0.5, -1.0, 2.0], dtype=jnp.float32)", ""]
    for i in range(draw(st.integers(1, 3))):
        body = draw(st.sampled_from(sorted(_PMAP_BODIES)))
        uses_w = "w" in body.replace("pmax", "")
        w_form = draw(st.sampled_from(["in_axes None", "replicated", "closure"])) if uses_w else "none"
        out_none = _PMAP_BODIES[body] and draw(st.booleans())
        form = draw(st.sampled_from(["called", "decorator", "partial decorator"]))
        m.features += [f"pmap body: {body}", f"weights: {w_form}", f"pmap form: {form}"] + (
            ["out_axes=None"] if out_none else [])
        options = ['axis_name="i"'] + (["in_axes=(0, None)"] if w_form == "in_axes None" else []) + (
            ["out_axes=None"] if out_none else [])
        params = "x, w" if w_form in ("in_axes None", "replicated") else "x"
        args = {"in_axes None": "xs, w", "replicated": f"xs, ws{i}", "closure": "xs", "none": "xs"}[w_form]
        if w_form == "replicated":
            m.lines += [f"ws{i} = jax.device_put_replicated(w, jax.local_devices())"]
        name = f"g{i}"
        if form == "called":
            m.lines += [f"def {name}_body({params}):", f"    return {body}", "",
                        f"{name} = jax.pmap({name}_body, {', '.join(options)})"]
        elif form == "decorator" and options == ['axis_name="i"']:
            m.need("from functools import partial")
            m.lines += ['@partial(jax.pmap, axis_name="i")', f"def {name}({params}):", f"    return {body}", ""]
        else:
            m.need("from functools import partial")
            m.lines += [f"@partial(jax.pmap, {', '.join(options)})", f"def {name}({params}):", f"    return {body}", ""]
        m.lines += [f"out{i} = {name}({args})", ""]
    if draw(st.booleans()):
        m.features.append("device_put_sharded")
        m.lines += ["rows = jax.device_put_sharded(list(xs), jax.local_devices())",
                    "row_sums = jax.pmap(lambda r: r.sum())(rows)"]
    return Program("pmap", m.text("A generated pmap-era program (bench/program_grammar.py)."), tuple(m.features),
                   processes=(1, 2))


# -- names ----------------------------------------------------------------------------------------

#: a statement using a removed or deprecated name (on x, float32 [8, 8]) -> whether it may run
#: inside a jitted function (its result is an array)
_NAMES = {
    "total = jnp.product(x[:2, :2] + 1.0)": True,
    "doubled = jax.tree_map(lambda v: v * 2, {'a': x, 'b': [x[0]]})": True,
    "leaves = jax.tree_leaves({'a': x, 'b': (x[0], 3.0)})": True,
    "flat, treedef = jax.tree_flatten([x[0], {'k': x[1]}])": False,
    "tied = jax.lax.tie_in(x, x * 3)": True,
    "running = jnp.cumproduct(x[0] / 64.0 + 1.0)": True,
    "every = jnp.alltrue(x >= 0)": True,
    "some = jnp.sometrue(x > 62)": True,
    "structure = str(jax.tree_structure({'a': 1, 'b': (2, 3)}))": False,
    "rounded = jnp.round_(x[0] / 3.0, 1)": True,
}


def _name_of(statement: str) -> str:
    """The JAX name a statement of ``_NAMES`` uses (its feature)."""
    call = statement.split(" = ", 1)[1]
    return call.split("(", 1)[0] if not call.startswith("str(") else call[4:].split("(", 1)[0]


@st.composite
def _names_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp")
    chosen = draw(st.lists(st.sampled_from(sorted(_NAMES)), min_size=1, max_size=4, unique=True))
    jitted = all(_NAMES[c] for c in chosen) and draw(st.booleans())
    m.features += [f"name: {_name_of(c)}" for c in chosen] + (["in jit"] if jitted else [])
    if jitted:  # the same uses inside a jitted function, of a traced argument
        outs = [c.split(" = ", 1)[0] for c in chosen]
        m.lines += ["@jax.jit", "def step(x):"] + [f"    {c}" for c in chosen]
        m.lines += [f"    return {', '.join(outs)}", "", "results = step(jnp.arange(64.0).reshape(8, 8))"]
    else:
        m.lines += ["x = jnp.asarray(np.arange(64, dtype=np.float32).reshape(8, 8))"] + chosen
    return Program("names", m.text("A generated program of removed names (bench/program_grammar.py)."),
                   tuple(m.features))


# -- buffers --------------------------------------------------------------------------------------

_COUNTERS = {
    "device": ("dev = jax.devices()[0]", "len(dev.live_buffers())"),
    "local device": ("dev = jax.local_devices()[0]", "len(dev.live_buffers())"),
    "backend": ("backend = jax.lib.xla_bridge.get_backend()", "len(backend.live_buffers())"),
    "every device": ("", "sum(len(d.live_buffers()) for d in jax.devices())"),
}
_WORK = {
    "one device": ["y = jnp.arange(8.0) * 2", "total = float(y.sum())"],
    "sharded": ["mesh = Mesh(np.array(jax.devices()), ('x',))",
                "y = jax.device_put(np.arange(16.0).reshape(8, 2), NamedSharding(mesh, P('x')))",
                "total = float((y * 2).sum())"],
    "kept in a list": ["kept = [jnp.ones((4,)) * i for i in range(3)]", "total = float(sum(k.sum() for k in kept))"],
    "deleted": ["y = jnp.ones((8,))", "total = float(y.sum())", "del y"],
    "jitted": ["step = jax.jit(lambda v: v * 3)", "y = step(jnp.arange(8.0))", "total = float(y[1])"],
}


@st.composite
def _buffers_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp",
           "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P")
    counter = draw(st.sampled_from(sorted(_COUNTERS)))
    setup, count = _COUNTERS[counter]
    in_function = draw(st.booleans())
    work = draw(st.lists(st.sampled_from(sorted(_WORK)), min_size=1, max_size=3, unique=True))
    m.features += [f"counter: {counter}"] + [f"work: {w}" for w in work] + (["count in a function"] if in_function else [])
    if in_function:
        m.lines += ["def live_count():"] + ([f"    {setup}"] if setup else []) + [f"    return {count}", ""]
        count = "live_count()"
    elif setup:
        m.lines.append(setup)
    m.lines.append(f"n_before = {count}")
    for w in work:
        m.lines += _WORK[w]
    m.lines += [f"n_after = {count}", "leaked = n_after - n_before"]
    return Program("buffers", m.text("A generated leak check (bench/program_grammar.py)."), tuple(m.features))


# -- positional -----------------------------------------------------------------------------------

#: a sharding derived from ``sharding`` (8 devices) -> the rank it places
_DERIVED = {"sharding.reshape(4, 2)": 2, "sharding.reshape(2, 4)": 2, "sharding.reshape(8, 1)": 2,
            "sharding.reshape(4, 2).replicate(1)": 2, "sharding.reshape(4, 2).replicate()": 2,
            "sharding.reshape(2, 4).T": 2, "sharding.replicate()": 1, "sharding": 1,
            "sharding.reshape(1, 8)": 2, "sharding.reshape(2, 2, 2)": 3}
#: how a value of rank r is made (float32, leading sizes multiples of 8)
_VALUES = {1: "jnp.arange(16.0)", 2: "jnp.arange(128.0).reshape(16, 8)", 3: "jnp.ones((8, 8, 8))"}


@st.composite
def _positional_program(draw) -> Program:
    m = _Module()
    m.need("import jax", "import jax.numpy as jnp", "from jax.sharding import PositionalSharding")
    if draw(st.booleans()):
        m.need("from jax.experimental import mesh_utils")
        m.lines.append("sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))")
        m.features.append("devices: create_device_mesh")
    else:
        m.lines.append("sharding = PositionalSharding(jax.devices())")
        m.features.append("devices: jax.devices()")
    outs = []
    for i in range(draw(st.integers(1, 3))):
        derived = draw(st.sampled_from(sorted(_DERIVED)))
        rank = _DERIVED[derived]
        made = draw(st.sampled_from(["module", "function", "comprehension"]))
        use = draw(st.sampled_from(["device_put", "jit shardings", "with_sharding_constraint", "function parameter"]))
        m.features += [f"sharding: {derived}", f"value made: {made}", f"placed by: {use}"]
        value = _VALUES[rank]
        if made == "function":
            m.lines += [f"def make{i}():", f"    return {value} + {i}", "", f"v{i} = make{i}()"]
        elif made == "comprehension":
            m.lines += [f"v{i}, _ = [{value} * k for k in (1, 2)]"]
        else:
            m.lines += [f"v{i} = {value}"]
        if use == "device_put":
            m.lines.append(f"out{i} = jax.device_put(v{i}, {derived})")
        elif use == "jit shardings":
            m.lines.append(f"out{i} = jax.jit(lambda a: a * 2, in_shardings={derived}, out_shardings={derived})(v{i})")
        elif use == "with_sharding_constraint":
            m.lines += ["@jax.jit", f"def constrain{i}(a):",
                        f"    return jax.lax.with_sharding_constraint(jnp.cos(a), {derived})", "",
                        f"out{i} = constrain{i}(v{i})"]
        else:
            m.lines += [f"def place{i}(a, s):", "    return jax.device_put(a, s)", "",
                        f"out{i} = place{i}(v{i}, {derived})"]
        outs.append(f"out{i}")
    m.lines.append(f"total = float(sum(jnp.sum(o) for o in ({', '.join(outs)},)))")
    return Program("positional", m.text("A generated PositionalSharding program (bench/program_grammar.py)."),
                   tuple(m.features))


# -- gda ------------------------------------------------------------------------------------------

_GDA_SPECS = {'P("x")': 1, 'P("x", "y")': 2, 'P(None, "y")': 2, "P(None)": 1, 'P("y")': 1}
_GDA_READS = {
    "local_shards": "first_rows = np.asarray(out.local_shards[0].data)",
    "local shard count": "n_shards = len(out.local_shards)",
    "mesh_axes": "layout = out.mesh_axes",
    "local_data": "first = np.asarray(out.local_data(0))",
    "shard indices": "indices = [s.index for s in out.local_shards]",
    "isinstance": "is_gda = isinstance(out, GlobalDeviceArray)",
    "total": "total = float(jnp.sum(out))",
}


@st.composite
def _gda_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp", "from jax.experimental import maps",
           "from jax.experimental import PartitionSpec as P",
           "from jax.experimental.global_device_array import GlobalDeviceArray",
           "from jax.experimental.pjit import FROM_GDA, pjit")
    flag = draw(st.sampled_from(["config.update", "none"]))
    m.features.append(f"outputs flag: {flag}")
    if flag == "config.update":
        m.lines += ['jax.config.update("jax_parallel_functions_output_gda", True)', ""]
    m.lines += ['mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))', ""]
    spec = draw(st.sampled_from(sorted(_GDA_SPECS)))
    rank = _GDA_SPECS[spec]
    shape = "(8, 4)" if rank == 2 else "(8,)"
    made = draw(st.sampled_from(["from_callback", "from_batched_callback", "helper"]))
    m.features += [f"gda spec: {spec}", f"gda made: {made}"]
    m.lines += [f"values = np.arange(np.prod({shape}), dtype=np.float32).reshape({shape})"]
    if made == "from_callback":
        m.lines += [f"w = GlobalDeviceArray.from_callback({shape}, mesh, {spec}, lambda index: values[index])"]
    elif made == "from_batched_callback":
        m.lines += [f"w = GlobalDeviceArray.from_batched_callback({shape}, mesh, {spec}, "
                    "lambda indices: [values[i] for i in indices])"]
    else:
        m.lines += ["def make_gda(shape, spec):", "    return GlobalDeviceArray.from_callback(shape, mesh, spec, "
                    "lambda index: values[index])", "", f"w = make_gda({shape}, {spec})"]
    numpy_spec = draw(st.sampled_from(['P("x")', "None", "P(None)"]))
    out_spec = draw(st.sampled_from([spec, "None"] if flag == "none" else [spec]))
    m.features += [f"numpy spec: {numpy_spec}", f"out spec: {out_spec}"]
    m.lines += [f"x = np.linspace(-1.0, 1.0, {8 if rank == 1 else 32}, dtype=np.float32).reshape({shape})", "",
                "def step(w, x):", "    return jnp.tanh(w) + x", "",
                "with mesh:",
                f"    out = pjit(step, in_axis_resources=(FROM_GDA, {numpy_spec}), out_axis_resources={out_spec})(w, x)"]
    if flag == "config.update":
        reads = draw(st.lists(st.sampled_from(sorted(_GDA_READS)), min_size=1, max_size=3, unique=True))
        m.features += [f"read: {r}" for r in reads]
        m.lines += [_GDA_READS[r] for r in reads]
    else:
        m.lines.append(_GDA_READS["total"])
    m.lines.append("w_total = float(jnp.sum(w))")
    return Program("gda", m.text("A generated GDA-era program (bench/program_grammar.py)."), tuple(m.features))


# -- hostlocal ------------------------------------------------------------------------------------

_LOADERS = {
    "loader function": (["def load_batch(step):",
                         "    rows = np.arange(local * 3, dtype=np.float32).reshape(local, 3) + 100.0 * jax.process_index()",
                         "    return rows + step", ""], "load_batch(step)"),
    "generator": (["def batches():", "    for step in range(3):",
                   "        yield np.full((local, 3), step + jax.process_index(), dtype=np.float32)", "",
                   "stream = batches()", ""], "next(stream)"),
    "dict of batches": (["data = {s: np.ones((local, 3), dtype=np.float32) * (s + 10 * jax.process_index()) "
                         "for s in range(3)}", ""], "data[step]"),
}
_STEPS = {
    "matmul": "def train_step(params, batch):\n    out = batch @ params\n    return params * 0.9, jnp.mean(out), out",
    "residual": "def train_step(params, batch):\n    out = jnp.tanh(batch @ params) @ params.T + batch\n"
                "    return params + 0.01, jnp.sum(out ** 2), out",
}


@st.composite
def _hostlocal_program(draw) -> Program:
    m = _Module()
    m.need("import numpy as np", "import jax", "import jax.numpy as jnp", "from jax.experimental import maps",
           "from jax.experimental.pjit import pjit")
    m.need(draw(st.sampled_from(["from jax.experimental import PartitionSpec as P",
                                 "from jax.sharding import PartitionSpec as P"])))
    loader = draw(st.sampled_from(sorted(_LOADERS)))
    step_kind = draw(st.sampled_from(sorted(_STEPS)))
    batch_spec = draw(st.sampled_from(['P("data")', 'P("data", None)']))
    params_spec = draw(st.sampled_from(["None", "P()", "P(None, None)"]))
    out_spec = draw(st.sampled_from([f"(None, None, {batch_spec})", f"({params_spec}, None, {batch_spec})"]))
    m.features += [f"loader: {loader}", f"step: {step_kind}", f"batch spec: {batch_spec}",
                   f"params spec: {params_spec}"]
    lines, read = _LOADERS[loader]
    m.lines += ['mesh = maps.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))',
                "local = 8 // jax.process_count()  # this process's rows of the global batch of 8", ""]
    m.lines += lines + _STEPS[step_kind].split("\n") + [""]
    m.lines += ["params = np.ones((3, 3), dtype=np.float32)", "losses = []", "with mesh:",
                f"    step_fn = pjit(train_step, in_axis_resources=({params_spec}, {batch_spec}),",
                f"                   out_axis_resources={out_spec})",
                "    for step in range(3):",
                f"        params, loss, out = step_fn(params, {read})",
                "        losses.append(float(loss))", "",
                "local_out = np.asarray(out)"]
    return Program("hostlocal", m.text("A generated host-local pjit program (bench/program_grammar.py)."),
                   tuple(m.features), processes=(1, 2))


_BY_FAMILY: Dict[str, Callable[[], st.SearchStrategy[Program]]] = {
    "pjit": _pjit_program, "pmap": _pmap_program, "names": _names_program, "buffers": _buffers_program,
    "positional": _positional_program, "gda": _gda_program, "hostlocal": _hostlocal_program}


def programs(family: str) -> st.SearchStrategy[Program]:
    """Programs of one family (``FAMILIES``)."""
    return _BY_FAMILY[family]()
