#!/usr/bin/env python3
"""Writes docs/logging.md and csrc/include/xacc/support/EnvNames.h from the
channel and environment tables in xacc/_src/config.py (`--check`: exit 1 if
either file is out of date)."""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _table():
    # Load the table module by path: generating docs needs no built extension.
    import importlib.util
    spec = importlib.util.spec_from_file_location("_xacc_config", os.path.join(ROOT, "xacc", "_src", "config.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


DOC = os.path.join(ROOT, "docs", "logging.md")
HEADER = os.path.join(ROOT, "csrc", "include", "xacc", "support", "EnvNames.h")


def main() -> int:
    table = _table()
    outputs = {DOC: table.markdown(), HEADER: table.cpp_header()}
    if "--check" in sys.argv[1:]:
        stale = []
        for path, text in outputs.items():
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    stale.append(path)
        for path in stale:
            print(f"{path} is out of date: run scripts/gen_logging_doc.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
