from jax.experimental.maps import Mesh


def test_mesh_class():
    assert Mesh.__name__ == "Mesh"
