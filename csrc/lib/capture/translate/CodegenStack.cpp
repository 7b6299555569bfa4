// Making the code objects of generated code (break, resume and loop-body
// functions): makeCode is the one place they are made, and it sets co_stacksize
// from a walk of the assembled bytes (Note [Stack depth by construction]),
// never from counts kept by hand while emitting.
#include "CodegenImpl.h"

namespace xacc::capture::translate::codegen {

// Note [Stack depth by construction]
// CPython sizes a frame from co_stacksize and never checks the value stack
// against it: code that goes deeper writes into the next frame (a break
// function whose graph call was not counted corrupted a reference count, then
// crashed; test_break_stack_depth.py). So the code generators do not count:
// codeStackDepth walks the control-flow graph of the finished bytes, as
// CPython's compiler does for the code it makes (compile.c's stackdepth):
//  * the depth at offset 0 is 0; each instruction changes it by its stack
//    effect, `PyCompile_OpcodeStackEffectWithJump` (what `dis.stack_effect`
//    calls: CPython's own per-version table, so no copy of it is kept here),
//    with jump=0 for the fall-through and jump=1 for a jump's target;
//  * a jump's target is `end of its caches +/- 2 * arg` (gen_opcodes.py checks
//    that rule against `dis` on every version); endsBlock() instructions do not
//    fall through;
//  * an exception-table handler is entered with the entry's depth, plus one
//    for `lasti` when the entry asks for it, plus the exception;
//  * the result is the deepest value over every reachable path. An instruction
//    reached with two different depths, a negative depth, an unknown opcode or
//    a jump out of the code is a bug in the generator: reported as an error (a
//    graph break), never assembled into a frame of the wrong size.

namespace {

/// `code.replace(**kwargs)`; null with a Python error on failure.
PyRef replaceCode(PyCodeObject* code, PyObject* kwargs) {
  PyRef method = PyRef::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "replace"));
  if (!method) return {};
  PyRef empty = PyRef::steal(PyTuple_New(0));
  return PyRef::steal(PyObject_Call(method.get(), empty.get(), kwargs));
}

/// d[k] = v, stealing v.
void setItem(PyObject* d, const char* k, PyObject* v) {
  PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
}

struct Step {
  int offset;   ///< byte offset of the instruction (of an EXTENDED_ARG prefix: its own)
  uint8_t op;
  int arg;      ///< the whole argument, EXTENDED_ARG prefixes included
  int next;     ///< byte offset after the instruction and its inline caches
};

/// The deepest value stack any path through `code` (with its exception
/// table) reaches; -1 with `error` when the code is not consistent.
int codeStackDepth(const std::string& code, const std::string& exceptionTable, std::string& error) {
  const int n = static_cast<int>(code.size());
  std::vector<Step> steps;
  std::vector<int> at(static_cast<size_t>(n / 2 + 1), -1);  // code unit -> step index
  const uint8_t extendedArg = opByte(Op::EXTENDED_ARG);
  int ext = 0;
  for (int off = 0; off + 1 < n;) {
    const auto op = static_cast<uint8_t>(code[static_cast<size_t>(off)]);
    const int arg = (ext << 8) | static_cast<uint8_t>(code[static_cast<size_t>(off) + 1]);
    const OpcodeInfo& info = opcodeInfo(op);
    if (info.op == Op::kNumOps) {
      error = "stack depth: unknown opcode " + std::to_string(op) + " at " + std::to_string(off);
      return -1;
    }
    const int next = off + 2 * (1 + info.caches);
    at[static_cast<size_t>(off / 2)] = static_cast<int>(steps.size());
    steps.push_back({off, op, arg, next});
    ext = op == extendedArg ? arg : 0;
    off = next;
  }
  std::vector<int> depth(steps.size(), -1);
  std::vector<int> work;
  int best = 0;
  std::string why;
  auto reach = [&](int offset, int d) {
    const int k = offset >= 0 && offset < n && offset % 2 == 0 ? at[static_cast<size_t>(offset / 2)] : -1;
    if (k < 0) return (why = "a jump to " + std::to_string(offset) + ", no instruction there"), false;
    if (d < 0) return (why = "a negative depth at " + std::to_string(offset)), false;
    best = std::max(best, d);
    int& known = depth[static_cast<size_t>(k)];
    if (known == d) return true;
    if (known >= 0)
      return (why = "offset " + std::to_string(offset) + " reached with depths " + std::to_string(known) + " and " +
                    std::to_string(d)),
             false;
    known = d;
    work.push_back(k);
    return true;
  };
  bool ok = reach(0, 0);
  // Handlers: the entry's depth, its lasti, the exception.
  const auto* q = reinterpret_cast<const unsigned char*>(exceptionTable.data());
  const size_t m = exceptionTable.size();
  for (size_t i = 0; ok && i < m;) {
    readExceptionVarint(q, m, i);  // start
    readExceptionVarint(q, m, i);  // length
    const int target = readExceptionVarint(q, m, i);
    const int dl = readExceptionVarint(q, m, i);
    ok = reach(2 * target, (dl >> 1) + (dl & 1) + 1);
  }
  while (ok && !work.empty()) {
    const Step& s = steps[static_cast<size_t>(work.back())];
    const int d = depth[static_cast<size_t>(work.back())];
    work.pop_back();
    if (s.op == extendedArg) {  // a prefix: no effect of its own
      ok = reach(s.next, d);
      continue;
    }
    const OpcodeInfo& info = opcodeInfo(s.op);
    const int arg = (info.flags & kHasArg) ? s.arg : 0;
    const bool isJump = info.flags & (kJumpForward | kJumpBackward);
    if (isJump) {
      const int e = PyCompile_OpcodeStackEffectWithJump(s.op, arg, 1);
      if (e == PY_INVALID_STACK_EFFECT) return (error = std::string("stack depth: no stack effect for ") + info.name), -1;
      const int target = (info.flags & kJumpBackward) ? s.next - 2 * s.arg : s.next + 2 * s.arg;
      ok = reach(target, d + e);
    }
    if (!ok || endsBlock(info.op)) continue;
    const int e = PyCompile_OpcodeStackEffectWithJump(s.op, arg, 0);
    if (e == PY_INVALID_STACK_EFFECT) return (error = std::string("stack depth: no stack effect for ") + info.name), -1;
    if (s.next >= n) {
      why = std::string("the code falls off its end after ") + info.name;
      ok = false;
      break;
    }
    ok = reach(s.next, d + e);
  }
  if (!ok) return (error = "stack depth: " + why), -1;
  return best;
}

}  // namespace

PyRef makeCode(PyCodeObject* base, PyCodeObject* orig, const CodeParts& p, std::string& error) {
  const int depth = codeStackDepth(p.code, p.exceptionTable, error);
  if (depth < 0) return {};
  auto bytes = [](const std::string& s) { return PyBytes_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size())); };
  PyRef kw = PyRef::steal(PyDict_New());
  setItem(kw.get(), "co_code", bytes(p.code));
  setItem(kw.get(), "co_linetable", bytes(p.linetable));
  setItem(kw.get(), "co_exceptiontable", bytes(p.exceptionTable));
  setItem(kw.get(), "co_stacksize", PyLong_FromLong(depth));
  setItem(kw.get(), "co_consts", PyList_AsTuple(p.consts));
  if (p.names) setItem(kw.get(), "co_names", PyList_AsTuple(p.names));
  setItem(kw.get(), "co_varnames", PyList_AsTuple(p.varnames));
  setItem(kw.get(), "co_nlocals", PyLong_FromSsize_t(PyList_GET_SIZE(p.varnames)));
  setItem(kw.get(), "co_argcount", PyLong_FromLong(p.argcount));
  setItem(kw.get(), "co_posonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_kwonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_flags", PyLong_FromLong(base->co_flags & ~(CO_VARARGS | CO_VARKEYWORDS)));
  if (p.cellvars) setItem(kw.get(), "co_cellvars", Py_NewRef(p.cellvars));
  if (p.freevars) setItem(kw.get(), "co_freevars", Py_NewRef(p.freevars));
  // The user's names: a traceback, sys._getframe and inspect see the user's
  // function (the registry tells generated code apart).
  setItem(kw.get(), "co_name", Py_NewRef(orig->co_name));
  setItem(kw.get(), "co_qualname", Py_NewRef(orig->co_qualname));
  PyRef made = replaceCode(base, kw.get());
  if (made) return made;
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyObject* s = ev ? PyObject_Str(ev) : nullptr;
  error = std::string("code.replace: ") + (s && PyUnicode_AsUTF8(s) ? PyUnicode_AsUTF8(s) : "failed");
  Py_XDECREF(s);
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
  PyErr_Clear();
  return {};
}

}  // namespace xacc::capture::translate::codegen
