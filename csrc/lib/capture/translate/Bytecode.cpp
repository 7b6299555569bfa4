// Decoding of CPython 3.11 code objects. See Bytecode.h.
#include "Bytecode.h"


namespace xacc::capture::translate {

namespace {

struct Table {
  OpcodeInfo info[256];
  Table() {
#define XACC_OPCODE(nm, num, caches, flags) info[num] = OpcodeInfo{#nm, caches, static_cast<uint16_t>(flags)};
#include "Opcodes311.def"
#undef XACC_OPCODE
  }
};

const Table& table() {
  static const Table t;
  return t;
}

/// Reads one varint of the exception table (6-bit chunks, bit 6 = continue).
int readVarint(const unsigned char* p, size_t n, size_t& i) {
  int v = 0;
  while (i < n) {
    unsigned char b = p[i++];
    v = (v << 6) | (b & 63);
    if (!(b & 64)) break;
  }
  return v;
}

}  // namespace

const OpcodeInfo& opcodeInfo(uint8_t op) { return table().info[op]; }

namespace {

// Decoded code lives in a co_extra slot of its code object and is freed with
// it: a cache keyed by code objects must not keep a deleted function's code
// alive (issue 19, bounded memory). The GIL guards the slot.
Py_ssize_t gDecodedIndex = -1;

void freeDecoded(void* p) { delete static_cast<Bytecode*>(p); }

Bytecode* decoded(PyCodeObject* code) {
  if (gDecodedIndex < 0) gDecodedIndex = _PyEval_RequestCodeExtraIndex(freeDecoded);
  void* p = nullptr;
  if (gDecodedIndex < 0 || _PyCode_GetExtra(reinterpret_cast<PyObject*>(code), gDecodedIndex, &p) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  return static_cast<Bytecode*>(p);
}

}  // namespace

const Bytecode* Bytecode::of(PyCodeObject* code, std::string& error) {
  if (const Bytecode* known = decoded(code)) return known;
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
  int ext = 0;
  for (int off = 0; off < n;) {
    uint8_t op = p[off];
    int arg = p[off + 1];
    const OpcodeInfo& info = opcodeInfo(op);
    if (!info.name) {
      Py_DECREF(raw);
      error = "unknown opcode " + std::to_string(op) + " at offset " + std::to_string(off);
      return nullptr;
    }
    Instr ins;
    ins.offset = off;
    ins.op = static_cast<Op>(op);
    ins.arg = (info.flags & kHasArg) ? (ext << 8) | arg : 0;
    ext = ins.op == Op::EXTENDED_ARG ? ins.arg : 0;
    ins.next = off + 2 + 2 * info.caches;
    if (info.flags & kJumpForward) ins.target = off + 2 + 2 * ins.arg;
    if (info.flags & kJumpBackward) ins.target = off + 2 - 2 * ins.arg;
    ins.line = PyCode_Addr2Line(code, off);
    bc->index_[off / 2] = static_cast<int>(bc->instrs_.size());
    if (info.flags & kJumpBackward) bc->loopRanges_.emplace_back(ins.target, off);
    bc->instrs_.push_back(ins);
    off = ins.next;
  }
  Py_DECREF(raw);
  PyObject* et = code->co_exceptiontable;
  if (et && PyBytes_Check(et)) {
    const auto* q = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(et));
    size_t m = static_cast<size_t>(PyBytes_GET_SIZE(et)), i = 0;
    while (i < m) {
      int start = readVarint(q, m, i);
      int length = readVarint(q, m, i);
      readVarint(q, m, i);  // target
      readVarint(q, m, i);  // depth and lasti
      bc->tryRanges_.emplace_back(2 * start, 2 * (start + length));
    }
  }
  // Decoding may have run Python (an allocation can collect): another thread
  // may have stored this code's decoding meanwhile.
  if (const Bytecode* known = decoded(code)) return known;
  if (gDecodedIndex < 0 || _PyCode_SetExtra(reinterpret_cast<PyObject*>(code), gDecodedIndex, bc.get()) < 0) {
    PyErr_Clear();
    error = "cannot attach the decoded bytecode to its code object";
    return nullptr;
  }
  return bc.release();
}

bool Bytecode::inTry(int offset) const {
  for (auto [a, b] : tryRanges_)
    if (a <= offset && offset < b) return true;
  return false;
}

bool Bytecode::inLoop(int offset) const {
  for (auto [a, b] : loopRanges_)
    if (a <= offset && offset <= b) return true;
  return false;
}

}  // namespace xacc::capture::translate
