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
