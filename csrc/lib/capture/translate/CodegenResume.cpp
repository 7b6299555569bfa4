// Resume code objects: the code that continues an original function after a
// graph break (Note [Resume code]). Break functions are in Codegen.cpp.
#include "CodegenImpl.h"

namespace xacc::capture::translate::codegen {

// Note [Resume code]
// The resume code for offset `target` of an original code object holds a
// prologue and the original's instructions from `start` to the end, where
// `start` is the lowest offset the code from `target` on reaches by jumps and
// exception handlers (Bytecode::regionStart; `target` itself unless the break
// sits inside a loop that is copied whole). The prologue pushes the stack
// arguments back, unbinds what was unbound, and jumps to `target`. 3.11 jumps
// are relative, so the copied instructions run unchanged; exception-table
// entries before `start` are dropped and the rest shifted, and the line table
// is the original's from `start` on, its first located entry re-encoded
// against the prologue's line state. So making, decoding and translating the
// resume code of a late break costs what the code after it costs, not the
// whole function (issue #27: capture time per break must not grow with the
// breaks before it). A resume code offset maps to the original's as
// `offset - shift`, with shift = prologue length - start (resumeOrigin), which
// may be negative.

namespace {

/// `code`'s exception table for a copy of its code from byte `start` on
/// placed after `prologue` bytes: entries that end before `start` dropped,
/// the others clipped to it and moved. False when a kept entry's handler lies
/// before `start` (regionStart rules that out).
bool suffixExceptionTable(PyCodeObject* code, int start, int prologue, std::string& out) {
  PyObject* et = code->co_exceptiontable;
  if (!et || !PyBytes_Check(et)) return true;
  const auto* q = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(et));
  size_t m = static_cast<size_t>(PyBytes_GET_SIZE(et)), i = 0;
  auto read = [&] { return readExceptionVarint(q, m, i); };
  const int su = start / 2, pu = prologue / 2;
  while (i < m) {
    int s = read(), length = read(), target = read(), dl = read();
    const int e = s + length;
    if (e <= su) continue;
    if (target < su) return false;
    s = std::max(s, su);
    writeExceptionVarint(out, s - su + pu, true);
    writeExceptionVarint(out, e - s, false);
    writeExceptionVarint(out, target - su + pu, false);
    writeExceptionVarint(out, dl, false);
  }
  return true;
}

/// `code`'s line table from byte `start` on, to follow a prologue that left the
/// line state at co_firstlineno (its entries have no location). Entries are
/// copied as they are, except the one `start` falls in (its length cut to
/// what lies after `start`) and the first located one, whose line delta is
/// taken from co_firstlineno (objects/locations.md of CPython 3.11 describes
/// the format).
std::string suffixLineTable(PyCodeObject* code, const Bytecode* bc, int start) {
  std::string out;
  PyObject* lt = code->co_linetable;
  if (!lt || !PyBytes_Check(lt)) return out;
  const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(lt));
  const size_t n = static_cast<size_t>(PyBytes_GET_SIZE(lt));
  const Bytecode::LineEntry first = bc->lineEntryAt(code, start);
  size_t i = first.pos;
  int line = first.lineBefore;
  int skip = start / 2 - first.unit;
  bool placed = false;  // the line state is the original's
  while (i < n) {
    const size_t begin = i;
    const LocationEntry e = readLocationEntry(p, n, i);
    const int units = e.length - skip;
    skip = 0;
    const auto header = [&](int k) { out.push_back(static_cast<char>(0x80 | (k << 3) | (units - 1))); };
    if (placed || e.kind == 15) {
      header(e.kind);
      out.append(reinterpret_cast<const char*>(p + begin + 1), i - begin - 1);
    } else {
      const int rel = line + e.lineDelta - code->co_firstlineno;
      if (e.kind == 13) {
        header(13);
        writeLocationSvarint(out, rel);
      } else {
        header(14);
        writeLocationSvarint(out, rel);
        writeLocationVarint(out, e.endLineDelta);
        writeLocationVarint(out, e.col);
        writeLocationVarint(out, e.endCol);
      }
      placed = true;
    }
    line += e.lineDelta;
  }
  return out;
}

}  // namespace

PyRef codeBytes(PyCodeObject* code) {
  // 3.11 keeps the bytes it makes here on the code object (_co_code): no copy after the first.
  PyRef b = PyRef::steal(PyCode_GetCode(code));
  if (!b) PyErr_Clear();
  return b;
}

PyObject* unboundSentinel() {
  static PyObject* s = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return s;
}

int resumePrologueEnd(const Bytecode* bc) {
  // The prologue's one JUMP_FORWARD ends it (makeResume).
  for (const Instr& ins : bc->instrs())
    if (ins.op == Op::JUMP_FORWARD) return ins.next;
  return 0;
}

PyRef makeResume(PyCodeObject* orig, int target, const std::vector<bool>& layout, const std::vector<int>& unbound,
                 std::string& error) {
  const Bytecode* bc = Bytecode::of(orig, error);
  if (!bc) return {};
  const int start = bc->regionStart(target);
  const int nvar = orig->co_nlocals;
  int nvals = 0;
  for (bool b : layout) nvals += b;
  Asm asm_(-1, orig->co_firstlineno);
  // Note [Cells across a break]: the original's cells and free variables are
  // this code's free variables, after its locals and the stack arguments.
  const ClosureSlots closure = closureSlots(orig);
  if (closure.size()) asm_.op(Op::COPY_FREE_VARS, closure.size());
  asm_.op(Op::RESUME, 0);
  int k = 0;
  for (bool b : layout) {
    if (b) asm_.op(Op::LOAD_FAST, nvar + k++);
    else asm_.op(Op::PUSH_NULL);
  }
  // The stack arguments are on the stack now: unbound, so that the frame's
  // f_locals (a traceback's, a debugger's) holds the user's locals only.
  for (int i = 0; i < nvals; ++i) asm_.op(Op::DELETE_FAST, nvar + i);
  const int sentinelConst = static_cast<int>(PyTuple_GET_SIZE(orig->co_consts));
  int maybeLabel = 1000;
  for (int i : unbound) {
    if (i >= 0) {
      asm_.op(Op::DELETE_FAST, i);
      continue;
    }
    // Bound only if the loop body ran and bound it (Note [Loop bodies]).
    const int j = -1 - i;
    asm_.op(Op::LOAD_FAST, j);
    asm_.op(Op::LOAD_CONST, sentinelConst);
    asm_.op(Op::IS_OP, 0);
    asm_.jumpIf(JumpTest::kFalse, maybeLabel);
    asm_.op(Op::DELETE_FAST, j);
    asm_.label(maybeLabel++);
  }
  // The jump is relative to its own end, which is where the copied code
  // starts: its argument is the target's distance from `start`.
  asm_.op(Op::JUMP_FORWARD, (target - start) / 2);
  std::string prologue, lt;
  asm_.assemble(prologue, lt);
  PyRef raw = codeBytes(orig);
  if (!raw) return (error = "cannot read co_code"), PyRef();
  std::string body(PyBytes_AS_STRING(raw.get()) + start, static_cast<size_t>(PyBytes_GET_SIZE(raw.get()) - start));
  if (closure.size() && !remapSlots(body, [&](int j) { return closure.derived(j, nvar + nvals); })) {
    error = "closure index needs EXTENDED_ARG";
    return {};
  }
  std::string exc;
  if (!suffixExceptionTable(orig, start, static_cast<int>(prologue.size()), exc)) {
    error = "an exception handler before the resumed code";
    return {};
  }
  PyRef names = derivedVarnames(orig);
  PyRef freevars = derivedFreevars(orig);
  PyRef noCells = PyRef::steal(PyTuple_New(0));
  if (!names || !freevars || !noCells) return {};
  for (int i = 0; i < nvals; ++i) {
    PyRef n = PyRef::steal(PyUnicode_FromFormat("__xacc_stack%d", i));
    PyList_Append(names.get(), n.get());
  }
  PyRef consts = PyRef::steal(PySequence_List(orig->co_consts));
  // The sentinel is not marshallable: only resume functions after a split loop hold it.
  if (maybeLabel > 1000) PyList_Append(consts.get(), unboundSentinel());
  // Unused, but part of the code's hash: resume code of one function that
  // starts at the same offset differs only in its prologue, which the hash
  // does not read, so dicts keyed by code objects would see them collide.
  PyRef where = PyRef::steal(PyUnicode_FromFormat("<resume at %d>", target));
  PyList_Append(consts.get(), where.get());
  CodeParts parts{prologue + body, lt + suffixLineTable(orig, bc, start), exc, consts.get(), nullptr, names.get(),
                  static_cast<int>(PyList_GET_SIZE(names.get())), noCells.get(), freevars.get()};
  PyRef out = makeCode(orig, orig, parts, error);
  if (!out) return {};
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  Py_INCREF(out.get());
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  reg.origin[reinterpret_cast<PyCodeObject*>(out.get())] = {orig, static_cast<int>(prologue.size()) - start};
  reg.target[reinterpret_cast<PyCodeObject*>(out.get())] = target;
  return out;
}

}  // namespace xacc::capture::translate::codegen

namespace xacc::capture::translate {

using codegen::registry;

PyCodeObject* resumeOrigin(PyCodeObject* code, int* prologue) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.origin.find(code);
  if (it == reg.origin.end()) return nullptr;
  if (prologue) *prologue = it->second.second;
  return it->second.first;
}

int resumeLine(PyCodeObject* code) {
  PyCodeObject* orig = nullptr;
  int target = -1;
  {
    auto& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.target.find(code);
    if (it == reg.target.end()) return 0;
    target = it->second;
    orig = reg.origin[code].first;
  }
  std::string error;
  const Bytecode* bc = Bytecode::of(orig, error);
  const int i = bc ? bc->indexOf(target) : -1;
  return i < 0 ? 0 : std::max(0, bc->instrs()[static_cast<size_t>(i)].line);
}

bool isLoopBody(PyCodeObject* code) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  return reg.bodies.count(code) > 0;
}

bool loopBodyRunsAsPython(PyCodeObject* code) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  return reg.pythonBodies.count(code) > 0;
}

void registerResume(PyCodeObject* code, PyCodeObject* orig, int prologue) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  if (reg.origin.count(code)) return;
  Py_INCREF(reinterpret_cast<PyObject*>(code));
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  reg.origin[code] = {orig, prologue};
}

std::unique_ptr<Bytecode> decodeResume(PyCodeObject* code, std::string& error) {
  int shift = 0;
  PyCodeObject* orig = resumeOrigin(code, &shift);
  const Bytecode* obc = orig ? Bytecode::of(orig, error) : nullptr;
  if (obc) {
    // makeResume's remapSlots: closure slots move past the stack arguments
    // (Note [Cells across a break]).
    const codegen::ClosureSlots closure = codegen::closureSlots(orig);
    std::vector<int> slotMap;
    for (int j = 0; j < orig->co_nlocalsplus; ++j) slotMap.push_back(closure.derived(j, code->co_nlocals));
    std::string why;
    if (auto bc = Bytecode::derive(code, *obc, shift, slotMap, why)) return bc;
  }
  return Bytecode::decode(code, error);
}

}  // namespace xacc::capture::translate
