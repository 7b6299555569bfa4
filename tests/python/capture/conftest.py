import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def fresh_cache():
    from xacc.jit import reset
    reset()
    yield
    reset()
