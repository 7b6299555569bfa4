"""An independent check of the co_stacksize of generated code.

The code generators set co_stacksize from a walk of the bytes they assembled
(Note [Stack depth by construction] in translate/CodegenStack.cpp). `max_depth`
walks the same code again, here in Python with `dis`: the instructions from
`dis.get_instructions`, their stack effects from `dis.stack_effect`, jump
targets from `argval`, handlers from the exception table. `violations` compares
the two for a code object; test_break_stack_depth.py uses it on chosen frames,
and with XACC_TEST_STACK_DEPTH=1 the capture suite's conftest runs it on every
code object a test made.
"""

from __future__ import annotations

import dis
import types

from xacc import _C

C = _C.capture
# Instructions that never fall through to the next one (3.11 to 3.13).
ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                  "JUMP_BACKWARD_NO_INTERRUPT"})
JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))


def walk(code: types.CodeType) -> tuple[int, list[str]]:
    """The deepest value stack any path through `code` reaches, and the
    offsets reached with two different depths (a code generator's bug)."""
    insts = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    index = {ins.offset: k for k, ins in enumerate(insts)}
    depth_at: dict[int, int] = {}
    conflicts: list[str] = []
    work: list[int] = []

    def reach(offset: int, d: int) -> None:
        known = depth_at.get(offset)
        if known is None:
            depth_at[offset] = d
            work.append(offset)
        elif known != d:
            conflicts.append(f"offset {offset}: depths {known} and {d}")
            if d > known:
                depth_at[offset] = d
                work.append(offset)

    reach(0, 0)
    for entry in dis._parse_exception_table(code) if code.co_exceptiontable else ():  # noqa: SLF001
        reach(entry.target, entry.depth + int(entry.lasti) + 1)
    best = 0
    while work:
        offset = work.pop()
        k = index[offset]
        d = depth_at[offset]
        best = max(best, d)
        ins = insts[k]
        arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
        if ins.opcode in JUMPS:
            taken = d + dis.stack_effect(ins.opcode, arg, jump=True)
            best = max(best, taken)
            reach(ins.argval, taken)
        if ins.opname in ENDS:
            continue
        d += dis.stack_effect(ins.opcode, arg, jump=False)
        best = max(best, d)
        if k + 1 < len(insts):
            reach(insts[k + 1].offset, d)
    return best, conflicts


def max_depth(code: types.CodeType) -> int:
    """The deepest value stack any path through `code` reaches."""
    return walk(code)[0]


def violations(code: types.CodeType) -> list[str]:
    """What is wrong with `code`'s co_stacksize: not the depth its bytecode
    reaches, or an instruction reached with two depths."""
    need, conflicts = walk(code)
    out = [f"{code.co_qualname}: {c}" for c in conflicts]
    if need != code.co_stacksize:
        out.append(f"{code.co_qualname} (argcount {code.co_argcount}) reaches stack depth {need} "
                   f"but has co_stacksize {code.co_stacksize}")
    return out


def made_by(code: types.CodeType):
    """A break function's code and the code objects made with it (its resume
    and loop-body functions, and theirs)."""
    stack = [code]
    seen = set()
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        yield c
        # The user's own code objects (a nested def's) are the compiler's: not checked.
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType) and (C.is_resume(k) or C.is_loop_body(k)))


def generated_codes(code: types.CodeType, seen: set | None = None):
    """The break functions xacc made for `code`, and those of the resume
    functions they call, with the code objects nested in them."""
    seen = set() if seen is None else seen
    if id(code) in seen:
        return
    seen.add(id(code))
    for info in C.entries(code):
        made = info["code"]
        if made is None:
            continue
        for c in made_by(made):
            yield c
            if c is not made:
                yield from generated_codes(c, seen)  # a resume function's own entries
