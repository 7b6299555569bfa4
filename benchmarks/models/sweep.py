"""The model sweep of issue #18: every transformers architecture (discovered by
hf_archs.py, never hand-picked) under eager, torch.compile(backend="eager")
and xacc on cpu and xpu0, one CSV row per (architecture, mode).

    PYTHONPATH=. python benchmarks/models/sweep.py [--csv PATH] [--modes dynamo,xacc_cpu,xacc_xpu0]
        [--only llama,bert] [--limit N] [--jobs N] [--timeout S] [--perf N] [--train]
    PYTHONPATH=. python benchmarks/models/sweep.py --summary PATH     # counts of a (partial) run
    PYTHONPATH=. python benchmarks/models/sweep.py --diff OLD NEW     # per-model changes
    PYTHONPATH=. python benchmarks/models/sweep.py --modes xacc_xpu0,inductor --perf 5 --warm \
        --threads 1 --only ... --csv perf-t1.csv                      # issue 24's measurement
    PYTHONPATH=. python benchmarks/models/sweep.py --perf-report perf-t1.csv [perf-t2.csv]

Each architecture runs in its own child process (a crash or hang costs that
architecture only: --timeout per architecture). The child builds the model
(hf_archs.build: small config, random weights, offline; a row with status
"skip" and the reason when it cannot), computes the eager reference on batch
sizes 2, 3, 4 (seeded, torch.manual_seed(0) before every call), then per mode,
each from a clean cache (xacc.jit.reset / torch._dynamo.reset):

  graphs, breaks   of the first call (batch 2); xacc: its counters and the
                   stable break codes (GBnnn:count); dynamo: graphs handed to a
                   counting eager backend and every break Dynamo logs (its
                   graph-break types; Note [Counting Dynamo's breaks]);
  recompiles       over the batch-3 and batch-4 calls, counted like Dynamo's
                   graphs compiled again: xacc's `recompiles` (a frame whose
                   guards all failed) plus `dynamic_followups` (a resume
                   function or loop body compiled again for the size its frame
                   made dynamic; Note [Fragment groups]); dynamo: graphs
                   compiled again;
  eager_equal      every call's output has eager's structure (output classes,
                   keys, tuple lengths, tensor shapes and dtypes) and values
                   (allclose rtol 1e-3, atol 1e-4, NaN equal to NaN; integer
                   tensors equal); a float tensor outside that tolerance
                   still counts as equal when it is as close to the float64
                   result as eager's float32 output is: max |out - ref64| <=
                   2 * max |eager - ref64| + atol / 10, ref64 the model run
                   in float64 on the same inputs (as Dynamo's accuracy check,
                   `same(..., fp64_ref=...)`): an ill-conditioned model
                   (cpmant: init_std 1.0, attention logits in the hundreds)
                   amplifies eager's own float32 rounding past 1e-4, so no
                   implementation that does not repeat eager's summation order
                   bit for bit could pass the fixed tolerance;
  compile_s        first call minus one eager call (cold: empty disk caches);
  warm_s           with --warm: the same, in a second child process that
                   finds the first one's disk caches (xacc's kernel cache,
                   Inductor's FX graph and code caches), the "warm start";
  ms, eager_ms     median of --perf warm calls at batch 2, interleaved with eager.

Modes: xacc_cpu and xacc_xpu0 (xacc.jit on the ATen executor and on the MLIR
backend), dynamo (torch.compile with a counting backend that runs Dynamo's FX
graph as is: backend="eager"), inductor (torch.compile's default backend,
Inductor, behind the same counting: the code Inductor generates is what runs).
By default the three capture modes run; inductor, which compiles C++ for every
graph, is for the latency runs of issue 24 (--perf-report).

xacc modes run before dynamo in the child. --train adds one training step per
compiled mode (forward, mean of squares of the float outputs, backward, SGD
step, in eval mode so dropout is off): train_ok when every parameter is then
allclose to one eager step. The CSV is appended row by row; a rerun with the
same --csv skips the architectures already recorded (resumable). `#` lines at
its top record the versions and the discovered count.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

MODES = ("eager", "xacc_cpu", "xacc_xpu0", "dynamo", "inductor")
COMPILED = MODES[1:]
DEFAULT_MODES = "xacc_cpu,xacc_xpu0,dynamo"
BATCHES = (2, 3, 4)
RTOL, ATOL = 1e-3, 1e-4
FIELDS = ["model", "task", "class", "level", "params", "mode", "status", "eager_equal", "max_diff", "graphs",
          "breaks", "break_codes", "recompiles", "compile_s", "warm_s", "ms", "eager_ms", "internal_errors", "train_ok",
          "reason"]


# -- child side ---------------------------------------------------------------------------------

def structure(o):
    """The shape of an output: container types, keys, lengths, tensor shapes and dtypes."""
    import torch
    if isinstance(o, torch.Tensor):
        return ("Tensor", tuple(o.shape), str(o.dtype))
    if isinstance(o, dict):  # ModelOutput is an OrderedDict subclass
        return (type(o).__name__, tuple((k, structure(v)) for k, v in o.items()))
    if isinstance(o, (list, tuple)):
        return (type(o).__name__, tuple(structure(v) for v in o))
    if o is None or isinstance(o, (bool, int, float, str)):
        return o
    return type(o).__name__


def tensors(o, detach: bool = True) -> list:
    import torch
    if isinstance(o, torch.Tensor):
        return [o.detach() if detach else o]
    if isinstance(o, dict):
        return [t for v in o.values() for t in tensors(v, detach)]
    if isinstance(o, (list, tuple)):
        return [t for v in o for t in tensors(v, detach)]
    return []


def _max_err(a, b) -> float:
    """max |a - b| over the elements finite in both (in float64)."""
    import torch
    wide = torch.complex128 if a.is_complex() or b.is_complex() else torch.float64
    a, b = a.to(wide), b.to(wide)
    fin = torch.isfinite(a) & torch.isfinite(b)
    return float((a[fin] - b[fin]).abs().max()) if fin.any() else 0.0


def compare(ref, got, ref64=None) -> tuple[bool, float, str]:
    """(eager-equal, max |diff| of float tensors, why not). `ref64`: None, or
    a function returning the float64 run's output (called at most once, when a
    float tensor is outside the tolerance; see the module docstring)."""
    import torch
    if structure(ref) != structure(got):
        return False, float("nan"), f"structure differs: {str(structure(got))[:160]}"
    worst, r64s, note = 0.0, None, ""
    for i, (r, g) in enumerate(zip(tensors(ref), tensors(got))):
        if r.is_floating_point() or r.is_complex():
            if r.numel():
                worst = max(worst, _max_err(r, g))
            if torch.allclose(g, r, rtol=RTOL, atol=ATOL, equal_nan=True):
                continue
            why = f"values differ (max |diff| {worst:.3g})"
            if ref64 is None:
                return False, worst, why
            if r64s is None:
                try:
                    r64s = tensors(ref64())
                except Exception as e:  # noqa: BLE001 - the model does not run in float64
                    return False, worst, f"{why}; no float64 reference: {type(e).__name__}: {e}"[:300]
            r64 = r64s[i] if i < len(r64s) else None
            if r64 is None or tuple(r64.shape) != tuple(r.shape):
                return False, worst, f"{why}; the float64 run's output has another structure"
            e_eager, e_got = _max_err(r, r64), _max_err(g, r64)
            if not torch.equal(torch.isnan(g), torch.isnan(r)) or e_got > 2 * e_eager + ATOL / 10:
                return False, worst, f"{why}; vs float64: {e_got:.3g}, eager's {e_eager:.3g}"
            note = f"within eager's float32 error: vs float64 {e_got:.3g}, eager's {e_eager:.3g}"
        elif not torch.equal(r, g):
            return False, worst, "integer values differ"
    return True, worst, note


def _call(fn, inp):
    import torch
    args, kwargs = inp
    torch.manual_seed(0)
    return fn(*args, **kwargs)


_MODEL64: dict = {}


def _ref64(built, inp):
    """The output of a float64 copy of the model on `inp` (float inputs made
    float64), seeded as every call; the copy is made once per child."""
    import copy

    import torch
    if "m" not in _MODEL64:
        _MODEL64["m"] = copy.deepcopy(built.model).double()
    wide = lambda v: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v  # noqa: E731
    args, kwargs = inp
    with torch.no_grad():
        return _call(_MODEL64["m"], (tuple(wide(v) for v in args), {k: wide(v) for k, v in kwargs.items()}))


def _timed(fn, inp):
    t0 = time.perf_counter()
    out = _call(fn, inp)
    return out, time.perf_counter() - t0


class _Xacc:
    """xacc.jit on one device, with its counters and break codes."""

    def __init__(self, device: str) -> None:
        import importlib

        from xacc._src.capture import convert
        xj = importlib.import_module("xacc.jit")  # the module (xacc.jit the attribute is the function)
        self.xj, self.convert, self.device = xj, convert, device
        xj.reset()

    def compile(self, fn):
        return self.xj.jit(fn, device=self.device)

    def stats(self) -> dict:
        c = self.xj.counters()
        codes: dict[str, int] = {}
        for ev in self.convert.EVENTS:
            for b in ev.breaks:
                codes[b.code] = codes.get(b.code, 0) + 1
        return {"graphs": c["graphs"], "breaks": c["breaks"],
                "recompiles": c["recompiles"] + c.get("dynamic_followups", 0),
                "internal_errors": c["internal_errors"], "codes": codes}


class _Dynamo:
    """torch.compile as a counting backend, with Dynamo's counters: each FX
    graph runs as is (backend="eager") or as Inductor compiles it."""

    def __init__(self, inductor: bool = False) -> None:
        import torch._dynamo
        from torch._dynamo.utils import counters
        if inductor:  # imported here, not in the first call's compile time (xacc is imported before too)
            from torch._inductor.compile_fx import compile_fx
            self.inner = compile_fx
        else:
            self.inner = lambda gm, example_inputs: gm.forward  # what backend="eager" runs
        torch._dynamo.reset()
        counters.clear()
        self.counters, self.compiles = counters, 0
        self.breaks = _dynamo_break_log()
        self.breaks.clear()

    def compile(self, fn):
        import torch

        def backend(gm, example_inputs):
            self.compiles += 1
            return self.inner(gm, example_inputs)
        return torch.compile(fn, backend=backend)

    def stats(self) -> dict:
        reasons: dict[str, int] = {}
        for r in self.breaks:
            reasons[r] = reasons.get(r, 0) + 1
        return {"graphs": self.compiles, "breaks": len(self.breaks), "recompiles": self.compiles,
                "internal_errors": "", "codes": reasons}


_DYNAMO_BREAKS: list[str] = []


def _dynamo_break_log() -> list[str]:
    """The graph breaks Dynamo logs (TORCH_LOGS=graph_breaks), one entry each.

    # Note [Counting Dynamo's breaks]: a break is one place where a frame
    # stops being captured, as xacc's `breaks` counter counts them (a caller
    # broken at a call and the callee then broken inside count one each, on
    # both sides). Dynamo's counters["graph_break"] holds only the breaks at a
    # call (break_graph_if_unsupported); a data-dependent branch (`if t.sum():`,
    # jump_graph_break), a break it cannot resume from, and a frame it gives up
    # on and runs in eager (a break inside a loop) stay in "unimplemented",
    # mixed with failures that were not breaks. Every one of them passes
    # through InstructionTranslatorBase.log_graph_break once (it marks the
    # exception `logged`), so the sweep counts the calls that log.
    """
    from torch._dynamo import symbolic_convert as sc
    cls = sc.InstructionTranslatorBase
    if not getattr(cls.log_graph_break, "_sweep_counts", False):
        orig = cls.log_graph_break

        def log_graph_break(self, code_options, reason, exc):
            if not getattr(exc, "logged", False):
                first = (getattr(exc, "gb_type", None) or getattr(exc, "msg", None) or reason or "?").splitlines()
                _DYNAMO_BREAKS.append(first[0][:120] if first else "?")
            return orig(self, code_options, reason=reason, exc=exc)
        log_graph_break._sweep_counts = True
        cls.log_graph_break = log_graph_break
    return _DYNAMO_BREAKS


def _codes_text(codes: dict) -> str:
    return " | ".join(f"{k}:{v}" for k, v in sorted(codes.items(), key=lambda kv: -kv[1]))


def _tool(mode: str):
    if mode in ("dynamo", "inductor"):
        return _Dynamo(inductor=mode == "inductor")
    return _Xacc("cpu" if mode == "xacc_cpu" else "xpu0")


def run_mode(mode: str, built, inputs, refs, eager_one: float, perf: int, train: bool) -> dict:
    import torch
    tool = _tool(mode)
    model = built.model
    row: dict = {}
    with torch.no_grad():
        cm = tool.compile(model)
        out, first = _timed(cm, inputs[0])
        s1 = tool.stats()
        row.update(graphs=s1["graphs"], breaks=s1["breaks"], break_codes=_codes_text(s1["codes"]),
                   compile_s=round(max(first - eager_one, 0.0), 4))
        ok, worst, why = compare(refs[0], out, lambda: _ref64(built, inputs[0]))
        for inp, ref in zip(inputs[1:], refs[1:]):
            ok2, w2, why2 = compare(ref, _call(cm, inp), lambda inp=inp: _ref64(built, inp))
            ok, worst, why = ok and ok2, max(worst, w2), (why if not ok or ok2 else "") or why2
        s2 = tool.stats()
        row.update(recompiles=s2["recompiles"] - s1["recompiles"], internal_errors=s2["internal_errors"],
                   eager_equal=ok, max_diff=worst, reason=why)
        if isinstance(tool, _Dynamo):  # its "graphs" counter is compiles: batch 3 and 4 added to it
            row["recompiles"] = s2["graphs"] - s1["graphs"]
        times: dict = {"eager": [], "mode": []}
        for _ in range(perf):
            for key, f in (("eager", model), ("mode", cm)):
                times[key].append(_timed(f, inputs[0])[1])
        if perf:
            row["eager_ms"] = round(statistics.median(times["eager"]) * 1e3, 3)
            row["ms"] = round(statistics.median(times["mode"]) * 1e3, 3)
    if train:
        row["train_ok"] = _train(built, tool, inputs[0])
    row["status"] = "ok"
    return row


def _train(built, tool, inp) -> bool:
    import copy
    import torch

    def step(model, opt, args, kwargs):
        out = model(*args, **kwargs)
        loss = sum(t.float().pow(2).mean() for t in tensors(out, detach=False) if t.is_floating_point())
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    ref, mine = copy.deepcopy(built.model), copy.deepcopy(built.model)
    torch.manual_seed(0)
    step(ref, torch.optim.SGD(ref.parameters(), lr=0.05), *inp)
    torch.manual_seed(0)
    tool.compile(step)(mine, torch.optim.SGD(mine.parameters(), lr=0.05), *inp)
    return all(torch.allclose(a, b, rtol=RTOL, atol=1e-5, equal_nan=True)
               for a, b in zip(ref.parameters(), mine.parameters()))


def warm_main(built, modes: list[str], emit) -> None:
    """The --warm child: per mode, the first call's time minus one eager call,
    with the cold child's disk caches in place (same cache directories)."""
    import torch
    inp = built.make_inputs(BATCHES[0])
    with torch.no_grad():
        _call(built.model, inp)  # eager's own first-call costs are not the mode's
        eager_one = statistics.median(_timed(built.model, inp)[1] for _ in range(3))
        for mode in modes:
            try:
                cm = _tool(mode).compile(built.model)
                emit({"mode": mode, "warm_s": round(max(_timed(cm, inp)[1] - eager_one, 0.0), 4)})
            except Exception as e:  # noqa: BLE001 - this mode's failure
                emit({"mode": mode, "warm_error": f"{type(e).__name__}: {e}"[:300]})


def child_main(a) -> None:
    import torch
    from hf_archs import Skip, build, discover
    torch.set_num_threads(a.threads)
    arch = next(x for x in discover() if x.model_type == a.child)
    emit = lambda row: print("ROW " + json.dumps(row, default=str), flush=True)  # noqa: E731
    try:
        built = build(arch)
    except Skip as e:
        emit({"mode": "eager", "status": "skip", "reason": str(e)[:1000]})
        return
    if a.warm_pass:
        warm_main(built, [m for m in COMPILED if m in a.modes.split(",")], emit)
        return
    base = {"task": built.task, "class": built.class_name, "level": built.level, "params": built.params}
    inputs = [built.make_inputs(b) for b in BATCHES]
    try:
        with torch.no_grad():
            refs = [_call(built.model, inp) for inp in inputs]
            eager_one = statistics.median(_timed(built.model, inputs[0])[1] for _ in range(3))
    except Exception as e:  # noqa: BLE001 - built on batches 2 and 3, failed on 4
        emit(dict(base, mode="eager", status="skip", reason=f"eager call failed: {type(e).__name__}: {e}"[:500]))
        return
    emit(dict(base, mode="eager", status="ok", eager_equal=True, eager_ms=round(eager_one * 1e3, 3),
              reason="; ".join(built.tried)[:500]))
    for mode in [m for m in COMPILED if m in a.modes.split(",")]:
        try:
            row = run_mode(mode, built, inputs, refs, eager_one, a.perf, a.train)
        except Exception as e:  # noqa: BLE001 - this mode's failure
            row = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:500]}
        emit(dict(base, mode=mode, **row))


# -- parent side --------------------------------------------------------------------------------

def run_child(model: str, a) -> list[dict]:
    modes = ["eager"] + [m for m in COMPILED if m in a.modes.split(",")]
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XACC_CACHE_DIR=os.path.join(cache, "xacc"),
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"),
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, __file__, "--child", model, "--modes", a.modes, "--threads", str(a.threads),
               "--perf", str(a.perf)] + (["--train"] if a.train else [])
        rows, status, tail = _child_rows(cmd, env, a.timeout)
        if a.warm and any(r.get("status") == "ok" and r["mode"] != "eager" for r in rows):
            _merge_warm(rows, *_child_rows(cmd + ["--warm-pass"], env, a.timeout))
    got = {r["mode"] for r in rows}
    if not (rows and rows[0].get("status") == "skip"):
        rows += [{"mode": m, "status": status, "reason": tail} for m in modes if m not in got]
    for r in rows:
        r["model"] = model
    return rows


def _merge_warm(rows: list[dict], warm: list[dict], status: str, tail: str) -> None:
    """The warm child's first-call times into the cold child's rows; a mode it
    did not time keeps warm_s empty, with the reason appended."""
    got = {w["mode"]: w for w in warm}
    for r in rows:
        if r["mode"] == "eager" or r.get("status") != "ok":
            continue
        w = got.get(r["mode"], {})
        if "warm_s" in w:
            r["warm_s"] = w["warm_s"]
        else:
            why = w.get("warm_error") or f"warm child {status}: {tail}"
            r["reason"] = "; ".join(x for x in (r.get("reason"), f"warm: {why}"[:300]) if x)


def _child_rows(cmd: list[str], env: dict, timeout: int) -> tuple[list[dict], str, str]:
    """The ROW lines of one child, and (status, why) for the modes it did not report."""
    status, tail = "crash", ""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        out, tail = p.stdout, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        status, tail = "timeout", f"no result within {timeout} s"
    return [json.loads(ln[4:]) for ln in out.splitlines() if ln.startswith("ROW ")], status, tail


def read_rows(path: str) -> tuple[list[dict], dict]:
    """The rows of a sweep CSV and its `# key=value` header facts."""
    facts, lines = {}, []
    with open(path, newline="") as f:
        for ln in f:
            if ln.startswith("#"):
                for part in ln[1:].split():
                    if "=" in part:
                        k, v = part.split("=", 1)
                        facts[k] = v
            elif ln.strip():
                lines.append(ln)
    return list(csv.DictReader(lines)), facts


def _versions() -> str:
    import importlib.metadata as md
    return " ".join(f"{p}={md.version(p)}" for p in ("transformers", "torch", "numpy"))


def default_csv() -> str:
    import transformers
    return str(ROOT / "build" / "sweep" / f"sweep-transformers-{transformers.__version__}.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", help="rows go here, appended (default build/sweep/sweep-transformers-<v>.csv)")
    ap.add_argument("--modes", default=DEFAULT_MODES,
                    help=f"compiled modes (eager always runs; default {DEFAULT_MODES}; known {','.join(COMPILED)})")
    ap.add_argument("--only", help="comma-separated model types")
    ap.add_argument("--missing-ok", action="store_true", help="--only names not discovered are left out")
    ap.add_argument("--limit", type=int, help="the first N discovered model types (after --only)")
    ap.add_argument("--reverse", action="store_true", help="in reverse sorted order (two machines meet halfway)")
    ap.add_argument("--jobs", type=int, default=1, help="children at a time")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per architecture")
    ap.add_argument("--threads", type=int, default=1, help="torch threads in every child")
    ap.add_argument("--perf", type=int, default=3, help="timed warm calls per mode (0: no latency)")
    ap.add_argument("--train", action="store_true", help="one training step per compiled mode")
    ap.add_argument("--warm", action="store_true",
                    help="a second child per architecture times each mode's first call with the disk caches warm")
    ap.add_argument("--perf-report", nargs="+", metavar="CSV",
                    help="issue 24's latency and compile-time figures of --perf runs (one CSV per thread count)")
    ap.add_argument("--list", action="store_true", help="print the discovered architectures and exit")
    ap.add_argument("--summary", metavar="CSV", help="print the summary of a sweep CSV and exit")
    ap.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="per-model changes between two CSVs")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--warm-pass", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    bad = [m for m in a.modes.split(",") if m and m not in COMPILED]
    if bad:
        raise SystemExit(f"unknown modes: {', '.join(bad)} (known: {', '.join(COMPILED)})")
    if a.child:
        child_main(a)
        return
    from sweep_report import diff, perf_report, summary
    if a.perf_report:
        print(perf_report([read_rows(p) for p in a.perf_report]))
        return
    if a.summary:
        print(summary(*read_rows(a.summary)))
        return
    if a.diff:
        print(diff(read_rows(a.diff[0])[0], read_rows(a.diff[1])[0]))
        return
    from hf_archs import discover
    archs = [x.model_type for x in discover()]
    if a.list:
        print("\n".join(archs))
        return
    todo = archs
    if a.only:
        want = a.only.split(",")
        unknown = [m for m in want if m not in archs]
        if unknown and not a.missing_ok:
            raise SystemExit(f"not discovered: {', '.join(unknown)}")
        if unknown:
            print(f"not discovered here, not run: {', '.join(unknown)}")
        todo = [m for m in archs if m in want]
    todo = todo[::-1] if a.reverse else todo
    todo = todo[:a.limit] if a.limit else todo
    path = a.csv or default_csv()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fresh = not os.path.exists(path)
    done = set() if fresh else {r["model"] for r in read_rows(path)[0]}
    todo = [m for m in todo if m not in done]
    print(f"{len(archs)} architectures discovered; {len(done)} already in {path}; {len(todo)} to run", flush=True)
    t0 = time.perf_counter()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        if fresh:
            f.write(f"# sweep {_versions()} discovered={len(archs)} modes={a.modes} perf={a.perf} "
                    f"threads={a.threads} warm={int(a.warm)} train={int(a.train)} started={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
            w.writeheader()
        with ThreadPoolExecutor(max(1, a.jobs)) as pool:
            for i, rows in enumerate(pool.map(lambda m: run_child(m, a), todo), 1):
                for r in rows:
                    w.writerow(r)
                f.flush()
                line = "  ".join(f"{r['mode']}:{r['status']}" + (
                    f" eq={r.get('eager_equal')} g/b/r={r.get('graphs')}/{r.get('breaks')}/{r.get('recompiles')}"
                    if r["mode"] != "eager" and r["status"] == "ok" else "") for r in rows)
                print(f"[{i}/{len(todo)} {time.perf_counter() - t0:.0f}s] {rows[0]['model']}: {line}", flush=True)
                if rows[0]["status"] == "skip":
                    print(f"    skip: {rows[0].get('reason', '')[:300]}", flush=True)
    print(summary(*read_rows(path)))


if __name__ == "__main__":
    main()
