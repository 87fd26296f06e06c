"""pmap donating its inputs (JAX 0.3/0.4, `donate_argnums`): a per-device state updated in place
step after step by a `functools.partial(jax.pmap, ..., donate_argnums=(0,))` step, the old state
deleted after each call (reading it raises), and a call form `jax.pmap(f, donate_argnums=0)`
that donates a buffer it returns updated. One process, 8 CPU devices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.pmap, axis_name="i", donate_argnums=(0,))
def step(state, x):
    """The state moved towards the mean of the inputs over the devices."""
    return state + 0.5 * (jax.lax.pmean(x, "i") - state)


n = jax.local_device_count()
x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
state = jax.pmap(jnp.zeros_like)(x)
for _ in range(3):
    old = state
    state = step(state, x)
    assert old.is_deleted()
    try:
        np.asarray(old)
    except RuntimeError as error:
        print("donated:", str(error).splitlines()[0][:40])
print(state[0])

counts = jax.device_put_sharded([np.zeros(2, np.int32)] * n, jax.local_devices())
bumped = jax.pmap(lambda c: c + jnp.arange(2, dtype=np.int32), donate_argnums=0)(counts)
print(counts.is_deleted(), bumped.sum())
