"""The one table of xacc's log channels and environment variables.

Everything user-facing about logging is generated from `CHANNELS` and `ENV`:
`docs/logging.md` (scripts/gen_logging_doc.py; a test keeps it up to date),
`python -m xjit --help-log`, and the loggers themselves. Library code reports
only through `log()`/`debug()` on a declared channel, never with print().

XACC_LOG is a comma list of channel names, `all`, or `+name` for a channel at
debug level (`XACC_LOG=breaks,+capture`). Each channel is the `logging` logger
`xacc.<name>` writing `[xacc:<name>] message` lines to stderr.

Every option is validated here, from its table row: each environment variable
(`ENV`) is parsed by its row's `parse` when xacc is imported (`check_env`), and
each keyword argument of `xacc.jit` (`JIT_OPTIONS`) by its row's `check`
(`check_jit_options`). A bad value raises `xacc.ConfigError` naming the option,
the value and what is allowed (`EnvVar.allowed`, `JitOption.allowed`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import sys
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable


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
    Channel("cache", "written by the C++ MLIR backend to stderr as `[xacc:cache] ...`: kernel disk cache entries "
            "stored, entries refused on load (bad header, wrong key or build, truncated, SHA-256 mismatch: "
            "deleted and compiled again) and evictions; a failed write is always reported, once, as "
            "`[xacc:cache] warning: ...`",
            "nothing more"),
)


CHANNEL_NAMES = tuple(c.name for c in CHANNELS)


# -- typed parses of option values: each returns the value or raises ValueError ----------


def _text(v: str) -> str:
    return v


def _channels(v: str) -> str:
    for item in (s.strip() for s in v.split(",")):
        if item and item.removeprefix("+") not in CHANNEL_NAMES + ("all",):
            raise ValueError(item)
    return v


def _int_at_least(lo: int) -> Callable[[str], int]:
    def parse(v: str) -> int:
        n = int(v.strip(), 10)
        if n < lo:
            raise ValueError(v)
        return n
    return parse


_FLAGS = {"0": False, "1": True, "false": False, "true": True, "no": False, "yes": True, "off": False, "on": True}


def _flag(v: str) -> bool:
    return _FLAGS[v.strip().lower()]  # KeyError: not allowed


def _bit(v: str) -> bool:
    """`0` or `1` exactly: the C++ readers test for "0" only."""
    if v not in ("0", "1"):
        raise ValueError(v)
    return v == "1"


def _directory(v: str) -> str:
    if os.path.exists(v) and not os.path.isdir(v):
        raise ValueError(v)
    return v


def _directories(v: str) -> list[str]:
    return [_directory(d) for d in v.split(":") if d]


def _cache_dir(v: str) -> str:
    return v if v == "off" else _directory(v)


def _file(v: str) -> str:
    if os.path.isdir(v):
        raise ValueError(v)
    return v


def _xjit_options(v: str) -> list[str]:
    import shlex
    args = shlex.split(v)  # ValueError on an unbalanced quote
    if args and not args[0].startswith("--"):
        raise ValueError(v)
    return args


def _op_name(v: str) -> str:
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", v):
        raise ValueError(v)
    return v


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str
    summary: str
    parse: Callable[[str], Any] = _text  # raises ValueError or KeyError for a value that is not allowed
    allowed: str = "any text"


ENV: tuple[EnvVar, ...] = (
    EnvVar("XACC_LOG", "", "log channels to enable: comma list of names, `all`, `+name` for debug level",
           _channels, "a comma list of channel names (" + ", ".join(CHANNEL_NAMES) + "), `all`, `+name`"),
    EnvVar("XACC_RECOMPILE_LIMIT", "8", "cache entries per code object before it runs Python only",
           _int_at_least(1), "an integer >= 1"),
    EnvVar("XACC_VERBOSE", "0", "show internal stack traces in errors", _flag,
           "0 or 1 (also false/true, no/yes, off/on)"),
    EnvVar("XACC_DUMP", "", "directory: `python -m xjit` writes every export artifact of the run there "
                           "(same as `--export DIR`)", _directory, "a directory path (not an existing file)"),
    EnvVar("XACC_XJIT", "", "options of `python -m xjit` (e.g. `--device cpu --explain`) that a Python "
                            "interpreter applies at start-up when xjit's boot directory is on PYTHONPATH: how "
                            "the workers of multiprocessing, torch.multiprocessing.spawn and torchrun run under "
                            "xjit (set by `python -m xjit`; docs/distributed.md)", _xjit_options,
           "xjit options in shell syntax, starting with `--`"),
    EnvVar("XACC_CACHE_DIR", "", "directory of the MLIR backend's kernel disk cache (object files keyed by kernel "
                                 "text, pipeline build, LLVM version and CPU), on by default in "
                                 "`$XDG_CACHE_HOME/xacc` (`~/.cache/xacc`); `off`: no disk cache; also where "
                                 "`xacc.load` puts an artifact's kernels; `xjit --cache DIR` uses `DIR/kernels` "
                                 "(docs/aot.md)", _cache_dir, "`off` or a directory path (not an existing file)"),
    EnvVar("XACC_CACHE_MAX_MB", "2048", "size limit of the kernel disk cache in MB: after each write, the least "
                                        "recently used entries (access time) are deleted while the directory "
                                        "holds more; `0`: no limit (docs/backend-xpu.md)",
           _int_at_least(0), "an integer >= 0 (MB; 0: no limit)"),
    EnvVar("XACC_PGO_PROFILE", "", "the profile file of `xacc.jit(pgo=True)` and `python -m xjit --pgo` "
                                   "(default `xacc_pgo.json` in the current directory; docs/pgo.md)",
           _file, "a file path (not an existing directory)"),
    EnvVar("XACC_MLIR_VECTOR_WIDTH", "", "vector width in bits the MLIR backend's LLVM code generator prefers; "
                                         "unset: 512 on AVX-512 hosts, 256 on AVX/AVX2, else LLVM's choice "
                                         "(read once per process, Jit.cpp)", _int_at_least(0),
           "an integer >= 0 (bits; 0: LLVM's choice)"),
    EnvVar("XACC_MLIR_INTERLEAVE", "", "vector iterations the MLIR backend interleaves in every innermost loop "
                                       "with a long floating-point body; set, it also turns off the doubling "
                                       "for very long bodies; unset: 4 (read once per process, Jit.cpp)",
           _int_at_least(1), "an integer >= 1"),
    EnvVar("XACC_COMPILE_THREADS", "", "threads the MLIR backend compiles a graph's kernels on (Note [Parallel "
                                       "kernel compiles], ExecutableRegions.cpp); `1`: one after the other on "
                                       "the calling thread; unset: the CPUs this process may run on",
           _int_at_least(1), "an integer >= 1"),
    EnvVar("XACC_PACK_WEIGHTS", "0", "`1`: the MLIR backend packs constant GEMM weights once into MKL's blocked "
                                     "layout (Note [Packed GEMM weights], Executable.cpp; read at each compile); "
                                     "default off: no gain measured with torch 2.13, a second copy of each "
                                     "weight", _bit, "0 or 1"),
    EnvVar("XACC_SKINNY_GEMM", "1", "`0`: matrix products of a few rows stay with ATen's GEMM instead of the "
                                    "skinny kernels (Note [Skinny matrix products], SkinnyGemm.cpp; read once "
                                    "per process), for A/B runs", _bit, "0 or 1"),
    EnvVar("XACC_CONSTANT_STEPS", "1", "`0`: the MLIR backend runs every step on every call instead of "
                                       "computing input-independent ones (position ids, masks) once per "
                                       "executable (Note [Input-independent steps], ExecutableConstants.cpp; "
                                       "read at each compile), for A/B runs", _bit, "0 or 1"),
    EnvVar("XACC_KEEP_FREED_MEMORY", "1", "the MLIR backend raises glibc's mmap and trim thresholds (32 MB, "
                                          "128 MB) once so large buffers are reused instead of returned to the "
                                          "system on every call; `0`: keep glibc's defaults", _bit, "0 or 1"),
    EnvVar("XACC_BUILD_DIR", "", "the build tree whose `bin/` is searched for xacc's tools (`xacc-opt`, "
                                 "`camel`) after PATH; default `build/` next to the sources", _directory,
           "a directory path (not an existing file)"),
    EnvVar("XACC_EXECUTOR_PATH", "", "colon-separated directories searched first for Camel executor plugins "
                                     "(`libxacc_exec_<name>.so`; docs/executors.md)", _directories,
           "directory paths separated by `:` (not existing files)"),
    EnvVar("CAMEL_PACKAGES", "", "a directory Camel searches for imported modules after the importing file's "
                                 "directory, the main file's and `-I` directories", _directory,
           "a directory path (not an existing file)"),
    EnvVar("CAMEL_STD_LIB", "", "the directory of Camel's standard library modules when `camel` is not given "
                                "one", _directory, "a directory path (not an existing file)"),
    EnvVar("XACC_TEST_FAULT_OP", "", "TEST ONLY: the ATen executor and the MLIR lowering add 1 to the first "
                                     "result of every node of this op (e.g. `aten.relu.default`) so that "
                                     "`xacc.debug.compare` must find it; read when a graph is prepared",
           _op_name, "an op name such as `aten.relu.default`"),
    EnvVar("XACC_TEST_STACK_DEPTH", "0", "TEST ONLY: `tests/python/capture` checks the co_stacksize of every "
                                         "break, resume and loop-body code it generates against a walk of its "
                                         "bytecode with `dis.stack_effect` (a mismatch fails the test)",
           _flag, "0 or 1"),
)


def _short(name: str) -> str:
    """`XACC_CACHE_DIR` -> `CACHE_DIR`; a `CAMEL_` name keeps its prefix."""
    return name[len("XACC_"):] if name.startswith("XACC_") else name


# Note [Environment names]: the library spells an environment variable's name
# only here. Python reads it as `E.CACHE_DIR` (one attribute per ENV row), C++
# as `xacc::env::kCacheDir` from csrc/include/xacc/support/EnvNames.h, which
# scripts/gen_logging_doc.py generates from ENV (`cpp_header`); test_config.py
# fails on a quoted XACC_/CAMEL_ name anywhere else in csrc/, xacc/, xjit/ and
# camel_lang/ (two start-up files that must not import xacc are listed there).
E = SimpleNamespace(**{_short(e.name): e.name for e in ENV})


def cpp_header() -> str:
    """The text of csrc/include/xacc/support/EnvNames.h (Note [Environment names])."""
    lines = ["// Generated by scripts/gen_logging_doc.py from ENV in xacc/_src/config.py; do not edit.",
             "// The names of xacc's environment variables (Note [Environment names]); what each",
             "// means, its default and its allowed values: docs/logging.md.",
             "#pragma once", "", "namespace xacc::env {", ""]
    for e in ENV:
        const = "k" + "".join(w.capitalize() for w in _short(e.name).split("_"))
        lines.append(f'inline constexpr const char {const}[] = "{e.name}";')
    lines += ["", "}  // namespace xacc::env"]
    return "\n".join(lines) + "\n"


def _error(msg: str) -> Exception:
    # Imported here: scripts/gen_logging_doc.py loads this file without the xacc package.
    from xacc.errors import ConfigError

    return ConfigError(msg)


def _row(name: str) -> EnvVar:
    for e in ENV:
        if e.name == name:
            return e
    raise KeyError(f"undeclared environment variable {name}")


def env(name: str) -> str:
    """The text of a declared environment variable (its default when unset or empty)."""
    return os.environ.get(name) or _row(name).default


def value(name: str) -> Any:
    """The typed value of a declared environment variable; ConfigError when it is not allowed."""
    e = _row(name)
    v = env(name)
    if not v:  # unset, and no default
        return v
    try:
        return e.parse(v)
    except (ValueError, KeyError):
        raise _error(f"{name}={v!r} is not allowed: expected {e.allowed}") from None


def check_env() -> None:
    """Validates every declared environment variable (at import)."""
    for e in ENV:
        value(e.name)


# -- the keyword arguments of xacc.jit -------------------------------------------------------


@dataclass(frozen=True)
class JitOption:
    name: str
    allowed: str
    check: Callable[[Any], bool]  # True when the value is allowed


BACKENDS = {"aten": "cpu", "mlir": "xpu"}  # backend name -> the device names it runs (prefix)


def _finite_at_least_0(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 and not math.isinf(v)


JIT_OPTIONS: tuple[JitOption, ...] = (
    JitOption("device", "a device name ('cpu' or 'xpuN')", lambda v: isinstance(v, str) and v != ""),
    JitOption("backend", "None (the device's backend) or one of the known backends " + ", ".join(map(repr, BACKENDS)),
              lambda v: v is None or (isinstance(v, str) and v in BACKENDS)),
    JitOption("fullgraph", "True or False", lambda v: isinstance(v, bool)),
    JitOption("dynamic", "None, True or False", lambda v: v is None or isinstance(v, bool)),
    JitOption("precision", "one of 'float32', 'auto'", lambda v: isinstance(v, str) and v in ("float32", "auto")),
    JitOption("tolerance", "a finite number >= 0", _finite_at_least_0),
    JitOption("hot_calls", "an integer >= 1 (the call at which a frame is translated)",
              lambda v: type(v) is int and v >= 1),
)


def check_jit_options(**kwargs: Any) -> None:
    """Raises ConfigError for a keyword argument of xacc.jit whose value is not allowed."""
    for o in JIT_OPTIONS:
        if o.name in kwargs and not o.check(kwargs[o.name]):
            raise _error(f"xacc.jit: {o.name} must be {o.allowed}, not {kwargs[o.name]!r}")
    backend, device = kwargs.get("backend"), kwargs.get("device", "cpu")
    if backend is not None and not device.startswith(BACKENDS[backend]):
        raise _error(f"xacc.jit: backend={backend!r} runs on {BACKENDS[backend]} devices, not "
                          f"device={device!r}")


def parse_log_spec(spec: str) -> dict[str, int]:
    """`capture,+guards` -> {channel: logging level}; unknown names are ignored
    (the XACC_LOG row of ENV rejects them)."""
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
    """(Re)configures the channel loggers from `spec` (default: $XACC_LOG);
    ConfigError for an unknown channel name."""
    if spec is None:
        spec = value("XACC_LOG")
    else:
        try:
            _channels(spec)
        except ValueError:
            raise _error(f"log channels {spec!r} are not allowed: expected {_row('XACC_LOG').allowed}") \
                from None
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
    lines += ["", "## Environment variables", "",
              "Each value is checked when xacc is imported; one that is not allowed raises `xacc.ConfigError`.",
              "", "| variable | default | allowed | meaning |", "| --- | --- | --- | --- |"]
    for e in ENV:
        default = f"`{e.default}`" if e.default else "(unset)"
        lines.append(f"| `{e.name}` | {default} | {e.allowed} | {e.summary} |")
    return "\n".join(lines) + "\n"


check_env()
setup()
