"""Note [Kernel shared objects] (csrc/lib/backend/mlir/KernelCache.cpp): kernels
are cached as shared objects that a later process maps with dlopen, so a warm
run of `python -m xjit --device xpu0` never loads libLLVM or libMLIR.

Every case runs real processes on a real cache directory:
* a cold run compiles (and maps the compiler), a warm run of the same script
  in a fresh process loads every kernel from the cache, maps no LLVM/MLIR
  library and does not import xacc._C_mlir, and prints bit-identical results;
* entries that cannot be trusted or do not load are refused, deleted and
  compiled again: one from another pipeline build (stale) and one whose
  checked payload is not a loadable shared object (tests/python/backend/
  test_disk_cache.py has flipped, truncated, empty and wrong-key entries); a
  format-1 `.o` entry is never read.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

ROOT = str(Path(__file__).resolve().parents[3])
TIMEOUT_S = 300
TRAILER = 128

# A script as a user would run it under `python -m xjit --device xpu0`: a small
# model called in a loop (one graph, several kernels), then what the process mapped.
SCRIPT = '''
import hashlib, sys
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = torch.tanh(self.fc(x)) * 0.5 + torch.sigmoid(x)
        return torch.softmax(h, dim=-1) + h.exp().mean(dim=0)

torch.manual_seed(0)
net = Net()
x = torch.linspace(-2.0, 2.0, 8 * 16).reshape(8, 16)
with torch.no_grad():
    for _ in range(4):
        y = net(x)
print("DIGEST", hashlib.sha256(y.numpy().tobytes()).hexdigest())
print("VALUES", " ".join(f"{v:.9g}" for v in y.flatten().tolist()[:8]))
libs = set()
with open("/proc/self/maps") as f:
    for line in f:
        name = line.split()[-1].rsplit("/", 1)[-1] if len(line.split()) >= 6 else ""
        if name.startswith(("libLLVM", "libMLIR")):
            libs.add(name.split(".so")[0])
print("HEAVY", ",".join(sorted(libs)) or "-")
print("C_MLIR", "xacc._C_mlir" in sys.modules)
mod = sys.modules.get("xacc._C_xpu") or sys.modules.get("xacc._C_mlir")
t = mod.kernel_totals() if mod else {"compiled": -1, "disk_hits": -1}
print("TOTALS", t["compiled"], t["disk_hits"])
'''


def xjit(script: Path, cache: Path, **env_extra: str) -> dict[str, str]:
    env = dict(os.environ, XACC_CACHE_DIR=str(cache), XACC_LOG="cache",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_extra)
    r = subprocess.run([sys.executable, "-m", "xjit", "--device", "xpu0", str(script)], capture_output=True,
                       text=True, env=env, timeout=TIMEOUT_S, cwd=str(script.parent))
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-4000:]}"
    out = {}
    for line in r.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key in ("DIGEST", "VALUES", "HEAVY", "C_MLIR", "TOTALS"):
            out[key] = rest
    out["stderr"] = r.stderr
    return out


def totals(out: dict[str, str]) -> tuple[int, int]:
    compiled, hits = out["TOTALS"].split()
    return int(compiled), int(hits)


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("script") / "model.py"
    p.write_text(SCRIPT)
    return p


@pytest.fixture(scope="module")
def cold(script: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    cache = tmp_path_factory.mktemp("cache")
    out = xjit(script, cache)
    compiled, hits = totals(out)
    assert compiled >= 1 and hits == 0, out
    return cache, out


def test_cold_run_compiles_and_stores_shared_objects(cold: tuple[Path, dict[str, str]]) -> None:
    cache, out = cold
    assert "libLLVM" in out["HEAVY"], out  # the compiler was loaded for the misses ...
    assert out["C_MLIR"] == "False", out  # ... by the backend, not imported as a module
    entries = sorted(cache.glob("*.so"))
    assert len(entries) == totals(out)[0], (list(cache.iterdir()), out)
    assert not [p for p in cache.iterdir() if p.name.startswith(".")], list(cache.iterdir())  # no temporaries
    for e in entries:
        data = e.read_bytes()
        trailer, payload = data[-TRAILER:], data[:-TRAILER]
        assert payload[:4] == b"\x7fELF" and payload[16] == 3, e  # ET_DYN: a shared object
        assert trailer[:8] == b"XACCKSO\0"
        assert int.from_bytes(trailer[8:12], "little") == 2  # format version
        assert trailer[16:48].decode() == e.stem
        assert int.from_bytes(trailer[64:72], "little") == len(payload)
        assert trailer[72:104] == hashlib.sha256(payload).digest()


def test_warm_run_maps_no_llvm_and_matches_bit_for_bit(script: Path, cold: tuple[Path, dict[str, str]],
                                                        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(cold[0], cache)
    warm = xjit(script, cache)
    assert totals(warm) == (0, totals(cold[1])[0]), warm  # every kernel from the cache
    assert warm["HEAVY"] == "-", warm
    assert warm["C_MLIR"] == "False", warm
    assert warm["DIGEST"] == cold[1]["DIGEST"], (warm["VALUES"], cold[1]["VALUES"])


def corrupt_stale(data: bytes, cache: Path) -> bytes:
    """The entry as another pipeline build would have written it (hash still right)."""
    t = bytearray(data[-TRAILER:])
    t[48:64] = b"0123456789abcdef"
    return data[:-TRAILER] + bytes(t)


def corrupt_not_elf(data: bytes, cache: Path) -> bytes:
    """A payload that passes every check of the trailer but is no shared object."""
    payload = b"this is not an ELF file" * 40
    t = bytearray(data[-TRAILER:])
    t[64:72] = len(payload).to_bytes(8, "little")
    t[72:104] = hashlib.sha256(payload).digest()
    return payload + bytes(t)


CASES = {"stale_build": corrupt_stale, "not_a_shared_object": corrupt_not_elf}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_entry_is_refused_and_recompiled(case: str, script: Path, cold: tuple[Path, dict[str, str]],
                                             tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(cold[0], cache)
    victim = sorted(cache.glob("*.so"))[0]
    victim.write_bytes(CASES[case](victim.read_bytes(), cache))
    r = xjit(script, cache)
    n = totals(cold[1])[0]
    assert totals(r) == (1, n - 1), r
    assert r["DIGEST"] == cold[1]["DIGEST"], r
    refused = [ln for ln in r["stderr"].splitlines() if ln.startswith("[xacc:cache] ") and victim.name in ln
               and "compiled again" in ln]
    assert refused and "deleted" in refused[0], r["stderr"]
    again = xjit(script, cache)  # the recompiled kernel replaced the bad entry
    assert totals(again) == (0, n) and again["HEAVY"] == "-", again


def test_format_1_object_entries_are_not_read(script: Path, cold: tuple[Path, dict[str, str]],
                                              tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    # Entries named as format 1 stored them, `<key>.o` (this build's under those
    # names, or a format-1 build's own): this build compiles instead.
    for e in cold[0].iterdir():
        if e.suffix in (".so", ".o"):
            (cache / (e.stem + ".o")).write_bytes(e.read_bytes())
    r = xjit(script, cache)
    assert totals(r) == (totals(cold[1])[0], 0), r
    assert r["DIGEST"] == cold[1]["DIGEST"], r


# Note [Linking kernels without the driver] (KernelCache.cpp): kernels are
# linked by ld.gold or ld directly, the compiler driver named only once for its
# libgcc; the driver links only when neither linker can. Each case puts shims
# first on PATH that log their arguments and then either fail or run the real
# tool, so what was invoked, and whether its link stuck, is seen.
SHIM = '''#!/bin/sh
echo "$0 $*" >> "{log}"
{body}
'''


def shims(tmp_path: Path, fail_direct: tuple[str, ...]) -> tuple[dict[str, str], Path]:
    """Shims of cc, ld.gold and ld. Those in `fail_direct` exit 1 when run as
    xacc runs a linker (`-shared` first: cc without -print-libgcc-file-name,
    ld and ld.gold without the driver's plugin arguments); every other call
    runs the real tool (the driver's collect2 finds ld on PATH too)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "tools.log"
    bin_dir.mkdir()
    for tool in ("cc", "ld.gold", "ld"):
        real = shutil.which(tool)
        if not real:
            pytest.skip(f"no {tool} on PATH")
        body = f'exec "{real}" "$@"'
        if tool in fail_direct:
            body = 'case "$1" in -shared) exit 1;; esac\n' + body
        p = bin_dir / tool
        p.write_text(SHIM.format(log=log, body=body))
        p.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def direct_links(log: Path) -> list[str]:
    """The tools run as xacc runs a linker (first argument -shared)."""
    out = []
    for line in log.read_text().splitlines():
        argv = line.split()
        if len(argv) > 1 and argv[1] == "-shared":
            out.append(argv[0].rsplit("/", 1)[-1])
    return out


def cold_with_shims(script: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path,
                    fail: tuple[str, ...]) -> tuple[dict[str, str], int, list[str], Path]:
    """A cold run into a new cache with the linkers in `fail` failing: every kernel
    of the reference cold run compiled and stored; (report, kernels, link calls, cache)."""
    env, log = shims(tmp_path, fail_direct=fail)
    cache = tmp_path / "cache"
    r = xjit(script, cache, **env)
    n = totals(cold[1])[0]
    assert totals(r) == (n, 0), r
    assert len(list(cache.glob("*.so"))) == n, (list(cache.iterdir()), r["stderr"][-2000:])
    return r, n, direct_links(log), cache


def test_kernels_link_without_the_compiler_driver(script: Path, cold: tuple[Path, dict[str, str]],
                                                  tmp_path: Path) -> None:
    # The driver cannot link (exit 1): before, no kernel was stored (linked in
    # memory, "cannot link kernel ..."); now every one is, by the linker itself.
    r, n, links, cache = cold_with_shims(script, cold, tmp_path, ("cc",))
    assert "cc" not in links and len(links) == n, log.read_text()
    warm = xjit(script, cache)
    assert totals(warm) == (0, n) and warm["HEAVY"] == "-", warm
    assert warm["DIGEST"] == cold[1]["DIGEST"], (warm["VALUES"], cold[1]["VALUES"])


def test_failing_linkers_fall_back_to_the_driver(script: Path, cold: tuple[Path, dict[str, str]],
                                                 tmp_path: Path) -> None:
    # ld.gold and ld both fail: each is tried for the first kernel only, then
    # the driver links every kernel, and all are stored as before.
    r, n, links, cache = cold_with_shims(script, cold, tmp_path, ("ld.gold", "ld"))
    assert links.count("ld.gold") == 1 and links.count("ld") == 1 and links.count("cc") == n, links
    assert "not used again in this process" in r["stderr"], r["stderr"][-2000:]
    warm = xjit(script, cache)
    assert totals(warm) == (0, n) and warm["DIGEST"] == cold[1]["DIGEST"], warm
