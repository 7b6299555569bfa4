# Makes the helpers beside this file (buildtree.py) importable from every test
# directory under tests/python, whatever pytest's rootdir is.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The MLIR backend's kernel disk cache is on by default (~/.cache/xacc). Under
# pytest run directly (scripts/run_tests.py sets its own), use a fresh one so
# that no test loads kernels compiled by an earlier build.
if not os.environ.get("XACC_CACHE_DIR"):
    import atexit
    import shutil
    import tempfile
    _cache = tempfile.mkdtemp(prefix="xacc-pytest-cache-")
    os.environ["XACC_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)
