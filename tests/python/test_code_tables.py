"""Issue 21, criterion 4 (diagnostic and graph-break codes): every diagnostic
code is declared once, in its table (csrc/include/xacc/support/CoreDiags.def for
the core, camel/CamelDiags.def and camel/RuntimeDiags.def for Camel), every
graph-break code in csrc/include/xacc/capture/GraphBreaks.def; no code appears
elsewhere in the C++ sources as a literal, every graph-break code the Python
sources spell is in the table, and docs/diagnostics.md and docs/graph-breaks.md
are generated from the tables."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["csrc/include/xacc/support/CoreDiags.def", "csrc/include/xacc/camel/CamelDiags.def",
          "csrc/include/xacc/camel/RuntimeDiags.def"]
ROW = re.compile(r'^(?:RUNTIME_)?DIAG\((\w+),\s*"([EW]\d{4})"', re.M)
LITERAL = re.compile(r'"([EW]\d{4})"')

# Files that may still spell codes as literals: none left. (The test fails when a
# file here has no literal left, so the list can only shrink.)
PENDING: set[str] = set()


def code_text(path: Path) -> str:
    """The file without its // comments (examples of codes in comments are fine)."""
    return re.sub(r"//[^\n]*", "", path.read_text(errors="replace"))


def literals() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix in (".cpp", ".h", ".in") and path.is_file():
            codes = LITERAL.findall(code_text(path))
            if codes:
                found[str(path.relative_to(ROOT))] = codes
    return found


def test_codes_are_declared_once() -> None:
    seen: dict[str, str] = {}
    for table in TABLES:
        for name, code in ROW.findall((ROOT / table).read_text()):
            assert code not in seen, f"{code} is declared twice: {seen[code]} and {table} ({name})"
            seen[code] = table
    assert len(seen) > 150


def test_no_code_literal_outside_its_table() -> None:
    found = literals()
    stray = {f: c for f, c in found.items() if f not in PENDING}
    assert not stray, f"diagnostic codes spelled as literals (use the table's name): {stray}"
    done = sorted(f for f in PENDING if f not in found)
    assert not done, f"no literal codes left in {done}: remove them from PENDING"


def test_every_core_code_is_used() -> None:
    """A row nobody reports is a stale fact."""
    text = "".join(code_text(p) for p in (ROOT / "csrc").rglob("*") if p.suffix in (".cpp", ".h") and p.is_file())
    pending = "".join(code_text(ROOT / f) for f in sorted(PENDING))
    rows = ROW.findall((ROOT / TABLES[0]).read_text())
    unused = [name for name, code in rows
              if f"CoreDiag::{name}" not in text and f'"{code}"' not in pending]
    assert not unused, f"CoreDiags.def rows never reported: {unused}"


def test_diagnostics_doc_is_generated() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_diag_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = (ROOT / "docs" / "diagnostics.md").read_text()
    assert "| E0417 | StackOverflow |" in doc and "| E3014 |" in doc


# -- graph breaks ----------------------------------------------------------------------

BREAK_TABLE = ROOT / "csrc/include/xacc/capture/GraphBreaks.def"
BREAK_ROW = re.compile(r'^GRAPH_BREAK\((\w+),\s*"(GB\d{3})"', re.M)
BREAK_LITERAL = re.compile(r'"GB\d{3}"')
PY_BREAK_LITERAL = re.compile(r"""["'](GB\d{3})["']""")


def break_table() -> dict[str, str]:
    """code -> name of every GRAPH_BREAK row."""
    return {code: name for name, code in BREAK_ROW.findall(BREAK_TABLE.read_text())}


def test_graph_break_codes_are_declared_once() -> None:
    rows = BREAK_ROW.findall(BREAK_TABLE.read_text())
    codes = [c for _, c in rows]
    names = [n for n, _ in rows]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names), rows
    # Numbered in row order with no gap: a new row takes the next number.
    assert codes == [f"GB{i:03d}" for i in range(1, len(codes) + 1)], codes
    assert len(codes) >= 25


def test_no_graph_break_literal_in_csrc() -> None:
    """C++ names a break GB::Name; "GBnnn" is spelled only in the table
    (scripts/codemod_gb.py rewrites stragglers)."""
    stray = {}
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix in (".cpp", ".h", ".in", ".inc") and path.is_file() and path != BREAK_TABLE:
            found = BREAK_LITERAL.findall(code_text(path))
            if found:
                stray[str(path.relative_to(ROOT))] = found
    assert not stray, f"graph-break codes spelled as literals (run scripts/codemod_gb.py): {stray}"


def test_python_break_codes_are_in_the_table() -> None:
    """Every "GBnnn" the Python sources and tests spell (GraphBreak("GB021", ...),
    expected codes) is a row of the table."""
    table = break_table()
    unknown = {}
    for top in ("xacc", "xjit", "camel_lang", "tests", "benchmarks", "scripts"):
        for path in sorted((ROOT / top).rglob("*.py")):
            bad = sorted(set(PY_BREAK_LITERAL.findall(path.read_text(errors="replace"))) - set(table))
            if bad:
                unknown[str(path.relative_to(ROOT))] = bad
    assert not unknown, f"graph-break codes not in {BREAK_TABLE.name}: {unknown}"
    used = "".join(p.read_text() for p in sorted((ROOT / "xacc").rglob("*.py")))
    assert '"GB021"' in used  # the scan sees the host's codes


def test_python_breaks_come_from_the_table() -> None:
    """xacc's BREAKS is the .def's rows, read through the extension."""
    from xacc._C import capture as C
    from xacc._src.capture.breaks import BREAKS

    text = BREAK_TABLE.read_text()
    rows = re.findall(r'^GRAPH_BREAK\((\w+),\s*"(GB\d{3})",\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)"\)',
                      text, re.M)
    assert BREAKS == {code: (reason, hint) for _, code, reason, hint in rows}
    assert [(c, n) for c, n, _, _ in C.graph_breaks()] == [(c, n) for n, c, _, _ in rows]


def test_codemod_rewrites_literals_once(tmp_path: Path) -> None:
    """scripts/codemod_gb.py turns the literal forms the translator used into
    table names, leaves comments alone, and is a no-op on its own output."""
    src = tmp_path / "Sample.cpp"
    src.write_text('''bool f(T& t, std::string code, Failure& x) {
  fail("GB003", "print");  // was "GB003"
  fail(code.empty() ? "GB006" : code, detail);
  fail(ok ? "GB021" : "GB018", "arg");
  if (x.code == "GB011") x.code = "GB020";
  return bail("GB014", "try");
}
''')
    script = ROOT / "scripts" / "codemod_gb.py"
    r = subprocess.run([sys.executable, str(script), "--check", str(src)], capture_output=True, text=True)
    assert r.returncode == 1 and "would rewrite" in r.stdout, r
    r = subprocess.run([sys.executable, str(script), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert src.read_text() == '''bool f(T& t, std::string code, Failure& x) {
  fail(GB::Print, "print");  // was "GB003"
  fail(hostBreak(code, GB::NoMetaKernel), detail);
  fail(ok ? GB::NumpyOperation : GB::UnsupportedTorchArgument, "arg");
  if (x.code == gbCode(GB::UnsupportedType)) x.code = gbCode(GB::Internal);
  return bail(GB::BreakInTry, "try");
}
'''
    once = src.read_text()
    r = subprocess.run([sys.executable, str(script), "--check", str(src)], capture_output=True, text=True)
    assert r.returncode == 0 and src.read_text() == once, r
    bad, unknown = tmp_path / "Bad.cpp", "GB" + "999"  # not spelled whole: the scan above reads this file
    bad.write_text(f'fail("{unknown}", "x");\n')
    r = subprocess.run([sys.executable, str(script), str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and unknown in r.stderr and bad.read_text() == f'fail("{unknown}", "x");\n'


def test_graph_breaks_doc_is_generated() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_diag_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = (ROOT / "docs" / "graph-breaks.md").read_text()
    for name, code in BREAK_ROW.findall(BREAK_TABLE.read_text()):
        assert f"| {code} | {name} |" in doc


# -- log channels ----------------------------------------------------------------------

def test_log_channels_are_declared_once() -> None:
    """C++'s channel table (support/LogChannels.def) names Python's CHANNELS in
    order, and only support/Log.cpp parses XACC_LOG in C++ (by its generated
    name, Note [Environment names])."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_xacc_config_tables", ROOT / "xacc" / "_src" / "config.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    cpp = re.findall(r'^LOG_CHANNEL\((\w+),\s*"(\w+)"\)', (ROOT / "csrc/include/xacc/support/LogChannels.def").read_text(),
                     re.M)
    assert [n for _, n in cpp] == list(mod.CHANNEL_NAMES)
    readers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*")
                     if p.suffix in (".cpp", ".h") and p.is_file() and "env::kLog" in code_text(p))
    assert readers == ["csrc/lib/support/Log.cpp"], readers
