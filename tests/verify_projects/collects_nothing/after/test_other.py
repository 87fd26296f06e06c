import mlxu_not_installed  # noqa: F401


def test_other():
    pass
