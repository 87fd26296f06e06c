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


def create_learning_rate_schedule(total_steps, base, decay_type, warmup_steps, linear_end=1e-5):
    """learning_rate(step): linear warm-up, then linear or cosine decay."""

    def step_fn(step):
        lr = base
        progress = (step - warmup_steps) / float(total_steps - warmup_steps)
        progress = jnp.clip(progress, 0.0, 1.0)
        if decay_type == "linear":
            lr = linear_end + (lr - linear_end) * (1.0 - progress)
        elif decay_type == "cosine":
            lr = lr * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
        else:
            raise ValueError(f"Unknown lr type {decay_type}")
        if warmup_steps:
            lr = lr * jnp.minimum(1.0, step / warmup_steps)
        return jnp.asarray(lr, dtype=jnp.float32)

    return step_fn


def accumulate_gradient(loss_and_grad_fn, params, images, labels, accum_steps):
    """The mean loss and gradient over `accum_steps` micro-batches of the device's batch."""
    if accum_steps and accum_steps > 1:
        assert images.shape[0] % accum_steps == 0, f"Bad accum_steps {accum_steps} for {images.shape[0]}"
        step_size = images.shape[0] // accum_steps
        loss, grad = loss_and_grad_fn(params, images[:step_size], labels[:step_size])

        def acc_grad_and_loss(i, loss_and_grad):
            imgs = jax.lax.dynamic_slice(images, (i * step_size, 0, 0, 0), (step_size,) + images.shape[1:])
            lbls = jax.lax.dynamic_slice(labels, (i * step_size, 0), (step_size, labels.shape[1]))
            li, gi = loss_and_grad_fn(params, imgs, lbls)
            acc_loss, acc_grad = loss_and_grad
            return acc_loss + li, jax.tree_map(lambda x, y: x + y, acc_grad, gi)

        loss, grad = jax.lax.fori_loop(1, accum_steps, acc_grad_and_loss, (loss, grad))
        return jax.tree_map(lambda x: x / accum_steps, (loss, grad))
    return loss_and_grad_fn(params, images, labels)


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
    """The data-parallel update step."""

    def update_fn(params, lr, batch, rng):
        _, new_rng = jax.random.split(rng)
        # bind the rng key to the device id, which is unique across hosts
        dropout_rng = jax.random.fold_in(rng, jax.lax.axis_index("batch"))

        def cross_entropy_loss(*, logits, labels):
            logp = jax.nn.log_softmax(logits)
            return -jnp.mean(jnp.sum(logp * labels, axis=1))

        def loss_fn(params, images, labels):
            logits = apply_model(params, images, train=True, dropout_rng=dropout_rng)
            return cross_entropy_loss(logits=logits, labels=labels)

        loss, grads = accumulate_gradient(jax.value_and_grad(loss_fn), params, batch["image"], batch["label"],
                                          accum_steps)
        grads = jax.tree_map(lambda x: jax.lax.pmean(x, axis_name="batch"), grads)
        params = jax.tree_map(lambda p, g: p - lr * g, params, grads)
        loss = jax.lax.pmean(loss, axis_name="batch")
        return params, loss, new_rng

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


lr_fn = create_learning_rate_schedule(TOTAL_STEPS, BASE_LR, "cosine", WARMUP_STEPS)
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
