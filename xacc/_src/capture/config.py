"""Capture configuration. Log channels and environment variables are declared
once in xacc/_src/config.py; this module re-exports what the translator uses."""

from __future__ import annotations

from xacc._src.config import CHANNEL_NAMES as CHANNELS, debug, enabled, env, log

RECOMPILE_LIMIT = int(env("XACC_RECOMPILE_LIMIT"))
VERBOSE_ERRORS = env("XACC_VERBOSE") not in ("", "0")

__all__ = ["CHANNELS", "RECOMPILE_LIMIT", "VERBOSE_ERRORS", "log", "debug", "enabled"]
