"""The one table of xacc's log channels and environment variables.

Everything user-facing about logging is generated from `CHANNELS` and `ENV`:
`docs/logging.md` (scripts/gen_logging_doc.py; a test keeps it up to date),
`python -m xjit --help-log`, and the loggers themselves. Library code reports
only through `log()`/`debug()` on a declared channel, never with print().

XACC_LOG is a comma list of channel names, `all`, or `+name` for a channel at
debug level (`XACC_LOG=breaks,+capture`). Each channel is the `logging` logger
`xacc.<name>` writing `[xacc:<name>] message` lines to stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Channel:
    name: str
    summary: str  # what the channel reports at info level
    debug: str  # what `+name` adds


CHANNELS: tuple[Channel, ...] = (
    Channel("capture", "frames compiled or skipped, graph sizes, internal translator errors (with traceback)",
            "every frame the hook hands to the translator, with its argument types"),
    Channel("guards", "the guard tree of every new cache entry, one guard per line",
            "guard counts per entry"),
    Channel("breaks", "graph breaks: stable code, reason, detail, user file:line and hint",
            "the instruction offset of each break"),
    Channel("recompiles", "recompilations with the guard that failed; dynamic-shape decisions",
            "how many cache entries the code object already has when a recompile starts"),
    Channel("bytecode", "generated break functions and resume functions (dis output)",
            "the original bytecode of every translated frame"),
    Channel("graphs", "captured GIR graphs after the pass pipeline",
            "the GIR before the pass pipeline"),
    Channel("passes", "the pass pipeline run on each captured graph with node counts before and after",
            "the pass options (target device) of each run"),
    Channel("training", "graphs whose inputs require grad: compiled forward/backward built (residual count) or "
            "the reason the graph replays with eager autograd instead",
            "nothing more"),
    Channel("backend", "graphs prepared for execution: executor, node and step counts, preparation time",
            "each bisection step of xacc.debug.compare (the graph prefix it runs)"),
    Channel("aot", "AOT artifacts and `xjit --cache`: entries recorded, artifacts written and loaded, stored "
            "entries installed (no capture) or not matching their guards (the JIT compiles instead), cache "
            "files ignored and why",
            "the code key of every frame looked up in a store"),
    Channel("mlir", "written by the C++ MLIR backend to stderr as `[xacc:mlir] ...`: kernels compiled or loaded "
            "from the disk cache, regions that fell back; for `camel run --backend=xpu`, the scalar graphs "
            "`compiled` or found by a `cache hit` (no MLIR compile), and native calls that bailed out",
            "the per-graph scalar plan of `camel run --backend=xpu` (why each graph stays on the runtime)"),
    Channel("amp", "precision=\"auto\": per graph, each region's precision, measured error and back-outs",
            "nothing more"),
)


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str
    summary: str


ENV: tuple[EnvVar, ...] = (
    EnvVar("XACC_LOG", "", "log channels to enable: comma list of names, `all`, `+name` for debug level"),
    EnvVar("XACC_RECOMPILE_LIMIT", "8", "cache entries per code object before it runs Python only"),
    EnvVar("XACC_VERBOSE", "0", "show internal stack traces in errors"),
    EnvVar("XACC_DUMP", "", "directory: `python -m xjit` writes every export artifact of the run there "
                           "(same as `--export DIR`)"),
    EnvVar("XACC_CACHE_DIR", "", "directory of the MLIR backend's kernel disk cache (object files keyed by kernel "
                                 "text, pipeline build, LLVM version and CPU), on by default in "
                                 "`$XDG_CACHE_HOME/xacc` (`~/.cache/xacc`); `off`: no disk cache; also where "
                                 "`xacc.load` puts an artifact's kernels; `xjit --cache DIR` uses `DIR/kernels` "
                                 "(docs/aot.md)"),
    EnvVar("XACC_PGO_PROFILE", "", "the profile file of `xacc.jit(pgo=True)` and `python -m xjit --pgo` "
                                   "(default `xacc_pgo.json` in the current directory; docs/pgo.md)"),
    EnvVar("XACC_TEST_FAULT_OP", "", "TEST ONLY: the ATen executor and the MLIR lowering add 1 to the first "
                                     "result of every node of this op (e.g. `aten.relu.default`) so that "
                                     "`xacc.debug.compare` must find it; read when a graph is prepared"),
)

CHANNEL_NAMES = tuple(c.name for c in CHANNELS)


def env(name: str) -> str:
    """The value of a declared environment variable (its default when unset)."""
    for e in ENV:
        if e.name == name:
            return os.environ.get(name, e.default)
    raise KeyError(f"undeclared environment variable {name}")


def parse_log_spec(spec: str) -> dict[str, int]:
    """`capture,+guards` -> {channel: logging level}; unknown names are ignored
    (reported once on stderr by `setup`)."""
    out: dict[str, int] = {}
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        level = logging.INFO
        if item.startswith("+"):
            level, item = logging.DEBUG, item[1:]
        names = CHANNEL_NAMES if item == "all" else (item,)
        for n in names:
            if n in CHANNEL_NAMES:
                out[n] = min(out.get(n, logging.INFO), level)
    return out


_handlers: dict[str, logging.Handler] = {}


def setup(spec: str | None = None) -> None:
    """(Re)configures the channel loggers from `spec` (default: $XACC_LOG)."""
    if spec is None:
        spec = env("XACC_LOG")
    wanted = parse_log_spec(spec)
    for name in CHANNEL_NAMES:
        lg = logging.getLogger(f"xacc.{name}")
        lg.propagate = False
        h = _handlers.get(name)
        if name in wanted:
            if h is None:
                h = logging.StreamHandler(sys.stderr)
                h.setFormatter(logging.Formatter(f"[xacc:{name}] %(message)s"))
                _handlers[name] = h
                lg.addHandler(h)
            lg.setLevel(wanted[name])
        else:
            if h is not None:
                lg.removeHandler(h)
                del _handlers[name]
            lg.setLevel(logging.WARNING)
    unknown = [s.strip().lstrip("+") for s in spec.split(",")
               if s.strip() and s.strip().lstrip("+") not in CHANNEL_NAMES + ("all",)]
    if unknown:
        logging.getLogger("xacc").warning("XACC_LOG: unknown channel(s) %s; known: %s", ", ".join(unknown),
                                          ", ".join(CHANNEL_NAMES))


def log(channel: str, msg: str, *args: object) -> None:
    """Info-level message on a declared channel (formatted only when enabled)."""
    lg = logging.getLogger(f"xacc.{channel}")
    if lg.isEnabledFor(logging.INFO):
        lg.info(msg, *args)


def debug(channel: str, msg: str, *args: object) -> None:
    """Debug-level message, shown with XACC_LOG=+channel."""
    lg = logging.getLogger(f"xacc.{channel}")
    if lg.isEnabledFor(logging.DEBUG):
        lg.debug(msg, *args)


def enabled(channel: str, level: int = logging.INFO) -> bool:
    return logging.getLogger(f"xacc.{channel}").isEnabledFor(level)


def markdown() -> str:
    """docs/logging.md, generated from the tables above."""
    lines = ["# Logging and environment variables", "",
             "<!-- Generated by scripts/gen_logging_doc.py from xacc/_src/config.py; do not edit. -->", "",
             "`XACC_LOG` turns on log channels: a comma list of channel names, `all`, or `+name` for a",
             "channel at debug level (`XACC_LOG=breaks,+capture`). Each channel is the Python `logging`",
             "logger `xacc.<name>`; lines go to stderr as `[xacc:<name>] message`. Library code reports",
             "only through these channels.", "",
             "## Channels", "", "| channel | reports | `+name` adds |", "| --- | --- | --- |"]
    for c in CHANNELS:
        lines.append(f"| `{c.name}` | {c.summary} | {c.debug} |")
    lines += ["", "## Environment variables", "", "| variable | default | meaning |", "| --- | --- | --- |"]
    for e in ENV:
        lines.append(f"| `{e.name}` | `{e.default}` | {e.summary} |" if e.default else
                     f"| `{e.name}` | (unset) | {e.summary} |")
    return "\n".join(lines) + "\n"


setup()
