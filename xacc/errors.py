"""Exceptions raised by xacc. Every error a user can see derives from XaccError and
carries the located diagnostics that produced it."""

from __future__ import annotations

from typing import Any


class XaccError(Exception):
    """Base class of every xacc error."""

    def __init__(self, message: str = "", diagnostics: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message.rstrip("\n"))
        self.diagnostics: list[dict[str, Any]] = list(diagnostics or [])

    @property
    def codes(self) -> list[str]:
        return [d.get("code", "") for d in self.diagnostics]


class CompileError(XaccError):
    """Malformed or ill-typed input (GIR text, Camel source) or a failed pass."""


class ExecutionError(XaccError):
    """A runtime error while executing a graph (division by zero, index out of range)."""


class BackendError(XaccError):
    """A backend could not compile or run a graph."""


class ArtifactError(XaccError):
    """An AOT artifact or cache file cannot be used: corrupted, truncated, tampered with,
    or built by another xacc/torch/Python version (see docs/aot.md)."""


class ConfigError(XaccError, ValueError):
    """An option has a value that is not allowed: an environment variable (checked when
    xacc is imported) or a keyword argument (`xacc.jit(backend=...)`). The message names
    the option, the value and what is allowed (the table in xacc/_src/config.py)."""


class Unsupported(XaccError):
    """A construct cannot be captured and graph breaks were disallowed (fullgraph=True)."""


__all__ = ["XaccError", "CompileError", "ExecutionError", "BackendError", "Unsupported", "ArtifactError",
           "ConfigError"]
