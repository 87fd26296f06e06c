"""JM803: a private JAX name (``jax._src`` and the like) the target release no longer has."""

from __future__ import annotations

from jaxmigrate.patterns.api_references import Reference
from jaxmigrate.rules.base import Example, HistoryRule, snippet


class RemovedPrivateJaxName(HistoryRule):
    """
    ## What it does
    Reports each reference to a private JAX name (`jax._src...`, or any part starting with
    `_`) that the target release no longer has, with the release it went in and the public
    replacement where one is known (`jax._src.device_array.DeviceArray` → `jax.Array`, which is
    rewritten).

    ## Why is this bad?
    Private modules change without deprecation: the import fails on the target release.
    """

    code = "JM803"
    name = "removed-private-jax-name"
    summary = "private JAX names (`jax._src...`) the target no longer has"
    fix_safety = "safe"
    examples = (
        Example(
            snippet("""
                from jax._src.device_array import DeviceArray

                def is_array(x):
                    return isinstance(x, DeviceArray)
            """),
            snippet("""
                from jax import Array as DeviceArray

                def is_array(x):
                    return isinstance(x, DeviceArray)
            """),
            unsafe=True,
            title="an isinstance test rewritten to jax.Array is unsafe: every array is one",
        ),
    )

    def selects(self, ref: Reference) -> bool:
        return ref.status.state == "removed" and ref.status.private
