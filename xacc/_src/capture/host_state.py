"""The state of one translation attempt of the C++ bytecode translator
(split from host.py, which re-exports `State`): what the compiled entry is
made of: the graph under construction (a C++ GraphBuilder), the guard tree,
graph inputs (a guard-tree node each, in parameter order), entry constants,
and the size expressions of dynamic shapes (Note [Size expressions]). `Host`
(host.py) is the object the translator calls back; it works on a State.
"""

from __future__ import annotations

from typing import Any

import torch

from xacc._C import capture as C
from xacc._src.capture.symexpr import ARITH as _ARITH_EXPR, Expr, constant_dims, result_dims
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import Recorder, tensor_type

# The arithmetic of `arith` ops on concrete (real, shadow) values.
_ARITH = {
    "arith.add": lambda a, b: a + b, "arith.sub": lambda a, b: a - b, "arith.mul": lambda a, b: a * b,
    "arith.div": lambda a, b: a / b, "arith.floordiv": lambda a, b: a // b, "arith.mod": lambda a, b: a % b,
    "arith.neg": lambda a: -a, "arith.cast": float,
}

# Values a torch call may return that Python code can read as constants.
CONST_TYPES = (bool, int, float, str, type(None), type(Ellipsis), torch.dtype, torch.device,
               torch.memory_format, torch.layout, complex, bytes)


def _argument_rooted(path: str) -> bool:
    """Whether a source path starts at an argument of the frame (`L['x'].w`,
    `dict.__getitem__(L['out'], 'logits')`, a ModelOutput's item)."""
    while path.startswith("dict.__getitem__("):
        path = path[len("dict.__getitem__("):]
    return path.startswith("L[")


class State:
    """One translation attempt of one frame."""

    def __init__(self, name: str, device: str, dynamic_opt: bool | None, plan: Any,
                 shadow_run: bool = False, shadow: Any = None) -> None:
        self.device = device
        # Dynamic shapes (dynamic.py): `plan` knows the dynamic dims; the shadow
        # run traces with them doubled; the real run compares with `shadow`.
        self.plan = plan
        self.shadow_run = shadow_run
        self.dyn_active = shadow_run or shadow is not None
        self.reads: list = []  # values Python read from tensor metadata
        self.builder = C.GraphBuilder(name)
        self.tree = C.GuardTree()
        # Grad mode is guarded at entry; `with torch.no_grad():` inside the frame
        # is a region of the same graph (see set_grad).
        self.entry_grad = torch.is_grad_enabled()
        self.tree.set_grad_mode(self.entry_grad)
        # Autocast is off (convert.callback runs frames under it in Python); an
        # entry is valid only while it stays off.
        self.tree.set_autocast(C.autocast_state())
        # Captured only under no mode but xjit's own (convert.callback); valid
        # only while the stacks stay so (Note [Mode stacks] in Guards.cpp).
        self.tree.set_modes(*C.mode_state())
        self.inference_used = False  # an inference_mode region was modelled (set_inference)
        # TorchFunctionModes the frame pushed (Note [Function modes in the frame]).
        self.function_modes = 0
        self.made_leaves: dict[int, torch.Tensor] = {}  # Note [Tensors made leaves]
        self.consts: list[Any] = []
        self.inputs: list[int] = []  # guard-tree node per graph input, in parameter order
        self.input_vids: set[int] = set()  # their value ids (kept across ctrl.if arms)
        self.rec = Recorder(self.builder, device, self.const_tensor, self.tree.leaf_equals)
        # Symbolic sizes (Note [Symbolic sizes] in translate/TranslateScalars.cpp):
        # graph values computed from dynamic dims, with their (real, shadow) values.
        self.shadow_reads: list | None = None
        self.symvals: dict[int, tuple] = {}
        self.constvals: dict[int, Any] = {}
        # Their exact expressions where known, and the dims of tensor values
        # (Note [Size expressions] in symexpr.py).
        self.exprs: dict[int, Expr] = {}
        self.dim_exprs: dict[int, list] = {}
        self.sym_dims: dict[str, tuple[int, int, int]] = {}  # symbol -> (input value id, dim, guard node)
        self._size_nodes: dict[tuple, int] = {}
        self._stride_nodes: dict[tuple, int] = {}
        self.size_relations: set[tuple] = set()  # guards from branches on sizes (Host.size_compare)
        if shadow is not None:
            self.rec.shadow = shadow.ops
            self.rec.pairs = plan.pairs()
            self.shadow_reads = shadow.reads
            self.rec.resolver = self.resolve_size
            self.rec.dims = self
            self.env = ({s: a for a, s in plan.symbols.items()},
                        {s: plan.perturb(a) for a, s in plan.symbols.items()})
            self.rec.known.shadow = shadow.known

    def const_index(self, obj: Any) -> int:
        for i, c in enumerate(self.consts):
            if c is obj:
                return i
        self.consts.append(obj)
        return len(self.consts) - 1

    def const_node(self, obj: Any) -> int:
        return self.tree.node(-1, "K", self.const_index(obj), None)

    def const_tensor(self, t: torch.Tensor) -> int:
        """A real tensor met while tracing (a literal, a closure's tensor): an
        entry constant read as a graph input, unguarded."""
        return self.add_tensor_input(t, self.const_node(t), guard=False)

    def add_tensor_input(self, t: torch.Tensor, node: int, guard: bool = True, dims: list[int] = ()) -> int:
        if guard:
            self.tree.leaf_tensor(node, t, list(dims))
        dyn = {d: self.plan.symbol(int(t.shape[d])) for d in dims}
        vid = self.builder.add_input(tensor_type(t, self.device, dyn), f"in{len(self.inputs)}")
        self.dim_exprs[vid] = [Expr.symbol(dyn[d]) if d in dyn else Expr.const(int(n)) for d, n in enumerate(t.shape)]
        self.inputs.append(node)
        self.input_vids.add(vid)
        for d, sym in dyn.items():
            first = self.sym_dims.setdefault(sym, (vid, d, node))
            if guard and first[0] != vid:
                # Symbolic sizes of one symbol are used interchangeably: guard them equal.
                self.tree.dims_equal(first[2], first[1], node, d, sym)
            elif guard and first[1] != d:
                self.tree.dims_equal(node, first[1], node, d, sym)
        return vid

    def add_size_input(self, node: int, value: int) -> int:
        """An int argument that is a size of its own (Note [Size arguments]):
        an `i64` graph input with a symbol like a dynamic dim's, guarded >= 2
        and equal to the dims and ints that share its symbol."""
        sym = self.plan.symbol(value)
        vid = self.builder.add_input("i64", f"in{len(self.inputs)}")
        self.inputs.append(node)
        self.symvals[vid] = (value, self.plan.perturb(value))
        self.exprs[vid] = Expr.symbol(sym)
        self.tree.dim_relation(node, -1, ">=", -1, 0, 2, f"{sym} >= 2")
        first = self.sym_dims.setdefault(sym, (vid, -1, node))
        if first[0] != vid:
            self.tree.dims_equal(first[2], first[1], node, -1, sym)
        return vid

    # -- symbolic sizes -------------------------------------------------------
    def size_node(self, vid: int, dim: int, real: int, shadow: int) -> int:
        """`aten.sym_size.int` of graph value `vid` (one node per tensor and
        dim); dim -1: `vid` is a size argument itself."""
        if dim < 0:
            return vid
        n = self._size_nodes.get((vid, dim))
        if n is None:
            (n,) = self.builder.add_op("aten.sym_size.int", [vid], {"dim": dim}, ["i64"])
            self._size_nodes[(vid, dim)] = n
            self.symvals[n] = (real, shadow)
            dims = self.dim_exprs.get(vid)
            if dims is not None and dims[dim] is not None:
                self.exprs[n] = dims[dim]
        return n

    def stride_node(self, vid: int, dim: int, real: int, shadow: int) -> int:
        """`aten.sym_stride.int` of graph value `vid` (one node per tensor and
        dim; Note [Symbolic strides] in Host._size_read). A stride is a product
        of sizes (a monomial c * s^a * t^b of the dynamic dims), and a monomial
        takes the pair of `c * s` or `c * s * t` only when it is that form: its
        expression is the one such form with its pair, else it has none (it is
        then named by its pair only where no form shares it: resolve_size)."""
        n = self._stride_nodes.get((vid, dim))
        if n is None:
            (n,) = self.builder.add_op("aten.sym_stride.int", [vid], {"dim": dim}, ["i64"])
            self._stride_nodes[(vid, dim)] = n
            self.symvals[n] = (real, shadow)
            forms = self._forms(real, shadow, False)
            if len(forms) == 1:
                self.exprs[n] = forms[0]
        return n

    def note_result(self, name: str, attrs: dict, resolved: dict, operands: list[int], vid: int,
                    real: list[int], shadow: list[int], same_args: bool = False) -> None:
        """Records the dim expressions of tensor value `vid`, the first result
        of ATen op `name` or an element of its list result
        (symexpr.result_dims; `resolved`: Recorder._resolve_sizes).
        `same_args`: every non-tensor argument was the same in the shadow run
        and none is a symbolic number (Note [Shapes of constant shapes])."""
        def arg(p: str) -> Any:
            r, v = resolved.get(p), attrs.get(p)
            if isinstance(r, list):
                return [Expr.const(e) if k == "c" else self.exprs.get(e) for k, e in r]
            if r is not None:
                return self.exprs.get(r)
            if isinstance(v, list):
                return [Expr.const(e) if type(e) is int else None for e in v]
            return Expr.const(v) if type(v) is int else None
        ops = [self.dim_exprs.get(o) for o in operands]
        dims = result_dims(name, attrs, arg, ops, real, shadow, self.pair_of)
        if same_args and all(constant_dims(d) for d in ops):
            # Note [Shapes of constant shapes]: the recorder computes every result
            # shape with the op's meta kernel, a function of its operands'
            # metadata and its other arguments alone (ops whose shape depends
            # on tensor data cannot run on meta tensors: GB005). With all of
            # those constant, every result dim is a constant (a conv's or a
            # pool's output length from a constant input length, windows of a
            # weight), whatever the dynamic sizes elsewhere in the frame.
            dims = [Expr.const(r) if e is None and r == s_ else e for e, r, s_ in zip(dims, real, shadow)]
        self.dim_exprs[vid] = dims

    def pair_of(self, e: Expr) -> tuple[int, int]:
        """The values of expression `e` in the real and the shadow run."""
        return e.eval(self.env[0]), e.eval(self.env[1])

    def resolve_size(self, real: int, shadow: int) -> int | None:
        """The graph value of an ATen int argument that is `real` here and
        `shadow` in the shadow run, when the pair names one size exactly (Note
        [Size expressions] in symexpr.py): the sizes the code computed with
        that pair all have one expression, which is a form the pair identifies
        (Expr.identifies) or one no such form shares the pair with (`b * b`
        has the pair of `12 * b - 32` at b = 4); when the code computed none,
        a dynamic dim times a constant or a product of two dims (no two of
        these share a pair: the primes differ). None otherwise (the frame
        compiles static)."""
        known: dict[Expr, int] = {}
        unknown = set()
        for vid, pair in self.symvals.items():
            if pair == (real, shadow):
                e = self.exprs.get(vid)
                if e is None:
                    unknown.add(vid)
                else:
                    known.setdefault(e, vid)
        if unknown:
            # Named by its own graph value only when nothing else has the pair.
            return unknown.pop() if len(unknown) == 1 and not known and not self._forms(real, shadow, True) \
                else None
        if len(known) == 1:
            (e, vid), = known.items()
            return vid if e.identifies() or all(f == e for f in self._forms(real, shadow, True)) else None
        forms = self._forms(real, shadow, False)
        if known or len(forms) != 1:
            return None
        return self._build(forms[0], real, shadow)

    def _forms(self, real: int, shadow: int, affine: bool) -> list[Expr]:
        """The forms over this frame's dynamic dims whose values are (real,
        shadow): `c*s + d` (`c*s` unless `affine`) and `c*s*t`, without repeats."""
        syms = [s for s in self.env[0] if s in self.sym_dims]
        out: list[Expr] = []
        for s in syms:
            n, m = self.env[0][s], self.env[1][s]
            c, r = divmod(shadow - real, m - n)  # c*s + d through both points
            if r == 0 and (affine or real == c * n):
                e = Expr.const(c) * Expr.symbol(s) + Expr.const(real - c * n)
                if e.terms and e not in out:
                    out.append(e)
        for i, a in enumerate(syms):
            for b in syms[i + 1:]:
                na, nb = self.env[0][a], self.env[0][b]
                ma, mb = self.env[1][a], self.env[1][b]
                if real % (na * nb) == 0 and shadow * (na * nb) == real * ma * mb:
                    e = Expr.const(real // (na * nb)) * Expr.symbol(a) * Expr.symbol(b)
                    if e not in out:
                        out.append(e)
        return out

    def _build(self, e: Expr, real: int, shadow: int) -> int | None:
        """Graph nodes computing identifiable form `e` from the input dims."""
        acc = None
        for m, c in sorted(e.terms.items(), key=repr):
            ids = [self.size_node(*self.sym_dims[s][:2], *self.pair_of(Expr.symbol(s))) for s in m]
            if c != 1 or not ids:
                ids.append(self.ctx_const(c))
            term = ids[0]
            for o in ids[1:]:
                term = self.arith("arith.mul", [term, o], "i64")
            acc = term if acc is None else self.arith("arith.add", [acc, term], "i64")
        if acc is not None and self.symvals.get(acc) == (real, shadow):
            self.exprs[acc] = e
            return acc
        return None

    def ctx_const(self, value: int) -> int:
        vid = self.builder.add_const(value, "i64")
        self.constvals[vid] = value
        self.exprs[vid] = Expr.const(value)
        return vid

    def arith(self, op: str, operands: list[int], rtype: str) -> int:
        """An `arith.*` node; on sizes, its values in both runs and its
        expression (see resolve_size)."""
        (vid,) = self.builder.add_op(op, operands, {}, [rtype])
        if self.symvals and any(o in self.symvals for o in operands):
            vals = [self.symvals.get(o) or ((self.constvals[o],) * 2 if o in self.constvals else None)
                    for o in operands]
            if all(v is not None for v in vals):
                try:
                    self.symvals[vid] = tuple(_ARITH[op](*(v[k] for v in vals)) for k in (0, 1))
                except (KeyError, ArithmeticError):
                    pass
            es = [self.exprs.get(o) for o in operands]
            if op in _ARITH_EXPR and all(e is not None for e in es):
                e = _ARITH_EXPR[op](*es)
                if e is not None:
                    self.exprs[vid] = e
        return vid

    def set_grad(self, enabled: bool) -> None:
        """Enters or leaves a grad-mode region. Inside a `no_grad` region of a
        frame entered with grad enabled, ops run on metas under no_grad and read
        tensors that require grad through `aten.detach` (recorder.py), so they
        record no autograd history, exactly like eager. Enabling grad inside a
        frame entered without it cannot be expressed that way: a break."""
        if enabled and not self.entry_grad:
            raise GraphBreak("GB023", "torch.enable_grad() in a frame running without grad")
        self.rec.set_no_grad(not enabled and self.entry_grad)

    def set_inference(self, enabled: bool) -> None:
        """Enters or leaves a torch.inference_mode region (Note [Entry-guarded
        modes] in TranslateContext.cpp): modelled from an entry outside
        inference mode only, which the entry then guards; inside, ops run on
        the metas under inference mode."""
        if torch.is_inference_mode_enabled():
            raise GraphBreak("GB023", "torch.inference_mode in a frame entered in inference mode")
        self.tree.set_inference_mode(False)
        self.inference_used = True
        self.rec.inference = enabled
