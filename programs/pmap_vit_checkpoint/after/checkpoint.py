"""Checkpoints as flat `.npz` files, the way ViT-era code stored and loaded its parameters without
flax.serialization: the nested parameter dict is flattened to `"embed/kernel"`-style keys, saved
with `np.savez` from the host (the unreplicated copy), and read back with `np.load` and a tree
recovered from the keys; `inspect_params` compares a loaded tree's keys with the expected ones.
A module of the program: it names no device and no process."""
import os

import jax
import numpy as np


def _flatten_dict(d, parent_key="", sep="/"):
    """Flattens a dictionary, keeping empty leaves."""
    items = []
    for k, v in d.items():
        path = parent_key + sep + k if parent_key else k
        if isinstance(v, dict):
            items.extend(_flatten_dict(v, path, sep=sep).items())
        else:
            items.append((path, v))
    if parent_key and not d:
        items.append((parent_key, {}))
    return dict(items)


def recover_tree(keys, values):
    """The nested dict whose leaves are `values`, by '/'-separated `keys`."""
    tree = {}
    sub_trees = {}
    for k, v in zip(keys, values):
        if "/" not in k:
            tree[k] = v
        else:
            k_left, k_right = k.split("/", 1)
            sub_trees.setdefault(k_left, []).append((k_right, v))
    for k, kv_pairs in sub_trees.items():
        k_subtree, v_subtree = zip(*kv_pairs)
        tree[k] = recover_tree(k_subtree, v_subtree)
    return tree


def inspect_params(*, params, expected, fail_if_extra=True, fail_if_missing=True):
    """The loaded params, after checking their keys against the expected tree's."""
    params_flat = _flatten_dict(params)
    expected_flat = _flatten_dict(jax.device_get(expected))
    missing_keys = expected_flat.keys() - params_flat.keys()
    extra_keys = params_flat.keys() - expected_flat.keys()
    if missing_keys and fail_if_missing:
        raise ValueError(f"Missing params in checkpoint: {sorted(missing_keys)}")
    if extra_keys and fail_if_extra:
        raise ValueError(f"Extra params in checkpoint: {sorted(extra_keys)}")
    return params


def save(path, params, step):
    """Writes the host copy of `params` (and the step) to `path` (.npz)."""
    flat = _flatten_dict(jax.tree.map(np.asarray, jax.device_get(params)))
    tmp = path + ".tmp.npz"
    np.savez(tmp, __step__=np.asarray(step), **flat)
    os.replace(tmp, path)
    return path


def load(path):
    """The tree and the step stored at `path`."""
    with open(path, "rb") as f:
        ckpt = np.load(f, allow_pickle=False)
        keys, values = zip(*[(k, ckpt[k]) for k in ckpt.files if k != "__step__"])
        step = int(ckpt["__step__"])
    return recover_tree(keys, values), step
