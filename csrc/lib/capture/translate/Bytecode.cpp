// Decoding of CPython code objects. See Bytecode.h.
#include "Bytecode.h"
#include "BytecodeFacts.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "xacc/capture/CodeExtra.h"

namespace xacc::capture::translate {

namespace {

// The one place that picks the build's version's table (Note [Opcode numbering]).
struct Table {
  OpcodeInfo info[256];                                    ///< by raw opcode byte
  OpcodeInfo byOp[static_cast<size_t>(Op::kNumOps) + 1];  ///< by Op
  int raw[static_cast<size_t>(Op::kNumOps) + 1];
  BytecodeFacts facts;
  Table() {
    std::fill(std::begin(raw), std::end(raw), -1);
#define XACC_OPCODE(nm, num, caches, flags)                                     \
  info[num] = OpcodeInfo{#nm, caches, static_cast<uint16_t>(flags), Op::nm}; \
  byOp[static_cast<size_t>(Op::nm)] = info[num];                             \
  raw[static_cast<size_t>(Op::nm)] = num;
#define XACC_FACT(name, value) facts.name = value;
#if PY_MINOR_VERSION == 11
#include "Opcodes311.def"
#elif PY_MINOR_VERSION == 12
#include "Opcodes312.def"
#elif PY_MINOR_VERSION == 13
#include "Opcodes313.def"
#endif
#undef XACC_FACT
#undef XACC_OPCODE
  }
};

const Table& table() {
  static const Table t;
  return t;
}

/// The line of every code unit of `code`, decoded from co_linetable in one
/// pass (PyCode_Addr2Line walks the table from its start on every call, which
/// made decoding quadratic in the code's length). -1: no location.
std::vector<int> unitLines(PyCodeObject* code, size_t units) {
  std::vector<int> lines(units, -1);
  PyObject* lt = code->co_linetable;
  if (!lt || !PyBytes_Check(lt)) return lines;
  const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(lt));
  const size_t n = static_cast<size_t>(PyBytes_GET_SIZE(lt));
  size_t i = 0, unit = 0;
  int line = code->co_firstlineno;
  while (i < n) {
    const LocationEntry e = readLocationEntry(p, n, i);
    line += e.lineDelta;
    for (int k = 0; k < e.length && unit < units; ++k) lines[unit++] = e.kind != 15 ? line : -1;
  }
  return lines;
}

}  // namespace

namespace {

/// A location-table varint (little-endian 6-bit chunks, bit 6 = more).
unsigned readLocationVarint(const unsigned char* p, size_t n, size_t& i) {
  unsigned v = 0, shift = 0;
  while (i < n) {
    unsigned char b = p[i++];
    v |= static_cast<unsigned>(b & 63) << shift;
    shift += 6;
    if (!(b & 64)) break;
  }
  return v;
}

int readLocationSvarint(const unsigned char* p, size_t n, size_t& i) {
  const unsigned v = readLocationVarint(p, n, i);
  return (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
}

}  // namespace

LocationEntry readLocationEntry(const unsigned char* p, size_t n, size_t& i) {
  LocationEntry e;
  const unsigned char head = p[i++];
  e.kind = (head >> 3) & 15;
  e.length = (head & 7) + 1;
  if (e.kind == 14) {  // long form: line delta, end line delta, columns
    e.lineDelta = readLocationSvarint(p, n, i);
    e.endLineDelta = readLocationVarint(p, n, i);
    e.col = readLocationVarint(p, n, i);
    e.endCol = readLocationVarint(p, n, i);
  } else if (e.kind == 13) {  // no columns: line delta
    e.lineDelta = readLocationSvarint(p, n, i);
  } else if (e.kind >= 10 && e.kind < 13) {  // one-line form: delta kind - 10, two column bytes
    e.lineDelta = e.kind - 10;
    if (i + 1 < n) {
      e.col = p[i] + 1u;
      e.endCol = p[i + 1] + 1u;
    }
    i += 2;
  } else if (e.kind < 10) {  // short form: same line, one column byte
    if (i < n) {
      const unsigned b = p[i];
      e.col = static_cast<unsigned>(e.kind) * 8 + ((b >> 4) & 7) + 1;
      e.endCol = e.col + (b & 15);
    }
    i += 1;
  }
  return e;
}

void writeLocationVarint(std::string& out, unsigned v) {
  while (v >= 64) {
    out.push_back(static_cast<char>(64 | (v & 63)));
    v >>= 6;
  }
  out.push_back(static_cast<char>(v));
}

void writeLocationSvarint(std::string& out, int v) {
  writeLocationVarint(out, v < 0 ? (static_cast<unsigned>(-v) << 1) | 1 : static_cast<unsigned>(v) << 1);
}

int readExceptionVarint(const unsigned char* p, size_t n, size_t& i) {
  int v = 0;
  while (i < n) {
    unsigned char b = p[i++];
    v = (v << 6) | (b & 63);
    if (!(b & 64)) break;
  }
  return v;
}

void writeExceptionVarint(std::string& out, int val, bool first) {
  std::vector<int> chunks{val & 63};
  val >>= 6;
  while (val) {
    chunks.push_back(val & 63);
    val >>= 6;
  }
  std::reverse(chunks.begin(), chunks.end());
  for (size_t i = 0; i < chunks.size(); ++i) {
    int c = chunks[i] | (i + 1 < chunks.size() ? 64 : 0);
    if (i == 0 && first) c |= 128;
    out.push_back(static_cast<char>(c));
  }
}

const OpcodeInfo& opcodeInfo(uint8_t op) { return table().info[op]; }
const OpcodeInfo& opcodeInfo(Op op) { return table().byOp[static_cast<size_t>(op)]; }
int opcodeByte(Op op) { return table().raw[static_cast<size_t>(op)]; }
int opcodeTableVersion() { return PY_MINOR_VERSION; }
bool bytecodeModelled() { return PY_MINOR_VERSION >= 11 && PY_MINOR_VERSION <= 13; }
const BytecodeFacts& bytecodeFacts() { return table().facts; }
bool regionsModelled() { return PY_MINOR_VERSION >= 11 && PY_MINOR_VERSION <= 13; }
bool codegenModelled() { return PY_MINOR_VERSION >= 11 && PY_MINOR_VERSION <= 13; }

namespace {

// Decoded code lives in a co_extra slot of its code object and is freed with
// it: a cache keyed by code objects must not keep a deleted function's code
// alive (issue 19, bounded memory). The GIL guards the slot.
Py_ssize_t gDecodedIndex = -1;

void freeDecoded(void* p) { delete static_cast<Bytecode*>(p); }

Bytecode* decoded(PyCodeObject* code) {
  if (gDecodedIndex < 0) gDecodedIndex = requestCodeExtraIndex(freeDecoded);
  void* p = nullptr;
  if (gDecodedIndex < 0 || getCodeExtra(code, gDecodedIndex, &p) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  return static_cast<Bytecode*>(p);
}

}  // namespace

const Bytecode* Bytecode::of(PyCodeObject* code, std::string& error) {
  if (const Bytecode* known = decoded(code)) return known;
  std::unique_ptr<Bytecode> bc = decode(code, error);
  if (!bc) return nullptr;
  // Decoding may have run Python (an allocation can collect): another thread
  // may have stored this code's decoding meanwhile.
  if (const Bytecode* known = decoded(code)) return known;
  if (gDecodedIndex < 0 || setCodeExtra(code, gDecodedIndex, bc.get()) < 0) {
    PyErr_Clear();
    error = "cannot attach the decoded bytecode to its code object";
    return nullptr;
  }
  return bc.release();
}

bool Bytecode::decodeRange(const unsigned char* p, int from, int to, const std::vector<int>& lines, bool stopAtJump,
                           std::string& error) {
  int ext = 0;
  for (int off = from; off < to;) {
    uint8_t op = p[off];
    int arg = p[off + 1];
    const OpcodeInfo& info = opcodeInfo(op);
    // ENTER_EXECUTOR (3.12 on) stands in for an instruction of the code as
    // written only in the adaptive form, where a tier-2 executor replaced a
    // JUMP_BACKWARD: a raw read that meets one falls back to co_code.
    if (!info.name || info.op == Op::ENTER_EXECUTOR) {
      error = "unknown opcode " + std::to_string(op) + " at offset " + std::to_string(off);
      return false;
    }
    Instr ins;
    ins.offset = off;
    ins.op = info.op;
    ins.arg = (info.flags & kHasArg) ? (ext << 8) | arg : 0;
    ext = ins.op == Op::EXTENDED_ARG ? ins.arg : 0;
    ins.next = off + 2 + 2 * info.caches;
    // Jump arguments count code units from the end of the inline caches
    // (checked against dis by scripts/gen_opcodes.py --check).
    if (info.flags & kJumpForward) ins.target = ins.next + 2 * ins.arg;
    if (info.flags & kJumpBackward) ins.target = ins.next - 2 * ins.arg;
    ins.line = static_cast<size_t>(off / 2) < lines.size() ? lines[static_cast<size_t>(off / 2)] : -1;
    index_[off / 2] = static_cast<int>(instrs_.size());
    instrs_.push_back(ins);
    off = ins.next;
    if (stopAtJump && ins.op == Op::JUMP_FORWARD) break;
  }
  return true;
}

// Note [Loops are cycles]
// A backward jump is a loop's only when the code at its target can come back
// to it: following fall-through, jumps and the handler of each exception-table
// range (an exception raised in a `try` inside the loop). 3.12 and 3.13 also
// jump back from the end of an `except` handler to the code after its `try`
// (JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT), and that code never reaches the
// handler again: taken for a loop, a break there was refused as a break inside
// a loop (GB015) and the frame ran as plain Python. The walk over-approximates
// (every instruction of a try range may raise), so a doubt leaves a jump a
// loop, as before. Found once per decoding, with the exception table (which
// readExceptionTable reads first).
namespace {

std::vector<std::pair<int, int>> cycleLoops(const Bytecode& bc) {
  const std::vector<Instr>& instrs = bc.instrs();
  std::vector<std::pair<int, int>> loops;
  std::vector<char> seen;
  std::vector<int> work;
  for (const Instr& jump : instrs) {
    if (!(opcodeInfo(jump.op).flags & kJumpBackward) || jump.target < 0) continue;
    seen.assign(instrs.size(), 0);
    work.clear();
    const int from = bc.indexOf(jump.target), to = bc.indexOf(jump.offset);
    bool cycle = from < 0;  // a target that is no instruction: keep it a loop
    auto visit = [&](int i) {
      if (i >= 0 && !seen[static_cast<size_t>(i)]) seen[static_cast<size_t>(i)] = 1, work.push_back(i);
    };
    if (!cycle) visit(from);
    while (!cycle && !work.empty()) {
      const int i = work.back();
      work.pop_back();
      if (i == to) cycle = true;
      const Instr& ins = instrs[static_cast<size_t>(i)];
      if (ins.target >= 0) visit(bc.indexOf(ins.target));
      if (!endsBlock(ins.op) && static_cast<size_t>(i) + 1 < instrs.size()) visit(i + 1);
      Bytecode::Handler h;
      if (bc.handlerAt(ins.offset, h)) visit(bc.indexOf(h.target));
    }
    if (cycle) loops.emplace_back(jump.target, jump.offset);
  }
  return loops;
}

}  // namespace

// Then the loops, which need the handlers (Note [Loops are cycles]).
void Bytecode::readExceptionTable(PyCodeObject* code) {
  PyObject* et = code->co_exceptiontable;
  if (et && PyBytes_Check(et)) {
    const auto* q = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(et));
    size_t m = static_cast<size_t>(PyBytes_GET_SIZE(et)), i = 0;
    while (i < m) {
      int start = readExceptionVarint(q, m, i);
      int length = readExceptionVarint(q, m, i);
      int target = readExceptionVarint(q, m, i);
      int depthLasti = readExceptionVarint(q, m, i);
      tryRanges_.emplace_back(2 * start, 2 * (start + length));
      handlers_.push_back(2 * target);
      depths_.push_back(depthLasti);
    }
  }
  loopRanges_ = cycleLoops(*this);
}

std::unique_ptr<Bytecode> Bytecode::decode(PyCodeObject* code, std::string& error) {
  PyObject* raw = PyCode_GetCode(code);
  if (!raw) {
    PyErr_Clear();
    error = "cannot read co_code";
    return nullptr;
  }
  auto bc = std::make_unique<Bytecode>();
  const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(raw));
  const int n = static_cast<int>(PyBytes_GET_SIZE(raw));
  bc->index_.assign(static_cast<size_t>(n / 2 + 1), -1);
  const bool ok = bc->decodeRange(p, 0, n, unitLines(code, static_cast<size_t>(n / 2)), false, error);
  Py_DECREF(raw);
  if (!ok) return nullptr;
  bc->readExceptionTable(code);
  return bc;
}

std::unique_ptr<Bytecode> Bytecode::derive(PyCodeObject* code, const Bytecode& orig, int shift,
                                           const std::vector<int>& slotMap, std::string& error) {
  // Only the prologue is read, up to its one JUMP_FORWARD (its instructions
  // have no location), from the code as it runs: unspecialized unless the
  // code has run often enough to be quickened, when the deoptimized copy is
  // read instead (PyCode_GetCode copies the whole code once).
  // co_code_adaptive holds Py_SIZE(code) code units on 3.11-3.13 (3.13 moved
  // the _PyCode_CODE/_PyCode_NBYTES macros to the internal headers).
  const auto* p = reinterpret_cast<const unsigned char*>(code->co_code_adaptive);
  const int n = static_cast<int>(Py_SIZE(code)) * 2;
  auto bc = std::make_unique<Bytecode>();
  bc->index_.assign(static_cast<size_t>(n / 2 + 1), -1);
  const std::vector<int> noLines;
  if (!bc->decodeRange(p, 0, n, noLines, true, error)) {
    PyObject* deopt = PyCode_GetCode(code);
    if (!deopt) {
      PyErr_Clear();
      return nullptr;
    }
    bc->instrs_.clear();
    bc->loopRanges_.clear();
    bc->index_.assign(static_cast<size_t>(n / 2 + 1), -1);
    const bool ok = bc->decodeRange(reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(deopt)), 0, n, noLines,
                                    true, error);
    Py_DECREF(deopt);
    if (!ok) return nullptr;
  }
  if (bc->instrs_.empty() || bc->instrs_.back().op != Op::JUMP_FORWARD) {
    error = "resume code without a prologue";
    return nullptr;
  }
  const int end = bc->instrs_.back().next, start = end - shift, first = orig.indexOf(start);
  if (first < 0 || static_cast<int>(orig.instrs_.back().next) - start != n - end) {
    error = "resume code that is no copy of its original";
    return nullptr;
  }
  bc->instrs_.reserve(bc->instrs_.size() + orig.instrs_.size() - static_cast<size_t>(first));
  for (size_t k = static_cast<size_t>(first); k < orig.instrs_.size(); ++k) {
    Instr ins = orig.instrs_[k];
    ins.offset += shift;
    ins.next += shift;
    if (ins.target >= 0) ins.target += shift;
    // As remapSlots moved them (Codegen): closure slots past the resume code's locals.
    if (argIsSlot(ins.op) && ins.arg >= 0 && static_cast<size_t>(ins.arg) < slotMap.size())
      ins.arg = slotMap[static_cast<size_t>(ins.arg)];
    bc->index_[static_cast<size_t>(ins.offset / 2)] = static_cast<int>(bc->instrs_.size());
    bc->instrs_.push_back(ins);
  }
  bc->readExceptionTable(code);
  return bc;
}

bool Bytecode::inTry(int offset) const {
  for (auto [a, b] : tryRanges_)
    if (a <= offset && offset < b) return true;
  return false;
}

bool Bytecode::handlerAt(int offset, Handler& out) const {
  // The table's ranges do not overlap (the compiler splits nested ones), so
  // the first that covers `offset` is the innermost handler.
  for (size_t r = 0; r < tryRanges_.size(); ++r)
    if (tryRanges_[r].first <= offset && offset < tryRanges_[r].second) {
      out = {handlers_[r], depths_[r] >> 1, (depths_[r] & 1) != 0};
      return true;
    }
  return false;
}

bool Bytecode::inLoop(int offset) const {
  for (auto [a, b] : loopRanges_)
    if (a <= offset && offset <= b) return true;
  return false;
}

int Bytecode::regionStart(int offset) const {
  if (reach_.empty() && !instrs_.empty()) {
    // reach_[i]: the lowest offset among instruction i and later ones, their
    // jump targets and the handlers of the try ranges that cover them.
    std::vector<int> handler(instrs_.size(), std::numeric_limits<int>::max());
    for (size_t r = 0; r < tryRanges_.size(); ++r)
      for (int o = tryRanges_[r].first; o < tryRanges_[r].second; o += 2) {
        const int i = indexOf(o);
        if (i >= 0) handler[static_cast<size_t>(i)] = std::min(handler[static_cast<size_t>(i)], handlers_[r]);
      }
    reach_.assign(instrs_.size(), 0);
    int low = instrs_.back().offset;
    for (size_t i = instrs_.size(); i-- > 0;) {
      const Instr& ins = instrs_[i];
      low = std::min(low, ins.offset);
      if (ins.target >= 0) low = std::min(low, ins.target);
      if (!tryRanges_.empty()) low = std::min(low, handler[i]);
      reach_[i] = low;
    }
  }
  int start = offset;
  for (;;) {
    const int i = indexOf(start);
    if (i < 0 || reach_[static_cast<size_t>(i)] >= start) return start;
    start = reach_[static_cast<size_t>(i)];
  }
}

Bytecode::LineEntry Bytecode::lineEntryAt(PyCodeObject* code, int offset) const {
  PyObject* lt = code->co_linetable;
  if (lineEntries_.empty() && lt && PyBytes_Check(lt)) {
    // The entries of unitLines, keeping where each starts.
    const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(lt));
    const size_t n = static_cast<size_t>(PyBytes_GET_SIZE(lt));
    size_t i = 0;
    int unit = 0, line = code->co_firstlineno;
    while (i < n) {
      lineEntries_.push_back({i, unit, line});
      const LocationEntry e = readLocationEntry(p, n, i);
      unit += e.length;
      line += e.lineDelta;
    }
  }
  // The last entry that starts at or before the unit.
  const int unit = offset / 2;
  auto it = std::upper_bound(lineEntries_.begin(), lineEntries_.end(), unit,
                             [](int u, const LineEntry& e) { return u < e.unit; });
  if (it == lineEntries_.begin()) return LineEntry{0, 0, code->co_firstlineno};
  return *std::prev(it);
}

}  // namespace xacc::capture::translate
