"""Readable Python-like source for a code object (original frames, generated
break functions, resume functions). CPython 3.11 bytecode is replayed on a
symbolic stack of expression strings; stores, calls whose results are dropped,
returns and jumps become statements, jump targets become labels. The result is
for reading, not for running: control flow stays as `if not c: goto L12`.
"""

from __future__ import annotations

import dis
import types

_BINARY = {0: "+", 1: "&", 2: "//", 3: "<<", 4: "@", 5: "*", 6: "%", 7: "|", 8: "**", 9: ">>", 10: "-",
           11: "/", 12: "^"}


def _const(v: object) -> str:
    if isinstance(v, types.CodeType):
        from xacc._C import capture as C
        if C.is_resume(v):  # it carries the user's names (translate/Codegen.h)
            return f"<resume {v.co_qualname} at line {C.resume_line(v)}>"
        return f"<code {v.co_qualname}>"
    if isinstance(v, types.FunctionType):
        from xacc._C import capture as C
        if C.is_resume(v.__code__):  # it carries the user's names (translate/Codegen.h)
            return f"<resume {v.__code__.co_qualname} at line {C.resume_line(v.__code__)}>"
        return f"<function {v.__code__.co_qualname}>"
    if type(v).__name__ == "GraphFunction":
        return "<compiled graph>"
    r = repr(v)
    if len(r) > 60:
        r = f"<{type(v).__name__}>"
    return r


def python_like(code: types.CodeType) -> str:
    """Pseudo-source of `code` (one function; nested code objects are named, not expanded)."""
    args = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    if code.co_flags & 0x04:
        args.append("*" + code.co_varnames[len(args)])
    if code.co_flags & 0x08:
        args.append("**" + code.co_varnames[len(args)])
    lines = [f"def {code.co_qualname}({', '.join(args)}):  # {code.co_filename}:{code.co_firstlineno}"]
    instrs = list(dis.get_instructions(code))
    targets = {i.argval for i in instrs if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs}
    stack: list[str] = []
    kwnames: tuple = ()
    tmp = 0

    def emit(s: str) -> None:
        lines.append("    " + s)

    def pop(n: int = 1) -> list[str]:
        nonlocal stack
        if n == 0:
            return []
        got = stack[-n:] if len(stack) >= n else ["<?>"] * (n - len(stack)) + stack
        stack = stack[:-n] if len(stack) >= n else []
        return got

    for ins in instrs:
        if ins.offset in targets:
            if stack:  # values live across a jump: name them so the listing stays readable
                emit(f"# stack: {', '.join(stack)}")
            lines.append(f"  L{ins.offset}:")
        op, a = ins.opname, ins.argval
        if op in ("RESUME", "NOP", "CACHE", "PRECALL", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL",
                  "KW_NAMES"):
            if op == "KW_NAMES":
                kwnames = code.co_consts[ins.arg]
            continue
        if op == "PUSH_NULL":
            stack.append("NULL")
        elif op in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME"):
            stack.append(str(a))
        elif op == "LOAD_GLOBAL":
            if ins.arg & 1:
                stack.append("NULL")
            stack.append(str(a))
        elif op == "LOAD_CONST":
            stack.append(_const(a))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            (o,) = pop()
            if op == "LOAD_METHOD":
                stack.append("NULL")
            stack.append(f"{o}.{a}")
        elif op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL"):
            (v,) = pop()
            emit(f"{'global ' if op == 'STORE_GLOBAL' else ''}{a} = {v}")
        elif op == "STORE_ATTR":
            o, v = pop(2)[::-1]
            emit(f"{o}.{a} = {v}")
        elif op == "STORE_SUBSCR":
            v, o, k = pop(3)
            emit(f"{o}[{k}] = {v}")
        elif op == "BINARY_SUBSCR":
            o, k = pop(2)
            if k.startswith("(") and k.endswith(")") and ":" in k:
                k = k[1:-1].rstrip(",")
            stack.append(f"{o}[{k}]")
        elif op == "BINARY_OP":
            x, y = pop(2)
            sym = _BINARY.get(ins.arg % 13, "?")
            if ins.arg >= 13:
                emit(f"{x} {sym}= {y}")
                stack.append(x)
            else:
                stack.append(f"({x} {sym} {y})")
        elif op == "COMPARE_OP":
            x, y = pop(2)
            stack.append(f"({x} {a} {y})")
        elif op in ("IS_OP", "CONTAINS_OP"):
            x, y = pop(2)
            word = ("is not" if ins.arg else "is") if op == "IS_OP" else ("not in" if ins.arg else "in")
            stack.append(f"({x} {word} {y})")
        elif op.startswith("UNARY_"):
            (x,) = pop()
            sym = {"UNARY_NEGATIVE": "-", "UNARY_NOT": "not ", "UNARY_INVERT": "~", "UNARY_POSITIVE": "+"}[op]
            stack.append(f"({sym}{x})")
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            items = pop(ins.arg)
            o, c = {"BUILD_TUPLE": ("(", ",)" if ins.arg == 1 else ")"), "BUILD_LIST": ("[", "]"),
                    "BUILD_SET": ("{", "}")}[op]
            stack.append(o + ", ".join(items) + c)
        elif op == "BUILD_MAP":
            items = pop(2 * ins.arg)
            stack.append("{" + ", ".join(f"{items[i]}: {items[i + 1]}" for i in range(0, len(items), 2)) + "}")
        elif op == "BUILD_CONST_KEY_MAP":
            keys = pop()[0]
            vals = pop(ins.arg)
            stack.append(f"dict(zip({keys}, ({', '.join(vals)})))")
        elif op == "BUILD_SLICE":
            parts = pop(ins.arg)
            stack.append(":".join("" if p == "None" else p for p in parts))
        elif op == "CALL":
            argv = pop(ins.arg)
            fn = pop(2)
            callee = fn[1] if fn[0] == "NULL" else f"{fn[0]}" if fn[1] == "NULL" else fn[1]
            if kwnames:
                kw, kwnames = kwnames, ()
                pos, named = argv[:len(argv) - len(kw)], argv[len(argv) - len(kw):]
                argv = pos + [f"{k}={v}" for k, v in zip(kw, named)]
            if fn[0] != "NULL" and fn[1] != "NULL":
                argv = [fn[1]] + argv  # self, unbound-method form
                callee = fn[0]
            stack.append(f"{callee}({', '.join(argv)})")
        elif op == "CALL_FUNCTION_EX":
            kw = pop()[0] if ins.arg & 1 else None
            (sa,) = pop()
            fn = pop(2)
            callee = fn[1] if fn[0] == "NULL" else fn[0]
            stack.append(f"{callee}(*{sa}{', **' + kw if kw else ''})")
        elif op == "POP_TOP":
            (v,) = pop()
            if "(" in v and v != "NULL":
                emit(v)
        elif op == "RETURN_VALUE":
            (v,) = pop()
            emit(f"return {v}")
        elif op == "COPY":
            stack.append(stack[-ins.arg] if len(stack) >= ins.arg else "<?>")
        elif op == "SWAP":
            if len(stack) >= ins.arg:
                stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        elif op == "UNPACK_SEQUENCE":
            (v,) = pop()
            names = [f"_t{tmp + i}" for i in range(ins.arg)]
            tmp += ins.arg
            emit(f"{', '.join(names)} = {v}")
            stack.extend(reversed(names))
        elif op == "GET_ITER":
            (v,) = pop()
            stack.append(f"iter({v})")
        elif op == "FOR_ITER":
            it = stack[-1] if stack else "<?>"
            name = f"_t{tmp}"
            tmp += 1
            emit(f"{name} = next({it})  # exhausted: goto L{a}")
            stack.append(name)
        elif op.startswith("POP_JUMP") or op.startswith("JUMP_IF"):
            (c,) = pop()
            neg = "TRUE" not in op and "NOT_NONE" not in op
            if "NONE" in op:
                cond = f"{c} is {'not ' if 'NOT_NONE' in op else ''}None"
            else:
                cond = c if not neg else f"not {c}"
            emit(f"if {cond}: goto L{a}")
        elif op.startswith("JUMP"):
            emit(f"goto L{a}")
        elif op == "MAKE_FUNCTION":
            (c,) = pop()
            flags = ins.arg or 0  # 3.13: no argument, each flag is a SET_FUNCTION_ATTRIBUTE
            for bit in (0x08, 0x04, 0x02, 0x01):
                if flags & bit:
                    pop()
            stack.append(f"make_function({c})")
        elif op == "SET_FUNCTION_ATTRIBUTE":  # 3.13: [value, function] -> [function]
            (v, f) = pop(2)
            stack.append(f)
        elif op == "RAISE_VARARGS":
            v = pop(ins.arg)
            emit(f"raise {', '.join(v)}".rstrip())
        elif op == "LIST_APPEND" or op == "SET_ADD":
            (v,) = pop()
            emit(f"{stack[-ins.arg] if len(stack) >= ins.arg else '<?>'}.append({v})")
        elif op == "LIST_EXTEND":
            (v,) = pop()
            if stack:
                t = stack.pop()
                stack.append(f"[*{t.strip('[]') + ', ' if t not in ('[]',) else ''}*{v}]".replace(", ]", "]"))
        elif op == "LIST_TO_TUPLE":
            (v,) = pop()
            stack.append(f"tuple({v})")
        else:
            # Anything else: show the instruction and keep the stack depth right.
            try:
                effect = dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None,
                                          jump=False)
            except ValueError:
                effect = 0
            emit(f"# {op} {ins.argrepr}".rstrip())
            if effect < 0:
                pop(-effect)
            else:
                stack.extend(f"<{op.lower()}>" for _ in range(effect))
    return "\n".join(lines) + "\n"

