"""What a profile changes in the next compile of a frame (docs/pgo.md, "Decisions").

  dynamic dims  - an argument dim seen with several sizes in the profile is
                  dynamic from the first compile (no recompile when it changes);
                  a frame whose dynamic compile failed in the profiling run
                  (sizes read by Python, ...) is compiled static without trying;
  eager         - a frame that is cold (at most `cold_calls` calls) and tiny (at
                  most `tiny_ops` ops, or the graph time of all its calls below
                  what compiling it cost) runs in plain Python, with capture off
                  inside it;
  ATen regions  - on xpu devices, a region whose MLIR kernel's median time
                  exceeded its ATen ops' median by `region_margin` (and by at
                  least `region_min_gap_s`, over `region_min_runs` runs or more)
                  is left to ATen, when the time it saves is at least
                  `region_min_share` of its graph's median run: regions are timed
                  one at a time, which misses what a region costs its
                  neighbours when it runs on ATen (an extra materialised result,
                  a cold cache), so a small isolated gain is not trusted (the
                  encoder benchmark's transposes region, 0.03 ms better on ATen
                  in isolation in a 2.8 ms graph, made the graph slower).
Each decision carries the line the explain report prints ("PGO: ...").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xacc._src.capture.device import backend_profiles


@dataclass
class Thresholds:
    cold_calls: int = 3
    tiny_ops: int = 16
    region_margin: float = 1.10
    region_min_runs: int = 3
    region_min_gap_s: float = 2e-6
    region_min_share: float = 0.05


THRESHOLDS = Thresholds()


@dataclass
class FrameDecisions:
    dynamic: dict[str, set[int]] = field(default_factory=dict)  # input name -> dims
    static: bool = False  # do not try dynamic shapes
    eager: bool = False
    aten_regions: dict[str, str] = field(default_factory=dict)  # region key -> note
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.dynamic or self.static or self.eager or self.aten_regions)


def _ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s < 1e-2 else f"{s * 1e3:.1f} ms"


def decide(frame: dict, device: str, th: Thresholds = THRESHOLDS) -> FrameDecisions:
    d = FrameDecisions()
    graphs = list(frame.get("graphs", {}).values())
    # Dynamic dims: sizes seen per argument-rooted input, over every graph of the frame.
    sizes: dict[str, dict[int, set[int]]] = {}
    ranks: dict[str, set[int]] = {}
    for g in graphs:
        for inp in g.get("inputs", []):
            name = inp.get("name", "")
            if not name.startswith("L["):
                continue
            for shp in inp.get("shapes", []):
                ranks.setdefault(name, set()).add(len(shp))
                for i, n in enumerate(shp):
                    sizes.setdefault(name, {}).setdefault(i, set()).add(int(n))
    varying = {name: {i: s for i, s in dims.items() if len(s) > 1}
               for name, dims in sizes.items() if len(ranks.get(name, ())) == 1}
    varying = {k: v for k, v in varying.items() if v}
    if frame.get("dynamic_failed"):
        if varying:
            d.static = True
            for name, dims in sorted(varying.items()):
                for i, s in sorted(dims.items()):
                    d.notes.append(f"PGO: dim {i} of {name} kept static (seen {len(s)} sizes; dynamic shapes failed "
                                   "for this frame in the profiling run, so no shadow compile is tried)")
    else:
        for name, dims in sorted(varying.items()):
            d.dynamic[name] = set(dims)
            for i, s in sorted(dims.items()):
                shown = ", ".join(str(n) for n in sorted(s)[:6]) + (", ..." if len(s) > 6 else "")
                d.notes.append(f"PGO: dim {i} of {name} dynamic (seen {len(s)} sizes: {shown})")
    # Cold and tiny: compiling cannot pay back.
    calls = int(frame.get("calls", 0))
    compile_s = sum(float(g.get("compile_s", 0.0)) for g in graphs)
    work_s = sum(g.get("calls", 0) * g.get("run", {}).get("median_s", 0.0) for g in graphs)
    ops = max((int(g.get("ops", 0)) for g in graphs), default=0)
    tiny = ops <= th.tiny_ops or work_s < compile_s
    if graphs and 0 < calls <= th.cold_calls and tiny and all(g.get("outcome") == "graph" for g in graphs):
        d.eager = True
        why = "cold and tiny" if ops <= th.tiny_ops else "cold, compiling costs more than it runs"
        d.notes.append(f"PGO: runs eagerly: {why} ({calls} call(s), {ops} ops; {_ms(work_s)} of graph "
                       f"time in the profile vs {_ms(compile_s)} to compile)")
    # Regions whose kernel was slower than ATen (backends that profile regions).
    if backend_profiles(device):
        acc: dict[str, list] = {}
        for g in graphs:
            if g.get("device") != device:
                continue
            for r in g.get("regions", []):
                k, a = r.get("kernel", {}), r.get("aten", {})
                if k.get("runs", 0) < th.region_min_runs or a.get("runs", 0) < th.region_min_runs:
                    continue
                e = acc.setdefault(r["key"], [0.0, 0.0, 0, r.get("index", 0), r.get("ops", []), 0.0])
                n = min(k["runs"], a["runs"])
                e[0] += k["median_s"] * n
                e[1] += a["median_s"] * n
                e[2] += n
                e[5] = max(e[5], float(g.get("run", {}).get("median_s", 0.0)))
        for key, (kt, at, n, index, ops_, graph_s) in sorted(acc.items(), key=lambda kv: kv[1][3]):
            km, am = kt / n, at / n
            if km > am * th.region_margin and km - am > th.region_min_gap_s \
                    and km - am >= th.region_min_share * graph_s:
                shown = ", ".join(o.removeprefix("aten.") for o in ops_[:4]) + (", ..." if len(ops_) > 4 else "")
                note = (f"PGO: region r{index} ({shown}) left to ATen (mlir {_ms(km)} vs aten {_ms(am)}, "
                        f"medians over {n} runs; key {key})")
                d.aten_regions[key] = note
                d.notes.append(note)
    return d
