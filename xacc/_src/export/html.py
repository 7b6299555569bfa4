"""index.html of an export directory: a summary, a table of frames and graphs
with links to every artifact, the user's source with graph breaks highlighted,
and per graph its inline SVG. Self-contained (no scripts, no network), so it
renders the same in a browser, in headless Chromium and in CI."""

from __future__ import annotations

import html
import os
import re
from typing import Any

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: left; vertical-align: top; font-size: 13px; }
th { background: #eee; }
tr.outcome-code td.outcome { background: #fff3cd; }
tr.outcome-skip td.outcome, tr.outcome-error td.outcome { background: #f8d7da; }
tr.outcome-graph td.outcome { background: #d4edda; }
pre.source { background: #fafafa; border: 1px solid #ddd; padding: 4px; font-size: 12px; }
pre.source .ln { color: #999; display: inline-block; width: 4em; }
pre.source .break { background: #ffb3b3; display: block; }
pre.source .captured { background: #e6f4ea; display: block; }
.note { color: #666; font-style: italic; }
.svg { border: 1px solid #ddd; overflow: auto; max-height: 600px; margin-bottom: 1em; }
code { background: #f3f3f3; }
"""


def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _link(art: dict, key: str, label: str) -> str:
    return f'<a href="{_e(art[key])}">{_e(label)}</a>' if key in art else ""


def _inline_svg(root: str, rel: str) -> str:
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            svg = f.read()
    except OSError:
        return '<p class="note">SVG missing</p>'
    # Drop the XML prolog and DOCTYPE: inline SVG is an element of the HTML page.
    svg = re.sub(r"^<\?xml[^>]*>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    return svg


def _source_section(manifest: dict) -> list[str]:
    """The user's source files, each line that broke highlighted with its reason."""
    by_file: dict[str, dict[int, list[str]]] = {}
    captured: dict[str, set[int]] = {}
    for fr in manifest["frames"]:
        for b in fr["breaks"]:
            why = f'{b["code"]} {b["reason"]}: {b["detail"]} (hint: {b["hint"]})'
            reasons = by_file.setdefault(b["file"], {}).setdefault(b["line"], [])
            if why not in reasons:
                reasons.append(why)
        if fr["graph"]:
            captured.setdefault(fr["file"], set()).add(fr["line"])
    out = ['<h2 id="source">Source with graph breaks</h2>']
    if not by_file:
        out.append('<p class="note">No graph breaks in this run.</p>')
        return out
    for path, lines in sorted(by_file.items()):
        out.append(f"<h3>{_e(path)}</h3>")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read().splitlines()
        except OSError:
            out.append('<p class="note">source not readable</p>')
            continue
        lo = max(1, min(lines) - 8)
        hi = min(len(text), max(lines) + 8)
        rows = []
        for n in range(lo, hi + 1):
            src = _e(text[n - 1])
            if n in lines:
                why = _e("; ".join(lines[n]))
                rows.append(f'<span class="break" title="{why}"><span class="ln">{n}</span>{src}'
                            f'    <b>&#8592; {why}</b></span>')
            elif n in captured.get(path, ()):
                rows.append(f'<span class="captured"><span class="ln">{n}</span>{src}</span>')
            else:
                rows.append(f'<span class="ln">{n}</span>{src}\n')
        # block spans end their own line; plain rows carry a newline
        out.append('<pre class="source">' + "".join(rows) + "</pre>")
    return out


def render_index(root: str, manifest: dict) -> str:
    frames = manifest["frames"]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_e(manifest['title'])}</title><style>{_CSS}</style></head><body>",
             f"<h1>{_e(manifest['title'])}</h1>",
             f'<p id="summary">{len(frames)} compiled frame(s), {manifest["graph_count"]} graph(s), '
             f'{manifest["break_count"]} graph break(s)'
             + (f', run time {manifest["run_seconds"]:.3f} s' if manifest.get("run_seconds") is not None else "")
             + '. Machine-readable: <a href="manifest.json">manifest.json</a>, '
               '<a href="breaks.json">breaks.json</a>.</p>',
             '<h2 id="frames">Frames and graphs</h2>',
             '<table id="frame-table"><tr><th>#</th><th>function</th><th>location</th><th>outcome</th>'
             "<th>graph</th><th>breaks</th><th>recompile</th><th>compile ms</th><th>artifacts</th></tr>"]
    for i, fr in enumerate(frames):
        art = fr["artifacts"]
        g = fr["graph"]
        ops = sum(g.get("ops", {}).values()) if g else 0
        graph_cell = f'<a href="#graph-{i}">{_e(g["name"])}</a> ({ops} ops)' if g else "&#8212;"
        links = [_link(art, "gir", "GIR"), _link(art, "dot", "DOT"), _link(art, "svg", "SVG"),
                 _link(art, "cml", "Camel"), _link(art, "mlir", "MLIR"), _link(art, "mlir_lowered", "lowered"),
                 _link(art, "original_dis", "bytecode"), _link(art, "original_py", "source-like"),
                 _link(art, "rewritten_dis", "rewritten"), _link(art, "rewritten_py", "rewritten source-like"),
                 _link(art, "guards", "guards"), _link(art, "breaks", "breaks.json"),
                 _link(art, "recompiles", "recompiles"), _link(art, "times", "times"),
                 _link(art, "values", "values")]
        for k, r in enumerate(fr["resumes"]):
            links.append(f'<a href="{_e(r["dis"])}">resume {k}</a> (<a href="{_e(r["py"])}">source-like</a>)')
        brk = "<br>".join(f'{_e(b["code"])} {_e(b["reason"])} at {_e(os.path.basename(b["file"]))}:{b["line"]}'
                          for b in fr["breaks"]) or "&#8212;"
        rec = "<br>".join(_e(r) for r in fr["recompile_reasons"]) or "&#8212;"
        parts.append(f'<tr class="outcome-{_e(fr["outcome"])}"><td>{i}</td><td>{_e(fr["function"])}</td>'
                     f'<td>{_e(os.path.basename(fr["file"]))}:{fr["line"]}</td><td class="outcome">{_e(fr["outcome"])}</td>'
                     f"<td>{graph_cell}</td><td>{brk}</td><td>{rec}</td>"
                     f'<td>{fr["times"]["total_s"] * 1e3:.2f}</td><td>{" ".join(x for x in links if x)}</td></tr>')
    parts.append("</table>")
    parts += _source_section(manifest)
    parts.append('<h2 id="graphs">Graphs</h2>')
    for i, fr in enumerate(frames):
        g = fr["graph"]
        if not g:
            continue
        art, notes = fr["artifacts"], fr["notes"]
        parts.append(f'<h3 id="graph-{i}">Graph {_e(g["name"])} of {_e(fr["function"])} (frame {i})</h3>')
        ops = ", ".join(f"{_e(k)} &#215; {v}" for k, v in sorted(g.get("ops", {}).items()))
        parts.append(f"<p>inputs: {_e(', '.join(g.get('inputs', [])) or '(none)')}<br>ops: {ops or '(none)'}<br>"
                     f"stage times: {_e(', '.join(f'{k} {v * 1e3:.2f} ms' for k, v in fr['times'].items()))}</p>")
        for key in ("cml", "mlir", "svg", "values", "dot"):
            if key in notes:
                parts.append(f'<p class="note">{_e(key)}: {_e(notes[key])}</p>')
        if "svg" in art:
            parts.append(f'<div class="svg">{_inline_svg(root, art["svg"])}</div>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_index(root: str, manifest: dict) -> str:
    path = os.path.join(root, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_index(root, manifest))
    return path
