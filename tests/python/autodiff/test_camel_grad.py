"""Camel's built-in `grad` (Note [Camel grad]) against torch.autograd: each case
is a Camel function over floats and the same computation in PyTorch (float64).
A generated program calls grad<f>(...) on random inputs -- expanded at compile
time for a named function, and at run time through a function parameter -- and
prints every component with 17 significant digits; the values and gradients
must match torch.autograd.grad (allclose)."""

from __future__ import annotations

import math
import random
import subprocess

import pytest

from buildtree import camel_binary
import torch





CAMEL = camel_binary()
pytestmark = pytest.mark.skipif(CAMEL is None, reason="camel binary not built")

# name -> (Camel parameter list, Camel body expression, torch function, input sampler)
POS = lambda r: r.uniform(0.2, 3.0)  # noqa: E731
ANY = lambda r: r.uniform(-3.0, 3.0)  # noqa: E731
CASES = {
    "product": ("x: float, y: float", "x * x * y + y", lambda x, y: x * x * y + y, [ANY, ANY]),
    "quotient": ("x: float, y: float", "(x - y) / (x * x + 1.0)", lambda x, y: (x - y) / (x * x + 1.0), [ANY, ANY]),
    "polynomial": ("x: float", "3.0 * x * x * x - 2.0 * x * x + x / 4.0 - 7.0",
                   lambda x: 3.0 * x ** 3 - 2.0 * x ** 2 + x / 4.0 - 7.0, [ANY]),
    "sqrt_exp": ("x: float, y: float", "math::sqrt(x * y + 1.0) * math::exp(-x / 3.0)",
                 lambda x, y: torch.sqrt(x * y + 1.0) * torch.exp(-x / 3.0), [POS, POS]),
    "abs_neg": ("x: float, y: float", "math::abs(x - y) * -y + math::abs(x)",
                lambda x, y: (x - y).abs() * -y + x.abs(), [ANY, ANY]),
    "branch": ("x: float, y: float", "if x > y then x * y * 2.0 else y / (x * x + 1.0)",
               lambda x, y: torch.where(x > y, x * y * 2.0, y / (x * x + 1.0)), [ANY, ANY]),
    "nested_branch": ("x: float", "if x > 0.0 then (if x > 1.0 then x * x else 2.0 * x) else -x * x * x",
                      lambda x: torch.where(x > 0, torch.where(x > 1, x * x, 2.0 * x), -x ** 3), [ANY]),
    "with_int": ("x: float, n: int", "x * float(n) * x - float(n) / x",
                 lambda x, n: x * n * x - n / x, [POS, lambda r: r.randint(1, 5)]),
    "three_args": ("a: float, b: float, c: float", "(a * b + b * c + c * a) / (a * a + b * b + c * c + 1.0)",
                   lambda a, b, c: (a * b + b * c + c * a) / (a * a + b * b + c * c + 1.0), [ANY, ANY, ANY]),
    "logistic_loss": ("w: float, b: float, x: float, t: float",
                      "math::sqrt(1.0 + (w * x + b - t) * (w * x + b - t)) - 1.0",
                      lambda w, b, x, t: torch.sqrt(1.0 + (w * x + b - t) ** 2) - 1.0, [ANY, ANY, ANY, ANY]),
    "helper_calls": ("x: float, y: float", "sq(x) * y + sq(sq(y) - x)",
                     lambda x, y: x * x * y + (y * y - x) ** 2, [ANY, ANY]),
    "exp_decay": ("x: float, k: float", "x * math::exp(-k * x) + k", lambda x, k: x * torch.exp(-k * x) + k, [POS, POS]),
}


def _literal(v) -> str:
    if isinstance(v, int):
        return str(v)
    s = repr(float(v))
    return s if ("." in s or "e" in s) else s + ".0"


def _program(name: str, params: str, body: str, inputs: list) -> str:
    ptypes = [p.split(":")[1].strip() for p in params.split(",")]
    nf = sum(t == "float" for t in ptypes)
    args = ", ".join(_literal(v) for v in inputs)
    comps = 1 + nf
    fmt = " ".join(["{:.17g}"] * comps)
    # The run-time path: a function parameter, differentiated when it runs.
    hparams = ", ".join(p.split(":")[0].strip() + ": " + t for p, t in zip(params.split(","), ptypes))
    ftype = "(" + hparams + ") => float"
    tuple_ty = "(" + ", ".join(["float"] * comps) + ")"
    parts = ", ".join(f"g.{i}" for i in range(comps))
    rparts = ", ".join(f"r.{i}" for i in range(comps))
    return f"""module gradcase
import math

func sq(x: float): float {{
    return x * x
}}

func {name}({params}): float {{
    return {body}
}}

func later(h: {ftype}, {params}): {tuple_ty} {{
    return grad<h>({", ".join(p.split(":")[0].strip() for p in params.split(","))})
}}

func main(): int sync {{
    let g = grad<{name}>({args})
    let r = later({name}, {args})
    println('{fmt}'->format<{parts}>)
    println('{fmt}'->format<{rparts}>)
    return 0
}}
"""


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_camel_grad_matches_torch_autograd(name, seed, tmp_path):
    params, body, fn, samplers = CASES[name]
    rnd = random.Random(f"{name}-{seed}")
    inputs = [s(rnd) for s in samplers]
    src = tmp_path / "gradcase.cml"
    src.write_text(_program(name, params, body, inputs))
    proc = subprocess.run([CAMEL, "run", src.name], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2, proc.stdout
    compile_time = [float(v) for v in lines[0].split()]
    run_time = [float(v) for v in lines[1].split()]
    assert compile_time == run_time  # same results whether expanded or not

    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) if isinstance(v, float) else v for v in inputs]
    out = fn(*leaves)
    wrt = [t for t in leaves if isinstance(t, torch.Tensor)]
    grads = torch.autograd.grad(out, wrt)
    expected = [out.item()] + [g.item() for g in grads]
    assert len(compile_time) == len(expected)
    for got, want in zip(compile_time, expected):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (compile_time, expected)


def test_grad_of_unsupported_op_is_a_located_compile_error(tmp_path):
    src = tmp_path / "bad.cml"
    src.write_text("module bad\n\nfunc f(x: float): float {\n    let r = x % 2.0\n    return r * x\n}\n\n"
                   "func main(): int sync {\n    println(grad<f>(3.0))\n    return 0\n}\n")
    proc = subprocess.run([CAMEL, "run", src.name], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "bad.cml:4:13: error[E0303]: cannot differentiate 'arith.rem': no derivative rule" in proc.stderr
    assert proc.stdout == ""


def test_grad_needs_a_float_function(tmp_path):
    src = tmp_path / "bad2.cml"
    src.write_text("module bad2\n\nfunc f(n: int): int {\n    return n * n\n}\n\n"
                   "func main(): int sync {\n    println(grad<f>(3))\n    return 0\n}\n")
    proc = subprocess.run([CAMEL, "check", src.name], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "bad2.cml:8:13: error[E2201]" in proc.stderr
    assert "grad's function must return a float or a floating-point tensor, got int" in proc.stderr


# ---- Tensors (module `tensor`: tensor code lowers to aten.* nodes) ----------------------

TENSOR_CASES = {
    # name -> (Camel params, Camel body, torch function, input shapes)
    "least_squares": ("w: Tensor, x: Tensor, t: Tensor", "sum((x @ w - t) * (x @ w - t)) / 2.0",
                      lambda w, x, t: ((x @ w - t) ** 2).sum() / 2.0, [(3, 2), (4, 3), (4, 2)]),
    "exp_log": ("x: Tensor", "sum(exp(x) * x - log(x * x + 1.0))",
                lambda x: (torch.exp(x) * x - torch.log(x * x + 1.0)).sum(), [(2, 3)]),
    "broadcast_pow": ("a: Tensor, b: Tensor", "sum((a + b) ^ 2) + sum(a / (b * b + 1.0))",
                      lambda a, b: ((a + b) ** 2).sum() + (a / (b * b + 1.0)).sum(), [(2, 3), (3,)]),
    "mlp_layer": ("x: Tensor, w1: Tensor, w2: Tensor", "sum(exp(-((x @ w1) ^ 2)) @ w2)",
                  lambda x, w1, w2: (torch.exp(-((x @ w1) ** 2)) @ w2).sum(), [(4, 3), (3, 5), (5, 2)]),
    "transpose_reduce": ("x: Tensor, y: Tensor", "sum(sum(transpose(x) * y, 1) * 3.0)",
                         lambda x, y: ((x.t() * y).sum(1) * 3.0).sum(), [(3, 2), (2, 3)]),
}


def _tensor_literal(t: torch.Tensor) -> str:
    flat = ", ".join(repr(float(v)) for v in t.reshape(-1).tolist())
    return f"reshape([{flat}], [{', '.join(str(d) for d in t.shape)}])"


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(TENSOR_CASES))
def test_camel_tensor_grad_matches_torch_autograd(name, seed, tmp_path):
    import ast

    params, body, fn, shapes = TENSOR_CASES[name]
    g = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*s, generator=g, dtype=torch.float64).round(decimals=3) for s in shapes]
    names = [p.split(":")[0].strip() for p in params.split(",")]
    lets = "\n".join(f"    let {n}0 = {_tensor_literal(t)}" for n, t in zip(names, inputs))
    src = tmp_path / "tgrad.cml"
    src.write_text(f"""module tgrad
import {{ Tensor, reshape, sum, exp, log, transpose }} from tensor

func {name}({params}): float {{
    return {body}
}}

func main(): int sync {{
{lets}
    println(grad<{name}>({", ".join(n + "0" for n in names)}))
    return 0
}}
""")
    proc = subprocess.run([CAMEL, "run", src.name], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = ast.literal_eval(proc.stdout.strip())
    leaves = [t.clone().requires_grad_() for t in inputs]
    out = fn(*leaves)
    grads = torch.autograd.grad(out, leaves)
    assert len(got) == 1 + len(inputs)
    # Camel prints floats with 6 significant digits (spec 7.3).
    assert math.isclose(got[0], out.item(), rel_tol=1e-5, abs_tol=1e-5)
    for i, (gv, ev) in enumerate(zip(got[1:], grads)):
        torch.testing.assert_close(torch.tensor(gv, dtype=torch.float64), ev, rtol=1e-5, atol=1e-5,
                                   msg=lambda m: f"gradient of {names[i]}: {m}")
