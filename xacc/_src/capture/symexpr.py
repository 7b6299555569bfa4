"""Exact expressions of symbolic sizes over the dynamic dims of a frame.

Note [Size expressions]
~~~~~~~~~~~~~~~~~~~~~~~
Under dynamic shapes (dynamic.py) every symbolic size has a value in the real
run and one in the shadow run. Two sizes with the same pair of values need not
be the same size: `b * b` and `12 * b - 32` are 16 and 64 at b = 4 (shadow 8)
and 25 and 28 at b = 5. So whatever the translator decides for every size (a
branch on `a == b` taken without a guard, an ATen int argument named by a graph
value) must rest on what the sizes *are*, not on two values: each size graph
value carries, when it is known, its `Expr`, a polynomial with integer
coefficients over the symbols of the dynamic input dims (`s0`, `s1`) and over
`e // k`, `e % k` of such polynomials. Two sizes with equal expressions are
equal at every size; a difference that is a constant decides `<`, `==`, ...
for every size. Expressions come from the dims of graph inputs (a symbol, or
the guarded constant size), constants, and `arith.*` nodes; the dims of a
recorded op's result from its size argument (`view`, `new_zeros`, ...), from
an exact rule (`cat`: the sum of the operands' dims; `unsqueeze`: a new 1;
`repeat`: the operand's dims times the repeats; `stack`: a new dim of n;
`topk`: k; the indices of `topk`/`sort`/`max.dim`/...: the values' dims;
`arange(a, b)`: b - a; a piece of a split of a constant dim: its size; a
reduction with `keepdim=True`: 1 in its reduced dims) or, for
an op whose result dims are copies of operand dims (most ops), from the
operand dim with the same pair of values, never for ops that compute a dim by
clamping (`slice`, `diagonal`: `x[:16]` has b rows for every b <= 16 only).
`stack`'s new dim is its operand count (fixed by the graph); where an exact
rule needs dims that operands must share, any operand's known one is taken.
`constant_pad_nd` (F.pad) widens a dim by its pads (negative pads crop).
A convolution, pooling or resampling op (WINDOWED) keeps its operand's leading
dim; its other dims are constants when everything they are computed from is
(the operand's other dims, the weight's, the int arguments).
A size with no known expression is only ever named by its own graph value.

An ATen int argument computed out of sight (in a torch function's own Python
or C++) is named by its pair of values: that is exact only for forms the pair
identifies, a symbol times a constant plus a constant (two points fix a line)
or a product of two symbols, and only when exactly one such expression has
the pair (`identifies`, State.resolve_size in host_state.py).
"""

from __future__ import annotations

from typing import Any, Callable

# Atoms: a symbol name, or ("//" | "%", Expr, k) for an expression divided by a constant k > 0.
Monomial = tuple


class Expr:
    """A polynomial with integer coefficients over atoms, in canonical form
    (equal polynomials compare and hash equal)."""

    __slots__ = ("terms", "_key")

    def __init__(self, terms: dict[Monomial, int]) -> None:
        self.terms = {m: c for m, c in terms.items() if c != 0}
        self._key = tuple(sorted(self.terms.items(), key=repr))

    @staticmethod
    def const(c: int) -> "Expr":
        return Expr({(): int(c)})

    @staticmethod
    def symbol(name: str) -> "Expr":
        return Expr({(name,): 1})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"{c}*{'*'.join(map(_atom_str, m))}" if m else str(c) for m, c in self._key)

    def constant(self) -> int | None:
        """The value when the expression has no atom, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    def __add__(self, o: "Expr") -> "Expr":
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, 0) + c
        return Expr(t)

    def __neg__(self) -> "Expr":
        return Expr({m: -c for m, c in self.terms.items()})

    def __sub__(self, o: "Expr") -> "Expr":
        return self + (-o)

    def __mul__(self, o: "Expr") -> "Expr":
        t: dict[Monomial, int] = {}
        for ma, ca in self.terms.items():
            for mb, cb in o.terms.items():
                m = tuple(sorted(ma + mb, key=repr))
                t[m] = t.get(m, 0) + ca * cb
        return Expr(t)

    def divmod_atom(self, kind: str, k: "Expr") -> "Expr | None":
        """`self // k` or `self % k` for a constant k > 0 (Python's floor
        semantics), folded when `self` is a constant; None otherwise."""
        kc = k.constant()
        if kc is None or kc <= 0:
            return None
        c = self.constant()
        if c is not None:
            return Expr.const(c // kc if kind == "//" else c % kc)
        if kc == 1:
            return self if kind == "//" else Expr.const(0)
        if all(c % kc == 0 for c in self.terms.values()):
            # k divides every coefficient: `self` is k times an integer polynomial.
            return Expr({m: c // kc for m, c in self.terms.items()}) if kind == "//" else Expr.const(0)
        return Expr({((kind, self, kc),): 1})

    def exact_div(self, d: "Expr") -> "Expr | None":
        """`self / d` when `d` is one term (`c * s0 * ...`) dividing every term
        of `self` exactly, else None."""
        if len(d.terms) != 1:
            return None
        (dm, dc), = d.terms.items()
        t: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            rest = list(m)
            for a in dm:
                if a not in rest:
                    return None
                rest.remove(a)
            if c % dc:
                return None
            t[tuple(rest)] = c // dc
        return Expr(t)

    def eval(self, env: dict[str, int]) -> int:
        total = 0
        for m, c in self.terms.items():
            v = c
            for a in m:
                v *= _atom_eval(a, env)
            total += v
        return total

    def compare_zero(self, op: str) -> bool | None:
        """`self op 0` when it is the same for every value >= 2 of its symbols
        (a dynamic dim, and a size argument, is guarded >= 2), else None. A
        polynomial over symbols whose non-constant terms have one sign is
        monotone in every symbol: its bound is its value with every symbol 2
        (`512 * s0 == 0` is False for every s0 >= 2). Atoms `e // k`, `e % k`: None."""
        terms = [(m, c) for m, c in self.terms.items() if m]
        if not terms or not all(type(a) is str for m, _ in terms for a in m):
            return None
        at2 = sum(c * 2 ** len(m) for m, c in self.terms.items())
        if all(c > 0 for _, c in terms):
            lo, hi = at2, None
        elif all(c < 0 for _, c in terms):
            lo, hi = None, at2
        else:
            return None
        if lo is not None and (lo > 0 or (lo == 0 and op in (">=", "<"))):
            return {">": lo > 0, ">=": True, "!=": True, "==": False, "<": False, "<=": False}[op]
        if hi is not None and (hi < 0 or (hi == 0 and op in ("<=", ">"))):
            return {"<": hi < 0, "<=": True, "!=": True, "==": False, ">": False, ">=": False}[op]
        return None

    def identifies(self) -> bool:
        """Whether its (real, shadow) pair of values identifies this expression
        among the forms a size computed out of sight is taken to have: `c*s + d`
        for one symbol s (two points fix a line), or `c*s*t` for two symbols."""
        atoms = [m for m in self.terms if m]
        if len(atoms) != 1 or not all(type(a) is str for a in atoms[0]):
            return False
        m = atoms[0]
        return len(m) == 1 or (len(m) == 2 and m[0] != m[1] and () not in self.terms)


def _atom_str(a: Any) -> str:
    return a if type(a) is str else f"({a[1]!r}){a[0]}{a[2]}"


def _atom_eval(a: Any, env: dict[str, int]) -> int:
    if type(a) is str:
        return env[a]
    v = a[1].eval(env)
    return v // a[2] if a[0] == "//" else v % a[2]


# arith op -> the expression of its result from its operands' (None: unknown).
ARITH: dict[str, Any] = {
    "arith.add": lambda a, b: a + b,
    "arith.sub": lambda a, b: a - b,
    "arith.mul": lambda a, b: a * b,
    "arith.neg": lambda a: -a,
    "arith.floordiv": lambda a, b: a.divmod_atom("//", b),
    "arith.mod": lambda a, b: a.divmod_atom("%", b),
}

# ATen ops whose result dims are computed from their operands' by clamping or
# mixing two dims (`slice`: min(end, n) - start; `diagonal`: min(n, m)), so a
# result dim with the pair of an operand dim need not be a copy of it.
NOT_COPIES = frozenset({"slice", "slice_scatter", "diagonal", "diag", "diag_embed", "as_strided",
                        "as_strided_scatter", "narrow", "unfold", "tril_indices", "triu_indices"})

_VIEWS = frozenset({"view", "_unsafe_view", "reshape"})

# ATen ops whose result shape is their int-list argument `size` (-1: the operand's
# dim for `expand`, inferred from the numel for a view: unknown).
SIZE_ARG = frozenset({"view", "_unsafe_view", "reshape", "expand", "new_empty", "new_zeros", "new_ones",
                      "new_full", "empty", "zeros", "ones", "full", "rand", "randn", "empty_strided",
                      "new_empty_strided"})

# ATen ops whose tensor results (values, indices) all have one shape, the first's.
SAME_SHAPE_RESULTS = frozenset({"topk", "sort", "kthvalue", "mode", "cummax", "cummin", "max", "min", "median",
                                "nanmedian"})

# ATen ops that slide a window over the trailing dims of their first operand
# (convolution, pooling, resampling): the result keeps the operand's leading dim
# (the batch; a convolution only when its input is batched: rank of the weight),
# and every other result dim is a function of the operand's other dims, the
# other tensor operands' dims and the op's constant arguments.
WINDOWED = frozenset({"convolution", "_convolution", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d",
                      "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
                      "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
                      "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool1d",
                      "adaptive_max_pool2d", "adaptive_max_pool3d", "upsample_nearest1d", "upsample_nearest2d",
                      "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
                      "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
                      "upsample_bicubic2d", "upsample_trilinear3d", "pixel_shuffle", "pixel_unshuffle"})
_CONVOLUTIONS = frozenset({"convolution", "_convolution"})

# ATen ops whose results are pieces of their operand along int argument `dim`.
SPLITS = frozenset({"split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "chunk",
                    "unsafe_chunk", "tensor_split"})

_END = 2 ** 62  # a slice end at least this is "to the end" (Python's `x[a:]` hands ATen INT64_MAX)


def _agreed(col: Any) -> "Expr | None":
    """The one known expression among `col` (dims that the op requires equal), else None."""
    known = {e for e in col if e is not None}
    return known.pop() if len(known) == 1 else None


def result_dims(name: str, attrs: dict, arg: Callable[[str], "Expr | None"], operands: list,
                real: list[int], shadow: list[int], pair_of: Callable[["Expr"], tuple]) -> list:
    """The expressions of the dims of the first tensor result of ATen op `name`
    (None where unknown), whose sizes are `real` here and `shadow` in the
    shadow run. `attrs`: its arguments as recorded before sizes became graph
    values; `arg(p)`: the expression of int argument `p` (a list: per element);
    `operands`: the dim expressions of its tensor operands (None: unknown)."""
    first = operands[0] if operands else None
    if name in SIZE_ARG and isinstance(attrs.get("size"), list) and len(attrs["size"]) == len(real):
        es = list(arg("size"))
        out = [None if a == -1 else e for a, e in zip(attrs["size"], es)]
        if name == "expand" and first is not None:  # -1 keeps the operand's dim (aligned right)
            off = len(real) - len(first)
            out = [first[i - off] if attrs["size"][i] == -1 and i >= off else e for i, e in enumerate(out)]
        if name in _VIEWS and attrs["size"].count(-1) == 1 and first is not None and \
                all(e is not None for e in first):
            # The -1 of a view: the operand's numel over the product of the other sizes.
            numel, rest = Expr.const(1), Expr.const(1)
            for e in first:
                numel = numel * e
            known = [e for a, e in zip(attrs["size"], out) if a != -1]
            if all(e is not None for e in known):
                for e in known:
                    rest = rest * e
                out[attrs["size"].index(-1)] = numel.exact_div(rest)
    elif name == "slice" and first is not None and len(first) == len(real):
        out = list(first)
        d = attrs.get("dim", 0) % len(real)
        end = attrs.get("end")
        whole = attrs.get("start") in (None, 0) and attrs.get("step", 1) == 1 and (
            end is None or (type(end) is int and end >= _END and arg("end") == Expr.const(end))
            or (first[d] is not None and arg("end") == first[d]))
        n = first[d].constant() if first[d] is not None else None
        start, step = attrs.get("start"), attrs.get("step", 1)
        if whole:
            pass
        elif n is not None and all(type(v) is int or v is None for v in (start, end)) and type(step) is int \
                and step > 0 and arg("end") in (None, Expr.const(end) if type(end) is int else None) \
                and arg("start") in (None, Expr.const(start) if type(start) is int else None):
            # A constant dim sliced by constants: Python's slice arithmetic, exact.
            out[d] = Expr.const(len(range(*slice(start, end, step).indices(n))))
        else:
            out[d] = None  # min(end, n) - start: clamped, no copy of the dim
    elif name == "arange" and len(real) == 1:
        # arange(start, end, step) of ints: end - start elements for step 1 (an
        # end below the start raises in eager), the number it has when every
        # bound is a constant (a float bound rounds up: unknown).
        start, step, end = attrs.get("start", 0), attrs.get("step", 1), attrs.get("end")
        es = arg("start") if "start" in attrs else Expr.const(0)
        ee = arg("end")
        et = arg("step") if "step" in attrs else Expr.const(1)
        out = [None]
        if all(type(v) is int for v in (start, step, end)) and es is not None and ee is not None:
            if et == Expr.const(1):
                out = [ee - es]
            elif all(_is_const(e) for e in (es, ee, et)):
                out = [Expr.const(real[0])]
    elif name in SPLITS and len(operands) == 1 and first is not None and len(first) == len(real) \
            and type(attrs.get("dim", 0)) is int and _const_int_args(attrs, arg):
        # A piece of a split: the operand's dims, but along `dim` a part of it,
        # known when the operand's dim and the split's arguments are constants.
        d = attrs.get("dim", 0) % len(real)
        out = list(first)
        out[d] = Expr.const(real[d]) if _is_const(first[d]) else None
    elif name == "unsqueeze" and first is not None and len(first) == len(real) - 1 \
            and type(attrs.get("dim")) is int and -len(real) <= attrs["dim"] < len(real):
        # A new dim of 1 at `dim` (-1 counts from the end of the result).
        d = attrs["dim"] % len(real)
        out = list(first[:d]) + [Expr.const(1)] + list(first[d:])
    elif name == "stack" and operands and len(real) >= 1:
        # stack of the graph's n operands (equal shapes): a new dim of n at `dim`,
        # the others those of any operand. n is fixed by the graph itself.
        d = attrs.get("dim", 0)
        d = d % len(real) if type(d) is int else None
        same = [dims for dims in operands if dims is not None and len(dims) == len(real) - 1]
        rest = [_agreed(col) for col in zip(*same)] if same else [None] * (len(real) - 1)
        out = [None] * len(real) if d is None else rest[:d] + [Expr.const(len(operands))] + rest[d:]
    elif name == "cat" and operands and all(dims is not None and len(dims) == len(real) for dims in operands):
        # cat along `dim`: the sum of the operands' dims there (every operand
        # has the result's rank: no legacy 1-d empty operand), any operand's elsewhere.
        d = attrs.get("dim", 0)
        d = d % len(real) if type(d) is int else None
        out = [_agreed([dims[i] for dims in operands]) for i in range(len(real))]
        if d is not None:
            total: Expr | None = Expr.const(0)
            for dims in operands:
                total = total + dims[d] if total is not None and dims[d] is not None else None
            out[d] = total
        else:
            out = [None] * len(real)
    elif name == "repeat" and first is not None and isinstance(attrs.get("repeats"), list) \
            and len(attrs["repeats"]) == len(real) >= len(first):
        # The operand's dims (leading 1s added) times the repeats, per dim.
        reps, off = list(arg("repeats")), len(real) - len(first)
        out = [r if i < off else (None if r is None or first[i - off] is None else first[i - off] * r)
               for i, r in enumerate(reps)]
    elif name == "topk" and first is not None and len(first) == len(real) and type(attrs.get("dim", -1)) is int:
        # The operand's dims with k at `dim`.
        out = list(first)
        out[attrs.get("dim", -1) % len(real)] = arg("k")
    elif name == "constant_pad_nd" and first is not None and len(first) == len(real) \
            and isinstance(attrs.get("pad"), list) and len(attrs["pad"]) % 2 == 0 \
            and len(attrs["pad"]) // 2 <= len(real):
        # F.pad: pad[2i], pad[2i + 1] widen dim -1 - i (negative pads crop): dim + before + after.
        out, pads = list(first), list(arg("pad"))
        for i in range(len(pads) // 2):
            d = len(real) - 1 - i
            lo, hi = pads[2 * i], pads[2 * i + 1]
            out[d] = None if first[d] is None or lo is None or hi is None else first[d] + lo + hi
    elif name in WINDOWED and first is not None and len(first) == len(real) and _windowed_exact(
            name, attrs, arg, operands):
        # Every dim but the leading one is computed from constants only: the
        # size it has (the same in the shadow run, checked below).
        out = [first[0]] + [Expr.const(n) for n in real[1:]]
    elif attrs.get("keepdim") is True and "dim" in attrs and first is not None and len(first) == len(real) \
            and _const_int_args({"dim": attrs["dim"]}, arg):
        # A reduction keeping its reduced dims (`max(dim=-1, keepdim=True)`): 1
        # there (no dim, or an empty list: every dim), the operand's elsewhere.
        dims = attrs["dim"]
        dims = [dims] if type(dims) is int else list(range(len(real))) if not dims else dims
        red = {d % len(real) for d in dims if type(d) is int and -len(real) <= d < len(real)}
        out = [Expr.const(1) if i in red else e for i, e in enumerate(first)]
    elif name in NOT_COPIES:
        out = [None] * len(real)
    else:
        # Most ops' result dims are copies of operand dims: the one operand dim
        # with the same pair of values (several with different expressions: unknown).
        out = []
        for r, s in zip(real, shadow):
            cands = {e for dims in operands if dims is not None for e in dims
                     if e is not None and pair_of(e) == (r, s)}
            out.append(cands.pop() if len(cands) == 1 else None)
    return [e if e is not None and pair_of(e) == (r, s) else None for e, r, s in zip(out, real, shadow)]


def _windowed_exact(name: str, attrs: dict, arg: Callable[[str], Any], operands: list) -> bool:
    """Whether a WINDOWED op's result dims past the leading one are constants:
    its first operand's other dims, every other tensor operand's dims and its
    int arguments have constant expressions (a convolution: its input batched)."""
    first, rest = operands[0], operands[1:]
    if name in _CONVOLUTIONS and (not rest or rest[0] is None or len(rest[0]) != len(first)):
        return False  # an unbatched input: the leading result dim is the weight's
    if not all(constant_dims(dims) for dims in rest):
        return False
    if not all(_is_const(e) for e in first[1:]):
        return False
    return _const_int_args(attrs, arg)


def _const_int_args(attrs: dict, arg: Callable[[str], Any]) -> bool:
    """Whether every int and int-list argument has a constant expression."""
    for p, v in attrs.items():
        if type(v) is int or (isinstance(v, list) and v and all(type(e) is int for e in v)):
            a = arg(p)
            if not all(_is_const(e) for e in (a if isinstance(a, list) else [a])):
                return False
    return True


def _is_const(e: "Expr | None") -> bool:
    return e is not None and e.constant() is not None


def constant_dims(dims: "list | None") -> bool:
    """Whether every dim of a tensor is known and a constant expression."""
    return dims is not None and all(_is_const(e) for e in dims)
