"""Issue 6, criterion 4 (the Camel part): `camel run --backend=xpu` compiles
scalar functions (int/float/bool, recursion, mutual recursion, branches) to
native code through the `mlir` executor plugin and leaves everything else on
the runtime.

* Every program of the corpus gives the output and exit status its expected
  files (written from the spec, the interpreter's oracle) say, with the
  backend on; the scalar recursive ones must really have been compiled (the
  XACC_LOG=mlir line names their graphs), so the comparison is not vacuous.
* Runtime errors in compiled code (division by zero, float -> int out of
  range) give the interpreter's located diagnostic and status, integer
  overflow wraps as in the interpreter, and recursion deeper than the native
  stack still completes (the native call bails out and reruns on the runtime).
* A second process finds the compiled module in the disk cache and runs no
  MLIR compilation (shown by the log).
* The process maps the MLIR executor but neither libtorch nor libpython.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_camel_programs import CAMEL, CASES, expected

PLUGIN = (Path(CAMEL).parent.parent / "lib" / "xacc" / "executors" / "libxacc_exec_mlir.so") if CAMEL else None

pytestmark = [
    pytest.mark.skipif(CAMEL is None, reason="camel binary not built"),
    pytest.mark.skipif(PLUGIN is None or not PLUGIN.is_file(), reason="mlir executor not built (needs MLIR 22)"),
]

TIMEOUT_S = 120


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xacc-cache")


def camel(cwd: Path, program: str, cache_dir: Path, *extra: str, backend: bool = True,
          log: str = "mlir") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XACC_CACHE_DIR=str(cache_dir), XACC_LOG=log)
    args = [CAMEL, "run", *(["--backend=xpu"] if backend else []), *extra, program]
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)


def compiled_graphs(stderr: str) -> set[str]:
    m = re.search(r"\[xacc:mlir\] camel scalar code: \d+ graphs? \(([^)]*)\)", stderr)
    return set(m.group(1).replace("@", "").split()) if m else set()


@pytest.mark.parametrize("program", CASES, ids=[p.stem for p in CASES])
def test_corpus_with_xpu_backend(program: Path, cache: Path) -> None:
    out, code = expected(program)
    r = camel(program.parent, program.name, cache)
    assert r.stdout == out, r.stderr
    assert r.returncode == code, r.stderr


# Scalar recursive programs of the corpus and the graphs that must compile
# (after the default pass pipeline, which inlines small non-recursive callees).
SCALAR = {
    "fib": {"fib::fib"},
    "gcd_lcm": {"gcd_lcm::gcd", "gcd_lcm::lcm"},
    "collatz": {"collatz::steps"},
    "deep_recursion": {"deep_recursion::accumulate", "deep_recursion::ping", "deep_recursion::pong",
                       "deep_recursion::depth"},
    "tail_calls": {"tail_calls::sum", "tail_calls::is_even", "tail_calls::is_odd", "tail_calls::count_down"},
    "primes": {"primes::is_prime"},
    "macros_more": {"macros_more::fact"},
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_recursive_programs_are_compiled(name: str, cache: Path) -> None:
    program = CASES[[p.stem for p in CASES].index(name)]
    out, code = expected(program)
    r = camel(program.parent, program.name, cache)
    assert (r.stdout, r.returncode) == (out, code), r.stderr
    assert SCALAR[name] <= compiled_graphs(r.stderr), r.stderr
    plain = camel(program.parent, program.name, cache, backend=False)
    assert (r.stdout, r.returncode) == (plain.stdout, plain.returncode)


SEMANTICS = """module semantics

// Not inlined (recursive), so these run as native code.
func down(n: int, d: int): int {
    return if n == 0 then 100 / d else down(n - 1, d) + 1
}

func fact(n: int): int {
    return if n <= 1 then 1 else n * fact(n - 1)
}

func quot(a: int, b: int, n: int): int {
    return if n == 0 then a / b + a % b else quot(a, b, n - 1)
}

func fmix(x: float, n: int): float {
    return if n == 0 then x % 3.0 + x / 2.0 + x ^ 0.5 else fmix(x * -1.5, n - 1)
}

func trunc(x: float, n: int): int {
    return if n == 0 then int(x) else trunc(x * 10.0, n - 1)
}

// Not a loop after LLVM's tail-recursion elimination, so a million nested
// native calls outgrow the native stack (the runtime's frames are on the heap).
func depth(n: int): int {
    return if n == 0 then 0 else (depth(n - 1) * 7 + n) % 1000003
}

func main(): int sync {
    println(down(5, 2))
    println(fact(25))
    println(quot(-9223372036854775807 - 1, -1, 3))
    println(quot(-7, 2, 3))
    println(fmix(7.25, 4))
    println(trunc(-2.75, 2))
    println(depth(1000000))
    println(trunc(1.5, 400))
    println('not reached')
    return 0
}
"""


def test_errors_overflow_and_depth_match_the_runtime(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "semantics.cml").write_text(SEMANTICS)
    plain = camel(tmp_path, "semantics.cml", cache, backend=False)
    xpu = camel(tmp_path, "semantics.cml", cache)
    assert {"semantics::down", "semantics::fact", "semantics::quot", "semantics::fmix", "semantics::trunc",
            "semantics::depth"} <= compiled_graphs(xpu.stderr), xpu.stderr
    assert xpu.stdout == plain.stdout
    assert xpu.returncode == plain.returncode == 1
    # 25! wraps modulo 2^64; INT64_MIN / -1 wraps to INT64_MIN.
    lines = xpu.stdout.splitlines()
    assert lines[1] == str((__import__("math").factorial(25) + 2**63) % 2**64 - 2**63)
    assert lines[2] == str(-(2**63))
    assert lines[6] == "547621"
    assert "not reached" not in xpu.stdout
    # The runtime's own located diagnostic (float -> int out of range).
    diag = [l for l in xpu.stderr.splitlines() if "error[" in l]
    assert diag and diag[0] == [l for l in plain.stderr.splitlines() if "error[" in l][0]
    assert "semantics.cml:" in diag[0]
    assert "native code bailed out (float does not fit an integer)" in xpu.stderr
    assert "native code bailed out (native stack low)" in xpu.stderr


ACCUMULATE = """
func up(n: int): int {
    return up(n + 1) + 1
}
func sumdown(n: int): int {
    return if n < 1 then 0 else n + sumdown(n - 1)
}
func sumeq(n: int): int {
    return if n == 0 then 0 else n + sumeq(n - 1)
}
func main(): int {
    println(sumdown(1000000))
    println(sumeq(1000000))
    println(%s)
    return 0
}
"""


@pytest.mark.parametrize("call, bail", [("up(0)", True), ("sumeq(-1)", True), ("sumdown(20000000)", True),
                                        ("sumeq(20000000)", True), ("sumdown(5)", False)],
                         ids=["diverges", "diverges-past-the-base", "too-deep-proven", "too-deep-counted", "fine"])
def test_accumulator_recursion_has_the_runtime_depth_limit(tmp_path: Path, cache: Path, call: str,
                                                          bail: bool) -> None:
    # `n + f(..)` runs as a native loop; it stands for nested calls, which the
    # runtime limits. A loop whose steps are proven to end (sumdown: n - 1
    # under n >= 1) checks its trip count once on entry; the others count
    # steps. Either way native code must end with the runtime's diagnostic,
    # not loop forever or answer where the runtime reports a stack overflow.
    (tmp_path / "acc.cml").write_text(ACCUMULATE % call)
    xpu = camel(tmp_path, "acc.cml", cache)
    assert {"acc::up", "acc::sumdown", "acc::sumeq"} <= compiled_graphs(xpu.stderr), xpu.stderr
    assert xpu.stdout.splitlines()[:2] == ["500000500000"] * 2
    if bail:
        assert xpu.returncode == 1, xpu.stdout
        assert "error[E0417]: stack overflow: more than 10000000 nested calls" in xpu.stderr
        assert "native code bailed out (more nested calls than the runtime allows)" in xpu.stderr
    else:
        assert xpu.returncode == 0 and xpu.stdout.splitlines()[2] == "15"
        assert "bailed out" not in xpu.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="stack limits through setrlimit")
@pytest.mark.parametrize("stack_kib", [1024, 8192, None], ids=["1MiB", "8MiB", "unlimited"])
def test_native_stack_limit_follows_the_stack_rlimit(tmp_path: Path, cache: Path, stack_kib: int | None) -> None:
    # The main thread's native stack limit comes from RLIMIT_STACK (the
    # unlimited case takes pthread_getattr_np's answer): a million nested
    # native calls bail out on 1 and 8 MiB stacks and the run is the runtime's,
    # never a crash.
    import resource

    def limit() -> None:
        n = resource.RLIM_INFINITY if stack_kib is None else stack_kib * 1024
        resource.setrlimit(resource.RLIMIT_STACK, (n, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    (tmp_path / "semantics.cml").write_text(SEMANTICS)
    env = dict(os.environ, XACC_CACHE_DIR=str(cache), XACC_LOG="mlir")
    run = lambda *b: subprocess.run([CAMEL, "run", *b, "semantics.cml"], cwd=tmp_path, capture_output=True,  # noqa: E731
                                    text=True, timeout=TIMEOUT_S, env=env, preexec_fn=limit)
    plain, xpu = run(), run("--backend=xpu")
    assert xpu.stdout == plain.stdout and "547621" in xpu.stdout, xpu.stderr
    assert xpu.returncode == plain.returncode == 1, xpu.stderr
    if stack_kib is not None:
        assert "native code bailed out (native stack low)" in xpu.stderr


DIV_ZERO = """module divzero

func down(n: int, d: int): int {
    return if n == 0 then 100 / d else down(n - 1, d) + 1
}

func main(): int sync {
    println(down(3, 5))
    println(down(3, 0))
    return 0
}
"""


def test_division_by_zero_is_the_runtime_error(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "divzero.cml").write_text(DIV_ZERO)
    plain = camel(tmp_path, "divzero.cml", cache, backend=False)
    xpu = camel(tmp_path, "divzero.cml", cache)
    assert "divzero::down" in compiled_graphs(xpu.stderr)
    assert "native code bailed out (division by zero)" in xpu.stderr
    assert xpu.stdout == plain.stdout == "23\n"
    assert xpu.returncode == plain.returncode == 1
    first = lambda s: [l for l in s.splitlines() if "error[" in l][0]  # noqa: E731
    assert first(xpu.stderr) == first(plain.stderr)
    assert "divzero.cml:4:27: error[E0401]: integer division by zero" in first(xpu.stderr)


FIB = """module fibc

func fib(n: int): int {
    return if n < 2 then n else fib(n - 1) + fib(n - 2)
}

func main(): int sync {
    println(fib(24))
    return 0
}
"""


def test_second_process_hits_the_disk_cache(tmp_path: Path) -> None:
    (tmp_path / "fibc.cml").write_text(FIB)
    cache_dir = tmp_path / "cache"
    first = camel(tmp_path, "fibc.cml", cache_dir)
    second = camel(tmp_path, "fibc.cml", cache_dir)
    assert first.stdout == second.stdout == "46368\n"
    assert "compiled (MLIR -> LLVM -O3 -> native)" in first.stderr, first.stderr
    assert "cache hit" not in first.stderr
    assert list(cache_dir.glob("*.so")), "no shared object in the disk cache"
    assert "cache hit, object loaded from the disk cache, no MLIR compile" in second.stderr, second.stderr
    assert "compiled (MLIR" not in second.stderr


WAITING = """module waiting

func fib(n: int): int {
    return if n < 2 then n else fib(n - 1) + fib(n - 2)
}

func main(): int sync {
    println(fib(20))
    let reply = input('')
    println('got ' + reply)
    return 0
}
"""

FORBIDDEN = re.compile(r"/(libpython[0-9.]*\S*\.so|libtorch\S*\.so|libc10\S*\.so)[^/]*$")
MLIR_LIBS = re.compile(r"/(libMLIR\S*\.so|libLLVM\S*\.so|libxacc_exec_mlir\.so)[^/]*$")


def mapped_while_waiting(tmp_path: Path, cache_dir: Path, backend: bool) -> list[str]:
    (tmp_path / "waiting.cml").write_text(WAITING)
    args = [CAMEL, "run", *(["--backend=xpu"] if backend else []), "waiting.cml"]
    env = dict(os.environ, XACC_CACHE_DIR=str(cache_dir))
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline() == "6765\n"
        files = set()
        for line in Path(f"/proc/{proc.pid}/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                files.add(parts[5])
        out, err = proc.communicate("ok\n", timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out == "got ok\n", err
    assert proc.returncode == 0, err
    return sorted(files)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/<pid>/maps")
def test_xpu_backend_maps_mlir_but_not_torch_or_python(tmp_path: Path, cache: Path) -> None:
    files = mapped_while_waiting(tmp_path, cache, backend=True)
    assert not [f for f in files if FORBIDDEN.search(f)]
    assert [f for f in files if f.endswith("libxacc_exec_mlir.so")], files
    assert [f for f in files if "libMLIR" in f], files


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/<pid>/maps")
def test_plain_run_maps_no_mlir(tmp_path: Path, cache: Path) -> None:
    files = mapped_while_waiting(tmp_path, cache, backend=False)
    assert not [f for f in files if MLIR_LIBS.search(f) or FORBIDDEN.search(f)], files


def test_help_documents_the_backend_option() -> None:
    r = subprocess.run([CAMEL, "run", "--help"], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert "--backend" in r.stdout and "xpu" in r.stdout


def test_unknown_backend_is_a_usage_error(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "fibc.cml").write_text(FIB)
    env = dict(os.environ, XACC_CACHE_DIR=str(cache))
    r = subprocess.run([CAMEL, "run", "--backend=nope", "fibc.cml"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=TIMEOUT_S, env=env)
    assert r.returncode == 2
    assert "unknown backend 'nope'" in r.stderr


@pytest.mark.parametrize("name", ["fib", "tail_calls", "deep_recursion", "gcd_lcm"])
def test_parallel_scheduler_calls_native_code(name: str, cache: Path) -> None:
    # Native functions are called from the parallel scheduler's worker threads
    # too (each thread has its own native stack limit).
    program = CASES[[p.stem for p in CASES].index(name)]
    out, code = expected(program)
    r = camel(program.parent, program.name, cache, "--scheduler=par", "--threads", "2")
    assert (r.stdout, r.returncode) == (out, code), r.stderr
    assert SCALAR[name] <= compiled_graphs(r.stderr), r.stderr
