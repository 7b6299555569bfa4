"""The counts of a sweep CSV (sweep.py --summary) and the per-model changes
between two (sweep.py --diff). Rows are dicts as csv.DictReader gives them."""

from __future__ import annotations

from collections import Counter, defaultdict

XACC = ("xacc_cpu", "xacc_xpu0")


def _int(v) -> int | None:
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} = {100 * n / d:.1f}%" if d else f"{n}/0"


def _by_model(rows: list[dict]) -> dict[str, dict[str, dict]]:
    by: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        by[r["model"]][r["mode"]] = r
    return by


def _codes(text: str) -> list[tuple[str, int]]:
    out = []
    for part in (text or "").split(" | "):
        if ":" in part:
            k, v = part.rsplit(":", 1)
            out.append((k, _int(v) or 0))
    return out


def summary(rows: list[dict], facts: dict | None = None) -> str:
    facts = facts or {}
    by = _by_model(rows)
    discovered = _int(facts.get("discovered"))
    lines = [f"sweep of transformers {facts.get('transformers', '?')}, torch {facts.get('torch', '?')}"]
    rec = len(by)
    lines.append(f"architectures: {discovered if discovered is not None else '?'} discovered, {rec} recorded"
                 + (f" (PARTIAL: {discovered - rec} not run)" if discovered and rec < discovered else ""))
    built = [m for m, d in by.items() if d.get("eager", {}).get("status") == "ok"]
    skipped = [m for m, d in by.items() if d.get("eager", {}).get("status") == "skip"]
    other = rec - len(built) - len(skipped)
    lines.append(f"built (eager runs on batch 2, 3, 4): {len(built)}; skipped: {len(skipped)}"
                 + (f"; crashed or timed out while building: {other}" if other else ""))
    why = Counter(_skip_kind(by[m]["eager"].get("reason", "")) for m in skipped)
    for k, n in why.most_common(8):
        lines.append(f"    {n:>4}  skip: {k}")
    modes = [m for m in ("dynamo", *XACC) if any(m in by[x] for x in built)]
    for mode in modes:
        rs = [by[m][mode] for m in built if mode in by[m]]
        ok = [r for r in rs if r["status"] == "ok"]
        eq = sum(r.get("eager_equal") == "True" for r in ok)
        zero = sum(_int(r.get("breaks")) == 0 for r in ok)
        rc = sum((_int(r.get("recompiles")) or 0) <= 1 for r in ok)
        lines.append(f"{mode}: ran {_pct(len(ok), len(built))} of built (errors "
                     f"{Counter(r['status'] for r in rs if r['status'] != 'ok').most_common() or 0}); "
                     f"eager-equal {_pct(eq, len(built))}; zero-break {_pct(zero, len(built))}; "
                     f"<=1 recompile over batch 2,3,4 {_pct(rc, len(built))}")
    for mode in (m for m in XACC if m in modes):
        more = less = same = 0
        worse = []
        for m in built:
            x, d = by[m].get(mode, {}), by[m].get("dynamo", {})
            bx, bd = _int(x.get("breaks")), _int(d.get("breaks"))
            if x.get("status") != "ok" or d.get("status") != "ok" or bx is None or bd is None:
                continue
            if bx > bd:
                more += 1
                worse.append((bx - bd, m, bx, bd))
            elif bx < bd:
                less += 1
            else:
                same += 1
        lines.append(f"{mode} breaks vs torch.compile per model: more {more}, same {same}, fewer {less}")
        codes: Counter = Counter()
        models_with: Counter = Counter()
        for m in built:
            for k, n in _codes(by[m].get(mode, {}).get("break_codes", "")):
                codes[k] += n
                models_with[k] += 1
        lines.append(f"{mode} break codes (first call, batch 2): " + ", ".join(
            f"{k} {n} in {models_with[k]} models" for k, n in codes.most_common()))
        internal = sum(_int(by[m].get(mode, {}).get("internal_errors")) or 0 for m in built)
        if internal:
            lines.append(f"{mode} internal errors: {internal}")
    crit = []
    for mode in (m for m in XACC if m in modes):
        ok = [by[m][mode] for m in built if by[m].get(mode, {}).get("status") == "ok"]
        n = len(built) or 1
        eq = sum(r.get("eager_equal") == "True" for r in ok) / n
        zero = sum(_int(r.get("breaks")) == 0 for r in ok) / n
        rc = sum((_int(r.get("recompiles")) or 0) <= 1 for r in ok) / n
        worse = sum((_int(by[m][mode].get("breaks")) or 0) > (_int(by[m].get("dynamo", {}).get("breaks")) or 0)
                    for m in built if by[m].get(mode, {}).get("status") == "ok")
        crit.append(f"{mode}: eager-equal >= 98% {'PASS' if eq >= .98 else 'FAIL'}, zero-break >= 90% "
                    f"{'PASS' if zero >= .9 else 'FAIL'}, no model more breaks than torch.compile "
                    f"{'PASS' if not worse else 'FAIL'}, <= 1 recompile >= 95% {'PASS' if rc >= .95 else 'FAIL'}")
    if crit:
        lines.append(f"issue 18 criterion 1 on this run ({len(built)} built, needs >= 150: "
                     f"{'PASS' if len(built) >= 150 else 'FAIL'}):")
        lines.extend("  " + c for c in crit)
    if "dynamo" in modes:
        reasons: Counter = Counter()
        for m in built:
            for k, n in _codes(by[m].get("dynamo", {}).get("break_codes", "")):
                reasons[k] += n
        if reasons:
            lines.append("dynamo break reasons: " + "; ".join(f"{k} ({n})" for k, n in reasons.most_common(6)))
    lines.append("per model (graphs/breaks/recompiles; = eager-equal, ! differs):")
    lines.append(f"  {'model':<34} {'class':<44} " + " ".join(f"{m:>14}" for m in modes))
    for m in built:
        cells = []
        for mode in modes:
            r = by[m].get(mode, {})
            if r.get("status") != "ok":
                cells.append(f"{r.get('status', '-'):>14}")
            else:
                mark = "=" if r.get("eager_equal") == "True" else "!"
                cells.append(f"{mark}{r.get('graphs')}/{r.get('breaks')}/{r.get('recompiles')}".rjust(14))
        lines.append(f"  {m:<34} {by[m]['eager'].get('class', ''):<44} " + " ".join(cells))
    return "\n".join(lines)


def _skip_kind(reason: str) -> str:
    """The first attempt's reason without its class and level, for counting."""
    first = reason.split("; ")[0]
    if ": " in first and " L" in first.split(": ")[0]:
        first = first.split(": ", 1)[1]
    return first[:90]


def diff(old: list[dict], new: list[dict]) -> str:
    """Per (model, mode): what changed in status, eager-equal, graphs, breaks, recompiles."""
    a, b = _by_model(old), _by_model(new)
    keys = ("status", "eager_equal", "graphs", "breaks", "recompiles", "class")
    lines, counts = [], Counter()
    for m in sorted(set(a) & set(b)):
        for mode in sorted(set(a[m]) | set(b[m])):
            ra, rb = a[m].get(mode, {}), b[m].get(mode, {})
            ch = [f"{k} {ra.get(k, '-') or '-'} -> {rb.get(k, '-') or '-'}" for k in keys
                  if (ra.get(k) or "") != (rb.get(k) or "")]
            if ch:
                counts[mode] += 1
                lines.append(f"  {m} [{mode}]: " + ", ".join(ch))
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    head = [f"{len(set(a) & set(b))} models in both; changed rows by mode: {dict(counts) or 'none'}"]
    if only_a:
        head.append(f"only in the old run ({len(only_a)}): {', '.join(only_a[:40])}")
    if only_b:
        head.append(f"only in the new run ({len(only_b)}): {', '.join(only_b[:40])}")
    for mode in ("dynamo", *XACC):
        za = sum(_int(a[m].get(mode, {}).get("breaks")) == 0 for m in set(a) & set(b))
        zb = sum(_int(b[m].get(mode, {}).get("breaks")) == 0 for m in set(a) & set(b))
        ea = sum(a[m].get(mode, {}).get("eager_equal") == "True" for m in set(a) & set(b))
        eb = sum(b[m].get(mode, {}).get("eager_equal") == "True" for m in set(a) & set(b))
        if za or zb or ea or eb:
            head.append(f"{mode}: zero-break {za} -> {zb}, eager-equal {ea} -> {eb} (models in both)")
    return "\n".join(head + lines)


def _float(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _geomean(xs: list[float]) -> float:
    import math
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def perf_report(runs: list[tuple[list[dict], dict]], mine: str = "xacc_xpu0", anchor: str = "inductor") -> str:
    """Issue 24's figures from `sweep.py --perf N --warm` runs, one per thread
    count: on the architectures `mine` captures whole (1 graph, 0 breaks,
    eager-equal) where both modes were timed, the geomean speedup over eager
    (each mode against the eager calls interleaved with its own), the geomean
    cold compile time of each and the warm start's share of a cold one, and
    the models `mine` runs more than 5% slower than eager."""
    lines, crit = [], {0: [], 1: [], 2: [], 3: [], 4: []}
    floor = 1e-3  # compile_s is clamped at 0 (first call minus one eager call): a 1 ms floor for the geomean
    for rows, facts in runs:
        by = _by_model(rows)
        threads = facts.get("threads", "?")
        whole = [m for m, d in by.items() if d.get(mine, {}).get("status") == "ok"
                 and _int(d[mine].get("graphs")) == 1 and _int(d[mine].get("breaks")) == 0]
        timed = [m for m in whole if all(_float(by[m].get(k, {}).get(f)) for k in (mine, anchor)
                                         for f in ("ms", "eager_ms"))]
        lines.append(f"threads={threads}: {len(whole)} architectures {mine} captures whole; "
                     f"{len(timed)} timed under both {mine} and {anchor}")
        crit[0].append(len(timed) >= 30)
        if not timed:
            continue
        speed = {k: _geomean([_float(by[m][k]["eager_ms"]) / _float(by[m][k]["ms"]) for m in timed])
                 for k in (mine, anchor)}
        lines.append(f"  geomean speedup over eager: {mine} {speed[mine]:.3f}x, {anchor} {speed[anchor]:.3f}x")
        crit[1].append(speed[mine] >= speed[anchor])
        cold = {k: _geomean([max(_float(by[m][k].get("compile_s")) or 0.0, floor) for m in timed])
                for k in (mine, anchor)}
        lines.append(f"  geomean cold compile: {mine} {cold[mine]:.3f} s, {anchor} {cold[anchor]:.3f} s "
                     f"({cold[anchor] / cold[mine]:.1f}x shorter)")
        warm_ms = [m for m in timed if _float(by[m][mine].get("warm_s")) is not None]
        if warm_ms:
            share = _geomean([max(_float(by[m][mine]["warm_s"]), floor) for m in warm_ms]) / _geomean(
                [max(_float(by[m][mine]["compile_s"]), floor) for m in warm_ms])
            lines.append(f"  {mine} warm start / cold compile (geomean, {len(warm_ms)} models): {share:.2f}")
            crit[2].append(cold[anchor] >= 10 * cold[mine] and share <= 0.25)
        else:
            lines.append(f"  no warm_s in this run (sweep.py --warm)")
            crit[2].append(False)
        slow = sorted((_float(by[m][mine]["ms"]) / _float(by[m][mine]["eager_ms"]), m) for m in timed)
        over = [(r, m) for r, m in slow if r > 1.05]
        lines.append(f"  {mine} more than 5% slower than eager: {len(over)}"
                     + (": " + ", ".join(f"{m} {r:.2f}x" for r, m in over[::-1][:12]) if over else ""))
        crit[3].append(not over)
        neq = [m for m in timed if by[m][mine].get("eager_equal") != "True"]
        crit[4].append(not neq)
        lines.append("  per model (eager ms; speedup " + mine + " / " + anchor + "; cold s " + mine + " / "
                     + anchor + "; warm s " + mine + "):")
        for m in timed:
            x, y = by[m][mine], by[m][anchor]
            lines.append(f"    {m:<32} {_float(x['eager_ms']):>9.2f}  {_float(x['eager_ms']) / _float(x['ms']):5.2f}"
                         f" / {_float(y['eager_ms']) / _float(y['ms']):5.2f}   {x.get('compile_s')} / "
                         f"{y.get('compile_s')}   {x.get('warm_s') or '-'}")
    names = {0: ">= 30 architectures timed", 1: "geomean speedup >= Inductor's at every thread count", 2: "cold compile >= 10x shorter, warm <= 25%",
             3: "no model > 5% slower than eager", 4: "every timed model eager-equal"}
    threads = {f.get("threads") for _, f in runs}
    lines.append("issue 24 on these runs (thread counts " + ", ".join(sorted(t or "?" for t in threads)) + "; "
                 "criterion 1 needs 1 and 2):")
    for k, name in names.items():
        ok = bool(crit[k]) and all(crit[k]) and (k != 1 or {"1", "2"} <= threads)
        lines.append(f"  {k}. {name}: {'PASS' if ok else 'FAIL'}")
    return "\n".join(lines)
