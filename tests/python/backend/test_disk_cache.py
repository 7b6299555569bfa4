"""Issue 26, criteria 1 and 2: the kernel disk cache can be trusted
(Note [Kernel disk cache entries], csrc/lib/backend/mlir/DiskCache.cpp).

Every case runs a real program in a subprocess: `xacc.jit(device="xpu0")` on
pointwise functions whose kernels the MLIR backend compiles or loads from
XACC_CACHE_DIR, and compares with eager PyTorch.

* Criterion 1: an entry with flipped bytes, a truncated entry, another
  kernel's entry under this kernel's key and a zero-length entry are each
  refused (logged on the `cache` channel, deleted), the kernel is compiled
  again, the result is right and the process exits 0 (no signal).
* Criterion 2: with the cache directory on a full tmpfs (or, where mounting
  is not permitted, under RLIMIT_FSIZE) and in a read-only directory, the
  output is that of a run with a working cache, exactly one warning is
  printed, and the exit code is 0.
* Eviction: with XACC_CACHE_MAX_MB, the least recently accessed entries are
  deleted after a write, and a cache hit counts as an access; temporary files
  of dead writers are removed once an hour old.
* The entry trailer holds the key, the length and the SHA-256 of the object,
  and the backend's SHA-256 (SHA extensions) agrees with hashlib.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fullfs import fill  # tests/python is on sys.path (conftest.py)

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

ROOT = str(Path(__file__).resolve().parents[3])
TIMEOUT_S = 300
WARNING = "[xacc:cache] warning:"

# argv: the functions to run. Each is one fused pointwise region (one kernel).
PROG = """
import sys, torch, xacc
from xacc import _C
FNS = {
    "a": lambda x, y: torch.tanh(x) * y + 1.5,
    "b": lambda x, y: torch.sigmoid(y) - x * 3.0,
    "c": lambda x, y: (x + y).exp() * 0.25,
}
x = torch.linspace(-2.0, 2.0, 64).reshape(8, 8)
y = torch.linspace(0.5, 3.0, 64).reshape(8, 8)
for name in sys.argv[1:]:
    f = FNS[name]
    out = xacc.jit(f, device="xpu0")(x, y)
    print(name, "MATCH" if torch.allclose(out, f(x, y), rtol=1e-5, atol=1e-5) else "WRONG")
    print(name, " ".join(f"{v:.5f}" for v in out.flatten().tolist()))
t = _C.mlir.kernel_totals()
print("TOTALS", t["compiled"], t["disk_hits"], file=sys.stderr)
"""


def run(cache: Path, *fns: str, preexec=None, **env_extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XACC_CACHE_DIR=str(cache), XACC_LOG="cache",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_extra)
    return subprocess.run([sys.executable, "-c", PROG, *fns], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S, preexec_fn=preexec)


def totals(r: subprocess.CompletedProcess) -> tuple[int, int]:
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("TOTALS ")][-1]
    compiled, hits = line.split()[1:]
    return int(compiled), int(hits)


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.so"))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A cache directory per function, each filled by one run (its kernel compiled)."""
    out = {}
    for fn in ("a", "b"):
        d = tmp_path_factory.mktemp(f"cache-{fn}")
        r = run(d, fn)
        assert r.returncode == 0, r.stderr
        assert f"{fn} MATCH" in r.stdout
        assert totals(r) == (1, 0), r.stderr
        assert len(entries(d)) == 1, list(d.iterdir())
        out[fn] = d
    return out


def flip(data: bytes) -> bytes:
    b = bytearray(data)
    # Bytes in the object's middle (its code and data), and the last one.
    for i in range(len(b) // 2, len(b) // 2 + 64, 4):
        b[i] ^= 0xA5
    b[-1] ^= 0xFF
    return bytes(b)


CORRUPTIONS = {
    "flipped": lambda data, other: flip(data),
    "truncated": lambda data, other: data[: len(data) * 2 // 3],
    "wrong_key": lambda data, other: other,  # kernel b's entry stored under a's key
    "empty": lambda data, other: b"",
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_bad_entry_is_refused_and_recompiled(case: str, pristine: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(pristine["a"], cache)
    (entry,) = entries(cache)
    (other,) = entries(pristine["b"])
    assert entry.name != other.name
    entry.write_bytes(CORRUPTIONS[case](entry.read_bytes(), other.read_bytes()))
    r = run(cache, "a")
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stderr}"  # negative: killed by a signal
    assert "a MATCH" in r.stdout, r.stdout
    assert totals(r) == (1, 0), r.stderr  # compiled again, not loaded
    refused = [ln for ln in r.stderr.splitlines() if ln.startswith("[xacc:cache] ") and entry.name in ln]
    assert refused and "deleted" in refused[0] and "compiled again" in refused[0], r.stderr
    # The recompiled kernel replaced the bad entry: the next process loads it.
    again = run(cache, "a")
    assert again.returncode == 0 and "a MATCH" in again.stdout, again.stderr
    assert totals(again) == (0, 1), again.stderr


def test_entry_trailer_binds_key_length_and_hash(pristine: dict[str, Path]) -> None:
    (entry,) = entries(pristine["a"])
    data = entry.read_bytes()
    payload, trailer = data[:-128], data[-128:]
    assert trailer[:8] == b"XACCKSO\0"
    assert trailer[16:48].decode() == entry.stem  # the key the object was stored under
    assert int.from_bytes(trailer[64:72], "little") == len(payload) > 0
    assert trailer[72:104] == hashlib.sha256(payload).digest()
    assert payload[:4] == b"\x7fELF"


def test_sha256_matches_hashlib() -> None:
    # Every padding case (sizes around the 55/56/64-byte boundaries), and large inputs.
    for n in [*range(0, 200), 1000, 4095, 4096, 65537, 1 << 20]:
        data = bytes((i * 131 + n) & 255 for i in range(n)) if n < 5000 else os.urandom(n)
        assert _C.mlir._sha256_hex(data) == hashlib.sha256(data).hexdigest(), n


# -- criterion 2: a cache that cannot be written ------------------------------------------------


@contextlib.contextmanager
def tmpfs(path: Path, *options: str):
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(("size=64k",) + options), "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def limited_file_size() -> None:
    """preexec_fn: writes beyond 512 bytes fail with EFBIG (SIGXFSZ ignored), as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    r = run(tmp_path_factory.mktemp("cache-ref"), "a", "b", "c")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("MATCH") == 3, r.stdout
    return r.stdout


def check_degraded(r: subprocess.CompletedProcess, reference: str, cache: Path) -> None:
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stderr}"
    assert r.stdout == reference
    assert r.stderr.count(WARNING) == 1, r.stderr  # three kernels, one warning
    assert str(cache) in r.stderr
    assert totals(r) == (3, 0), r.stderr
    if cache.is_dir():  # nothing half-written left behind
        assert [p.name for p in cache.iterdir()] in ([], ["filler"]), list(cache.iterdir())


def test_full_disk_tmpfs(tmp_path: Path, reference: str) -> None:
    mnt = tmp_path / "mnt"
    with tmpfs(mnt) as mounted:
        if not mounted:
            pytest.skip("mounting a tmpfs is not permitted here (test_full_disk_rlimit simulates it)")
        fill(mnt)
        r = run(mnt, "a", "b", "c")
        check_degraded(r, reference, mnt)
        assert "No space left on device" in r.stderr


def test_full_disk_rlimit(tmp_path: Path, reference: str) -> None:
    cache = tmp_path / "cache"
    r = run(cache, "a", "b", "c", preexec=limited_file_size)
    check_degraded(r, reference, cache)
    assert "File too large" in r.stderr


def test_read_only_directory(tmp_path: Path, reference: str) -> None:
    cache = tmp_path / "ro"
    if os.geteuid() == 0:  # permission bits do not stop root: a read-only mount does
        with tmpfs(cache, "ro") as mounted:
            if not mounted:
                pytest.skip("root, and mounting a read-only tmpfs is not permitted here")
            r = run(cache, "a", "b", "c")
            check_degraded(r, reference, cache)
            assert "Read-only file system" in r.stderr
    else:
        cache.mkdir()
        cache.chmod(0o555)
        try:
            r = run(cache, "a", "b", "c")
        finally:
            cache.chmod(0o755)
        check_degraded(r, reference, cache)


# -- eviction -------------------------------------------------------------------------------------


def test_lru_eviction_by_access_time(pristine: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(pristine["a"], cache)
    (kept,) = entries(cache)
    now = time.time()
    # Three stand-in entries of 400 KB, accessed 300, 200 and 100 s ago; the real
    # entry of `a` was accessed 400 s ago, so it is the least recently used ...
    fakes = []
    for i, age in enumerate((300, 200, 100)):
        p = cache / f"{i:032x}.so"
        p.write_bytes(b"\0" * (400 << 10))
        os.utime(p, (now - age, now - age))
        fakes.append(p)
    os.utime(kept, (now - 400, now - 400))
    # Temporary files of writers that died: removed once an hour old.
    stale, fresh = cache / ".stale.tmp1.0", cache / ".fresh.tmp2.0"
    for p, age in ((stale, 7200), (fresh, 60)):
        p.write_bytes(b"partial")
        os.utime(p, (now - age, now - age))
    # ... until this run loads it (an access) and then compiles `b`, whose write
    # finds 1.2 MB + two kernels over the 1 MB limit.
    r = run(cache, "a", "b", XACC_CACHE_MAX_MB="1")
    assert r.returncode == 0 and r.stdout.count("MATCH") == 2, r.stderr
    assert totals(r) == (1, 1), r.stderr
    assert not fakes[0].exists(), "the least recently used entry was not evicted"
    assert fakes[1].exists() and fakes[2].exists(), "more than needed was evicted"
    assert kept.exists(), "an entry used by this run was evicted"
    assert len(entries(cache)) == 4
    assert not stale.exists() and fresh.exists()
    assert "evicted 1 least recently used" in r.stderr, r.stderr
