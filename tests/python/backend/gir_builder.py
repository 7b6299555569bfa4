"""A tiny builder of GIR graphs made of `aten.*` nodes, for the xpu numerics suite.

A `Program` is a list of parameters and aten nodes. It is both
  * printed as GIR text (result types come from running the nodes eagerly on
    sample inputs, exactly as eager PyTorch types them), and
  * replayed eagerly on any inputs (`Program.eager`) through `torch.ops.aten`,
    which is the reference the compiled kernels are compared with.

Node arguments follow GIR's convention: tensor operands positionally, every
other schema argument as a named attribute.

Many independent cases go into one Program (one graph, so one region and one
compiled kernel for all of them): the MLIR JIT costs 0.1-0.5 s per kernel, so
batching keeps the suite fast.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "bool",
          torch.int32: "i32", torch.float16: "f16"}


def ttype(t: torch.Tensor) -> str:
    return f"tensor<{DTYPES[t.dtype]}, [{', '.join(str(n) for n in t.shape)}], cpu>"


def attr_text(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, torch.dtype):
        return f'"{DTYPES[v]}"'
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if ("e" in r or "." in r) else r + ".0"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr_text(x) for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


@dataclass
class Ref:
    """A value of a Program: parameter `param` or result `index` of node `node`."""
    param: int = -1
    node: int = -1
    index: int = 0

    def result(self, i: int) -> "Ref":
        """Result `i` of a node with several results (native_batch_norm, ...)."""
        return Ref(node=self.node, index=i)


@dataclass
class Param:
    dtype: torch.dtype
    shape: tuple
    domain: str = "any"  # any | pos | unit | small | nonzero


@dataclass
class Node:
    op: str
    operands: list
    attrs: dict
    case: str


@dataclass
class Program:
    params: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    outputs: list = field(default_factory=list)       # Refs
    output_case: list = field(default_factory=list)   # case name per output
    case: str = ""

    def param(self, dtype, shape, domain="any") -> Ref:
        self.params.append(Param(dtype, tuple(shape), domain))
        return Ref(param=len(self.params) - 1)

    def op(self, name: str, /, *operands: Ref, **attrs) -> Ref:
        self.nodes.append(Node(name, list(operands), attrs, self.case))
        return Ref(node=len(self.nodes) - 1)

    def out(self, ref: Ref) -> None:
        self.outputs.append(ref)
        self.output_case.append(self.case)

    # -- inputs ---------------------------------------------------------------
    def inputs(self, seed: int, layout: str = "contiguous") -> list:
        """Random inputs; layout 'strided' gives transposed (rank >= 2) or
        step-2-sliced (rank 1) tensors with the same shapes."""
        g = torch.Generator().manual_seed(seed)
        out = []
        for p in self.params:
            shape = p.shape
            if layout == "strided" and len(shape) >= 2:
                t = make(p, tuple(reversed(shape)), g).permute(*reversed(range(len(shape))))
            elif layout == "strided" and len(shape) == 1:
                t = make(p, (shape[0] * 2,), g)[::2]
            else:
                t = make(p, shape, g)
            out.append(t)
        return out

    # -- eager reference -----------------------------------------------------
    def eager(self, inputs: list) -> list:
        vals = []

        def get(r: Ref):
            return inputs[r.param] if r.param >= 0 else pick(vals[r.node], r)

        for n in self.nodes:
            vals.append(call_aten(n.op, [get(r) for r in n.operands], n.attrs))
        return [get(r) for r in self.outputs]

    # -- GIR text ------------------------------------------------------------
    def gir(self, name: str = "batch") -> str:
        sample = self.eager(self.inputs(0))
        vals = []
        inputs = self.inputs(0)

        def get(r: Ref):
            return inputs[r.param] if r.param >= 0 else pick(vals[r.node], r)

        def name_of(r: Ref) -> str:
            if r.param >= 0:
                return f"%p{r.param}"
            return f"%n{r.node}" if r.index == 0 else f"%n{r.node}_{r.index}"

        params = ", ".join(f"%p{i}: {ttype(t)}" for i, t in enumerate(inputs))
        lines = []
        for i, n in enumerate(self.nodes):
            v = call_aten(n.op, [get(r) for r in n.operands], n.attrs)
            vals.append(v)
            ops = ", ".join(name_of(r) for r in n.operands)
            at = (" {" + ", ".join(f"{k} = {attr_text(a)}" for k, a in sorted(n.attrs.items())) + "}"
                  if n.attrs else "")
            if isinstance(v, (tuple, list)):
                lhs = ", ".join(name_of(Ref(node=i, index=k)) for k in range(len(v)))
                lines.append(f"  {lhs} = {n.op}({ops}){at} : ({', '.join(ttype(t) for t in v)})")
            else:
                lines.append(f"  %n{i} = {n.op}({ops}){at} : {ttype(v)}")
        rtypes = ", ".join(ttype(t) for t in sample)
        res = ", ".join(name_of(r) for r in self.outputs)
        return (f"graph @{name}({params}) -> ({rtypes}) {{\n" + "\n".join(lines) +
                f"\n  return {res}\n}}\n")

    def subset(self, cases) -> "Program":
        """The outputs of `cases` and only the nodes they need (same params)."""
        keep = [i for i, c in enumerate(self.output_case) if c in cases]
        need = set()
        stack = [self.outputs[i].node for i in keep if self.outputs[i].node >= 0]
        while stack:
            n = stack.pop()
            if n in need:
                continue
            need.add(n)
            stack += [r.node for r in self.nodes[n].operands if r.node >= 0]
        remap = {old: new for new, old in enumerate(sorted(need))}

        def fix(r: Ref) -> Ref:
            return r if r.param >= 0 else Ref(node=remap[r.node], index=r.index)

        q = Program(params=self.params)
        for old in sorted(need):
            n = self.nodes[old]
            q.nodes.append(Node(n.op, [fix(r) for r in n.operands], n.attrs, n.case))
        q.outputs = [fix(self.outputs[i]) for i in keep]
        q.output_case = [self.output_case[i] for i in keep]
        return q

    def ops(self) -> set:
        return {n.op for n in self.nodes}


def pick(v, r: Ref):
    """Result `r.index` of a node's eager value (a tuple for several results)."""
    return v[r.index] if isinstance(v, (tuple, list)) else v


def make(p: Param, shape, g) -> torch.Tensor:
    if p.dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not p.dtype.is_floating_point:
        lo, hi = (1, 6) if p.domain in ("pos", "nonzero") else (-6, 7)
        t = torch.randint(lo, hi, shape, generator=g, dtype=p.dtype)
        return t
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    if p.domain == "pos":
        t = t.abs() + 0.1
    elif p.domain == "unit":
        t = torch.tanh(t) * 0.95
    elif p.domain == "small":
        t = t * 0.5
    elif p.domain == "nonzero":
        t = torch.where(t.abs() < 0.1, t.sign() * 0.1 + (t == 0).double() * 0.1, t)
    elif p.domain == "wide":
        t = t * 8
    return t.to(p.dtype)


_SCHEMAS: dict = {}


def call_aten(op: str, operands: list, attrs: dict):
    """Calls aten overload `op` ("aten.add.Tensor") the way GIR binds it:
    named attributes by schema name, operands to the remaining tensor-typed
    schema arguments in order."""
    _, name, overload = op.split(".")
    fn = getattr(getattr(torch.ops.aten, name), overload)
    if op not in _SCHEMAS:
        _SCHEMAS[op] = [(a.name, str(a.type), a.kwarg_only) for a in fn._schema.arguments]
    kwargs = dict(attrs)
    it = iter(operands)
    args = []
    positional = True
    for aname, atype, kwarg_only in _SCHEMAS[op]:
        if aname in kwargs:
            positional = False
            continue
        if "Tensor" in atype:
            try:
                t = next(it)
            except StopIteration:
                break
            if positional and not kwarg_only:
                args.append(t)
            else:
                kwargs[aname] = t
        else:
            positional = False
    rest = list(it)
    assert not rest, f"{op}: {len(rest)} operands left over"
    return fn(*args, **kwargs)
