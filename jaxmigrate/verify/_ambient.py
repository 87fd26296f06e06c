"""Layouts JAX chooses itself: an eager value made under ``jax.set_mesh``.

Under ``jax.set_mesh(mesh)`` (what replaced ``with mesh:``) JAX places a value made outside any
compiled call, such as ``jax.random.PRNGKey(0)`` or ``jnp.zeros(4)``, replicated over ``mesh``;
under the legacy ``with mesh:`` it stayed on one device. The values agree, the layouts differ,
and the migration did not ask for it.

- ``track()`` (the after side's process, before the program runs): ``jax.set_mesh`` (and
  ``jax.sharding.set_mesh``/``use_mesh`` where they are the same function) note each mesh given
  to them, by its axes as the observations show them (``observe.mesh_text``: ``x=4 y=2``);
  ``meshes()`` lists them.
- ``note(before, after, meshes)``: for a layout difference, the sentence saying so when the after
  value is replicated over one of those meshes (``NamedSharding(mesh <axes>, P())``) and the
  before value sits on one device; else "".
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Sequence

_SEEN: List[str] = []


def track() -> None:
    """Note the meshes the program gives ``jax.set_mesh``."""
    import jax
    import jax.sharding

    from jaxmigrate.verify.observe import mesh_text

    real = getattr(jax, "set_mesh", None)
    if real is None or getattr(real, "_jaxmigrate_tracked", False):
        return

    @functools.wraps(real)
    def set_mesh(mesh, *args, **kwargs):
        try:
            axes = mesh_text(mesh)
            if axes not in _SEEN:
                _SEEN.append(axes)
        except Exception:  # noqa: BLE001 - not a mesh: JAX says so
            pass
        return real(mesh, *args, **kwargs)

    set_mesh._jaxmigrate_tracked = True  # type: ignore[attr-defined]
    jax.set_mesh = set_mesh
    for name in ("set_mesh", "use_mesh"):
        if getattr(jax.sharding, name, None) is real:
            setattr(jax.sharding, name, set_mesh)


def meshes() -> List[str]:
    return list(_SEEN)


def note(before: Dict[str, Any], after: Dict[str, Any], meshes: Sequence[str]) -> str:
    """Why a layout differs, when JAX chose it: see the module docstring."""
    if before.get("kind") != "array" or after.get("kind") != "array":
        return ""
    on_one = len({position for position, _ in before.get("sharding") or ()}) == 1
    layout = str(after.get("layout", ""))
    for axes in meshes:
        if on_one and layout == f"NamedSharding(mesh {axes}, P())":
            return (f"JAX chose this layout: the after value was made outside any compiled call under "
                    f"jax.set_mesh (mesh {axes}), which places such a value replicated over the mesh; under "
                    "`with mesh:` it stayed on one device. The values agree")
    return ""
