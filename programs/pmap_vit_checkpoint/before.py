"""Training that stops and resumes from its own checkpoint, as ViT-era fine-tuning did (JAX 0.4):
the pmapped step (`jax.pmap(..., axis_name='batch')`) trains replicated parameters on each process's
block of the global batch (`jax.process_index()`, `(jax.local_device_count(), per device, ...)`);
every `CKPT_EVERY` steps the parameters are unreplicated (`jax.tree_map(lambda x: x[0], ...)`),
fetched with `jax.device_get` and written by `checkpoint.save` (a flat `np.savez`, our module);
the run then "restarts": the latest checkpoint is loaded, checked with `check_keys`, replicated
with `jax.device_put_replicated` and training resumes from its step, reaching the parameters an
uninterrupted run reaches. A host barrier (a pmapped `psum` of ones, as scenic's `barrier`) waits
for every process before the checkpoint is read."""
import functools
import os
import shutil
import tempfile

import jax
import jax.numpy as jnp
import numpy as np

import checkpoint

GLOBAL_BATCH = 32
FEATURES = 6
CLASSES = 3
STEPS = 6
CKPT_EVERY = 3
LR = 0.5


def replicate(tree):
    return jax.device_put_replicated(tree, jax.local_devices())


def unreplicate(tree):
    return jax.tree_map(lambda x: x[0], tree)


@functools.partial(jax.pmap, axis_name="i")
def _barrier(x):
    return jax.lax.psum(x, axis_name="i")


def barrier():
    """Waits for every process (all of them take part in the psum)."""
    return int(jax.device_get(_barrier(jnp.ones((jax.local_device_count(),))))[0])


def batches(start_step, steps):
    """This process's block of each global batch from `start_step` on (a deterministic stream)."""
    n = jax.local_device_count()
    per_host = GLOBAL_BATCH // jax.process_count()
    lo = jax.process_index() * per_host
    for step in range(start_step, steps):
        rng = np.random.RandomState(step)
        x = rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32)
        yield step, {"x": x[lo:lo + per_host].reshape(n, -1, FEATURES), "y": y[lo:lo + per_host].reshape(n, -1)}


def init_params():
    rng = np.random.RandomState(0)
    return {"dense": {"kernel": jnp.asarray(rng.normal(size=(FEATURES, CLASSES)).astype(np.float32) * 0.1),
                      "bias": jnp.zeros(CLASSES)}}


@functools.partial(jax.pmap, axis_name="batch")
def train_step(params, batch):
    def loss_fn(p):
        logits = batch["x"] @ p["dense"]["kernel"] + p["dense"]["bias"]
        onehot = jax.nn.one_hot(batch["y"], CLASSES)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "batch")
    return jax.tree_map(lambda p, g: p - LR * g, params, grads), jax.lax.pmean(loss, "batch")


def train(params_repl, start, stop, workdir):
    for step, batch in batches(start, stop):
        params_repl, loss = train_step(params_repl, batch)
        if jax.process_index() == 0:
            print(f"step {step} loss {float(unreplicate(loss)):.6f}")
        if (step + 1) % CKPT_EVERY == 0 and workdir is not None:
            path = checkpoint.save(os.path.join(workdir, f"ckpt_{step + 1}.npz"), unreplicate(params_repl), step + 1)
            print("process", jax.process_index(), "saved", os.path.basename(path))
    return params_repl


# every process keeps its own copy (a shared file system is not assumed here)
workdir = tempfile.mkdtemp(prefix=f"ckpt{jax.process_index()}_")
init = init_params()

# the uninterrupted run
straight = jax.device_get(unreplicate(train(replicate(init), 0, STEPS, None)))

# the run that is interrupted after its first checkpoint, then restored from it
train(replicate(init), 0, CKPT_EVERY, workdir)
print("processes at the barrier:", barrier())
latest = max(os.listdir(workdir), key=lambda name: int(name[5:-4]))
restored, step = checkpoint.load(os.path.join(workdir, latest))
restored = checkpoint.check_keys(params=restored, expected=init)
print("restored", latest, "at step", step, "keys", sorted(restored["dense"]))
resumed = jax.device_get(unreplicate(train(replicate(restored), step, STEPS, None)))

same = jax.tree_util.tree_all(jax.tree_map(lambda a, b: np.allclose(a, b, atol=1e-6), straight, resumed))
print("resumed run equals the uninterrupted one:", same)
print("kernel row 0:", np.round(resumed["dense"]["kernel"][0], 5))
shutil.rmtree(workdir)
