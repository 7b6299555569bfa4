"""Issue 26, criterion 3: every option is validated from the config table
(xacc/_src/config.py) and a bad value raises xacc.ConfigError naming the
option, the value and what is allowed.

* One bad value for every environment variable of `ENV` and every keyword
  argument of `JIT_OPTIONS`; the tables below must cover every row, so a new
  option without a bad-value case fails here.
* The issue's cases: XACC_RECOMPILE_LIMIT=abc at import (a real process),
  `backend="nonsense"` (the message lists the known backends) and
  `device=None`.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import xacc
from xacc._src import config

ROOT = str(Path(__file__).resolve().parents[2])
FILE = str(Path(__file__).resolve())  # an existing file
DIR = str(Path(__file__).resolve().parent)  # an existing directory

BAD_ENV = {
    "XACC_LOG": "breaks,nonsense",
    "XACC_RECOMPILE_LIMIT": "abc",
    "XACC_VERBOSE": "maybe",
    "XACC_DUMP": FILE,
    "XACC_XJIT": "--device 'cpu",
    "XACC_CACHE_DIR": FILE,
    "XACC_CACHE_MAX_MB": "-5",
    "XACC_PGO_PROFILE": DIR,
    "XACC_TEST_FAULT_OP": "relu everywhere",
    "XACC_TEST_STACK_DEPTH": "maybe",
    "XACC_MLIR_VECTOR_WIDTH": "wide",
    "XACC_MLIR_INTERLEAVE": "0",
    "XACC_COMPILE_THREADS": "0",
    "XACC_PACK_WEIGHTS": "off",
    "XACC_SKINNY_GEMM": "no",
    "XACC_CONSTANT_STEPS": "off",
    "XACC_KEEP_FREED_MEMORY": "yes",
    "XACC_BUILD_DIR": FILE,
    "XACC_EXECUTOR_PATH": DIR + ":" + FILE,
    "CAMEL_PACKAGES": FILE,
    "CAMEL_STD_LIB": FILE,
}

BAD_KWARGS = {
    "device": None,
    "backend": "nonsense",
    "fullgraph": "yes",
    "dynamic": 1,
    "precision": "float16",
    "tolerance": float("inf"),
    "hot_calls": 0,
}


# Environment variables the C++ code reads that are the system's, not ours.
SYSTEM_ENV = {"HOME", "PATH", "USER", "XDG_CACHE_HOME"}


def test_every_env_var_the_cpp_code_reads_is_declared() -> None:
    """Issue 21: an environment variable read anywhere in csrc/ is a row of the
    table (so it is validated at import and documented in docs/logging.md): C++
    reads ours only by their generated names (Note [Environment names])."""
    header = Path(ROOT, "csrc/include/xacc/support/EnvNames.h").read_text()
    generated = dict(re.findall(r'const char (k\w+)\[\] = "(\w+)";', header))
    read: dict[str, str] = {}
    for path in sorted(Path(ROOT, "csrc").rglob("*")):
        if path.suffix in (".cpp", ".h", ".in") and path.is_file():
            text = path.read_text(errors="replace")
            for m in re.finditer(r'getenv\(\s*(?:"([A-Za-z_]\w*)"|(?:xacc::)?env::(k\w+))', text):
                name = m.group(1) or generated.get(m.group(2), m.group(2))
                read.setdefault(name, str(path.relative_to(ROOT)))
    assert "XACC_LOG" in read  # the scan sees the C++ readers
    declared = {e.name for e in config.ENV}
    missing = {n: f for n, f in read.items() if n not in declared and n not in SYSTEM_ENV}
    assert not missing, f"read in C++ but not declared in xacc/_src/config.py ENV: {missing}"


def test_every_env_var_the_python_library_reads_is_declared() -> None:
    """Issue 21: an XACC_/CAMEL_ variable the library (xacc/, xjit/) reads from
    os.environ directly is a row of the table too."""
    import re
    read: dict[str, str] = {}
    pattern = re.compile(r'(?:environ\.get\(|environ\[|getenv\()\s*["\']((?:XACC|CAMEL)_[A-Z0-9_]+)["\']')
    for top in ("xacc", "xjit"):
        for path in sorted(Path(ROOT, top).rglob("*.py")):
            for m in pattern.finditer(path.read_text(errors="replace")):
                read.setdefault(m.group(1), str(path.relative_to(ROOT)))
    declared = {e.name for e in config.ENV}
    missing = {n: f for n, f in read.items() if n not in declared}
    assert not missing, f"read in Python but not declared in xacc/_src/config.py ENV: {missing}"


def test_config_error_is_an_xacc_error() -> None:
    assert issubclass(xacc.ConfigError, xacc.XaccError)
    assert "ConfigError" in xacc.__all__


def test_every_env_row_has_a_bad_value() -> None:
    assert sorted(BAD_ENV) == sorted(e.name for e in config.ENV)


@pytest.mark.parametrize("name", sorted(BAD_ENV))
def test_bad_env_value(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, BAD_ENV[name])
    with pytest.raises(xacc.ConfigError) as e:
        config.check_env()
    msg = str(e.value)
    assert name in msg and repr(BAD_ENV[name]) in msg and "expected" in msg, msg


@pytest.mark.parametrize("name", sorted(BAD_ENV))
def test_default_and_good_values_pass(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    good = {"XACC_LOG": "breaks,+capture", "XACC_RECOMPILE_LIMIT": "3", "XACC_VERBOSE": "1",
            "XACC_DUMP": str(tmp_path / "dump"), "XACC_XJIT": "--device cpu --explain", "XACC_CACHE_DIR": "off", "XACC_CACHE_MAX_MB": "0",
            "XACC_PGO_PROFILE": str(tmp_path / "p.json"), "XACC_TEST_FAULT_OP": "aten.relu.default",
            "XACC_TEST_STACK_DEPTH": "1",
            "XACC_MLIR_VECTOR_WIDTH": "256", "XACC_MLIR_INTERLEAVE": "2", "XACC_COMPILE_THREADS": "2",
            "XACC_PACK_WEIGHTS": "0", "XACC_SKINNY_GEMM": "0", "XACC_CONSTANT_STEPS": "0",
            "XACC_KEEP_FREED_MEMORY": "1", "XACC_EXECUTOR_PATH": f"{tmp_path}:{DIR}", "CAMEL_PACKAGES": DIR,
            "XACC_BUILD_DIR": str(tmp_path / "build"),
            "CAMEL_STD_LIB": str(tmp_path / "std")}
    monkeypatch.delenv(name, raising=False)
    config.check_env()
    monkeypatch.setenv(name, good[name])
    config.check_env()


def test_bad_env_fails_import_with_config_error() -> None:
    # The case: a bare ValueError from int() before.
    prog = ("import sys\ntry:\n    import xacc\nexcept Exception as e:\n"
            "    print(type(e).__module__ + '.' + type(e).__qualname__, '|', e)\n"
            "    print(isinstance(e, sys.modules['xacc.errors'].XaccError))\n")
    env = dict(os.environ, XACC_RECOMPILE_LIMIT="abc", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first.startswith("xacc.errors.ConfigError | XACC_RECOMPILE_LIMIT='abc'"), r.stdout
    assert "integer" in first
    assert second == "True"


def test_every_jit_option_row_has_a_bad_value() -> None:
    assert sorted(BAD_KWARGS) == sorted(o.name for o in config.JIT_OPTIONS)


@pytest.mark.parametrize("name", sorted(BAD_KWARGS))
def test_bad_jit_keyword(name: str) -> None:
    with pytest.raises(xacc.ConfigError) as e:
        xacc.jit(lambda x: x, **{name: BAD_KWARGS[name]})
    assert f"{name} must be" in str(e.value) and repr(BAD_KWARGS[name]) in str(e.value), str(e.value)
    with pytest.raises(xacc.ConfigError):  # the decorator form checks too
        xacc.jit(**{name: BAD_KWARGS[name]})


def test_unknown_backend_lists_the_known_ones() -> None:
    with pytest.raises(xacc.ConfigError, match="backend must be .*'aten', 'mlir', not 'nonsense'"):
        xacc.jit(lambda x: x, backend="nonsense")


def test_backend_must_match_the_device() -> None:
    with pytest.raises(xacc.ConfigError, match="backend='mlir' runs on xpu devices, not device='cpu'"):
        xacc.jit(lambda x: x, backend="mlir")
    assert xacc.jit(lambda x: x + 1, backend="aten")(1) == 2


def test_device_none_is_a_config_error() -> None:
    # The case: AttributeError: 'NoneType' object has no attribute 'startswith' before.
    with pytest.raises(xacc.ConfigError, match="device must be"):
        xacc.jit(lambda x: x, device=None)


# Note [Environment names]: files that spell a name themselves because they run
# before xacc may be imported (each name must still be a row of ENV).
STARTUP_FILES = {"xjit/_boot/sitecustomize.py", "camel_lang/__main__.py"}
TABLE_FILES = {"xacc/_src/config.py", "csrc/include/xacc/support/EnvNames.h"}
ENV_LITERAL = re.compile(r"""["']((?:XACC|CAMEL)_[A-Z0-9_]+)["']""")


def env_literals(root: Path) -> dict[str, list[str]]:
    """Quoted XACC_/CAMEL_ names per library source file under `root`, the tables excluded."""
    found: dict[str, list[str]] = {}
    for top in ("csrc", "xacc", "xjit", "camel_lang"):
        for path in sorted(Path(root, top).rglob("*")):
            if path.suffix not in (".cpp", ".h", ".inc", ".in", ".py") or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            names = ENV_LITERAL.findall(path.read_text(errors="replace"))
            if names and rel not in TABLE_FILES:
                found[rel] = names
    return found


def test_env_names_appear_only_in_their_table() -> None:
    """Issue 21, criterion 4: C++ reads `xacc::env::kName` (EnvNames.h, generated
    from ENV; test_logging checks it is up to date), Python `config.E.NAME`."""
    found = env_literals(ROOT)
    declared = {e.name for e in config.ENV}
    outside = {f: n for f, n in found.items() if f not in STARTUP_FILES}
    assert not outside, f"environment names spelled outside xacc/_src/config.py: {outside}"
    undeclared = {f: [x for x in n if x not in declared] for f, n in found.items()}
    assert not any(undeclared.values()), undeclared


def test_env_literal_scan_finds_a_planted_name(tmp_path: Path) -> None:
    lib = tmp_path / "csrc" / "lib"
    lib.mkdir(parents=True)
    (lib / "Reader.cpp").write_text('const char* v = std::getenv("XACC_CACHE_DIR");\n')
    (tmp_path / "xacc").mkdir()
    (tmp_path / "xacc" / "m.py").write_text("import os\nos.environ.get('XACC_LOG')\n# XACC_LOG in a comment\n")
    assert env_literals(tmp_path) == {"csrc/lib/Reader.cpp": ["XACC_CACHE_DIR"], "xacc/m.py": ["XACC_LOG"]}


def test_env_names_namespace_covers_every_row() -> None:
    assert sorted(vars(config.E).values()) == sorted(e.name for e in config.ENV)
    assert config.E.CACHE_DIR == "XACC_CACHE_DIR" and config.E.CAMEL_PACKAGES == "CAMEL_PACKAGES"
