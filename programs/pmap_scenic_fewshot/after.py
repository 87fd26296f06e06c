"""A scenic-style few-shot linear evaluator (JAX 0.4, 2022-23): the representation function is
`jax.pmap(representation_fn, donate_argnums=(1,), axis_name='batch')`, it `lax.all_gather`s the
representations, labels and masks of every device of every process, so each process holds the
whole global batch; the data is prepared per process (`batch_size // jax.process_count()` rows,
zero-padded to whole batches with a mask, reshaped to `(jax.local_device_count(), -1, ...)`), the
gathered outputs are unreplicated (device 0's copy) and masked, and a closed-form ridge regression
(`jnp.linalg.solve` on whitened features with a bias column) gives the few-shot accuracy for each
number of shots and L2 regularisation."""
from functools import wraps

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

    @wraps(f)
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


BATCH_SIZE = 16
FEATURES = 6
REPR = 8
CLASSES = 3
TRAIN_EXAMPLES = 30  # padded to whole batches
TEST_EXAMPLES = 20
SHOTS = (2, 5)
L2_REGS = (0.1, 10.0)
BIAS_CONSTANT = 100.0


def unreplicate(tree):
    return jax.tree_util.tree_map(lambda x: x[0], tree)


def prepare_data(xs, pad=None, num_devices=None):
    """The local rows padded with zeros to `pad` (a mask says which rows are real) and split
    over the local devices: every array becomes (devices, rows per device, ...)."""
    n = len(xs["image"])
    devices = num_devices or jax.local_device_count()
    rows = n if pad is None else pad
    mask = (np.arange(rows) < n).astype(np.float32)

    def to_devices(x):
        x = np.asarray(x)
        padded = np.zeros((rows,) + x.shape[1:], x.dtype)
        padded[:n] = x
        return padded.reshape((devices, rows // devices) + x.shape[1:])

    out = jax.tree.map(to_devices, {"inputs": xs["image"], "label": xs["label"]})
    out["batch_mask"] = mask.reshape(devices, -1)
    return out


def start_input_pipeline(data, local_batch_size):
    """This process's part of each global batch of the split, padded and prepared."""
    n = len(data["label"])
    global_batch = local_batch_size * jax.process_count()
    for start in range(0, n, global_batch):
        lo = start + jax.process_index() * local_batch_size
        local = {"image": data["image"][lo:lo + local_batch_size], "label": data["label"][lo:lo + local_batch_size]}
        if len(local["label"]) == 0:  # this process's part of the last batch is all padding
            local = {"image": data["image"][:0], "label": data["label"][:0]}
        yield prepare_data(local, pad=local_batch_size)


def representation_fn(train_state, batch):
    representation = jnp.tanh(batch["inputs"] @ train_state["params"]["proj"])
    representation = jax.lax.all_gather(representation, "batch")
    labels = jax.lax.all_gather(batch["label"], "batch")
    mask = jax.lax.all_gather(batch["batch_mask"], "batch")
    return representation, labels, mask


def fewshot_acc_fn(x, y, x_test, y_test, l2_reg, num_classes, eps=1e-5):
    """Accuracy of a ridge regression onto +-1 one-hot targets, fitted on (x, y) in closed form,
    on features standardised by the training set's statistics with a large constant column (an
    almost unregularised bias)."""
    mu, sigma = jnp.mean(x, 0), jnp.std(x, 0) + eps

    def features(a):
        a = (a - mu) / sigma
        return jnp.concatenate([a, jnp.full((a.shape[0], 1), BIAS_CONSTANT)], axis=1)

    f, f_test = features(x), features(x_test)
    targets = jnp.where(jax.nn.one_hot(y, num_classes) > 0, 1.0, -1.0)
    gram = f.T @ f + l2_reg * jnp.eye(f.shape[1])
    w = jnp.linalg.solve(gram, f.T @ targets)
    return jnp.mean(jnp.argmax(f_test @ w, axis=1) == y_test)


class FewShotEvaluator:
    def __init__(self, batch_size):
        self.local_batch_size = batch_size // jax.process_count()
        self.repr_fn = host_local_call(jax.jit(jax.shard_map(lambda *args: jax.tree.map(lambda o: jnp.expand_dims(o, 0), representation_fn(*jax.tree.map(lambda a: a[0], args))), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), check_vma=False), donate_argnums=(1,)), mesh=jax.sharding.Mesh(jax.devices(), ("batch",)), in_specs=jax.sharding.PartitionSpec("batch"), out_specs=jax.sharding.PartitionSpec("batch"), donate_argnums=(1,))

    def get_repr(self, train_state, data):
        """The representations and labels of every real example of the split, in order."""
        features, labels = [], []
        for batch in start_input_pipeline(data, self.local_batch_size):
            outputs = self.repr_fn(train_state, batch)
            # each output is (local devices, all devices, rows per device, ...), the same on
            # every local device after the all_gather: keep device 0's
            reps, labs, mask = (np.asarray(unreplicate(o)) for o in outputs)
            if reps.ndim != 3:
                raise ValueError(f"expected (devices, rows, features), got {reps.shape}")
            keep = mask.astype(bool)
            features.append(reps[keep])
            labels.append(labs[keep])
        return np.concatenate(features), np.concatenate(labels)

    def run(self, train_state, train_data, test_data):
        x_train, y_train = self.get_repr(train_state, train_data)
        x_test, y_test = self.get_repr(train_state, test_data)
        results = {}
        for shots in SHOTS:
            idx = np.concatenate([np.flatnonzero(y_train == c)[:shots] for c in range(CLASSES)])
            for l2_reg in L2_REGS:
                acc = fewshot_acc_fn(x_train[idx], y_train[idx], x_test, y_test, l2_reg, CLASSES)
                results[(shots, l2_reg)] = float(acc)
        return results, len(y_train), len(y_test)


def make_split(seed, n):
    rng = np.random.RandomState(seed)
    centers = np.random.RandomState(0).normal(size=(CLASSES, FEATURES)) * 2
    y = rng.randint(0, CLASSES, size=n).astype(np.int32)
    return {"image": (centers[y] + rng.normal(size=(n, FEATURES))).astype(np.float32), "label": y}


proj = np.random.RandomState(1).normal(size=(FEATURES, REPR)).astype(np.float32)
train_state = jax.device_put(jax.tree.map(lambda v: (np if isinstance(v, np.ndarray) else jnp).stack([v] * len(jax.local_devices())), {"params": {"proj": jnp.asarray(proj)}}), jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(jax.local_devices()), ("x",)), jax.sharding.PartitionSpec("x")))
evaluator = FewShotEvaluator(BATCH_SIZE)
results, n_train, n_test = evaluator.run(train_state, make_split(2, TRAIN_EXAMPLES), make_split(3, TEST_EXAMPLES))
print("process", jax.process_index(), "train", n_train, "test", n_test)
for (shots, l2_reg), acc in sorted(results.items()):
    print(f"{shots}-shot l2={l2_reg}: {acc:.4f}")
