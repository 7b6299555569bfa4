"""The frame hook, caches and guards: cache hits do not recompile, guards catch
dtype/shape/requires_grad/global changes, the recompile limit switches a code
object to run-only, threads share compiled code safely, and repeated calls do
not leak memory."""

import gc
import os
import sys
import threading

import pytest
import torch

from xacc._C import capture as C
from xacc.jit import counters, jit

from harness import compare_call


def f(x, y):
    return (x * y).relu() + 1


def test_cache_hit_no_recompile():
    j = jit(f)
    for _ in range(20):
        j(torch.randn(3), torch.randn(3))
    c = counters()
    assert c["graphs"] == 1 and c["recompiles"] == 0
    assert c["hook_hits"] >= 19


@pytest.mark.parametrize("change", ["dtype", "shape", "requires_grad", "ndim"])
def test_guard_failure_recompiles_once(change):
    j = jit(f)
    x = torch.randn(3)
    j(x, x)
    y = {"dtype": torch.randn(3, dtype=torch.float64), "shape": torch.randn(4),
         "requires_grad": torch.randn(3, requires_grad=True), "ndim": torch.randn(3, 1)}[change]
    got = j(y, y)
    assert torch.allclose(got, f(y, y))
    j(y, y)
    c = counters()
    assert c["recompiles"] == 1 and c["graphs"] == 2


def test_recompile_reason_names_the_guard():
    from xacc._src.capture import convert
    j = jit(f)
    j(torch.randn(3), torch.randn(3))
    j(torch.randn(5), torch.randn(5))
    reasons = [r for ev in convert.EVENTS for r in ev.recompile_reasons]
    assert reasons and "L['x']" in reasons[0] and "size=[3]" in reasons[0]


def test_recompile_limit_then_run_only():
    j = jit(f, dynamic=False)  # sizes would otherwise turn dynamic after one recompile
    for n in range(1, 13):
        x = torch.randn(n)
        compare_call(f, j, (x, x,))
    c = counters()
    assert c["graphs"] == 8
    assert C.code_action(f.__code__) == 2  # run-only


def test_entries_are_mru_and_inspectable():
    j = jit(f, dynamic=False)
    a, b = torch.randn(2), torch.randn(3)
    j(a, a)
    j(b, b)
    j(a, a)
    ents = C.entries(f.__code__)
    assert len(ents) == 2 and ents[0]["kind"] == "graph"
    assert any("size=[2]" in g for g in ents[0]["guards"])  # the last hit is first
    assert ents[0]["hits"] >= 1 and "aten.relu" in ents[0]["graph"]


def test_hook_off_outside_jit():
    j = jit(f)
    j(torch.randn(2), torch.randn(2))
    before = counters()["hook_frames"]
    for _ in range(5):
        f(torch.randn(2), torch.randn(2))
    assert counters()["hook_frames"] == before
    assert C.get_state() == 0


def test_generators_pass_through():
    def gen(x):
        yield x * 2

    def g(x):
        return next(gen(x)) + 1
    j = jit(g)
    x = torch.randn(3)
    compare_call(g, j, (x,))
    assert counters()["internal_errors"] == 0


def test_exceptions_from_user_code_propagate():
    def bad(x):
        return x @ torch.randn(5, 5)
    j = jit(bad)
    with pytest.raises(RuntimeError):
        j(torch.randn(3, 4))


def test_threads_share_compiled_function():
    j = jit(f)
    x0 = torch.randn(64)
    j(x0, x0)
    errors = []

    def worker(seed):
        g = torch.Generator().manual_seed(seed)
        for _ in range(200):
            x = torch.randn(64, generator=g)
            y = torch.randn(64, generator=g)
            if not torch.allclose(j(x, y), f(x, y)):
                errors.append(seed)

    ts = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert counters()["internal_errors"] == 0


_LEAK_PROBE = """
import gc, os, sys, torch
from xacc.jit import jit

def f(x, y):
    return (x * y).relu() + 1

def resident():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

j = jit(f)
x, y = torch.randn(8), torch.randn(8)
for _ in range(20_000):
    j(x, y)
gc.collect()
rx, ry = sys.getrefcount(x), sys.getrefcount(y)
n_objs = len(gc.get_objects())
grown = []
for _ in range(2):  # two windows: a leak grows in both, a one-off allocator step in one
    before = resident()
    for _ in range(100_000):
        j(x, y)
    gc.collect()
    grown.append(resident() - before)
print(min(grown), sys.getrefcount(x) - rx, sys.getrefcount(y) - ry, len(gc.get_objects()) - n_objs)
"""


def test_no_memory_growth_over_many_calls():
    # In a process of its own: inside the suite, other tests' threads and caches
    # settle at unpredictable times and move resident memory by a megabyte or
    # two, which says nothing about this call path.
    import subprocess

    r = subprocess.run([sys.executable, "-c", _LEAK_PROBE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    grown, drx, dry, dobjs = (int(v) for v in r.stdout.split()[-4:])
    assert drx == 0 and dry == 0, "the call path leaks references to its arguments"
    assert dobjs <= 50, f"{dobjs} more gc-tracked objects after 100k calls"
    # A leak of even 16 bytes per call would show as 1.6 MB in each window of 100k
    # calls; glibc/pymalloc sometimes grow by one step of about 1.1 MB once (measured:
    # the same 1.19 MB after 100k and after 400k calls), so the smaller window counts.
    assert grown < 1_000_000, f"resident memory grew by {grown} bytes in each of two windows of 100k calls"


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_break_function_refcounts_stable():
    def pb(x):
        y = x + 1
        len([])  # noqa: just a native call
        print(end="")
        return y * 2
    j = jit(pb)
    x = torch.randn(4)
    for _ in range(100):
        j(x)
    gc.collect()
    rx = sys.getrefcount(x)
    for _ in range(5000):
        j(x)
    gc.collect()
    assert sys.getrefcount(x) == rx


def test_module_instances_share_entries():
    import torch.nn as nn
    a, b = nn.Linear(4, 4), nn.Linear(4, 4)
    ja, jb = jit(a), jit(b)
    x = torch.randn(2, 4)
    compare_call(a, ja, (x,))
    compare_call(b, jb, (x,))
    assert counters()["recompiles"] == 0
