"""`os.environ` reads inside captured frames (transformers' sdpa_attention reads
a flag per call): `os.environ[k]`, `.get(k, d)`, `os.getenv` and `k in
os.environ` answer at capture as constants, guarded by the keys read alone
(Note [os.environ reads] in TranslateValues.cpp): changing another variable
keeps the cache entry; changing, deleting or setting a key that was read
recompiles and gives eager's result."""

import os

import torch

from xacc._C import capture as C
from xacc.jit import counters, jit

from harness import compare_call

FLAG = "XACC_TEST_ENV_FLAG"
OTHER = "XACC_TEST_ENV_UNRELATED"


def read_with_get(x):
    if os.environ.get(FLAG, "0") == "1":
        return x * 3
    return x + 1


def read_with_subscript(x):
    return x * float(os.environ[FLAG])


def read_with_getenv(x):
    scale = os.getenv(FLAG)
    return x + (0.0 if scale is None else float(scale))


def read_with_in(x):
    if FLAG in os.environ:
        return x * 3
    if FLAG not in os.environ:
        return x + 1
    return x


def step(f, j, x, want_recompiles):
    compare_call(f, j, (x,))
    c = counters()
    assert c["breaks"] == 0 and c["recompiles"] == want_recompiles, c


def guards_of(f):
    return [g for e in C.entries(f.__code__) for g in e["guards"] if "_data" in g]


def test_unrelated_variable_does_not_recompile(monkeypatch):
    monkeypatch.delenv(FLAG, raising=False)
    monkeypatch.delenv(OTHER, raising=False)
    j, x = jit(read_with_get), torch.randn(3)
    step(read_with_get, j, x, 0)
    monkeypatch.setenv(OTHER, "1")  # another variable set, changed, deleted: same entry
    step(read_with_get, j, x, 0)
    monkeypatch.setenv(OTHER, "2")
    step(read_with_get, j, x, 0)
    monkeypatch.delenv(OTHER)
    step(read_with_get, j, x, 0)
    assert counters()["graphs"] == 1, counters()
    # Only the key read is guarded, not the whole environment.
    guards = guards_of(read_with_get)
    assert guards == [f"G['os'].environ._data: has no key {os.environ.encodekey(FLAG)!r}"], guards


def test_read_variable_changed_or_deleted_recompiles(monkeypatch):
    monkeypatch.setenv(FLAG, "1")
    j, x = jit(read_with_get), torch.randn(3)
    step(read_with_get, j, x, 0)
    monkeypatch.setenv(OTHER, "x")
    step(read_with_get, j, x, 0)
    monkeypatch.setenv(FLAG, "2")  # the value read changed
    step(read_with_get, j, x, 1)
    monkeypatch.delenv(FLAG)  # deleted: .get answers its default
    step(read_with_get, j, x, 2)
    monkeypatch.setenv(FLAG, "1")  # back to the first value: its entry again
    step(read_with_get, j, x, 2)
    key = os.environ.encodekey(FLAG)
    assert f"G['os'].environ._data[{key!r}]: == {os.environ.encodevalue('1')!r}" in guards_of(read_with_get)


def test_absent_variable_set_later_recompiles(monkeypatch):
    monkeypatch.delenv(FLAG, raising=False)
    for f in (read_with_get, read_with_getenv, read_with_in):
        j, x = jit(f), torch.randn(3)
        base = counters()["recompiles"]
        step(f, j, x, base)
        monkeypatch.setenv(FLAG, "1")  # the default was taken: setting the key recompiles
        step(f, j, x, base + 1)
        monkeypatch.setenv(OTHER, "y")
        step(f, j, x, base + 1)
        monkeypatch.delenv(FLAG)
        step(f, j, x, base + 1)  # the first entry again
        monkeypatch.delenv(OTHER)


def test_subscript_and_in_are_guarded_per_key(monkeypatch):
    monkeypatch.setenv(FLAG, "2")
    j, x = jit(read_with_subscript), torch.randn(3)
    step(read_with_subscript, j, x, 0)
    monkeypatch.setenv(OTHER, "z")
    step(read_with_subscript, j, x, 0)
    monkeypatch.setenv(FLAG, "5")
    step(read_with_subscript, j, x, 1)
    # `in` guards only the presence: another value keeps the entry.
    k = jit(read_with_in)
    step(read_with_in, k, x, 1)
    monkeypatch.setenv(FLAG, "6")
    step(read_with_in, k, x, 1)
    monkeypatch.delenv(FLAG)
    step(read_with_in, k, x, 2)
    assert [g for g in guards_of(read_with_in) if "has key" in g], guards_of(read_with_in)
