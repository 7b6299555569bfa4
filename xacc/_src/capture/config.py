"""Capture configuration and log channels, declared once. XACC_LOG is a comma
list of channel names (capture, guards, breaks, recompiles, bytecode, graphs)
or `all`; each channel is a `logging` logger `xacc.<name>` writing to stderr."""

from __future__ import annotations

import logging
import os
import sys

CHANNELS = {
    "capture": "frames compiled, skipped, and internal errors",
    "guards": "the guard tree of every new cache entry",
    "breaks": "graph breaks with code, reason and user location",
    "recompiles": "recompilations with the guard that failed",
    "bytecode": "generated break and resume functions (dis)",
    "graphs": "captured GIR graphs",
}
RECOMPILE_LIMIT = int(os.environ.get("XACC_RECOMPILE_LIMIT", "8"))
VERBOSE_ERRORS = os.environ.get("XACC_VERBOSE", "") not in ("", "0")


def _setup() -> dict[str, logging.Logger]:
    wanted = {c.strip() for c in os.environ.get("XACC_LOG", "").split(",") if c.strip()}
    if "all" in wanted:
        wanted = set(CHANNELS)
    loggers = {}
    for name in CHANNELS:
        lg = logging.getLogger(f"xacc.{name}")
        if name in wanted and not lg.handlers:
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter(f"[xacc:{name}] %(message)s"))
            lg.addHandler(h)
            lg.setLevel(logging.INFO)
            lg.propagate = False
        loggers[name] = lg
    return loggers


LOG = _setup()


def log(channel: str, msg: str, *args: object) -> None:
    lg = LOG[channel]
    if lg.isEnabledFor(logging.INFO):
        lg.info(msg, *args)
