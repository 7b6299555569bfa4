"""Deterministic fuzzing of `camel check` and `camel run` as processes.

Two parts, both with fixed seeds:

* the deep forms: operator chains and nestings tens of thousands deep, in
  every position the grammar nests (`a ?? a ?? ...`, `a!!!!...`, `int | int |
  ...`, `int[][]...`, `A of A of ...`, parentheses, blocks, lambdas, angle
  brackets, unary minus, postfix chains). Each must give a located E1125
  (nesting too deep) from both `camel check` and `camel run`, never a signal,
  and `camel inspect --ast` must print it without crashing;
* `camel run` on mutated versions of the program corpus (tests/camel/programs)
  that still pass `camel check`, and on random token soups: every run ends
  with a status (0 to 255), never a signal, and every error it prints is a
  located JSON diagnostic. A run may time out (a mutation can loop forever);
  that is counted, not failed, but must stay rare.

`camel check` on thousands of mutated files is test_camel_robustness.py; with
it this file makes the few thousand inputs of the fuzz suite. Set
CAMEL_FUZZ_SEED / CAMEL_FUZZ_RUNS to explore further.
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
SEED = int(os.environ.get("CAMEL_FUZZ_SEED", "2325"))
RUNS = int(os.environ.get("CAMEL_FUZZ_RUNS", "240"))
RUN_TIMEOUT_S = 10

CAMEL = camel_binary()
pytestmark = pytest.mark.skipif(CAMEL is None, reason="camel binary not built")

N = 30000  # well past every limit, and past the depth that used to overflow the stack

# name -> source text. Each nests or chains N deep in one grammatical position.
DEEP_FORMS = {
    "coalesce": "func main(): int { let a = 1\n return a" + " ?? a" * N + " }",
    "error_then": "func main(): int { let a = 1\n return a" + "!!" * N + "a }",
    "union_type": "type T = int" + " | int" * N + "\nfunc main(): int { return 0 }",
    "array_type": "type T = int" + "[]" * N + "\nfunc main(): int { return 0 }",
    "of_type": "type T = " + "A of " * N + "int\nfunc main(): int { return 0 }",
    "let_annotation": "func main(): int { let x: int" + "[]" * N + " = []\n return 0 }",
    "param_type": "func f(x: int" + " | int" * N + "): int { return 0 }\nfunc main(): int { return 0 }",
    "cast_type": "func main(): int { let x = 1 as int" + "[]" * N + "\n return 0 }",
    "parens": "func main(): int { return " + "(" * N + "1" + ")" * N + " }",
    "unary": "func main(): int { return " + "-(" * N + "1" + ")" * N + " }",
    "not": "func main(): bool { return " + "!" * N + "true }",
    "blocks": "func main(): int " + "{" * N + "}" * N,
    "arrays": "func main(): int { let x = " + "[" * N + "]" * N + "\n return 0 }",
    "lambdas": "func main(): int { let f = " + "(x: int) => " * N + "1\n return 0 }",
    "angles": "func main(): int { let x = " + "a<" * N + "b }",
    "ifs": "func main(): int { return " + "if true then " * N + "1" + " else 2" * N + " }",
    "binary": "func main(): int { return 1" + " + 1" * (3 * N) + " }",
    "calls": "func main(): int { return f" + "()" * N + " }",
    "members": "func main(): int { return s" + ".a" * N + " }",
    "links": "func main(): int { return x" + "->f" * N + " }",
}


def run_camel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [CAMEL, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )


def diagnostics(stderr: bytes) -> list[dict]:
    out = []
    for line in stderr.decode("utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if line.startswith("; "):  # `camel run --stats`-style summaries never appear here
                continue
            raise AssertionError(f"non-JSON diagnostic line: {line[:300]!r}")
    return out


def located(d: dict) -> bool:
    return bool(d.get("file")) and d.get("line", 0) >= 1 and d.get("col", 0) >= 1


@pytest.mark.parametrize("form", sorted(DEEP_FORMS))
@pytest.mark.parametrize("command", ["check", "run"])
def test_deep_forms_are_diagnosed(tmp_path: Path, form: str, command: str) -> None:
    src = tmp_path / f"{form}.cml"
    src.write_text(DEEP_FORMS[form])
    proc = run_camel(command, "--error-format=json", str(src))
    assert proc.returncode == 1, (proc.returncode, proc.stderr[:2000])
    errors = [d for d in diagnostics(proc.stderr) if d["severity"] == "error"]
    assert errors, proc.stderr[:2000]
    assert any(d["code"] == "E1125" for d in errors), proc.stderr[:2000]
    for d in errors:
        assert located(d), d


@pytest.mark.parametrize("form", sorted(DEEP_FORMS))
def test_deep_forms_dump_without_crashing(tmp_path: Path, form: str) -> None:
    # `inspect --ast` prints what the parser built: a long left-nested chain
    # parses (semantic analysis rejects it) and its dump is cut, not a crash.
    src = tmp_path / f"{form}.cml"
    src.write_text(DEEP_FORMS[form])
    proc = run_camel("inspect", "--ast", "--error-format=json", str(src))
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[:2000])
    for d in diagnostics(proc.stderr):
        assert located(d), d


# ---- mutated programs through `camel run` -------------------------------------------

TOKEN = re.compile(
    r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|//[^\n]*|\d+\.\d+|\d+|[A-Za-z_]\w*"
    r"|->|=>|::|==|!=|<=|>=|&&|\|\||\?\?|!!|[;,.:=()\[\]{}<>+\-*/%^@!~&|?]",
)
# Programs whose run depends on the outside (Python, tensors, files, terminal,
# time) stay out: their mutations would test the environment, not the front end.
SKIP = re.compile(r"\bimport\b.*\bfrom (python|tensor|fs|os|sys|time)\b|outer func|input\(|sleep\(")


def mutate(src: str, rng: random.Random) -> str:
    spans = [m.span() for m in TOKEN.finditer(src)]
    a, b = rng.choice(spans)
    kind = rng.randrange(6)
    if kind == 0:  # delete a token
        return src[:a] + src[b:]
    if kind == 1:  # duplicate a token
        return src[:a] + src[a:b] + src[a:]
    if kind == 2:  # replace a number by another
        m = re.search(r"\b\d+\b", src[a:])
        if m:
            i = a + m.start()
            return src[:i] + rng.choice(["0", "-1", "100", "2147483648", "99999999999"]) + src[a + m.end():]
        return src
    if kind == 3:  # replace an operator
        ops = ["+", "-", "*", "/", "%", "==", "<", "&&", "??", "!!"]
        return src[:a] + rng.choice(ops) + src[b:]
    if kind == 4:  # index a string or an array out of range
        return src[:b] + "[" + rng.choice(["0", "-1", "1000"]) + "]" + src[b:]
    c, d = rng.choice(spans)  # move a token
    if b <= c:
        return src[:a] + src[c:d] + src[b:c] + src[a:b] + src[d:]
    return src


def soup(rng: random.Random) -> str:
    words = ["func", "main", "(", ")", ":", "int", "{", "}", "return", "let", "x", "=", "1",
             "+", "[", "]", "if", "then", "else", "'s'", "->", "<", ">", "??", "!!", ",", "\n"]
    body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 60)))
    return "func main(): int {\n" + body + "\n return 0 }\n"


def test_mutated_programs_run_without_crashing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    corpus = [p for p in sorted(CORPUS.glob("*.cml")) if not SKIP.search(p.read_text())]
    assert len(corpus) >= 40
    for sub in ("geo", "pkg"):  # modules some programs import
        (tmp_path / sub).symlink_to(CORPUS / sub)
    timeouts, ran, runtime_errors = [], 0, 0
    for i in range(RUNS):
        text = soup(rng) if i % 8 == 7 else mutate(rng.choice(corpus).read_text(), rng)
        src = tmp_path / f"m{i:04d}.cml"
        src.write_text(text)
        try:
            proc = subprocess.run(
                [CAMEL, "run", "--error-format=json", "--scheduler=seq", src.name],
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=RUN_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            timeouts.append(src.name)
            continue
        ran += 1
        where = f"{src.name}:\n{text[:3000]}\n--- stderr ---\n{proc.stderr[:2000]!r}"
        assert 0 <= proc.returncode <= 255, where
        for d in diagnostics(proc.stderr):
            if d["severity"] != "error" or d["code"] == "E3000":
                continue
            assert re.fullmatch(r"E[0-3]\d{3}", d["code"]), where
            assert located(d), where
            runtime_errors += d["code"].startswith(("E0", "E3"))
        src.unlink()
    assert len(timeouts) <= RUNS // 20, timeouts
    assert runtime_errors > 0  # the mutations do reach the runtime
