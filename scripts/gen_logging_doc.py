#!/usr/bin/env python3
"""Writes docs/logging.md from the channel and environment tables in
xacc/_src/config.py (`--check`: exit 1 if the file is out of date)."""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _markdown() -> str:
    # Load the table module by path: generating docs needs no built extension.
    import importlib.util
    spec = importlib.util.spec_from_file_location("_xacc_config", os.path.join(ROOT, "xacc", "_src", "config.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.markdown()


DOC = os.path.join(ROOT, "docs", "logging.md")


def main() -> int:
    text = _markdown()
    if "--check" in sys.argv[1:]:
        with open(DOC, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{DOC} is out of date: run scripts/gen_logging_doc.py", file=sys.stderr)
                return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
