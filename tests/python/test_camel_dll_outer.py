"""`outer` functors through the `dll` executor from a Camel program, end to end:
a C library compiled here against csrc/include/xacc/camel/camel_abi.h is
called from `camel run` with ints, floats, strings and arrays crossing the C
ABI; a library next to the .cml file is found whatever the working directory;
a failing call is a located run-time error (E3013), a missing library or
symbol a located compile-time error (E2015).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from test_camel_programs import CAMEL

REPO = Path(__file__).resolve().parents[2]
CC = shutil.which("cc") or shutil.which("gcc")

pytestmark = [
    pytest.mark.skipif(CAMEL is None, reason="camel binary not built"),
    pytest.mark.skipif(CC is None, reason="no C compiler"),
]

C_SOURCE = r"""
#include <string.h>
#include "xacc/camel/camel_abi.h"

int add3(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  (void)ctx;
  if (n != 3) return 1;
  r->kind = CAMEL_INT;
  r->as.i = a[0].as.i + a[1].as.i + a[2].as.i;
  return 0;
}

int total(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  (void)n; (void)ctx;
  double s = 0;
  for (int64_t i = 0; i < a[0].as.a.len; ++i) s += a[0].as.a.items[i].as.f;
  r->kind = CAMEL_FLOAT;
  r->as.f = s;
  return 0;
}

int shout(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  (void)n;
  int64_t len = a[0].as.s.len;
  char* out = (char*)ctx->alloc(ctx, len + 2);
  if (!out) return 1;
  for (int64_t i = 0; i < len; ++i) {
    char c = a[0].as.s.data[i];
    out[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
  }
  out[len] = '!';
  out[len + 1] = 0;
  r->kind = CAMEL_STRING;
  r->as.s.data = out;
  r->as.s.len = len + 1;
  return 0;
}

int squares(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  (void)n;
  int64_t k = a[0].as.i;
  camel_value* items = (camel_value*)ctx->alloc(ctx, (int64_t)sizeof(camel_value) * k);
  if (k > 0 && !items) return 1;
  for (int64_t i = 0; i < k; ++i) {
    items[i].kind = CAMEL_INT;
    items[i].reserved = 0;
    items[i].as.i = i * i;
  }
  r->kind = CAMEL_ARRAY;
  r->as.a.items = items;
  r->as.a.len = k;
  return 0;
}

int fails(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  (void)a; (void)n; (void)r;
  ctx->set_error(ctx, "the device is on fire");
  return 1;
}
"""

PROGRAM = """outer func add3(a: int, b: int, c: int): int = "dll://libmine.so::add3"
outer func total(xs: float[]): float = "dll://./libmine.so::total"
outer func shout(s: string): string = "dll://libmine.so::shout"
outer func squares(k: int): int[] = "dll://libmine.so::squares"

func main(): int {
    println(add3(1, 2, 39))
    println(total([1.5, 2.5, 3.0]))
    println(shout('camel'))
    println(squares(5))
    return 0
}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dll_outer")
    (d / "mine.c").write_text(C_SOURCE)
    subprocess.run(
        [CC, "-shared", "-fPIC", "-I", str(REPO / "csrc" / "include"), "-o", str(d / "libmine.so"), str(d / "mine.c")],
        check=True,
    )
    (d / "main.cml").write_text(PROGRAM)
    return d


def run(args, cwd):
    return subprocess.run([CAMEL, "run", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("where", ["same-dir", "elsewhere"])
def test_outer_functors_cross_the_c_abi(project, tmp_path, where):
    cwd = project if where == "same-dir" else tmp_path
    arg = "main.cml" if where == "same-dir" else str(project / "main.cml")
    r = run([arg], cwd)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "42"
    assert float(lines[1]) == 7.0
    assert lines[2] == "CAMEL!"
    assert lines[3].replace(" ", "") == "[0,1,4,9,16]"


def test_failing_call_is_a_located_runtime_error(project):
    (project / "fail.cml").write_text(
        'outer func fails(): int = "dll://libmine.so::fails"\n\nfunc main(): int {\n    return fails()\n}\n'
    )
    r = run(["fail.cml"], project)
    assert r.returncode == 1
    assert "E3013" in r.stderr and "the device is on fire" in r.stderr
    assert "fail.cml:" in r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr


@pytest.mark.parametrize(
    "uri, message",
    [("dll://libnothere.so::add3", "cannot open"), ("dll://libmine.so::nothere", "has no symbol")],
)
def test_bad_library_or_symbol_is_a_located_compile_error(project, uri, message):
    (project / "bad.cml").write_text(f'outer func g(a: int, b: int, c: int): int = "{uri}"\n\nfunc main(): int {{\n    return g(1, 2, 3)\n}}\n')
    r = run(["bad.cml"], project)
    assert r.returncode == 1
    assert "bad.cml:1:" in r.stderr and "E2015" in r.stderr and message in r.stderr
    assert "^" in r.stderr
