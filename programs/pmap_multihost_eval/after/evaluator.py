"""The evaluation half of a pmap-era trainer, a module of its own (as `evaluator.py` or
`train_utils.py` modules of 0.4-era training code were): a linear classifier, a pmapped
evaluation step summing its metrics over the `batch` axis with `lax.psum`, and a loop over
already-sharded batches. It names no process: the trainer imports it and feeds it each process's
own batches, leading axis `jax.local_device_count()`; the sums run over every device of every
process."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils


def host_local_call(f, mesh, in_specs, out_specs, static_argnums=(), donate_argnums=()):
    """Call ``f`` as ``jax.pmap`` called it, on this process's data: the arguments (the static ones
    aside) become global arrays over ``mesh``, the outputs this process's part again, and a donated
    argument that had to be copied is deleted. With one process, ``f`` is called as it is."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    donated = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)

    @functools.wraps(f)
    def call(*args):
        if jax.process_count() == 1:
            return f(*args)
        dynamic = [i for i in range(len(args)) if i not in static]
        specs = dict(zip(dynamic, in_specs if type(in_specs) is tuple else [in_specs] * len(dynamic)))

        def to_global(i, a):  # a Python number stays one (weakly typed), as pmap passed it
            if i not in specs or isinstance(a, (int, float, complex)):
                return a
            a = jax.tree.map(lambda x: x if isinstance(x, jax.Array) else np.asarray(x), a)
            return multihost_utils.host_local_array_to_global_array(a, mesh, specs[i])

        out = f(*(to_global(i, a) for i, a in enumerate(args)))
        for leaf in jax.tree.leaves([args[i] for i in donated]):
            if isinstance(leaf, jax.Array) and not leaf.is_deleted():
                leaf.delete()
        return multihost_utils.global_array_to_host_local_array(out, mesh, out_specs)

    return call


def predict(params, x):
    """The classifier's logits."""
    return x @ params["w"] + params["b"]


def cross_entropy(logits, labels):
    """Per-example negative log-likelihood of the integer labels."""
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]


@functools.partial(host_local_call, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"))
@jax.jit
@functools.partial(jax.shard_map, mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False)
def eval_step(params, batch):
    """Summed loss, correct predictions and example count of this device's batch, summed again
    over the devices: the same totals on every device. Padding rows (mask 0) count for nothing."""
    params, batch = jax.tree.map(lambda a: a[0], (params, batch))
    logits = predict(params, batch["x"])
    mask = batch["mask"]
    metrics = {
        "loss": jnp.sum(cross_entropy(logits, batch["label"]) * mask),
        "correct": jnp.sum((jnp.argmax(logits, axis=-1) == batch["label"]) * mask),
        "count": jnp.sum(mask),
    }
    return jax.tree.map(lambda o: jnp.expand_dims(o, 0), jax.lax.psum(metrics, axis_name="batch"))


def evaluate(params_repl, batches):
    """Mean loss and accuracy over every batch (each already split over the local devices)."""
    totals = None
    for batch in batches:
        metrics = jax.tree.map(lambda m: m[0], eval_step(params_repl, batch))
        totals = metrics if totals is None else jax.tree.map(jnp.add, totals, metrics)
    return {"loss": float(totals["loss"] / totals["count"]),
            "accuracy": float(totals["correct"] / totals["count"])}
