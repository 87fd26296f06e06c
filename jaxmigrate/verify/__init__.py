"""Runtime verification: run legacy code and its migration side by side on CPU devices.

``verify_files(before, after, devices=8, processes=1, timeout=60)`` runs BEFORE on jaxmigrate's
legacy runtime (``jaxmigrate.verify.legacy``) and AFTER on the installed JAX, each in fresh
processes, and compares what they compute (``Verdict.status``: equivalent / divergent /
undecidable). ``verify_migration(path)`` migrates a file in memory first. Both RUN the code.
Needs the ``verify`` extra (jax, jaxlib).
"""

from __future__ import annotations


def verify_files(*args, **kwargs):
    from jaxmigrate.verify.runner import verify_files as run

    return run(*args, **kwargs)


def verify_migration(*args, **kwargs):
    from jaxmigrate.verify.runner import verify_migration as run

    return run(*args, **kwargs)
