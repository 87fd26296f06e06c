"""Checkpoints as flat `.npz` files, the way ViT-era code stored and loaded its parameters without
flax.serialization: the nested parameter dict is flattened to `"embed/kernel"`-style keys, saved
with `np.savez` from the host (the unreplicated copy), and read back with `np.load` and the tree
rebuilt from the keys; `check_keys` compares a loaded tree's keys with the expected ones.
A module of the program: it names no device and no process."""
import os

import jax
import numpy as np


def flatten(tree, sep="/"):
    """{"a": {"b": x}} -> {"a/b": x}: one entry per leaf, keys joined by `sep`."""
    flat, pending = {}, [((), tree)]
    while pending:
        path, node = pending.pop()
        if isinstance(node, dict):
            pending.extend((path + (str(k),), v) for k, v in node.items())
        else:
            flat[sep.join(path)] = node
    return dict(sorted(flat.items()))


def unflatten(flat, sep="/"):
    """The inverse of `flatten`: nested dicts rebuilt from the joined keys."""
    tree = {}
    for key, value in flat.items():
        *parents, leaf = key.split(sep)
        node = tree
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return tree


def check_keys(*, params, expected):
    """The loaded params, after checking that their keys are the expected tree's."""
    have, want = set(flatten(params)), set(flatten(jax.device_get(expected)))
    if want - have:
        raise ValueError(f"checkpoint lacks {sorted(want - have)}")
    if have - want:
        raise ValueError(f"checkpoint has unexpected {sorted(have - want)}")
    return params


def save(path, params, step):
    """Writes the host copy of `params` (and the step) to `path` (.npz)."""
    flat = flatten(jax.tree.map(np.asarray, jax.device_get(params)))
    tmp = path + ".tmp.npz"
    np.savez(tmp, __step__=np.asarray(step), **flat)
    os.replace(tmp, path)
    return path


def load(path):
    """The tree and the step stored at `path`."""
    with np.load(path, allow_pickle=False) as ckpt:
        step = int(ckpt["__step__"])
        flat = {k: ckpt[k] for k in ckpt.files if k != "__step__"}
    return unflatten(flat), step
