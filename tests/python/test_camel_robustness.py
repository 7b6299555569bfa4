"""Robustness of the `camel` front end as a process: thousands of mutated
versions of the program corpus (tests/camel/programs) are written to a
temporary directory in batches and checked with `camel check DIR
--error-format=json`. Every run must end with exit status 0 (all clean) or 1
(diagnostics), never a signal, another status or a timeout; every line on
stderr must be a JSON diagnostic with a code and a location. When a batch
fails, its files are re-run one by one so the failure names the input.

The `camel` binary is taken from $XACC_BUILD_DIR/bin, <repo>/build/bin or
PATH; the test is skipped when none exists. Mutations (token deletions,
duplications and swaps, random bytes, truncation, deep nesting) use a fixed
seed; set CAMEL_FUZZ_SEED / CAMEL_FUZZ_FILES to explore further.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from buildtree import camel_binary

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "camel" / "programs"
SEED = int(os.environ.get("CAMEL_FUZZ_SEED", "1234"))
FILES = int(os.environ.get("CAMEL_FUZZ_FILES", "2000"))
BATCHES = 4
BATCH_TIMEOUT_S = 30

# A rough Camel tokenizer: good enough to cut programs at token boundaries.
TOKEN = re.compile(
    r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`(?:\\.|[^`\\])*`"
    r"|//[^\n]*|/\*.*?\*/|#[^\n]*"
    r"|0[xX][0-9a-fA-F]+|0[bB][01]+|\d+\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?"
    r"|[A-Za-z_]\w*"
    r"|\.\.\.|\?\.\.|\?->|===|!==|\.\.|->|=>|::|==|!=|<=|>=|&&|\|\||\?\?|!!|[-+*/%^@&|]="
    r"|[;,.:=()\[\]{}<>+\-*/%^@!~&|?\\_]",
    re.S,
)
NESTERS = ["(", "[", "{", "if c then ", "-(", "f(", "x->", "<", "match x { case "]




def token_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN.finditer(text)]


def mutate(src: str, rng: random.Random) -> str:
    spans = token_spans(src)
    kind = rng.randrange(7) if spans else 4
    s = src
    if kind == 0:  # delete a token
        a, b = rng.choice(spans)
        s = src[:a] + src[b:]
    elif kind == 1:  # duplicate a token
        a, b = rng.choice(spans)
        s = src[:a] + src[a:b] + src[a:]
    elif kind == 2:  # swap two tokens
        (a, b), (c, d) = sorted(rng.sample(spans, 2)) if len(spans) > 1 else (spans[0], spans[0])
        if b <= c:
            s = src[:a] + src[c:d] + src[b:c] + src[a:b] + src[d:]
    elif kind == 3:  # copy a token elsewhere
        a, b = rng.choice(spans)
        at = rng.randrange(len(src) + 1)
        s = src[:at] + src[a:b] + src[at:]
    elif kind == 4:  # random bytes
        data = bytearray(src.encode())
        for _ in range(rng.randint(1, 8)):
            data.insert(rng.randrange(len(data) + 1), rng.randrange(256))
        s = data.decode("latin-1")
    elif kind == 5:  # truncate
        s = src[: rng.randrange(len(src) + 1)]
    else:  # deep nesting at a token boundary
        at = rng.choice(spans)[0]
        s = src[:at] + rng.choice(NESTERS) * rng.randint(1, 2000) + src[at:]
    return mutate(s, rng) if rng.randrange(4) == 0 else s


def write_batch(directory: Path, corpus: list[str], count: int, rng: random.Random) -> None:
    directory.mkdir(parents=True)
    for i in range(count):
        text = mutate(rng.choice(corpus), rng)
        (directory / f"m{i:05d}.cml").write_bytes(text.encode("latin-1", errors="replace"))


def run_check(camel: Path, target: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(camel), "check", str(target), "--error-format=json"],
        capture_output=True,
        timeout=BATCH_TIMEOUT_S,
    )


def check_output(proc: subprocess.CompletedProcess) -> str | None:
    """Returns a problem description, or None when the run is acceptable."""
    if proc.returncode not in (0, 1):
        return f"exit status {proc.returncode}"
    for line in proc.stderr.decode("utf-8", errors="replace").splitlines():
        try:
            diag = json.loads(line)
        except json.JSONDecodeError:
            return f"non-JSON output line: {line[:200]!r}"
        if diag.get("severity") == "error" and diag.get("code") != "E1000":
            if not re.fullmatch(r"E[12]\d{3}", diag.get("code", "")) or diag.get("line", 0) < 1:
                return f"bad diagnostic: {line[:200]}"
    return None


def culprit(camel: Path, directory: Path) -> str:
    for f in sorted(directory.iterdir()):
        try:
            problem = check_output(run_check(camel, f))
        except subprocess.TimeoutExpired:
            problem = "timeout"
        if problem:
            return f"{f.name}: {problem}\n--- input ---\n{f.read_bytes()[:2000]!r}"
    return "no single file reproduces the failure"


@pytest.fixture(scope="module")
def camel() -> Path:
    path = camel_binary()
    if path is None:
        pytest.skip("camel executable not built")
    return Path(path)


def test_corpus_parses_cleanly(camel: Path) -> None:
    proc = run_check(camel, CORPUS)
    assert proc.returncode == 0, proc.stderr.decode()


@pytest.mark.parametrize("batch", range(BATCHES))
def test_mutated_programs_never_crash(camel: Path, tmp_path: Path, batch: int) -> None:
    corpus = [p.read_text() for p in sorted(CORPUS.rglob("*.cml"))]
    assert len(corpus) >= 40
    rng = random.Random(SEED * 1000 + batch)
    directory = tmp_path / f"batch{batch}"
    write_batch(directory, corpus, FILES // BATCHES, rng)
    try:
        proc = run_check(camel, directory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"camel check timed out on batch {batch}: {culprit(camel, directory)}")
    problem = check_output(proc)
    if problem:
        pytest.fail(f"batch {batch}: {problem}\n{culprit(camel, directory)}")
    # Most mutations break the program, so most files must have diagnostics.
    diagnosed = {json.loads(line)["file"] for line in proc.stderr.decode().splitlines()}
    assert len(diagnosed) > (FILES // BATCHES) // 2


def test_deep_nesting_and_garbage(camel: Path, tmp_path: Path) -> None:
    cases = {
        "parens.cml": "func f() { let x = " + "(" * 100000 + "1" + ")" * 100000 + " }",
        "blocks.cml": "func f() " + "{" * 50000,
        "angles.cml": "func f() { let x = " + "a<" * 20000 + "b }",
        "types.cml": "type T = " + "(" * 50000,
        "binary.cml": bytes(range(256)).decode("latin-1") * 50,
        "empty.cml": "",
    }
    for name, text in cases.items():
        (tmp_path / name).write_bytes(text.encode("latin-1"))
    proc = run_check(camel, tmp_path)
    assert check_output(proc) is None, proc.stderr.decode()[:2000]
    assert proc.returncode == 1
