"""Camel source regenerated from a captured GIR graph.

A graph becomes a `.cml` module with one function (the graph: one `let` per node,
in node order, which is a topological order) and a `main` that calls it on the
inputs the graph saw and prints each result on its own line with `{}` (shortest
round-trip floats). `expected_output` formats Python values the same way, so
`camel run` on the module can be checked against the captured run.

Which GIR ops Camel can express (docs/export.md has the table):
  arith.const (i64, f64, bool, str), arith.cast between i64/f64/bool,
  arith.add/sub/mul/div, arith.rem (C %), arith.mod and arith.floordiv on i64
  (rewritten through C %), arith.pow (`^`), arith.neg, arith.abs, arith.min,
  arith.max, arith.bitnot, cmp.*, logic.*, ctrl.select, tuple.make/get,
  list.make/get/len.
Anything else - every aten.* tensor op, effects, regions, Python objects - is
"not expressible: <op>" and the graph gets no `.cml`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_HEADER = re.compile(r"^graph @(?P<name>[^\s(]+)\(")
_NODE = re.compile(r"^(?P<res>%[\w.]+(?:\s*,\s*%[\w.]+)*)\s*=\s*(?P<op>[\w.]+)\((?P<operands>[^)]*)\)"
                   r"\s*(?:\{(?P<attrs>.*)\})?\s*:\s*(?P<type>[^{}]+?)\s*(?:loc\(.*\))?$")
_RETURN = re.compile(r"^return\s*(?P<vals>.*?)\s*(?:loc\(.*\))?$")

_SCALAR = {"i64": "int", "f64": "float", "bool": "bool", "str": "string"}
_BIN = {"arith.add": "+", "arith.sub": "-", "arith.mul": "*", "arith.div": "/", "arith.rem": "%",
        "arith.pow": "^", "cmp.eq": "==", "cmp.ne": "!=", "cmp.lt": "<", "cmp.le": "<=", "cmp.gt": ">",
        "cmp.ge": ">=", "logic.and": "&&", "logic.or": "||"}
EXPRESSIBLE = sorted(set(_BIN) | {"arith.const", "arith.cast", "arith.neg", "arith.abs", "arith.min", "arith.max",
                                  "arith.bitnot", "arith.mod", "arith.floordiv", "logic.not", "ctrl.select",
                                  "tuple.make", "tuple.get", "list.make", "list.get", "list.len"})


class NotExpressible(Exception):
    """Raised with the first GIR op (or value) Camel cannot express."""


@dataclass
class CamelModule:
    source: str
    graph: str


def _split_top(s: str) -> list[str]:
    """Splits on commas outside <>, (), [] and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def split_header(line: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(name, [(param, type)]) of a `graph @name(%a: T, ...) -> ... {` line."""
    m = _HEADER.match(line)
    if not m:
        return None
    depth, i = 1, m.end()
    while i < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        i += 1
    params = []
    for p in _split_top(line[m.end():i - 1]):
        name, _, ty = p.partition(":")
        params.append((name.strip(), ty.strip()))
    return m.group("name"), params


def camel_type(t: str) -> str:
    t = t.strip()
    if t in _SCALAR:
        return _SCALAR[t]
    m = re.fullmatch(r"list<(.*)>", t)
    if m:
        return camel_type(m.group(1)) + "[]"
    m = re.fullmatch(r"tuple<(.*)>", t)
    if m:
        return "(" + ", ".join(camel_type(e) for e in _split_top(m.group(1))) + ")"
    raise NotExpressible(f"type {t}")


def literal(v: object) -> str:
    """A Camel literal for a Python scalar (or tuple/list of them)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not -(2 ** 63) <= v < 2 ** 63:
            raise NotExpressible("integer wider than 64 bits")
        return str(v) if v >= 0 else f"({v})"
    if isinstance(v, float):
        if not math.isfinite(v):
            raise NotExpressible(f"float {v!r}")
        r = repr(v)
        mant, _, exp = r.partition("e")
        if "." not in mant:
            mant += ".0"
        r = mant + ("e" + exp if exp else "")
        return r if v >= 0 else f"({r})"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"
    if isinstance(v, tuple):
        return "(" + ", ".join(literal(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(literal(e) for e in v) + "]"
    raise NotExpressible(f"a {type(v).__name__} value")


def render(v: object) -> str:
    """How `println('{}'->format<v>)` prints a Python scalar (spec 7.3)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e16:
            return str(int(v))
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, tuple):
        return "(" + ", ".join(render(e) for e in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(render(e) for e in v) + "]"
    raise NotExpressible(f"a {type(v).__name__} result")


def _attr(attrs: str, key: str) -> str | None:
    for part in _split_top(attrs or ""):
        k, _, v = part.partition("=")
        if k.strip() == key:
            return v.strip()
    return None


def _const_literal(value: str, ty: str) -> str:
    if ty == "bool":
        return "true" if value in ("true", "1") else "false"
    if ty == "i64":
        return str(int(value)) if int(value) >= 0 else f"({int(value)})"
    if ty == "f64":
        return literal(float(value))
    if ty == "str":
        return "'" + value.strip('"').replace("'", "\\'") + "'"
    raise NotExpressible(f"arith.const of type {ty}")


def _expr(op: str, a: list[str], tys: list[str], rty: str, attrs: str) -> str:
    if op in _BIN:
        x, y = a
        if op == "arith.pow" and rty == "i64":
            return f"int(float({x}) ^ float({y}))"
        return f"({x} {_BIN[op]} {y})"
    if op == "arith.const":
        v = _attr(attrs, "value")
        if v is None:
            raise NotExpressible("arith.const without value")
        return _const_literal(v, rty)
    if op == "arith.cast":
        src = tys[0]
        if src == rty:
            return a[0]
        if rty == "f64" and src == "i64":
            return f"float({a[0]})"
        if rty == "i64" and src == "f64":
            return f"int({a[0]})"
        if rty in ("i64", "f64") and src == "bool":
            return f"(if {a[0]} then {'1' if rty == 'i64' else '1.0'} else {'0' if rty == 'i64' else '0.0'})"
        if rty == "bool" and src in ("i64", "f64"):
            return f"({a[0]} != {'0' if src == 'i64' else '0.0'})"
        raise NotExpressible(f"arith.cast {src} -> {rty}")
    if op == "arith.neg":
        return f"(-{a[0]})"
    if op == "arith.abs":
        zero = "0" if rty == "i64" else "0.0"
        return f"(if {a[0]} < {zero} then -{a[0]} else {a[0]})"
    if op in ("arith.min", "arith.max"):
        cmp = "<" if op == "arith.min" else ">"
        return f"(if {a[0]} {cmp} {a[1]} then {a[0]} else {a[1]})"
    if op == "arith.bitnot":
        return f"(~{a[0]})"
    if op in ("arith.mod", "arith.floordiv"):
        if rty != "i64":
            raise NotExpressible(f"{op} on {rty}")
        mod = f"((({a[0]} % {a[1]}) + {a[1]}) % {a[1]})"  # Python % through C %
        return mod if op == "arith.mod" else f"(({a[0]} - {mod}) / {a[1]})"
    if op == "logic.not":
        return f"(!{a[0]})"
    if op == "ctrl.select":
        return f"(if {a[0]} then {a[1]} else {a[2]})"
    if op == "tuple.make":
        return "(" + ", ".join(a) + ("," if len(a) == 1 else "") + ")"
    if op == "tuple.get":
        return f"{a[0]}.{int(_attr(attrs, 'index') or 0)}"
    if op == "list.make":
        return "[" + ", ".join(a) + "]"
    if op == "list.get":
        return f"{a[0]}[{a[1]}]"
    if op == "list.len":
        return f"len({a[0]})"
    raise NotExpressible(op)


def _name(v: str) -> str:
    return "v_" + re.sub(r"\W", "_", v.lstrip("%"))


def from_gir(text: str, inputs: list, module: str = "regenerated") -> CamelModule:
    """The `.cml` module of the first graph in GIR `text`, called on `inputs`.
    Raises NotExpressible naming the first op or value Camel cannot express."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.strip().startswith("//")]
    if not lines:
        raise NotExpressible("empty graph")
    header = split_header(lines[0])
    if header is None:
        raise NotExpressible(f"graph header {lines[0][:60]!r}")
    gname = header[0]
    params = []
    types: dict[str, str] = {}
    for pname, pty in header[1]:
        if pty == "!token":
            raise NotExpressible("side effects (!token)")
        types[pname] = pty
        params.append((pname, pty))
    body = []
    results: list[str] = []
    for ln in lines[1:]:
        if ln == "}":
            break
        r = _RETURN.match(ln)
        if r:
            results = [v.strip() for v in _split_top(r.group("vals"))]
            continue
        n = _NODE.match(ln)
        if not n:
            if "{" in ln and "=" in ln:
                op = ln.split("=", 1)[1].strip().split("(", 1)[0]
                raise NotExpressible(op)
            raise NotExpressible(f"GIR line {ln[:60]!r}")
        op = n.group("op")
        res = [x.strip() for x in n.group("res").split(",")]
        if len(res) != 1:
            raise NotExpressible(op)
        if op not in EXPRESSIBLE:
            raise NotExpressible(op)
        rty = n.group("type").strip()
        camel_type(rty)
        operands = [o.strip() for o in _split_top(n.group("operands"))]
        for o in operands:
            if o not in types:
                raise NotExpressible(f"{op} operand {o}")
        expr = _expr(op, [_name(o) for o in operands], [types[o] for o in operands], rty, n.group("attrs") or "")
        types[res[0]] = rty
        body.append(f"    let {_name(res[0])} = {expr}")
    if not results:
        raise NotExpressible("graph without results")
    if len(inputs) != len(params):
        raise NotExpressible(f"{len(inputs)} recorded inputs for {len(params)} parameters")
    # A parameter nothing reads (a tensor the frame passed in but the graph does not
    # use) is left out of the Camel function: it cannot change any result.
    used = set(results) | {o for ln in lines[1:] for o in re.findall(r"%[\w.]+", ln.split("=", 1)[-1])}
    kept = [(i, p, t) for i, (p, t) in enumerate(params) if p in used or t in _SCALAR]
    for _, p, t in kept:
        camel_type(t)
    params = [(p, t) for _, p, t in kept]
    inputs = [inputs[i] for i, _, _ in kept]
    sig = ", ".join(f"{_name(p)}: {camel_type(t)}" for p, t in params)
    rtys = [camel_type(types[r]) for r in results]
    ret = _name(results[0]) if len(results) == 1 else "(" + ", ".join(_name(r) for r in results) + ")"
    rty = rtys[0] if len(rtys) == 1 else "(" + ", ".join(rtys) + ")"
    fname = "graph_" + re.sub(r"\W", "_", gname)
    src = [f"// Regenerated by xacc.export from GIR graph @{gname}: the graph as a Camel function,",
           "// and a main that calls it on the inputs the captured graph saw and prints each result.",
           f"module {module}", "",
           f"func {fname}({sig}): {rty} {{", *body, f"    return {ret}", "}", "",
           "func main(): int sync {",
           f"    let r = {fname}({', '.join(literal(v) for v in inputs)})"]
    if len(results) == 1:
        src.append("    println('{}'->format<r>)")
    else:
        for i in range(len(results)):
            src.append(f"    println('{{}}'->format<r.{i}>)")
    src += ["    return 0", "}", ""]
    return CamelModule("\n".join(src), gname)


def expected_output(outputs: list) -> str:
    """What the regenerated main prints for the graph's recorded outputs."""
    return "".join(render(v) + "\n" for v in outputs)
