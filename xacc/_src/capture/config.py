"""Capture configuration. Log channels and environment variables are declared
once in xacc/_src/config.py; this module re-exports what the translator uses."""

from __future__ import annotations

from xacc._src.config import CHANNEL_NAMES as CHANNELS, E, debug, enabled, log, value

RECOMPILE_LIMIT: int = value(E.RECOMPILE_LIMIT)
VERBOSE_ERRORS: bool = value(E.VERBOSE)

__all__ = ["CHANNELS", "RECOMPILE_LIMIT", "VERBOSE_ERRORS", "log", "debug", "enabled"]
