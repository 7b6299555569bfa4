import pytest


@pytest.fixture(autouse=True)
def fresh_cache():
    from xacc.jit import reset
    reset()
    yield
    reset()
