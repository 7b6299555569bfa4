"""Graph-break registry: every construct the translator does not capture has one
stable code, a one-line reason and a hint, declared once in
csrc/include/xacc/capture/GraphBreaks.def (docs/graph-breaks.md is generated from
it). The C++ translator reports breaks by the table's names, the Python host
raises `GraphBreak` for what it observes (e.g. an op without a meta kernel);
explain() and XACC_LOG=breaks report them together with the user's file:line."""

from __future__ import annotations

from dataclasses import dataclass

from xacc._C import capture as _C

# code: (reason, hint). The table is csrc/include/xacc/capture/GraphBreaks.def,
# compiled into the extension (the C++ translator names its rows GB::Name);
# Python raises GraphBreak with a code of it (tests/python/test_code_tables.py
# checks every "GBnnn" spelled in the sources against it).
BREAKS: dict[str, tuple[str, str]] = {code: (reason, hint) for code, _name, reason, hint in _C.graph_breaks()}


@dataclass
class BreakInfo:
    """One graph break as explain() reports it."""

    code: str
    reason: str
    hint: str
    detail: str
    filename: str
    lineno: int
    function: str
    # User stack at the break, innermost first: (file, line, function) of each
    # inlined frame, then the captured frame (export/explain record field).
    stack: tuple = ()

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}: {self.code} {self.reason}: {self.detail} (hint: {self.hint})"


class GraphBreak(Exception):
    """Raised by opcode handlers; caught by the translator's top-level loop."""

    def __init__(self, code: str, detail: str = "") -> None:
        assert code in BREAKS, code
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.where: tuple[str, int, str] | None = None  # innermost user location
        self.stack: list[tuple[str, int, str]] = []  # innermost first; see BreakInfo.stack

    @property
    def reason(self) -> str:
        return BREAKS[self.code][0]

    @property
    def hint(self) -> str:
        return BREAKS[self.code][1]

    def info(self) -> BreakInfo:
        f, l, n = self.where or ("<unknown>", 0, "<unknown>")
        stack = tuple(self.stack) or ((f, l, n),)
        return BreakInfo(self.code, self.reason, self.hint, self.detail, f, l, n, stack)
