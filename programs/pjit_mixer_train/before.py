"""An MLP-Mixer (the ViT repository's `models_mixer.py` architecture, written without flax) trained
and evaluated with pjit as 2022 model-parallel code did (JAX 0.3/0.4): patches are embedded by a
stem, token-mixing and channel-mixing MLPs alternate with layer norms, the channel MLP's hidden
units are split over the "model" axis. The mesh is built and entered in `main` with
`with maps.Mesh(devices, ("data", "model")) as mesh:`; the train step is a
`@functools.partial(pjit, in_axis_resources=..., out_axis_resources=..., donate_argnums=...)`
decorator, the eval step a pjit called with positional specs (`pjit(f, (specs, P("data")),
None)`); `PartitionSpec` is imported from `jax.interpreters.pxla`, the activations are pinned with
`with_sharding_constraint(x, P("data", None, None))`; a warm-up/cosine learning rate."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import maps
from jax.experimental.pjit import pjit, with_sharding_constraint
from jax.interpreters.pxla import PartitionSpec as P

IMAGE = 8
PATCH = 4
CHANNELS = 2
HIDDEN = 8
TOKENS_MLP = 4
CHANNELS_MLP = 16
CLASSES = 3
BATCH = 16
STEPS = 5
BASE_LR = 0.2
WARMUP = 2
NUM_TOKENS = (IMAGE // PATCH) ** 2


def dense_init(key, n_in, n_out, zeros=False):
    if zeros:
        return {"kernel": jnp.zeros((n_in, n_out)), "bias": jnp.zeros((n_out,))}
    return {"kernel": jax.random.normal(key, (n_in, n_out)) / np.sqrt(n_in), "bias": jnp.zeros((n_out,))}


def init_params(key):
    keys = jax.random.split(key, 6)
    return {
        "stem": dense_init(keys[0], PATCH * PATCH * CHANNELS, HIDDEN),
        "token_mixing": {"Dense_0": dense_init(keys[1], NUM_TOKENS, TOKENS_MLP),
                         "Dense_1": dense_init(keys[2], TOKENS_MLP, NUM_TOKENS)},
        "channel_mixing": {"Dense_0": dense_init(keys[3], HIDDEN, CHANNELS_MLP),
                           "Dense_1": dense_init(keys[4], CHANNELS_MLP, HIDDEN)},
        "head": dense_init(keys[5], HIDDEN, CLASSES, zeros=True),
    }


param_specs = {
    "stem": {"kernel": P(), "bias": P()},
    "token_mixing": {"Dense_0": {"kernel": P(), "bias": P()}, "Dense_1": {"kernel": P(), "bias": P()}},
    "channel_mixing": {"Dense_0": {"kernel": P(None, "model"), "bias": P("model")},
                       "Dense_1": {"kernel": P("model", None), "bias": P()}},
    "head": {"kernel": P(), "bias": P()},
}


def layer_norm(x, eps=1e-6):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(jnp.var(x, axis=-1, keepdims=True) + eps)


def mlp_block(p, x):
    y = jax.nn.gelu(x @ p["Dense_0"]["kernel"] + p["Dense_0"]["bias"])
    return y @ p["Dense_1"]["kernel"] + p["Dense_1"]["bias"]


def mixer(params, images):
    n = images.shape[0]
    patches = images.reshape(n, IMAGE // PATCH, PATCH, IMAGE // PATCH, PATCH, CHANNELS)
    patches = patches.transpose(0, 1, 3, 2, 4, 5).reshape(n, NUM_TOKENS, -1)
    x = patches @ params["stem"]["kernel"] + params["stem"]["bias"]
    x = with_sharding_constraint(x, P("data", None, None))
    y = jnp.swapaxes(layer_norm(x), 1, 2)
    x = x + jnp.swapaxes(mlp_block(params["token_mixing"], y), 1, 2)
    x = x + mlp_block(params["channel_mixing"], layer_norm(x))
    x = jnp.mean(layer_norm(x), axis=1)
    return x @ params["head"]["kernel"] + params["head"]["bias"]


def learning_rate(step):
    progress = jnp.clip((step - WARMUP) / (STEPS - WARMUP), 0.0, 1.0)
    return BASE_LR * 0.5 * (1.0 + jnp.cos(jnp.pi * progress)) * jnp.minimum(1.0, (step + 1) / WARMUP)


@functools.partial(pjit, in_axis_resources=(param_specs, P("data"), P("data"), None),
                   out_axis_resources=(param_specs, None), donate_argnums=(0,))
def train_step(params, images, labels, step):
    def loss_fn(p):
        logp = jax.nn.log_softmax(mixer(p, images))
        return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, CLASSES) * logp, axis=-1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    lr = learning_rate(step)
    return jax.tree_map(lambda p, g: p - lr * g, params, grads), loss


def eval_fn(params, images):
    return jnp.argmax(mixer(params, images), axis=-1)


def data(seed):
    rng = np.random.RandomState(seed)
    images = rng.normal(size=(BATCH, IMAGE, IMAGE, CHANNELS)).astype(np.float32)
    labels = (images[:, :4].mean(axis=(1, 2, 3)) > 0).astype(np.int32) + (images[..., 0].std(axis=(1, 2)) > 1)
    return images, labels.astype(np.int32)


def main():
    devices = np.asarray(jax.devices()).reshape(4, 2)
    with maps.Mesh(devices, ("data", "model")) as mesh:
        params = pjit(init_params, in_axis_resources=None, out_axis_resources=param_specs)(jax.random.PRNGKey(0))
        for step in range(STEPS):
            images, labels = data(step)
            params, loss = train_step(params, images, labels, np.float32(step))
            print(f"step {step} lr {float(learning_rate(step)):.4f} loss {float(loss):.5f}")
        p_eval = pjit(eval_fn, (param_specs, P("data")), None)
        images, labels = data(100)
        predictions = p_eval(params, images)
        print("mesh", dict(mesh.shape), "eval accuracy", float(np.mean(np.asarray(predictions) == labels)))
    return jax.device_get(params)


final = main()
print("head bias", np.round(final["head"]["bias"], 5))
