"""scripts/cmake_build.py finds the xacc._C that CMake built for this interpreter, never
a module of the same name in a venv under build/ (`make venvs` puts build/venv-3.X
there, with torch's own _C.cpython-3X-*.so, newer than the build's)."""

import importlib.util
import os
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("cmake_build", ROOT / "scripts" / "cmake_build.py")
cmake_build = importlib.util.module_from_spec(spec)
sys.modules["cmake_build"] = cmake_build
spec.loader.exec_module(cmake_build)


def test_find_extension_skips_venvs_and_other_versions(tmp_path):
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = tmp_path / "python" / f"_C{suffix}"
    built.parent.mkdir()
    built.write_bytes(b"\x7fELF")
    old = time.time() - 100
    os.utime(built, (old, old))
    # Newer modules named _C: torch's in a venv of this version and of another one, and
    # another version's xacc._C built into the same tree.
    for rel in (f"venv-latest/lib/python3.11/site-packages/torch/_C{suffix}",
                "venv-3.13/lib/python3.13/site-packages/torch/_C.cpython-313-x86_64-linux-gnu.so",
                "python/_C.cpython-399-x86_64-linux-gnu.so"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\x7fELF")
    assert cmake_build.find_extension(tmp_path) == built
