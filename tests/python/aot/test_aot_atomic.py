"""Issue 26: AOT artifacts and `xjit --cache` files are written atomically
(temporary file, fsync, rename) and a failed write degrades: `xacc.aot`'s
writer raises xacc.ArtifactError and leaves neither a partial file nor a
temporary one, an artifact it could not replace stays whole and loadable, and
the `--cache` store warns once and the program goes on. The full disk is a
real tmpfs of 64 KB (the test is skipped where mounting is not permitted)."""

import os
import subprocess
import warnings
from pathlib import Path

import pytest

from fullfs import fill  # tests/python is on sys.path (conftest.py)

import xacc
from xacc._src.aot import artifact, store


@pytest.fixture
def full_disk(tmp_path: Path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def payload(n: int) -> dict[str, bytes]:
    return {"manifest.json": b"{}", "blob": os.urandom(n)}  # random: the zip cannot shrink it


def test_failed_write_leaves_nothing_and_keeps_the_old_file(full_disk: Path) -> None:
    path = full_disk / "model.xacc"
    artifact.write(str(path), {"kind": "function"}, payload(8 << 10))
    old = path.read_bytes()
    fill(full_disk)
    with pytest.raises(xacc.ArtifactError, match="cannot write .*No space left on device"):
        artifact.write(str(path), {"kind": "function"}, payload(32 << 10))
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "model.xacc"]  # no temporary file
    assert path.read_bytes() == old
    assert artifact.read(str(path)).files["blob"]  # still whole and verified


def test_cache_dir_store_warns_once_and_goes_on(full_disk: Path) -> None:
    fill(full_disk)
    c = store.CacheDir(str(full_disk / "cache"), "cpu", 8)
    rec = store.EntryRecord("skip", "test", "cpu", "", [], b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            c.add(f"key{i}", rec)
    assert [str(w.message).count("No space left on device") for w in caught] == [1]
    assert issubclass(caught[0].category, store.CacheWarning)
    assert c.frames["key2"] == [rec]  # this process keeps its entries
