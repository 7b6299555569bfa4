"""Writing the export directory: one folder per compiled frame with every
artifact of docs/export.md, `manifest.json` describing all of them, and
`index.html` (html.py) tying them together.

Input is only the event records of xacc._src.capture.convert (the "export
record" fields of CompileEvent) plus the graph values a Recorder saw, so this
works the same whichever translator produced the events.
"""

from __future__ import annotations

import dis
import io
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import asdict
from typing import Any

import torch

from xacc._src.config import E, env, log
from xacc._src.export import camel
from xacc._src.export.pysource import python_like
from xacc._src.export.record import Recorder


def _dis(code: Any) -> str:
    s = io.StringIO()
    dis.dis(code, file=s, depth=0)
    return s.getvalue()


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_")[:40] or "frame"


def find_tool(name: str) -> str | None:
    """A tool built with the project: PATH, then $XACC_BUILD_DIR/bin, then ./build/bin."""
    p = shutil.which(name)
    if p:
        return p
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    for d in (env(E.BUILD_DIR), os.path.join(root, "build")):
        cand = os.path.join(d, "bin", name)
        if d and os.access(cand, os.X_OK):
            return cand
    return None


def gir_module_text(ev: Any) -> str:
    """The exported `.gir` file: the captured graph as a module xacc-opt reads."""
    head = (f"// Captured by XJIT from {ev.function} ({ev.filename}:{ev.lineno}), cache entry {ev.entry}\n"
            f"// graph inputs: {', '.join(ev.graph_inputs) or '(none)'}\n")
    return head + ev.graph.rstrip() + "\n"


def graph_name(gir: str) -> str:
    m = re.search(r"^graph @([^\s(]+)\(", gir, re.M)
    return m.group(1) if m else "main"


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _to_py(v: Any) -> Any:
    """JSON-friendly summary of a recorded value."""
    if isinstance(v, torch.Tensor):
        return {"tensor": list(v.shape), "dtype": str(v.dtype).removeprefix("torch.")}
    if isinstance(v, (list, tuple)):
        return [_to_py(e) for e in v]
    if isinstance(v, (int, float, bool, str)) or v is None:
        return v
    return repr(v)


# graphviz's layered `dot` layout is superlinear: a 1,500-node graph takes minutes
# (measured: 66-100 s for tiny_gpt's generate graph even with splines and mincross
# limited). Bigger graphs are laid out by `sfdp` (multilevel force-directed, about 3 s
# for the same graph): less readable as a dataflow picture, but every graph gets an SVG.
SVG_MAX_NODES = 300


def _svg(dot_text: str, out: str, num_nodes: int) -> tuple[bool, str | None]:
    """Renders graph.svg; returns (rendered, note for the index)."""
    layered = num_nodes <= SVG_MAX_NODES
    tool = "dot" if layered else "sfdp"
    exe = shutil.which(tool)
    if exe is None:
        return False, f"graphviz `{tool}` is not installed"
    cmd = [exe, "-Tsvg", "-o", out]
    if not layered:
        cmd[1:1] = ["-Gsplines=false", "-Goverlap=prism"]
    try:
        r = subprocess.run(cmd, input=dot_text, text=True, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, f"not rendered: {tool} took more than 120 s"
    if r.returncode != 0:
        return False, f"{tool} failed: {r.stderr.strip()[:300]}"
    return True, None if layered else f"{num_nodes} nodes: force-directed layout (sfdp); the layered layout takes minutes"


def _mlir(gir_path: str, folder: str, art: dict, notes: dict) -> None:
    exe = find_tool("xacc-mlir")
    if exe is None:
        notes["mlir"] = "xacc-mlir is not built"
        return
    for key, emit, fname in (("mlir", "mlir", "graph.mlir"), ("mlir_lowered", "llvm", "graph.lowered.ll"),
                             ("mlir_bufferized", "bufferized", "graph.bufferized.mlir")):
        r = subprocess.run([exe, gir_path, f"--emit={emit}"], capture_output=True, text=True, timeout=300)
        if r.returncode == 0:
            _write(os.path.join(folder, fname), r.stdout)
            art[key] = fname
        else:
            notes[key] = f"xacc-mlir --emit={emit} failed: {(r.stderr or r.stdout).strip()[:300]}"


def write_frame(ev: Any, index: int, root: str, rec: Recorder | None) -> dict:
    """Writes one event's folder; returns its manifest entry."""
    name = f"f{index:03d}_{_slug(ev.function)}_e{ev.entry}"
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    art: dict[str, Any] = {}
    notes: dict[str, str] = {}

    def put(key: str, fname: str, text: str) -> None:
        _write(os.path.join(folder, fname), text)
        art[key] = f"{name}/{fname}"

    if ev.code is not None:
        put("original_dis", "original.dis", _dis(ev.code))
        put("original_py", "original.pseudo.py", python_like(ev.code))
    if ev.rewritten is not None:
        put("rewritten_dis", "rewritten.dis", _dis(ev.rewritten))
        put("rewritten_py", "rewritten.pseudo.py", python_like(ev.rewritten))
    elif ev.outcome == "graph":
        notes["rewritten"] = "whole frame captured: a cache hit runs the graph; no bytecode runs"
    else:
        notes["rewritten"] = f"outcome {ev.outcome}: the frame runs its original bytecode"
    resumes = []
    for k, rc in enumerate(ev.resumes):
        put(f"resume{k}_dis", f"resume{k}.dis", _dis(rc))
        put(f"resume{k}_py", f"resume{k}.pseudo.py", python_like(rc))
        resumes.append({"name": rc.co_qualname, "dis": art[f"resume{k}_dis"], "py": art[f"resume{k}_py"]})
    put("guards", "guards.txt", "\n".join(ev.guards) + ("\n" if ev.guards else "(no guards: nothing cached)\n"))
    breaks = [{"code": b.code, "reason": b.reason, "detail": b.detail, "file": b.filename, "line": b.lineno,
               "function": b.function, "hint": b.hint,
               "user_stack": [{"file": f, "line": ln, "function": fn} for f, ln, fn in (b.stack or ())]}
              for b in ev.breaks]
    put("breaks", "breaks.json", json.dumps(breaks, indent=2) + "\n")
    put("recompiles", "recompiles.txt",
        "".join(f"guard failed: {r}\n" for r in ev.recompile_reasons) or "first compile of this code object\n")
    times = {"total_s": ev.seconds, **{f"{k}_s": v for k, v in ev.stage_seconds.items()}}
    put("times", "times.json", json.dumps(times, indent=2) + "\n")

    graph: dict[str, Any] = {}
    if ev.graph:
        gir = gir_module_text(ev)
        put("gir", "graph.gir", gir)
        gname = graph_name(gir)
        graph = {"name": gname, "ops": dict(ev.op_counts), "num_inputs": len(ev.graph_inputs),
                 "inputs": list(ev.graph_inputs)}
        try:
            from xacc import ir
            dot_text = ir.parse(gir, os.path.join(folder, "graph.gir"), verify=False).to_dot()
            put("dot", "graph.dot", dot_text)
            nodes = sum(1 for ln in ev.graph.splitlines() if re.match(r"\s+%[\w.]+(\s*,\s*%[\w.]+)*\s*=", ln))
            graph["num_nodes"] = nodes
            rendered, note = _svg(dot_text, os.path.join(folder, "graph.svg"), nodes)
            if note:
                notes["svg"] = note
            if rendered:
                art["svg"] = f"{name}/graph.svg"
        except Exception as e:  # noqa: BLE001 - reported in the index, never raised
            notes["dot"] = f"{type(e).__name__}: {e}"
        call = rec.first(ev.graph_id) if rec is not None and ev.graph_id else None
        if call is not None and call.outputs is not None:
            outputs = ev.graph_outputs(call.outputs)
            torch.save({"inputs": list(call.inputs), "outputs": outputs},
                       os.path.join(folder, "graph.values.pt"))
            art["values"] = f"{name}/graph.values.pt"
            graph["inputs_seen"] = _to_py(list(call.inputs))
            graph["outputs_seen"] = _to_py(outputs)
            try:
                mod = camel.from_gir(ev.graph, list(call.inputs), module=_slug(f"{ev.function}_{ev.entry}").lower())
                put("cml", "graph.cml", mod.source)
                put("cml_expected", "graph.cml.expected", camel.expected_output(outputs))
            except camel.NotExpressible as e:
                notes["cml"] = f"not expressible: {e}"
        else:
            notes["values"] = "the graph did not run while recording (no inputs to replay)"
            notes["cml"] = "not regenerated: no recorded inputs"
        if ev.device.startswith("xpu"):
            _mlir(os.path.join(folder, "graph.gir"), folder, art, notes)
            for k in ("mlir", "mlir_lowered", "mlir_bufferized"):
                if k in art:
                    art[k] = f"{name}/{art[k]}"
        else:
            notes["mlir"] = f"not compiled by the xpu target (device {ev.device})"
    return {"dir": name, "function": ev.function, "file": ev.filename, "line": ev.lineno, "entry": ev.entry,
            "outcome": ev.outcome, "device": ev.device, "graph": graph, "breaks": breaks,
            "guards": list(ev.guards), "recompile_reasons": list(ev.recompile_reasons), "times": times,
            "resumes": resumes, "artifacts": art, "notes": notes}


def write_export(events: list, root: str, rec: Recorder | None, *, title: str = "xacc export",
                 run_seconds: float | None = None) -> dict:
    """Writes every event's artifacts, manifest.json and index.html under `root`."""
    t0 = time.perf_counter()
    os.makedirs(root, exist_ok=True)
    frames = [write_frame(ev, i, root, rec) for i, ev in enumerate(events)]
    manifest = {"title": title, "frames": frames, "run_seconds": run_seconds,
                "graph_count": sum(1 for f in frames if f["graph"]),
                "break_count": sum(len(f["breaks"]) for f in frames)}
    _write(os.path.join(root, "manifest.json"), json.dumps(manifest, indent=2) + "\n")
    all_breaks = [b for f in frames for b in f["breaks"]]
    _write(os.path.join(root, "breaks.json"), json.dumps(all_breaks, indent=2) + "\n")
    from xacc._src.export.html import write_index
    write_index(root, manifest)
    log("backend", "export: %d frames, %d graphs written to %s in %.2f s", len(frames), manifest["graph_count"], root,
        time.perf_counter() - t0)
    return manifest


__all__ = ["write_export", "write_frame", "find_tool", "gir_module_text", "graph_name", "asdict"]
