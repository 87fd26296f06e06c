"""A pjit-era (JAX 0.3.x/0.4.x, 2022) sharded language-model step, in the shape of the scenic and
ViT trainers with the partitioning of that era's pjit code, model and optimizer written out: the
mesh is `maps.Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))`; the embedding is
split over "model" along the vocabulary and the MLP's hidden units over "model"; a helper reads the
current mesh's axis sizes from `maps.thread_resources.env.physical_mesh` (to check the vocabulary
divides), activations are constrained with `with_sharding_constraint(x, axis_resources=...)`;
one pjit function serves training and evaluation through a static argument (`static_argnums`),
the token loss is masked for padding, and the evaluation reports the masked perplexity of padded
sequences. SGD with a linear-warm-up schedule; everything under `with mesh:`."""
import numpy as np

import jax
import jax.numpy as jnp
from jax.experimental import maps
from jax.experimental import mesh_utils
from jax.experimental.pjit import pjit
from jax.lax import with_sharding_constraint
from jax.sharding import PartitionSpec as P

VOCAB = 16
EMBED = 8
HIDDEN = 16
SEQ = 6
BATCH = 8
STEPS = 5
LR = 0.5
WARMUP = 3
PAD = 0

mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))
specs = {"embedding": P("model", None), "mlp_in": P(None, "model"), "mlp_out": P("model", None)}


def mesh_axis_size(name):
    physical_mesh = maps.thread_resources.env.physical_mesh
    return dict(zip(physical_mesh.axis_names, physical_mesh.devices.shape))[name]


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"embedding": jax.random.normal(k1, (VOCAB, EMBED)) * 0.5,
            "mlp_in": jax.random.normal(k2, (EMBED, HIDDEN)) / np.sqrt(EMBED),
            "mlp_out": jax.random.normal(k3, (HIDDEN, EMBED)) / np.sqrt(HIDDEN)}


def logits_fn(params, tokens):
    x = jnp.take(params["embedding"], tokens, axis=0)  # (batch, seq, embed)
    x = with_sharding_constraint(x, P("data", None, None))
    h = jax.nn.gelu(x @ params["mlp_in"])
    h = with_sharding_constraint(h, P("data", None, "model"))
    x = x + h @ params["mlp_out"]
    return x @ params["embedding"].T  # tied output embedding


def step_fn(params, batch, train, step):
    inputs, targets = batch[:, :-1], batch[:, 1:]
    weights = (targets != PAD).astype(jnp.float32)

    def loss_fn(p):
        logp = jax.nn.log_softmax(logits_fn(p, inputs))
        nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
        return jnp.sum(nll * weights) / jnp.sum(weights), (jnp.sum(nll * weights), jnp.sum(weights))

    if not train:
        _, (nll_sum, count) = loss_fn(params)
        return params, {"nll_sum": nll_sum, "tokens": count}
    (loss, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    lr = LR * jnp.minimum(1.0, (step + 1.0) / WARMUP)
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, {"loss": loss, "lr": lr}


def batches(seed, n):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        start = rng.randint(1, VOCAB, size=(BATCH, 1))
        seq = (start + np.arange(SEQ + 1)[None, :]) % (VOCAB - 1) + 1  # count upwards, skipping PAD
        lengths = rng.randint(3, SEQ + 2, size=(BATCH, 1))
        yield np.where(np.arange(SEQ + 1)[None, :] < lengths, seq, PAD).astype(np.int32)


with mesh:
    assert VOCAB % mesh_axis_size("model") == 0, "the vocabulary must divide over the model axis"
    p_init = pjit(init, in_shardings=None, out_shardings=specs)
    p_step = pjit(step_fn, in_shardings=(specs, P("data", None), None), out_shardings=(specs, None),
                  static_argnums=(2,))
    params = p_init(jax.random.PRNGKey(0))
    for step, batch in enumerate(batches(0, STEPS)):
        params, metrics = p_step(params, batch, True, np.float32(step))
        print(f"step {step} loss {float(metrics['loss']):.5f} lr {float(metrics['lr']):.3f}")
    nll_sum = tokens = 0.0
    for batch in batches(1, 2):
        _, metrics = p_step(params, batch, False, np.float32(0))
        nll_sum += float(metrics["nll_sum"])
        tokens += float(metrics["tokens"])
    print("eval tokens", int(tokens), "perplexity", round(float(np.exp(nll_sum / tokens)), 4))
    print("model axis", mesh_axis_size("model"), "embedding shards",
          len(params["embedding"].sharding.device_set) if hasattr(params["embedding"], "sharding") else None)
