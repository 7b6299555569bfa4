"""Graph-break registry: every construct the translator does not capture has one
stable code, a one-line reason and a hint. The C++ translator reports breaks by
code from this table (and the Python host raises `GraphBreak` for what it
observes, e.g. an op without a meta kernel); explain() and XACC_LOG=breaks
report them together with the user's file:line."""

from __future__ import annotations

from dataclasses import dataclass

# code: (reason, hint)
BREAKS: dict[str, tuple[str, str]] = {
    "GB001": ("unsupported bytecode instruction", "rewrite the construct or move it out of the captured function"),
    "GB002": ("call to a function that cannot be traced", "mark the callee as plain Python or avoid it in the hot path"),
    "GB003": ("builtin print() has side effects on stdout", "remove the print or move it outside the captured function"),
    "GB004": ("data-dependent control flow on a tensor value", "use torch.where, or move the branch out of the captured function"),
    "GB005": ("tensor value read back to Python (.item(), .tolist(), bool())", "keep the value as a tensor"),
    "GB006": ("torch operator has no meta kernel or failed on meta tensors", "report the op; it runs in Python meanwhile"),
    "GB007": ("attribute write on a Python object", "return the value instead of storing it on an object"),
    "GB008": ("write to a global variable", "return the value instead of assigning a global"),
    "GB009": ("mutation of a container passed in from outside", "build a new container and return it"),
    "GB010": ("attribute access the translator cannot model", "access plain attributes, parameters and buffers only"),
    "GB011": ("operation on a value of an unsupported Python type", "keep to tensors, numbers, tuples, lists and dicts"),
    "GB012": ("nn.Module with hooks", "remove forward hooks or capture the module's forward directly"),
    "GB013": ("generator, coroutine or comprehension with a break inside", "unroll the comprehension into a loop"),
    "GB014": ("exception handling (try/except/with) around a break", "move the unsupported code outside the try/with block"),
    "GB015": ("graph break inside a loop: the frame runs in Python", "move the unsupported code out of the loop"),
    "GB016": ("recursion or inlining depth limit", "capture a smaller function"),
    "GB017": ("closure variable cells in a frame with a break", "avoid defining closures in a function that breaks"),
    "GB018": ("unsupported argument to a torch function", "pass tensors, numbers, tuples or lists"),
    "GB019": ("raise statement", "raise outside the captured region"),
    "GB020": ("internal translator error: the frame runs in Python", "please report it with XACC_LOG=capture output"),
    "GB021": ("NumPy operation the capture cannot reproduce exactly", "move it out of the captured function or write it with torch"),
    "GB022": ("a size that depends on a dynamic dim used as a plain Python number (branch, range, builtin)",
              "the frame compiles with static shapes; keep sizes in tensor ops, or pass dynamic=False"),
}


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
