"""Where a whole-script run spends its time and memory, seen from inside the
process (issue 22): runs a script as plain python or under `python -m xjit`
and, at exit, prints to stderr

  * memory: VmHWM/VmRSS and the resident memory of the mappings grouped by
    library (libLLVM, libMLIR, libtorch_cpu, xacc._C, ...; anonymous memory and
    the heap as one group), plus whether sympy, torch._dynamo, xacc._C_xpu and
    xacc._C_mlir were imported and how many modules were (the compiler, with
    libLLVM/libMLIR, is mapped without an import when a kernel misses the cache);
  * with --sample: a sampling profile of the main thread, read every 5 ms
    from sys._current_frames() (cProfile does not see the frames xjit
    captures): the functions most often on the stack (inclusive) and at its
    top (self).

    PYTHONPATH=. python benchmarks/xjit_script/inside.py [--sample] plain SCRIPT [ARGS]
    PYTHONPATH=. python benchmarks/xjit_script/inside.py [--sample] xjit --device cpu SCRIPT [ARGS]
"""

from __future__ import annotations

import atexit
import collections
import os
import re
import runpy
import sys
import threading
import time

_HEADER = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")
_GROUPS = ("libLLVM", "libMLIR", "libtorch_cpu", "libtorch_python", "_C_mlir", "_C_xpu", "_C.cpython", "libpython",
           "libc10")


def _group(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    for g in _GROUPS:
        if name.startswith(g):
            return g
    if path in ("", "[heap]"):
        return "anon+heap"
    return "other .so" if ".so" in name else "other"


def memory_report() -> None:
    rss: collections.Counter = collections.Counter()
    group = "other"
    with open("/proc/self/smaps") as f:
        for line in f:
            if _HEADER.match(line):
                parts = line.split(None, 5)
                group = _group(parts[5].strip() if len(parts) > 5 else "")
            elif line.startswith("Rss:"):
                rss[group] += int(line.split()[1])
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f)
    mods = sys.modules
    print(f"## memory: VmHWM {status['VmHWM'].strip()}, VmRSS {status['VmRSS'].strip()}; imported: "
          f"sympy={'sympy' in mods} torch._dynamo={'torch._dynamo' in mods} "
          f"xacc._C_xpu={'xacc._C_xpu' in mods} xacc._C_mlir={'xacc._C_mlir' in mods}; {len(mods)} modules",
          file=sys.stderr)
    for g, kb in rss.most_common():
        print(f"##   {g:<16} {kb / 1024:8.1f} MiB", file=sys.stderr)


class Sampler:
    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.inclusive: collections.Counter = collections.Counter()
        self.top: collections.Counter = collections.Counter()
        self.samples = 0
        self.stopped = False
        self.main = threading.main_thread().ident

    @staticmethod
    def _where(frame) -> str:
        c = frame.f_code
        return f"{c.co_qualname} ({c.co_filename.split('site-packages/')[-1]}:{c.co_firstlineno})"

    def run(self) -> None:
        while not self.stopped:
            time.sleep(self.interval)
            frame = sys._current_frames().get(self.main)
            if frame is None:
                continue
            self.samples += 1
            self.top[self._where(frame)] += 1
            seen = set()
            while frame is not None:
                w = self._where(frame)
                if w not in seen:  # recursion counts once per sample
                    seen.add(w)
                    self.inclusive[w] += 1
                frame = frame.f_back

    def report(self, n: int = 40) -> None:
        self.stopped = True
        total = max(self.samples, 1)
        print(f"## profile: {self.samples} samples every {self.interval * 1e3:.0f} ms", file=sys.stderr)
        for title, counts in (("inclusive", self.inclusive), ("self", self.top)):
            print(f"## {title}", file=sys.stderr)
            for w, c in counts.most_common(n):
                print(f"##  {100 * c / total:5.1f}%  {w}", file=sys.stderr)


def main() -> None:
    args = sys.argv[1:]
    sample = bool(args) and args[0] == "--sample"
    args = args[1:] if sample else args
    if not args or args[0] not in ("plain", "xjit"):
        raise SystemExit(__doc__)
    atexit.register(memory_report)  # atexit runs last-registered first: the profile stops before
    if sample:
        s = Sampler()
        atexit.register(s.report)
        threading.Thread(target=s.run, daemon=True).start()
    if args[0] == "plain":
        sys.argv = args[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
        runpy.run_path(sys.argv[0], run_name="__main__")
    else:
        sys.argv = ["xjit", *args[1:]]
        runpy.run_module("xjit", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
