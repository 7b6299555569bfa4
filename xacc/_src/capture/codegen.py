"""Bytecode generation for graph breaks (CPython 3.11).

Two kinds of code objects are made here:

* the *break function* of a frame: same argument slots as the frame; it calls
  the prefix graph (a `GraphFunction` constant that reads its inputs from the
  arguments), rebuilds the live locals and the value stack, runs the
  unsupported instruction(s) copied verbatim from the original code, then
  passes the stack and the locals to a resume function and returns its result;
* the *resume function* for an offset of an original code object: its
  arguments are all the original locals followed by the stack values; a
  prologue pushes them back (NULLs where 3.11's call protocol had them),
  deletes locals that were unbound, and jumps into an unchanged copy of the
  original bytecode, which follows. Jumps in 3.11 bytecode are relative, so the
  copy runs as is; exception-table offsets are shifted by the prologue length
  and closure-variable opargs by the number of added locals.

Resume functions re-enter the frame hook like any function (they get their own
cache entries); break functions are marked skip.
"""

from __future__ import annotations

import dis
import opcode
import types
from typing import Any

OP = opcode.opmap
CACHES = opcode._inline_cache_entries
_DEREF_OPS = {OP[n] for n in ("LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE",
                              "LOAD_CLASSDEREF", "MAKE_CELL")}
HAS_JREL = set(opcode.hasjrel)
BACKWARD = {OP[n] for n in ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "POP_JUMP_BACKWARD_IF_FALSE",
                            "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_NONE",
                            "POP_JUMP_BACKWARD_IF_NOT_NONE")}

# Resume code objects -> (original code, prologue length in bytes).
RESUME_ORIGIN: dict[types.CodeType, tuple[types.CodeType, int]] = {}


def origin(code: types.CodeType) -> tuple[types.CodeType, int]:
    return RESUME_ORIGIN.get(code, (code, 0))


def _varint(val: int, first: bool = False) -> bytes:
    chunks = [val & 63]
    val >>= 6
    while val:
        chunks.append(val & 63)
        val >>= 6
    chunks.reverse()
    out = [c | 64 for c in chunks[:-1]] + [chunks[-1]]
    if first:
        out[0] |= 128
    return bytes(out)


def _svarint(val: int) -> bytes:
    v = ((-val) << 1) | 1 if val < 0 else val << 1
    out = bytearray()
    while v >= 64:
        out.append(64 | (v & 63))
        v >>= 6
    out.append(v)
    return bytes(out)


def shift_derefs(raw: bytes, nvars: int, shift: int) -> bytes:
    """Adds `shift` to closure-variable opargs that index past `nvars` locals."""
    if shift == 0:
        return raw
    b = bytearray(raw)
    for i in range(0, len(b), 2):
        if b[i] in _DEREF_OPS and b[i + 1] >= nvars and (i == 0 or b[i - 2] != OP["EXTENDED_ARG"]):
            if b[i + 1] + shift > 255:
                raise ValueError("closure index needs EXTENDED_ARG")
            b[i + 1] += shift
    return bytes(b)


class Asm:
    """A tiny assembler: instructions with labels, inline caches and a line table."""

    def __init__(self, line: int | None, first_line: int) -> None:
        self.items: list[tuple] = []  # ("op", opcode, arg|label) | ("raw", bytes) | ("label", name)
        self.line = line
        self.first_line = first_line

    def op(self, name: str, arg: Any = 0) -> None:
        self.items.append(("op", OP[name], arg))

    def raw(self, code: bytes) -> None:
        self.items.append(("raw", code))

    def label(self, name: str) -> None:
        self.items.append(("label", name))

    def assemble(self) -> tuple[bytes, bytes]:
        ext = {}  # item index -> number of EXTENDED_ARG prefixes
        for _ in range(4):
            offsets, labels, pos = [], {}, 0
            for i, it in enumerate(self.items):
                offsets.append(pos)
                if it[0] == "label":
                    labels[it[1]] = pos
                elif it[0] == "raw":
                    pos += len(it[1])
                else:
                    pos += 2 * (1 + ext.get(i, 0) + CACHES[it[1]])
            changed = False
            out = bytearray()
            resolved = []
            for i, it in enumerate(self.items):
                if it[0] != "op":
                    continue
                arg = it[2]
                if isinstance(arg, str):
                    end = offsets[i] + 2 * (1 + ext.get(i, 0) + CACHES[it[1]])
                    arg = (labels[arg] - end) // 2
                    assert arg >= 0, "only forward jumps are generated"
                need = 0 if arg < 256 else 1 if arg < 65536 else 2
                if need != ext.get(i, 0):
                    ext[i] = need
                    changed = True
                resolved.append((i, arg))
            if not changed:
                break
        code = bytearray()
        units: list[int] = []  # code units per emitted item, for the line table
        args = dict(resolved)
        for i, it in enumerate(self.items):
            if it[0] == "label":
                continue
            if it[0] == "raw":
                code += it[1]
                units.append(len(it[1]) // 2)
                continue
            arg = args[i]
            n = ext.get(i, 0)
            for k in range(n, 0, -1):
                code += bytes([OP["EXTENDED_ARG"], (arg >> (8 * k)) & 255])
            code += bytes([it[1], arg & 255]) + b"\x00\x00" * CACHES[it[1]]
            units.append(1 + n + CACHES[it[1]])
        return bytes(code), self._linetable(sum(units))

    def _linetable(self, total: int) -> bytes:
        out = bytearray()
        first = True
        while total > 0:
            n = min(8, total)
            if self.line is None:
                out.append(0x80 | (15 << 3) | (n - 1))
            else:
                out.append(0x80 | (13 << 3) | (n - 1))
                out += _svarint((self.line - self.first_line) if first else 0)
                first = False
            total -= n
        return bytes(out)


def _exception_table(entries: list, shift_bytes: int) -> bytes:
    out = bytearray()
    for e in entries:
        start = (e.start + shift_bytes) // 2
        out += _varint(start, first=True)
        out += _varint((e.end - e.start) // 2)
        out += _varint((e.target + shift_bytes) // 2)
        out += _varint((e.depth << 1) | int(e.lasti))
    return bytes(out)


def make_resume(orig: types.CodeType, target: int, stack: list[bool], unbound: list[int]) -> types.CodeType:
    """Resume code for `orig` at byte offset `target`. `stack[i]` is False for a
    NULL slot; `unbound` lists local indices to delete before jumping."""
    nvals = sum(1 for s in stack if s)
    temps = tuple(f"__xacc_stack{i}" for i in range(nvals))
    varnames = orig.co_varnames + temps
    asm = Asm(None, orig.co_firstlineno)
    if orig.co_freevars:
        asm.op("COPY_FREE_VARS", len(orig.co_freevars))
    asm.op("RESUME", 0)
    k = 0
    for s in stack:
        if s:
            asm.op("LOAD_FAST", len(orig.co_varnames) + k)
            k += 1
        else:
            asm.op("PUSH_NULL")
    for i in unbound:
        asm.op("DELETE_FAST", i)
    asm.op("JUMP_FORWARD", "body")
    asm.label("body")
    prologue, lt = asm.assemble()
    # The jump lands on the body start; add the target offset to its argument.
    pro = bytearray(prologue)
    jf = len(pro) - 2
    while pro[jf] != OP["JUMP_FORWARD"]:
        jf -= 2
    arg = pro[jf + 1] + target // 2
    if jf >= 2 and pro[jf - 2] == OP["EXTENDED_ARG"]:
        arg += pro[jf - 1] << 8
    if arg > 255:
        # Re-assemble with a wide jump: pad with EXTENDED_ARG via a NOP-free rebuild.
        asm.items[-2] = ("op", OP["JUMP_FORWARD"], arg)
        asm.items.pop()
        prologue, lt = asm.assemble()
    else:
        pro[jf + 1] = arg
        prologue = bytes(pro)
    body = shift_derefs(orig.co_code, len(orig.co_varnames), len(temps))
    code = prologue + body
    linetable = lt + orig.co_linetable
    exc = _exception_table(list(dis._parse_exception_table(orig)), len(prologue))
    flags = orig.co_flags & ~(0x04 | 0x08)  # no *args / **kwargs: everything is positional
    name = f"__xacc_resume_{orig.co_name}_at_{target}"
    new = orig.replace(
        co_code=code, co_varnames=varnames, co_nlocals=len(varnames), co_argcount=len(varnames),
        co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=flags, co_linetable=linetable,
        co_exceptiontable=exc, co_stacksize=orig.co_stacksize + len(stack) + 2, co_name=name,
        co_qualname=f"{orig.co_qualname}.<resume at {target}>")
    RESUME_ORIGIN[new] = (orig, len(prologue))
    return new


def instruction_group(orig: types.CodeType, offset: int) -> tuple[int, int]:
    """Byte range [start, end) of the instruction at `offset` with its
    EXTENDED_ARG prefixes (and, for CALL, its PRECALL/KW_NAMES) and caches."""
    code = orig.co_code
    op = code[offset]
    end = offset + 2 * (1 + CACHES[op])
    start = offset
    if op == OP["CALL"]:
        start -= 2 * (1 + CACHES[OP["PRECALL"]])
        while start >= 2 and code[start - 2] == OP["EXTENDED_ARG"]:
            start -= 2
        # KW_NAMES (no caches) may precede PRECALL.
        if start >= 2 and code[start - 2] == OP["KW_NAMES"]:
            start -= 2
            while start >= 2 and code[start - 2] == OP["EXTENDED_ARG"]:
                start -= 2
    while start >= 2 and code[start - 2] == OP["EXTENDED_ARG"]:
        start -= 2
    return start, end


def loop_ranges(code: types.CodeType) -> list[tuple[int, int]]:
    out = []
    for ins in dis.get_instructions(code):
        if ins.opcode in BACKWARD:
            out.append((ins.argval, ins.offset))
    return out


def in_try(code: types.CodeType, offset: int) -> bool:
    return any(e.start <= offset < e.end for e in dis._parse_exception_table(code))
