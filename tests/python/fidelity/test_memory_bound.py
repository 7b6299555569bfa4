"""Issue 19, bounded memory (resolution criterion 2): after jitting 10,000
distinct functions and deleting them, none of their code objects stays alive
(all weak references to them are dead, and gc finds no function of theirs), and
the process's RSS is back within 10 MB of the start. Half of the functions are
captured whole (a graph entry), half split at a graph break (a break function
and a resume function). The same script runs eagerly as the reference: the
criterion is about what xacc adds, so the jitted run's RSS growth is compared
with the eager run's growth (which is under 2 MB: the script's own weak
references, the interpreter's free lists) plus 10 MB."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import has_xpu, run, write  # noqa: E402

BODY = '''\
import gc
import sys
import weakref

import torch


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // 1024


SPACE = {"__name__": "generated"}  # one namespace for all, as a module's


def make(i):
    """A new function with its own code object (distinct constants and name),
    defined in SPACE as a module would define it."""
    if i % 2:
        src = f"def fidfn_{i}(x):\\n    return x * {i} + {i % 7}\\n"
    else:  # a graph break (print) in the middle: break and resume functions
        src = f"def fidfn_{i}(x):\\n    y = x + {i}\\n    print(end='')\\n    return y * 2\\n"
    exec(compile(src, f"<fidelity-{i}>", "exec"), SPACE)
    return SPACE.pop(f"fidfn_{i}")  # deleted from the namespace: the caller holds the only reference


N = int(sys.argv[1])  # how many functions (the test passes it)


def batch(start, n, refs):
    x = torch.ones(2)
    total = 0.0
    for i in range(start, start + n):
        fn = make(i)
        refs.append(weakref.ref(fn.__code__))
        total += float(jit(fn)(x).sum())
        del fn
    return total


warm = []
batch(0, 200, warm)  # loads what a first capture loads (lazy imports, kernels, caches)
gc.collect()
start = rss_kb()
refs = []
total = batch(1000, N, refs)
gc.collect()
end = rss_kb()
alive = sum(r() is not None for r in refs)
names = sum(1 for o in gc.get_objects() if type(o).__name__ == "function" and o.__name__.startswith("fidfn_"))
print("sum", total)
print("code objects alive", alive)
print("functions gc finds", names)
print("rss delta MB", round((end - start) / 1024, 1), file=sys.stderr)
'''


def check_freed(tmp_path, device: str, n: int) -> None:
    script = write(tmp_path, BODY)
    eager, jitted = run(script, args=(str(n),)), run(script, device, args=(str(n),))
    want = "code objects alive 0\nfunctions gc finds 0\n"
    assert eager.stdout.endswith(want), eager.stdout + eager.stderr
    assert jitted.stdout == eager.stdout, f"eager:\n{eager.stdout}{eager.stderr}\njitted:\n{jitted.stdout}{jitted.stderr}"
    grew = [float(r.stderr.split("rss delta MB")[1]) for r in (eager, jitted)]
    assert grew[1] <= grew[0] + 10, f"RSS growth: eager {grew[0]} MB, jitted {grew[1]} MB"


def test_ten_thousand_functions_are_freed(tmp_path):
    check_freed(tmp_path, "cpu", 10000)


@pytest.mark.skipif(not has_xpu(), reason="no MLIR backend")
def test_functions_compiled_for_xpu0_free_their_kernels(tmp_path):
    """On xpu0 each function's graph has its own kernels (distinct constants):
    they go with the function (Note [Kernels live with their executables]).
    1,500 functions (10,000 take minutes of kernel compiles): +200 MB before."""
    check_freed(tmp_path, "xpu0", 1500)
