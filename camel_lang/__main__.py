"""A thin launcher: `python -m camel_lang ARGS` runs the `camel` executable
with the same arguments and exits with its status. The binary is looked up
next to the package's build ($XACC_BUILD_DIR/bin, <repo>/build/bin, the
installed `bin` directory of this Python prefix) and then on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def find_camel() -> str | None:
    here = Path(__file__).resolve().parent
    candidates = []
    # Spelled here, not read from xacc's table (Note [Environment names]): this
    # launcher must not import xacc (and torch) to start a native binary.
    if os.environ.get("XACC_BUILD_DIR"):
        candidates.append(Path(os.environ["XACC_BUILD_DIR"]) / "bin" / "camel")
    candidates.append(here.parent / "build" / "bin" / "camel")
    candidates.append(Path(sys.prefix) / "bin" / "camel")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return shutil.which("camel")


def main() -> int:
    camel = find_camel()
    if camel is None:
        print("camel_lang: cannot find the `camel` executable (build xacc or put camel on PATH)",
              file=sys.stderr)
        return 127
    os.execv(camel, [camel, *sys.argv[1:]])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
