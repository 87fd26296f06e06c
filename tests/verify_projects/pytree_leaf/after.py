"""A jit returning a dataclass registered as a pytree (the train state of many legacy projects)."""
import dataclasses

import jax
import jax.numpy as jnp
from jax import tree_util


@tree_util.register_pytree_node_class
@dataclasses.dataclass
class State:
    params: jax.Array
    step: jax.Array

    def tree_flatten(self):
        return (self.params, self.step), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@jax.jit
def init(x):
    return State(jnp.ones_like(x), jnp.zeros((), jnp.int32))


@jax.jit
def log(state):  # returns nothing: no value to compare
    return None


state = init(jnp.arange(4.0))
log(state)
