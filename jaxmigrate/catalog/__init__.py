"""Facts about JAX, as data: the API history of every release (generated from JAX's source)."""
