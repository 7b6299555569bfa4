"""Robustness of the GIR parser and verifier: thousands of malformed inputs (see
gir_fuzz.py: mutations of every .gir under tests/lit, random bytes, 10k-deep nesting,
huge numbers, unterminated strings, NUL bytes, invalid UTF-8) must each be accepted
or rejected with a located `file:line:col: error[Ennnn]` diagnostic and exit code 1 --
never a crash (signal) and never a hang.

The whole corpus goes through xacc-opt, in batches of inputs sent as the chunks of one
--split-input-file run (gir_fuzz.classify_batch: a build linking libtorch takes up to
seconds to start, so one process per input would not fit in a test run), two batches
at a time; a batch that crashes or hangs is rerun one process per input, which names
the culprit. The in-process tests feed the same corpus to xacc._C.parse/verify when the
module is built. The corpus is deterministic (fixed seed); XACC_FUZZ_COUNT and
XACC_FUZZ_SEED widen the search.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gir_fuzz  # noqa: E402

REPO = gir_fuzz.REPO
COUNT = int(os.environ.get("XACC_FUZZ_COUNT", "3000"))
SEED = int(os.environ.get("XACC_FUZZ_SEED", str(0x5EED)))
BATCH = 250
LOCATED = gir_fuzz.LOCATED
PIPELINE = "inline,canonicalize,const-fold,cse,dce"


def xacc_opt() -> str | None:
    build = pathlib.Path(os.environ.get("XACC_BUILD_DIR", REPO / "build"))
    path = build / "bin" / "xacc-opt"
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    return shutil.which("xacc-opt")


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, bytes]]:
    items = gir_fuzz.generate_corpus(COUNT, SEED)
    assert len(items) >= COUNT >= 1
    return items


@pytest.fixture(scope="module")
def corpus_dir(corpus, tmp_path_factory) -> list[pathlib.Path]:
    if xacc_opt() is None:
        pytest.skip("xacc-opt is not built (set XACC_BUILD_DIR)")
    root = tmp_path_factory.mktemp("gir-corpus")
    paths = []
    for name, data in corpus:
        path = root / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".gir")
        path.write_bytes(data)
        paths.append(path)
    return paths


def run_all(paths: list[pathlib.Path], *flags: str) -> dict[pathlib.Path, tuple[str, str]]:
    tool = xacc_opt()
    batches = [paths[i:i + BATCH] for i in range(0, len(paths), BATCH)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = pool.map(lambda b: gir_fuzz.classify_batch(tool, b, *flags), batches)
    return dict(zip(paths, (a for batch in answers for a in batch)))


def report(results: dict[pathlib.Path, tuple[str, str]], bad: set[str]) -> str:
    lines = [f"{p.name}: {kind}: {detail}" for p, (kind, detail) in results.items() if kind in bad]
    where = next(iter(results)).parent
    return f"{len(lines)} failing inputs (kept in {where}):\n" + "\n".join(lines[:40])


def test_corpus_is_large_and_varied(corpus):
    names = [n for n, _ in corpus]
    assert len(names) == len(set(names)) >= 3000 or len(names) == COUNT
    kinds = {k for n in names for k in re.split(r"[-+]", n.split("-", 1)[-1])}
    for expected in ("delete", "swap", "truncate", "flip", "insert_bad", "unterminated",
                     "huge_number"):
        assert expected in kinds, expected
    assert any(n.startswith("deep-regions") for n in names)
    assert any(b"\x00" in d for _, d in corpus)
    assert any(not _is_utf8(d) for _, d in corpus)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@pytest.fixture(scope="module")
def parse_results(corpus_dir) -> dict[pathlib.Path, tuple[str, str]]:
    """Every corpus file through plain xacc-opt (parse, verify, print)."""
    return run_all(corpus_dir)


def test_xacc_opt_never_crashes_on_the_corpus(parse_results):
    kinds = [k for k, _ in parse_results.values()]
    failing = {"crash", "hang", "bad-exit", "unlocated"}
    assert not any(k in failing for k in kinds), report(parse_results, failing)
    # Most mutants are rejected, some still parse: both paths were exercised.
    assert kinds.count("rejected") > len(kinds) // 2
    assert kinds.count("ok") > 0


def test_passes_never_crash_on_accepted_inputs(parse_results):
    """Inputs the verifier accepts go through every pass with --verify-each: a pass may
    not crash, hang or produce invalid IR on any valid input."""
    accepted = [p for p, (kind, _) in parse_results.items() if kind == "ok"]
    assert accepted
    results = run_all(accepted, f"--passes={PIPELINE}", "--verify-each")
    failing = {"crash", "hang", "bad-exit", "unlocated", "rejected"}
    assert not any(k in failing for k, _ in results.values()), report(results, failing)


def in_process(inputs: list[tuple[str, str | bytes]]) -> tuple[int, int]:
    """Parses and verifies each input through xacc._C; returns (accepted, rejected).
    Every failure must be an xacc.CompileError carrying a located diagnostic."""
    pytest.importorskip("xacc._C")
    import xacc
    import xacc._C as C

    accepted = rejected = 0
    for name, text in inputs:
        try:
            module = C.parse(text, name)
            module.verify()
            accepted += 1
        except xacc.CompileError as e:
            assert LOCATED.search(str(e)), f"{name}: unlocated diagnostic: {str(e)[:300]}"
            assert e.codes and all(re.fullmatch(r"E\d{4}", c) for c in e.codes), (name, e.codes)
            rejected += 1
        except Exception as e:  # anything else is a crash of the binding
            pytest.fail(f"{name}: {type(e).__name__}: {e} (input starts {text[:80]!r})")
    return accepted, rejected


def test_in_process_parse_and_verify_never_crash(corpus):
    """The UTF-8 part of the corpus as str, all in one process."""
    texts = [(n, d.decode("utf-8")) for n, d in corpus if _is_utf8(d)]
    accepted, rejected = in_process(texts)
    assert accepted > 0 and rejected > len(texts) // 2


def test_in_process_parse_of_bytes_never_crash(corpus):
    """Inputs that are not UTF-8 go in as bytes. The diagnostic quotes the source line,
    so it may hold invalid UTF-8; it must still arrive as a CompileError."""
    raw = [(n, d) for n, d in corpus if not _is_utf8(d)]
    assert raw
    accepted, rejected = in_process(raw)
    assert rejected > 0
