import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from xacc import _C  # noqa: E402
from xacc._src import config  # noqa: E402

# XACC_TEST_STACK_DEPTH=1: every break function a test makes (entered in a code
# cache by C.code_entry), with its resume and loop-body code, is checked against
# an independent walk of its bytecode (stack_depth.py); a mismatch fails the test.
STACK_CHECK = {"codes": 0, "violations": []}
if config.value("XACC_TEST_STACK_DEPTH"):
    import stack_depth

    _code_entry = _C.capture.code_entry

    def _checked_code_entry(tree, consts, fn, label):
        if isinstance(fn, types.CodeType):
            for c in stack_depth.made_by(fn):
                STACK_CHECK["codes"] += 1
                STACK_CHECK["violations"].extend(stack_depth.violations(c))
        return _code_entry(tree, consts, fn, label)

    _C.capture.code_entry = _checked_code_entry


@pytest.fixture(autouse=True)
def fresh_cache():
    from xacc.jit import reset
    reset()
    before = len(STACK_CHECK["violations"])
    yield
    reset()
    new = STACK_CHECK["violations"][before:]
    if new:
        pytest.fail("generated code with a wrong co_stacksize:\n" + "\n".join(new[:20]))


def pytest_terminal_summary(terminalreporter):
    if config.value("XACC_TEST_STACK_DEPTH"):
        terminalreporter.write_line(f"XACC_TEST_STACK_DEPTH: {STACK_CHECK['codes']} generated code objects checked, "
                                    f"{len(STACK_CHECK['violations'])} co_stacksize violations")
