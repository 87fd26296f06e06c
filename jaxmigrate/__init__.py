"""jaxmigrate: migrate and lint legacy pjit-era JAX code."""

__version__ = "0.1.0"
