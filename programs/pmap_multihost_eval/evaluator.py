"""The evaluation half of a pmap-era trainer, a module of its own (as `evaluator.py` or
`train_utils.py` modules of 0.4-era training code were): a linear classifier, a pmapped
evaluation step summing its metrics over the `batch` axis with `lax.psum`, and a loop over
already-sharded batches. It names no process: the trainer imports it and feeds it each process's
own batches, leading axis `jax.local_device_count()`; the sums run over every device of every
process."""
import functools

import jax
import jax.numpy as jnp


def predict(params, x):
    """The classifier's logits."""
    return x @ params["w"] + params["b"]


def cross_entropy(logits, labels):
    """Per-example negative log-likelihood of the integer labels."""
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, labels[..., None], axis=-1)[..., 0]


@functools.partial(jax.pmap, axis_name="batch")
def eval_step(params, batch):
    """Summed loss, correct predictions and example count of this device's batch, summed again
    over the devices: the same totals on every device. Padding rows (mask 0) count for nothing."""
    logits = predict(params, batch["x"])
    mask = batch["mask"]
    metrics = {
        "loss": jnp.sum(cross_entropy(logits, batch["label"]) * mask),
        "correct": jnp.sum((jnp.argmax(logits, axis=-1) == batch["label"]) * mask),
        "count": jnp.sum(mask),
    }
    return jax.lax.psum(metrics, axis_name="batch")


def evaluate(params_repl, batches):
    """Mean loss and accuracy over every batch (each already split over the local devices)."""
    totals = None
    for batch in batches:
        metrics = jax.tree_map(lambda m: m[0], eval_step(params_repl, batch))
        totals = metrics if totals is None else jax.tree_map(jnp.add, totals, metrics)
    return {"loss": float(totals["loss"] / totals["count"]),
            "accuracy": float(totals["correct"] / totals["count"])}
