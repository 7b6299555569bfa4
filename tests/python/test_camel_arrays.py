"""Camel arrays of ints and floats are stored unboxed (issue 23, item 9;
Note [Compact arrays] in csrc/include/xacc/ir/List.h).

* Memory: sorting N ints with algo.merge_sort costs about 8 bytes an element
  for the array plus 4 for the merge buffer (half the array); a boxed array
  (16-byte datums) costs at least 32. The tests measure the peak RSS of a run
  with N elements against the same program with 1,000 and bound the growth
  per element, so the process's fixed footprint does not matter.
* The Python boundary stays exact: int64 extremes, signed zeros, infinities
  and NaN come back as they went in, bools stay bools, and mixed arrays keep
  each element's type.
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import pytest

from buildtree import camel_binary

CAMEL = camel_binary()

IN_PLACE = """module sortmem

import {{ merge_sort }} from algo

func key(i: int): int {{
    return (i * 2654435761 + 12345) % 1000003
}}

func main(): int sync {{
    var xs = range(0, {n})
    wait xs->apply<key>
    wait merge_sort(xs)
    println(len(xs), xs[0], xs[{n} - 1])
    return 0
}}
"""

# The array made by a map over a range (both stay alive), then sorted.
MAPPED = """module sortmem

import {{ merge_sort }} from algo

func main(): int sync {{
    var xs = range(0, {n})->map<(i: int): float => float((i * 2654435761 + 12345) % 1000003)>
    wait merge_sort(xs)
    println(len(xs), xs[0], xs[{n} - 1])
    return 0
}}
"""

N = 4_000_000


@pytest.mark.skipif(CAMEL is None, reason="camel binary not built")
@pytest.mark.parametrize("program,bound", [(IN_PLACE, 16), (MAPPED, 28)], ids=["in-place", "mapped"])
def test_merge_sort_memory_per_element(tmp_path: Path, program: str, bound: int) -> None:
    small_out, small = measure(tmp_path, program.format(n=1000))
    big_out, big = measure(tmp_path, program.format(n=N))
    assert big_out.split()[0] == str(N)
    per_element = (big - small) / N
    # Boxed: >= 32 bytes an element in place, >= 48 mapped; unboxed: about 12 and 20.
    assert per_element < bound, f"{per_element:.1f} bytes per element"


def measure(tmp_path: Path, source: str) -> tuple[str, int]:
    """Runs a program; returns its stdout and its own peak RSS in bytes (os.wait4)."""
    (tmp_path / "sortmem.cml").write_text(source)
    out = tmp_path / "stdout.txt"
    with out.open("wb") as o:
        proc = subprocess.Popen([CAMEL, "run", "--scheduler=seq", "sortmem.cml"], cwd=tmp_path,
                                stdout=o, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                env=dict(os.environ, XACC_CACHE_DIR=str(tmp_path / "cache")))
        _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return out.read_text(), usage.ru_maxrss * 1024


BOUNDARY = """module boundary

import { sorted } from algo

export func ints(xs: int[]): int[] {
    return sorted(xs)
}

export func floats(xs: float[]): float[] {
    return xs->map<(v: float): float => v * 1.0>
}

export func grown(xs: any[]): any[] {
    var ys = xs->slice<0, len(xs)>
    wait ys->append<7>
    return ys
}

export func same(xs: float[]): float[] {
    return xs
}
"""


@pytest.fixture(scope="module")
def boundary(tmp_path_factory) -> object:
    camel_lang = pytest.importorskip("camel_lang")
    path = tmp_path_factory.mktemp("boundary") / "boundary.cml"
    path.write_text(BOUNDARY)
    return camel_lang.load(path)


def test_python_boundary_is_exact(boundary) -> None:
    big, small = 2**63 - 1, -(2**63)
    assert boundary.ints([big, 0, small, -1]) == [small, -1, 0, big]
    out = boundary.floats([-0.0, math.inf, -math.inf, 1e-308, 2.0**-1074, 0.1])
    assert [math.copysign(1.0, v) for v in out[:1]] == [-1.0]
    assert out[1:] == [math.inf, -math.inf, 1e-308, 2.0**-1074, 0.1]
    assert all(type(v) is float for v in out)
    nan = boundary.same([math.nan])[0]
    assert math.isnan(nan) and type(nan) is float
    mixed = boundary.grown([True, 1, 2.5, "s", None])
    assert mixed == [True, 1, 2.5, "s", None, 7]
    assert [type(v) for v in mixed] == [bool, int, float, str, type(None), int]
    ints = boundary.grown([1, 2])
    assert ints == [1, 2, 7] and all(type(v) is int for v in ints)
