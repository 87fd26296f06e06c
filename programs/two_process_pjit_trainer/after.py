"""A multi-host pjit trainer of the GDA era (JAX 0.4.1, jax.Array off), in the layout of the
ViT/scenic trainers: every process runs this script, its input pipeline reads only its own rows of
each global batch (`jax.process_index()`, `global_batch // jax.process_count()`), and pjit takes
those host-local rows for the "data" axis and hands host-local outputs back. The parameters of a
two-layer MLP are split over "model" (`PartitionSpec(None, "model")` / `("model", None)`) on a
4 x 2 `maps.Mesh` whose rows of devices belong to one process each; they are made by a pjit of the
init function and trained by a pjit step donating them (Adam written out, a linear-warm-up /
rsqrt schedule). Evaluation returns per-row predictions sharded over "data": each process gets
its own rows back, scores them against its labels, and the totals are summed over processes with
`multihost_utils.process_allgather`; `multihost_utils.sync_global_devices` marks the end."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P
from jax.experimental.pjit import pjit

GLOBAL_BATCH = 16
FEATURES = 6
HIDDEN = 8
CLASSES = 3
STEPS = 5
EVAL_BATCHES = 2
LR = 0.05
WARMUP = 2
B1, B2, EPS = 0.9, 0.999, 1e-8

mesh = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(4, 2), ("data", "model"))
param_spec = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": None}


def local_rows(seed):
    """This process's block of a global batch (every process draws the same global batch)."""
    rng = np.random.RandomState(seed)
    w = np.random.RandomState(123).normal(size=(FEATURES, CLASSES))
    x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
    y = np.argmax(x @ w, axis=1).astype(np.int32)
    per_host = GLOBAL_BATCH // jax.process_count()
    lo = jax.process_index() * per_host
    return x[lo:lo + per_host], y[lo:lo + per_host]


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (FEATURES, HIDDEN)) * 0.3, "b1": jnp.zeros(HIDDEN),
            "w2": jax.random.normal(k2, (HIDDEN, CLASSES)) * 0.3, "b2": jnp.zeros(CLASSES)}


def logits_fn(params, x):
    return jax.nn.relu(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def schedule(count):
    count = count.astype(jnp.float32)
    return LR * jnp.minimum(1.0, count / WARMUP) * jax.lax.rsqrt(jnp.maximum(count, WARMUP) / WARMUP)


def train_step(params, opt, x, y):
    def loss_fn(p):
        logp = jax.nn.log_softmax(logits_fn(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    count = opt["count"] + 1
    mu = jax.tree.map(lambda m, g: B1 * m + (1 - B1) * g, opt["mu"], grads)
    nu = jax.tree.map(lambda v, g: B2 * v + (1 - B2) * g * g, opt["nu"], grads)
    lr = schedule(count)
    params = jax.tree.map(lambda p, m, v: p - lr * (m / (1 - B1 ** count)) / (jnp.sqrt(v / (1 - B2 ** count)) + EPS),
                          params, mu, nu)
    return params, {"count": count, "mu": mu, "nu": nu}, loss


def predict(params, x):
    return jnp.argmax(logits_fn(params, x), axis=-1)


opt_spec = {"count": None, "mu": param_spec, "nu": param_spec}
with mesh:
    p_init = pjit(init, in_shardings=None, out_shardings=param_spec)
    p_step = pjit(train_step, in_shardings=(param_spec, opt_spec, P("data"), P("data")),
                  out_shardings=(param_spec, opt_spec, None), donate_argnums=(0, 1))
    p_predict = pjit(predict, in_shardings=(param_spec, P("data")), out_shardings=P("data"))

    params = multihost_utils.global_array_to_host_local_array(p_init(jax.random.PRNGKey(0)), mesh, jax.tree_util.tree_map(lambda s: P() if s is None else s, param_spec, is_leaf=lambda s: s is None or isinstance(s, P)))
    zeros = jax.tree.map(jnp.zeros_like, params)
    opt = {"count": jnp.zeros([], jnp.int32), "mu": zeros, "nu": jax.tree.map(jnp.zeros_like, params)}
    for step in range(STEPS):
        x, y = local_rows(step)
        params_global, x_global, y_global = multihost_utils.host_local_array_to_global_array(
            (params, x, y), mesh, (jax.tree_util.tree_map(lambda s: P() if s is None else s, param_spec, is_leaf=lambda s: s is None or isinstance(s, P)), P("data"), P("data")))
        params, opt, loss = multihost_utils.global_array_to_host_local_array(p_step(params_global, opt, x_global, y_global), mesh, jax.tree_util.tree_map(lambda s: P() if s is None else s, (param_spec, opt_spec, P()), is_leaf=lambda s: s is None or isinstance(s, P)))
        if jax.process_index() == 0:
            print(f"step {step} loss {float(loss):.5f} lr {float(schedule(opt['count'])):.5f}")

    correct = 0
    for i in range(EVAL_BATCHES):
        x, y = local_rows(100 + i)
        params_global, x_global = multihost_utils.host_local_array_to_global_array(
            (params, x), mesh, jax.tree_util.tree_map(lambda s: P() if s is None else s, (param_spec, P("data")), is_leaf=lambda s: s is None or isinstance(s, P)))
        predictions = np.asarray(multihost_utils.global_array_to_host_local_array(p_predict(params_global, x_global), mesh, P("data")))
        assert predictions.shape == y.shape, (predictions.shape, y.shape)
        correct += int((predictions == y).sum())

totals = multihost_utils.process_allgather(np.array([correct, EVAL_BATCHES * GLOBAL_BATCH // jax.process_count()]))
totals = np.asarray(totals).reshape(-1, 2).sum(axis=0)
print("process", jax.process_index(), "local correct", correct, "global accuracy", totals[0] / totals[1])
multihost_utils.sync_global_devices("eval done")
