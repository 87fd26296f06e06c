"""A ViT-era fine-tuning loop (JAX 0.4, 2022): the update function is built by a factory and
pmapped with `axis_name='batch'` and the parameters donated; the gradient of each device's batch
is accumulated over micro-batches (`lax.fori_loop` over `lax.dynamic_slice`s of the images and
labels); the per-step rng is split inside the step and handed back, the dropout key bound to the
device (`fold_in` of `axis_index`, unique across hosts); the learning rate follows a warm-up then
cosine schedule evaluated on the host and fed to the step replicated; evaluation runs a second pmap
of the model's inference and counts correct argmaxes in NumPy. Each process loads its own block of
every global batch (`jax.process_index()`), shaped `(jax.local_device_count(), per device, ...)`."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

GLOBAL_BATCH = 64
EVAL_BATCH = 32
IMAGE = (4, 4, 2)
CLASSES = 5
HIDDEN = 16
ACCUM_STEPS = 2
TOTAL_STEPS = 6
WARMUP_STEPS = 2
BASE_LR = 0.3
DROPOUT = 0.1


def lr_schedule_fn(total_steps, peak, kind, warmup, floor=1e-5):
    """The learning rate of a step: rises linearly for `warmup` steps, then decays to `floor`
    along a straight line (`kind="linear"`) or a half cosine (`kind="cosine"`)."""
    if kind not in ("linear", "cosine"):
        raise ValueError(f"no such decay: {kind}")

    def rate(step):
        done = jnp.clip((step - warmup) / float(total_steps - warmup), 0.0, 1.0)
        if kind == "cosine":
            value = peak * 0.5 * (1.0 + jnp.cos(jnp.pi * done))
        else:
            value = floor + (peak - floor) * (1.0 - done)
        ramp = jnp.minimum(1.0, step / warmup) if warmup else 1.0
        return jnp.asarray(value * ramp, jnp.float32)

    return rate


def grad_over_microbatches(value_and_grad_fn, params, images, labels, n_micro):
    """Mean loss and gradient of the device's batch, computed `n_micro` rows-blocks at a time
    (`lax.fori_loop` over `lax.dynamic_slice`s) to bound the memory of one step."""
    if not n_micro or n_micro == 1:
        return value_and_grad_fn(params, images, labels)
    rows = images.shape[0] // n_micro
    if rows * n_micro != images.shape[0]:
        raise ValueError(f"{images.shape[0]} rows do not split into {n_micro} micro-batches")

    def block(i):
        start = i * rows
        img = jax.lax.dynamic_slice(images, (start,) + (0,) * (images.ndim - 1), (rows,) + images.shape[1:])
        lab = jax.lax.dynamic_slice(labels, (start, 0), (rows,) + labels.shape[1:])
        return value_and_grad_fn(params, img, lab)

    def body(i, totals):
        loss_i, grad_i = block(i)
        return totals[0] + loss_i, jax.tree_map(jnp.add, totals[1], grad_i)

    totals = jax.lax.fori_loop(1, n_micro, body, block(0))
    return jax.tree_map(lambda t: t / n_micro, totals)


def init_params(key):
    k1, k2 = jax.random.split(key)
    n_in = int(np.prod(IMAGE))
    return {"embed": {"kernel": jax.random.normal(k1, (n_in, HIDDEN)) * (1 / np.sqrt(n_in)), "bias": jnp.zeros(HIDDEN)},
            "head": {"kernel": jnp.zeros((HIDDEN, CLASSES)), "bias": jnp.zeros(CLASSES)}}


def apply_model(params, images, *, train, dropout_rng=None):
    x = images.reshape((images.shape[0], -1))
    x = jax.nn.gelu(x @ params["embed"]["kernel"] + params["embed"]["bias"])
    if train:
        keep = jax.random.bernoulli(dropout_rng, 1.0 - DROPOUT, x.shape)
        x = jnp.where(keep, x / (1.0 - DROPOUT), 0.0)
    return x @ params["head"]["kernel"] + params["head"]["bias"]


def make_update_fn(*, accum_steps):
    """Builds the pmapped update: params donated, gradients averaged over every device."""

    def update_fn(params, lr, batch, rng):
        rng, next_rng = jax.random.split(rng)
        # one dropout key per device; axis_index counts the devices of every host
        dropout_rng = jax.random.fold_in(rng, jax.lax.axis_index("batch"))

        def loss_fn(p, images, labels):
            logits = apply_model(p, images, train=True, dropout_rng=dropout_rng)
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))

        loss, grads = grad_over_microbatches(jax.value_and_grad(loss_fn), params, batch["image"],
                                             batch["label"], accum_steps)
        grads = jax.tree_map(lambda g: jax.lax.pmean(g, axis_name="batch"), grads)
        new_params = jax.tree_map(lambda p, g: p - lr * g, params, grads)
        return new_params, jax.lax.pmean(loss, axis_name="batch"), next_rng

    return jax.pmap(update_fn, axis_name="batch", donate_argnums=(0,))


def get_data(seed, global_batch, steps):
    """This process's block of each global batch, already split over its local devices."""
    rng = np.random.RandomState(seed)
    teacher = rng.normal(size=(int(np.prod(IMAGE)), CLASSES))
    num_devices = jax.local_device_count()
    per_host = global_batch // jax.process_count()
    start = jax.process_index() * per_host
    for _ in range(steps):
        images = rng.normal(size=(global_batch,) + IMAGE).astype(np.float32)
        labels = np.eye(CLASSES, dtype=np.float32)[np.argmax(images.reshape(global_batch, -1) @ teacher, axis=1)]
        images, labels = images[start:start + per_host], labels[start:start + per_host]
        yield {"image": images.reshape((num_devices, -1) + IMAGE),
               "label": labels.reshape((num_devices, -1, CLASSES))}


def replicate(tree):
    return jax.device_put_replicated(tree, jax.local_devices())


def unreplicate(tree):
    return jax.tree_map(lambda x: x[0], tree)


lr_fn = lr_schedule_fn(TOTAL_STEPS, BASE_LR, "cosine", WARMUP_STEPS)
update_fn_repl = make_update_fn(accum_steps=ACCUM_STEPS)
infer_fn_repl = jax.pmap(functools.partial(apply_model, train=False))

params_repl = replicate(init_params(jax.random.PRNGKey(0)))
update_rng_repl = replicate(jax.random.PRNGKey(0))

for step, batch in zip(range(1, TOTAL_STEPS + 1), get_data(seed=1, global_batch=GLOBAL_BATCH, steps=TOTAL_STEPS)):
    lr_repl = replicate(lr_fn(step))
    params_repl, loss_repl, update_rng_repl = update_fn_repl(params_repl, lr_repl, batch, update_rng_repl)
    if jax.process_index() == 0:
        print(f"step {step} lr {float(lr_fn(step)):.5f} train_loss {float(unreplicate(loss_repl)):.5f}")

correct = total = 0
for test_batch in get_data(seed=2, global_batch=EVAL_BATCH, steps=3):
    logits = infer_fn_repl(params_repl, test_batch["image"])
    correct += int((np.argmax(logits, axis=-1) == np.argmax(test_batch["label"], axis=-1)).sum())
    total += int(np.prod(test_batch["label"].shape[:2]))
print("process", jax.process_index(), "local test accuracy", correct / total)
final = jax.device_get(unreplicate(params_repl))
print("head bias", np.round(final["head"]["bias"], 5))
