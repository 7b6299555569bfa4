// Closure cells of a frame that is split at a graph break: which slots are
// cells and free variables, and how generated code names them (Note [Cells
// across a break]). Used by the break, resume and loop-body generators.
#include "CodegenImpl.h"

namespace xacc::capture::translate::codegen {

// Note [Cells across a break]
// A frame with cell variables (a local a closure reads, or writes with
// `nonlocal`) keeps one cell object per variable for its whole run: a closure
// made before a break and called after it must see what the frame stores after
// the break, and the frame must see what the closure stores. So the code that
// continues the frame shares the cells, never copies their contents:
//  * the break function (Codegen.cpp) has no cell variables of its own: it
//    makes one cell per cell variable of the frame in a hidden local
//    (`MAKE_CELL __xacc_cell<r>`, an argument's value copied there first;
//    the argument's own slot keeps the plain value, which sources read),
//    stores into each the content the traced prefix left, and rebuilds the
//    functions the prefix made (Var::Kind::Function) over those cells;
//  * resume and loop-body code (derived code) has no cell variables either:
//    the original's cells, then its free variables, are the derived code's
//    free variables, in that order (closure order, ClosureSlots), and the
//    break function passes them as the new function's closure. Their slots
//    follow the derived code's locals (ClosureSlots::derived); an argument
//    that was a cell is a free variable there and its local slot, renamed,
//    stays unbound (derivedVarnames).
// The translator sees a derived frame's cells as free variables: their
// contents are read through the closure (guarded), and a write to one is a
// write to a cell others may hold (GB008, as for any free variable). A frame
// that stores into one of its cells after the split point would break again at
// every such store, so it runs in Python instead (GB017, emitBreak; vilt's
// visual_embed stores three cells after its first break: 3 breaks and 7
// recompiles as one Python frame, 11 and 25 split).

ClosureSlots closureSlots(PyCodeObject* code) {
  // Localsplus kinds (CPython's internal pycore_code.h, 3.11-3.13).
  constexpr unsigned char kCell = 0x40, kFree = 0x80;
  ClosureSlots c;
  c.nlocals = code->co_nlocals;
  PyObject* kinds = code->co_localspluskinds;
  const int n = code->co_nlocalsplus;
  if (!kinds || !PyBytes_Check(kinds) || PyBytes_GET_SIZE(kinds) < n) return c;
  const auto* k = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(kinds));
  for (int j = 0; j < n; ++j)
    if ((k[j] & kCell) && !(k[j] & kFree)) c.slots.push_back(j);
  c.ncells = static_cast<int>(c.slots.size());
  for (int j = 0; j < n; ++j)
    if (k[j] & kFree) c.slots.push_back(j);
  return c;
}

std::string cellStoredFrom(PyCodeObject* code, const Bytecode* bc, int from) {
  const ClosureSlots c = closureSlots(code);
  if (c.ncells == 0) return "";
  for (const Instr& ins : bc->instrs()) {
    if (ins.offset < from || (ins.op != Op::STORE_DEREF && ins.op != Op::DELETE_DEREF)) continue;
    const int r = c.rank(ins.arg);
    if (r >= 0 && r < c.ncells) {
      PyObject* n = PyTuple_GET_ITEM(code->co_localsplusnames, ins.arg);
      return PyUnicode_AsUTF8(n) ? PyUnicode_AsUTF8(n) : "?";
    }
  }
  return "";
}

PyRef derivedFreevars(PyCodeObject* code) {
  const ClosureSlots c = closureSlots(code);
  PyRef out = PyRef::steal(PyTuple_New(c.size()));
  if (!out) return {};
  for (int r = 0; r < c.size(); ++r) {
    PyObject* n = PyTuple_GET_ITEM(code->co_localsplusnames, c.slots[static_cast<size_t>(r)]);
    Py_INCREF(n);
    PyTuple_SET_ITEM(out.get(), r, n);
  }
  return out;
}

PyRef derivedVarnames(PyCodeObject* code) {
  PyObject* vn = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_varnames");
  if (!vn) return {};
  PyRef names = PyRef::steal(PySequence_List(vn));
  Py_DECREF(vn);
  if (!names) return {};
  const ClosureSlots c = closureSlots(code);
  for (int r = 0; r < c.ncells; ++r) {
    const int j = c.slots[static_cast<size_t>(r)];
    if (j >= PyList_GET_SIZE(names.get())) continue;
    PyObject* n = PyUnicode_FromFormat("__xacc_cellarg_%U", PyList_GET_ITEM(names.get(), j));
    if (!n) return {};
    PyList_SetItem(names.get(), j, n);  // steals n
  }
  return names;
}

bool remapSlots(std::string& raw, const std::function<int(int)>& to) {
  int ext = 0;  // the EXTENDED_ARG prefix of the instruction at i
  for (size_t i = 0; i + 1 < raw.size(); i += 2) {
    auto op = static_cast<uint8_t>(raw[i]);
    const int arg = (ext << 8) | static_cast<uint8_t>(raw[i + 1]);
    const bool prefixed = ext != 0 || (i >= 2 && static_cast<uint8_t>(raw[i - 2]) == opByte(Op::EXTENDED_ARG));
    if (op == opByte(Op::EXTENDED_ARG)) {
      ext = arg;
      continue;
    }
    ext = 0;
    const Op o = opcodeInfo(op).op;
    if (o == Op::kNumOps) continue;
    if (fusedLocals(o)) {
      if (to(arg >> 4) != (arg >> 4) || to(arg & 15) != (arg & 15)) return false;  // a nibble cannot move
      continue;
    }
    if (!argIsSlot(o)) continue;
    const int moved = to(arg);
    if (moved == arg) continue;
    if (prefixed || moved > 255 || moved < 0) return false;
    raw[i + 1] = static_cast<char>(moved);
  }
  return true;
}

}  // namespace xacc::capture::translate::codegen
