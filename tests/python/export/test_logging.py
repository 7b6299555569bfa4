"""Log channels: one table (xacc/_src/config.py), docs generated from it and up
to date, XACC_LOG names and +name debug level work, and library code has no
print() outside the channels."""

from __future__ import annotations

import ast
import logging
import os
import subprocess
import sys

from xacc._src import config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_docs_generated_from_table_are_up_to_date():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_logging_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = open(os.path.join(ROOT, "docs", "logging.md")).read()
    for c in config.CHANNELS:
        assert f"| `{c.name}` |" in doc
    for e in config.ENV:
        assert f"| `{e.name}` |" in doc


def test_required_channels_declared():
    for name in ("capture", "guards", "breaks", "recompiles", "bytecode", "passes", "backend"):
        assert name in config.CHANNEL_NAMES


def test_parse_log_spec():
    spec = config.parse_log_spec("capture, +guards,nonsense")
    assert spec == {"capture": logging.INFO, "guards": logging.DEBUG}
    assert set(config.parse_log_spec("all")) == set(config.CHANNEL_NAMES)
    assert config.parse_log_spec("+all")["passes"] == logging.DEBUG


PROG = """
import torch, xacc
def f(x):
    y = x.sin() * 2
    print("break here")
    return y + 1
xacc.jit(f)(torch.randn(3))
"""


def _run(log: str) -> str:
    env = dict(os.environ, XACC_LOG=log, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", PROG], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_channels_log_and_debug_level():
    err = _run("breaks,passes,backend,+capture,bytecode")
    assert "[xacc:breaks] " in err and "GB003" in err
    assert "[xacc:passes] f: dce" in err
    assert "[xacc:backend] f: prepared for the ATen executor" in err
    assert "[xacc:capture] translating f (" in err  # debug level of capture
    assert "[xacc:bytecode] break function for f" in err
    assert "[xacc:guards]" not in err  # not asked for
    quiet = _run("")
    assert "[xacc:" not in quiet


def test_unknown_channel_is_a_config_error():
    # Issue 26: every option is validated from the config table (was: a warning).
    env = dict(os.environ, XACC_LOG="breaks,bogus",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", PROG], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    assert "xacc.errors.ConfigError: XACC_LOG='breaks,bogus' is not allowed" in r.stderr, r.stderr


def test_library_code_never_prints():
    offenders = []
    for pkg in ("xacc", "camel_lang"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if not f.endswith(".py") or f == "__main__.py":  # command-line entry points print
                    continue
                path = os.path.join(dirpath, f)
                tree = ast.parse(open(path).read(), path)
                for node in ast.walk(tree):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                        offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
                    if (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
                            and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                        offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno} (sys.{node.attr})")
    # the one handler of the channels writes to sys.stderr by design
    offenders = [o for o in offenders if not o.startswith(os.path.join("xacc", "_src", "config.py"))]
    assert not offenders, offenders
