"""Deterministic generator of malformed GIR inputs for the robustness tests.

`generate_corpus(count, seed)` returns `count` (name, bytes) pairs made from the .gir
files under tests/lit by token-level mutations (delete, duplicate, swap, replace),
byte-level damage (truncation, flipped bytes, NUL bytes, invalid UTF-8), random bytes
and tokens, and hostile shapes: nesting 10k deep (types, attribute arrays, regions,
parentheses), huge numbers, unterminated strings and very long names. The same seed
and the same .gir files give the same corpus. Used by test_gir_robustness.py and to
refresh the fixed subset in tests/lit/robustness/corpus/.
"""

from __future__ import annotations

import bisect
import pathlib
import random
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]

TOKEN_RE = re.compile(
    rb'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[%@^][A-Za-z0-9_.]+|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?'
    rb"|[A-Za-z_][A-Za-z0-9_.]*|->|\s+|.",
    re.S,
)

VOCAB = [
    b"graph", b"@main", b"@f", b"(", b")", b"{", b"}", b"[", b"]", b"<", b">", b",", b":", b"=",
    b"->", b"!", b"?", b"*", b"!token", b"return", b"loc", b"type", b"true", b"false", b"none",
    b"inf", b"nan", b"-inf", b"%x", b"%0", b"%t", b"^then", b"^else", b"i64", b"i32", b"f64",
    b"bool", b"str", b"any", b"null", b"pyobj", b"list", b"tuple", b"struct", b"func", b"tensor",
    b"f32", b"cpu", b"arith.add", b"arith.const", b"io.print", b"ctrl.if", b"ctrl.loop",
    b"func.call", b"list.pop", b"effect.join", b"aten.add.Tensor", b"0", b"-1", b"1.5", b"1e",
    b"9223372036854775808", b'"s"', b'"', b"\\", b"\n", b" ", b"//", b"{value = 1}", b"\x00",
    b"\xff", b"\xc3", b"-", b"%", b"@", b"^",
]

# Invalid or unusual UTF-8: lone continuation, truncated sequence, overlong NUL,
# surrogate, code point above U+10FFFF, a BOM, and raw control bytes.
BAD_BYTES = [b"\x80", b"\xc3", b"\xe2\x9c", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
             b"\xef\xbb\xbf", b"\x00", b"\x01", b"\x7f", b"\xff\xfe", b"\x1b[31m"]


def seed_files() -> list[pathlib.Path]:
    """Every .gir under tests/lit (the robustness corpus itself excluded)."""
    root = REPO / "tests" / "lit"
    return sorted(p for p in root.rglob("*.gir")
                  if "corpus" not in p.parts and "Output" not in p.parts)


def tokens(data: bytes) -> list[bytes]:
    return TOKEN_RE.findall(data)


def _nonspace(toks: list[bytes]) -> list[int]:
    return [i for i, t in enumerate(toks) if not t.isspace()]


def m_delete(rng: random.Random, data: bytes) -> bytes:
    toks = tokens(data)
    idx = _nonspace(toks)
    if idx:
        del toks[rng.choice(idx)]
    return b"".join(toks)


def m_duplicate(rng: random.Random, data: bytes) -> bytes:
    toks = tokens(data)
    idx = _nonspace(toks)
    if idx:
        i = rng.choice(idx)
        toks.insert(i, toks[i])
    return b"".join(toks)


def m_swap(rng: random.Random, data: bytes) -> bytes:
    toks = tokens(data)
    idx = _nonspace(toks)
    if len(idx) >= 2:
        i, j = rng.sample(idx, 2)
        toks[i], toks[j] = toks[j], toks[i]
    return b"".join(toks)


def m_replace(rng: random.Random, data: bytes) -> bytes:
    toks = tokens(data)
    idx = _nonspace(toks)
    if idx:
        toks[rng.choice(idx)] = rng.choice(VOCAB + [toks[rng.choice(idx)]])
    return b"".join(toks)


def m_truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def m_flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def m_insert_bad(rng: random.Random, data: bytes) -> bytes:
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + rng.choice(BAD_BYTES) + data[pos:]


def m_lines(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    op = rng.randrange(3)
    if op == 0 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif op == 1:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    else:
        rng.shuffle(lines)
    return b"\n".join(lines)


def m_unterminated(rng: random.Random, data: bytes) -> bytes:
    pos = rng.randrange(len(data) + 1)
    tail = rng.choice([b'"', b'"abc', b'"\\', b'"\\u00', b'"\\u12zz', b'"a\\q', b'"line\nbreak"'])
    return data[:pos] + tail + (data[pos:] if rng.random() < 0.5 else b"")


def m_huge_number(rng: random.Random, data: bytes) -> bytes:
    toks = tokens(data)
    nums = [i for i, t in enumerate(toks) if re.fullmatch(rb"-?[0-9][0-9.eE+-]*", t)]
    big = rng.choice([
        b"9" * rng.randint(20, 5000),
        b"-" + b"9" * rng.randint(20, 5000),
        b"1e" + b"9" * rng.randint(3, 50),
        b"1e-" + b"9" * rng.randint(3, 50),
        b"0." + b"0" * 5000 + b"1",
        b"1" + b"0" * 400 + b".5",
        b"18446744073709551616",
        b"-9223372036854775809",
    ])
    if nums:
        toks[rng.choice(nums)] = big
        return b"".join(toks)
    return data + big


def m_long_name(rng: random.Random, data: bytes) -> bytes:
    sigil = rng.choice([b"%", b"@", b"^", b""])
    name = sigil + b"n" * rng.randint(1000, 200000)
    return data + b"\n" + name if rng.random() < 0.5 else name + b" " + data


MUTATORS = [m_delete, m_duplicate, m_swap, m_replace, m_truncate, m_flip, m_insert_bad, m_lines,
            m_unterminated, m_huge_number, m_long_name]
# Token edits dominate: they produce inputs that get deep into the parser.
WEIGHTS = [8, 5, 6, 8, 5, 5, 3, 3, 3, 2, 1]


def deep(kind: str, depth: int) -> bytes:
    """A well-formed prefix nested `depth` deep, closed or left open."""
    if kind == "list_type":
        t = b"list<" * depth + b"i64" + b">" * depth
        return b"graph @f(%a: " + t + b") -> () {\n}\n"
    if kind == "tuple_type":
        t = b"tuple<" * depth + b">" * depth
        return b"graph @f(%a: " + t + b") -> () {\n}\n"
    if kind == "func_type":
        t = b"func<(" * depth + b") -> ()>" * depth
        return b"graph @f(%a: " + t + b") -> () {\n}\n"
    if kind == "struct_type":
        t = b"struct<{a: " * depth + b"i64" + b"}>" * depth
        return b"graph @f(%a: " + t + b") -> () {\n}\n"
    if kind == "attr_array":
        a = b"[" * depth + b"]" * depth
        return b"graph @f(%t: !token) -> () {\n  %0 = io.print(%t) {v = " + a + b"} : !token\n}\n"
    if kind == "type_attr":
        a = b"type(" * depth + b"i64" + b")" * depth
        return b"graph @f(%t: !token) -> () {\n  %0 = io.print(%t) {v = " + a + b"} : !token\n}\n"
    if kind == "regions":
        open_ = b"ctrl.if(%c) : () {\n^then(%c: bool) -> () {\n"
        close = b"}\n^else(%c: bool) -> () {\n}\n}\n"
        return b"graph @f(%c: bool) -> () {\n" + open_ * depth + close * depth + b"}\n"
    if kind == "parens":
        operand = b"(" * depth + b"%a" + b")" * depth
        return b"graph @f(%a: i64) -> i64 {\n  %x = arith.neg" + operand + b" : i64\n}\n"
    if kind == "braces":
        return b"graph @f() -> () " + b"{" * depth + b"}" * depth + b"\n"
    if kind == "brackets_type":
        return b"graph @f(%a: tensor<f32, " + b"[" * depth + b"]" * depth + b", cpu>) -> () {\n}\n"
    raise ValueError(kind)


DEEP_KINDS = ["list_type", "tuple_type", "func_type", "struct_type", "attr_array", "type_attr",
              "regions", "parens", "braces", "brackets_type"]


def generate_corpus(count: int = 3000, seed: int = 0x5EED) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    seeds = [p.read_bytes() for p in seed_files()]
    if not seeds:
        raise RuntimeError("no seed .gir files under tests/lit")
    out: list[tuple[str, bytes]] = []
    # Hostile shapes first: every deep kind at 10k deep, closed and cut off midway.
    for kind in DEEP_KINDS:
        data = deep(kind, 10000)
        out.append((f"deep-{kind}", data))
        out.append((f"deep-{kind}-cut", data[: len(data) // 2]))
    for n in (0, 1, 7, 64, 300, 4096):
        out.append((f"random-bytes-{n}", bytes(rng.randrange(256) for _ in range(n))))
    while len(out) < count:
        i = len(out)
        r = rng.random()
        if r < 0.04:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))
            out.append((f"{i:04d}-random-bytes", data))
            continue
        if r < 0.08:
            data = b" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 60)))
            out.append((f"{i:04d}-random-tokens", data))
            continue
        data = rng.choice(seeds)
        names = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            m = rng.choices(MUTATORS, WEIGHTS)[0]
            data = m(rng, data)
            names.append(m.__name__[2:])
        out.append((f"{i:04d}-{'+'.join(names)}", data))
    return out[:count] if count >= len(DEEP_KINDS) * 2 + 6 else out


# Classifying xacc-opt's answers. One process per input is the plain way, but a
# build of xacc-opt that links libtorch spends ~0.3-1.5 s loading it per start, so
# inputs are sent in batches as the chunks of one --split-input-file run: each chunk
# is parsed and verified on its own, and diagnostics keep the chunk's line numbers,
# which attributes them. A `// -----` line inside an input is rewritten to
# `//------` first (alone it is a comment either way). A batch whose run crashes,
# hangs or reports an unattributable error is rerun one input at a time.
LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: error\[E\d{4}\]", re.M)
STDIN_ERROR = re.compile(r"^<stdin>:(\d+):\d+: error\[E\d{4}\]", re.M)
# Diagnostic headers start in column 0; quoted source lines are indented.
ANY_ERROR = re.compile(r"^\S[^\n]*?: error(\[E\d{4}\])?: ", re.M)
SEPARATOR = re.compile(rb"^// -----", re.M)


def classify_one(tool: str, path: pathlib.Path, *flags: str,
                 timeout: float = 10) -> tuple[str, str]:
    """One xacc-opt run: ('ok'|'rejected'|'crash'|'hang'|'bad-exit'|'unlocated', detail)."""
    try:
        r = subprocess.run([tool, str(path), *flags], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", f"no answer within {timeout:g}s"
    err = r.stderr.decode("utf-8", errors="replace")
    if r.returncode < 0:
        return "crash", f"signal {-r.returncode}: {err[-500:]}"
    if r.returncode == 0:
        return "ok", ""
    if r.returncode != 1:
        return "bad-exit", f"exit {r.returncode}: {err[-500:]}"
    if not LOCATED.search(err):
        return "unlocated", err[:500]
    return "rejected", ""


def classify_batch(tool: str, paths: list[pathlib.Path], *flags: str,
                   timeout_per_input: float = 10) -> list[tuple[str, str]]:
    """classify_one for each path, through one --split-input-file run when possible."""
    parts, starts, line = [], [], 1
    for p in paths:
        data = SEPARATOR.sub(b"//------", p.read_bytes())
        if not data.endswith(b"\n"):
            data += b"\n"
        starts.append(line)
        parts.append(data)
        line += data.count(b"\n") + 1
    try:
        r = subprocess.run([tool, "-", "--split-input-file", *flags],
                           input=b"// -----\n".join(parts), capture_output=True,
                           timeout=30 + timeout_per_input * len(paths) / 10)
        err = r.stderr.decode("utf-8", errors="replace")
        sections = re.split(rb"^// -----\n", r.stdout, flags=re.M)
        located = [int(m.group(1)) for m in STDIN_ERROR.finditer(err)]
        attributable = len(located) == len(ANY_ERROR.findall(err))
        if r.returncode in (0, 1) and len(sections) == len(paths) and attributable:
            rejected = {bisect.bisect_right(starts, ln) - 1 for ln in located}
            return [("rejected", "") if i in rejected else ("ok", "") for i in range(len(paths))]
    except subprocess.TimeoutExpired:
        pass
    return [classify_one(tool, p, *flags, timeout=timeout_per_input) for p in paths]


def write_lit_subset(directory: pathlib.Path, tool: str, size: int = 200,
                     max_bytes: int = 6 * 1024) -> int:
    """Writes `size` inputs that `tool` rejects (exit 1) to `directory`, spread over
    the mutation kinds and no larger than `max_bytes` each (nesting 1000 deep stands in
    for 10k), for the lit corpus test."""
    import subprocess

    chosen: list[tuple[str, bytes]] = []
    by_kind: dict[str, int] = {}
    small_deep = [(f"deep-{k}", deep(k, 1000)) for k in DEEP_KINDS]
    small_deep += [(f"deep-{k}-cut", deep(k, 1000)[: len(deep(k, 1000)) // 2]) for k in DEEP_KINDS]
    mutants = [(n, d) for n, d in generate_corpus(3000) if not n.startswith("deep-")]
    for name, data in small_deep + mutants:
        if len(data) > max_bytes and not name.startswith("deep-"):
            continue
        kind = name.split("-", 1)[-1] if not name.startswith("deep-") else name
        if by_kind.get(kind, 0) >= 12:
            continue
        r = subprocess.run([tool, "-"], input=data, capture_output=True, timeout=10)
        if r.returncode != 1:
            continue
        by_kind[kind] = by_kind.get(kind, 0) + 1
        chosen.append((name, data))
        if len(chosen) == size:
            break
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.gir"):
        old.unlink()
    for i, (name, data) in enumerate(chosen):
        kind = re.sub(r"[^A-Za-z0-9_-]", "_", name.split("-", 1)[-1])
        (directory / f"{i:03d}-{kind}.gir").write_bytes(data)
    return len(chosen)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--write-lit-subset", metavar="DIR", type=pathlib.Path,
                    help="write ~200 rejected inputs for tests/lit/robustness/corpus")
    ap.add_argument("--tool", default=str(REPO / "build" / "bin" / "xacc-opt"))
    args = ap.parse_args()
    if args.write_lit_subset:
        print(write_lit_subset(args.write_lit_subset, args.tool), "files written")
    else:
        corpus = generate_corpus(args.count)
        print(len(corpus), "inputs,", sum(len(d) for _, d in corpus), "bytes")
