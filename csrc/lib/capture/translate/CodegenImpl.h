// Internals shared by Codegen.cpp (break and resume functions) and
// CodegenLoops.cpp (loop-body functions, Note [Loop bodies]). Not installed.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "BytecodeFacts.h"
#include "Codegen.h"

namespace xacc::capture::translate::codegen {

/// The raw byte of `op` on the build's version (Note [Opcode numbering]); code
/// generation for a version that lacks the opcode is a bug, reported as one.
inline uint8_t opByte(Op op) {
  const int raw = opcodeByte(op);
  if (raw < 0) throw std::logic_error(std::string("codegen: no opcode ") + std::to_string(static_cast<int>(op)) +
                                      " on this CPython version");
  return static_cast<uint8_t>(raw);
}
inline int cachesOf(uint8_t op) { return opcodeInfo(op).caches; }


// Note [Codegen versions]
// The code generators write one instruction sequence for every version; where
// versions spell a step differently, the spelling is picked here from the
// build's opcode table and facts (Opcodes3XX.def), never by #if:
//  * a call: 3.11 `PRECALL n; CALL n`, 3.12 and 3.13 `CALL n` (Asm::call);
//    its NULL below the callable (3.11, 3.12) or above it (3.13:
//    `[callable, NULL, args]`): Asm::nullBelow before the callable is pushed
//    and Asm::nullAbove after it, each a PUSH_NULL on its versions only
//    (BytecodeFacts::nullAfterCallable);
//  * a method load: 3.11 `LOAD_METHOD i`, 3.12 `LOAD_ATTR (i << 1) | 1`, and a
//    plain attribute load's name index shifted by the method bit (Asm::loadAttr);
//  * `==`: COMPARE_OP with the compiler's own argument (compareEqArg);
//  * a forward conditional jump: 3.11 POP_JUMP_FORWARD_IF_*, 3.12
//    POP_JUMP_IF_* (forward only); kCondJumps maps every version's
//    conditional jumps to their test; 3.13's POP_JUMP_IF_TRUE/FALSE take an
//    exact bool, so Asm::jumpIf puts TO_BOOL (the compiler's spelling) first;
//  * the end of a `for` loop: 3.12's exhausted FOR_ITER jumps to an END_FOR and
//    continues after it (so its target label sits on an END_FOR), 3.11's
//    continues at its target (Asm::forEnd); 3.13's END_FOR pops one value
//    and the compiler follows it with POP_TOP, both skipped by an exhausted
//    FOR_ITER (forIterSkips in BytecodeFacts.h);
//  * a function with closure cells: 3.11/3.12 load each cell with
//    LOAD_CLOSURE and pass flag 8 to MAKE_FUNCTION; 3.13 loads them with
//    LOAD_FAST (LOAD_CLOSURE is a pseudo-instruction there) and applies the
//    tuple with SET_FUNCTION_ATTRIBUTE 8 after an argument-less MAKE_FUNCTION
//    (emitMakeFunction);
//  * 3.13's instructions on two locals (kFusedLocals) are split into the pair
//    when code is re-assembled (loop bodies), and a copied one whose nibble
//    would have to move is not copied (shiftDerefs).


/// What a generated code object is made of; the rest (file, first line, free
/// variables, flags but for * and ** parameters) is the `base` code's, its
/// name and qualified name the `orig`inal's (Codegen.h).
struct CodeParts {
  std::string code, linetable, exceptionTable;
  PyObject* consts = nullptr;    ///< list
  PyObject* names = nullptr;     ///< list, or null: base's
  PyObject* varnames = nullptr;  ///< list; all locals (co_nlocals)
  int argcount = 0;
  /// Tuples, or null: base's. Generated code has no cell variables
  /// (Note [Cells across a break] in CodegenCells.cpp).
  PyObject* cellvars = nullptr;
  PyObject* freevars = nullptr;
};
/// The code object of `parts`, its co_stacksize the deepest stack any path
/// through it reaches (Note [Stack depth by construction] in
/// CodegenStack.cpp): no code generator sets it. Null with `error` on failure
/// (no Python error left set).
PyRef makeCode(PyCodeObject* base, PyCodeObject* orig, const CodeParts& parts, std::string& error);

/// What a conditional jump tests.
enum class JumpTest : uint8_t { kTrue, kFalse, kNone, kNotNone, kNoTest };
struct CondJump {
  Op op;
  JumpTest test;
};
inline constexpr CondJump kCondJumps[] = {
    {Op::POP_JUMP_IF_TRUE, JumpTest::kTrue},           {Op::POP_JUMP_IF_FALSE, JumpTest::kFalse},
    {Op::POP_JUMP_IF_NONE, JumpTest::kNone},           {Op::POP_JUMP_IF_NOT_NONE, JumpTest::kNotNone},
    {Op::POP_JUMP_FORWARD_IF_TRUE, JumpTest::kTrue},   {Op::POP_JUMP_FORWARD_IF_FALSE, JumpTest::kFalse},
    {Op::POP_JUMP_FORWARD_IF_NONE, JumpTest::kNone},   {Op::POP_JUMP_FORWARD_IF_NOT_NONE, JumpTest::kNotNone},
    {Op::POP_JUMP_BACKWARD_IF_TRUE, JumpTest::kTrue},  {Op::POP_JUMP_BACKWARD_IF_FALSE, JumpTest::kFalse},
    {Op::POP_JUMP_BACKWARD_IF_NONE, JumpTest::kNone},  {Op::POP_JUMP_BACKWARD_IF_NOT_NONE, JumpTest::kNotNone},
};
/// The test of conditional jump `op` (kNoTest: not a conditional jump).
inline JumpTest jumpTest(Op op) {
  for (const CondJump& c : kCondJumps)
    if (c.op == op) return c.test;
  return JumpTest::kNoTest;
}
/// The build's forward conditional jump with test `t`, or NOP for kNoTest.
inline Op forwardJumpIf(JumpTest t) {
  for (const CondJump& c : kCondJumps)
    if (c.test == t && opcodeByte(c.op) >= 0 && (opcodeInfo(c.op).flags & kJumpForward)) return c.op;
  return Op::NOP;
}

/// A tiny assembler: instructions with forward labels, inline caches,
/// EXTENDED_ARG prefixes and a line table that maps everything to one line.
class Asm {
public:
  Asm(int line, int firstLine) : line_(line), firstLine_(firstLine) {}
  void op(Op o, int arg = 0) { items_.push_back({Item::kOp, opByte(o), arg, -1, {}, line_}); }
  void jump(Op o, int label) { items_.push_back({Item::kOp, opByte(o), 0, label, {}, line_}); }
  void label(int l) { items_.push_back({Item::kLabel, 0, 0, l, {}, line_}); }
  void raw(std::string bytes) { items_.push_back({Item::kRaw, 0, 0, -1, std::move(bytes), line_}); }
  /// The NULL of a call where it goes below the callable (3.11, 3.12): emitted
  /// before the callable is pushed (Note [Codegen versions]).
  void nullBelow() {
    if (!bytecodeFacts().nullAfterCallable) op(Op::PUSH_NULL);
  }
  /// The NULL of a call where it goes above the callable (3.13): emitted after
  /// the callable is pushed, before the arguments.
  void nullAbove() {
    if (bytecodeFacts().nullAfterCallable) op(Op::PUSH_NULL);
  }
  /// A callable loaded by `o arg` with its NULL (nullBelow, nullAbove).
  void loadCallable(Op o, int arg) {
    nullBelow();
    op(o, arg);
    nullAbove();
  }
  /// `callable(args...)` with NULL, the callable and `n` arguments pushed
  /// (Note [Codegen versions]); `callLabel` (>= 0) labels the CALL itself.
  void call(int n, int callLabel = -1) {
    if (opcodeByte(Op::PRECALL) >= 0) op(Op::PRECALL, n);
    if (callLabel >= 0) label(callLabel);
    op(Op::CALL, n);
  }
  /// The attribute co_names[i] of the top of the stack.
  void loadAttr(int i) { op(Op::LOAD_ATTR, i << bytecodeFacts().loadAttrMethodBit); }
  /// The method co_names[i] of the top of the stack, for call(): LOAD_METHOD's stack shape.
  void loadMethod(int i) {
    if (opcodeByte(Op::LOAD_METHOD) >= 0) op(Op::LOAD_METHOD, i);
    else op(Op::LOAD_ATTR, (i << 1) | 1);
  }
  /// Pops two values and pushes `a == b`.
  void compareEq() { op(Op::COMPARE_OP, bytecodeFacts().compareEqArg); }
  /// A forward conditional jump to `l` testing `t` (a truth test converts the
  /// value with TO_BOOL first where the version has it: 3.13's jumps take a bool).
  void jumpIf(JumpTest t, int l) {
    if ((t == JumpTest::kTrue || t == JumpTest::kFalse) && opcodeByte(Op::TO_BOOL) >= 0) op(Op::TO_BOOL);
    jump(forwardJumpIf(t), l);
  }
  /// The target `l` of a FOR_ITER emitted with jump(): where execution goes on
  /// with the iterator popped once it is exhausted (Note [Codegen versions]).
  void forEnd(int l) {
    label(l);
    for (int k = 0; k < forIterSkips(); ++k) op(k == 0 ? Op::END_FOR : Op::POP_TOP);
  }
  /// The line of the instructions added from now on (-1: no location).
  void setLine(int line) { line_ = line; }
  /// Pushes closure slot `j` (a cell) for a closure tuple: LOAD_CLOSURE, or
  /// 3.13's LOAD_FAST of the slot; patched by patchDerefs.
  void loadCell(int j) { op(cellLoadOp(), -1 - j); }
  /// Pushes the cell held in slot `arg` (>= 0: that slot; < 0: closure slot
  /// -1 - arg, as loadCell) for a closure tuple.
  void cellAt(int arg) { op(cellLoadOp(), arg); }
  /// Patches every LOAD_DEREF and cell load (loadCell) with a negative arg (a
  /// closure slot) to nvar + slot.
  void patchDerefs(int nvar) {
    for (Item& it : items_)
      if (it.kind == Item::kOp && (it.op == opByte(Op::LOAD_DEREF) || it.op == opByte(cellLoadOp())) && it.arg < 0)
        it.arg = nvar + (-1 - it.arg);
  }

  /// After assemble(): the byte offset of the first instruction after label `l`
  /// (past its EXTENDED_ARG prefixes).
  int opOffset(int l) const {
    auto it = opAt_.find(l);
    return it == opAt_.end() ? -1 : it->second;
  }

  void assemble(std::string& code, std::string& linetable) {
    std::vector<int> ext(items_.size(), 0);
    std::vector<int> args(items_.size(), 0);
    for (int round = 0; round < 4; ++round) {
      std::vector<int> offsets(items_.size());
      std::map<int, int> labels;
      int pos = 0;
      for (size_t i = 0; i < items_.size(); ++i) {
        offsets[i] = pos;
        const Item& it = items_[i];
        if (it.kind == Item::kLabel) labels[it.label] = pos;
        else if (it.kind == Item::kRaw) pos += static_cast<int>(it.raw.size());
        else pos += 2 * (1 + ext[i] + cachesOf(it.op));
      }
      bool changed = false;
      for (size_t i = 0; i < items_.size(); ++i) {
        const Item& it = items_[i];
        if (it.kind != Item::kOp) continue;
        int arg = it.arg;
        if (it.label >= 0) {
          int end = offsets[i] + 2 * (1 + ext[i] + cachesOf(it.op));
          arg = (labels[it.label] - end) / 2;
          if (opcodeInfo(it.op).flags & kJumpBackward) arg = -arg;
        }
        int need = arg < 256 ? 0 : arg < 65536 ? 1 : 2;
        if (need != ext[i]) {
          ext[i] = need;
          changed = true;
        }
        args[i] = arg;
      }
      if (!changed) break;
    }
    code.clear();
    opAt_.clear();
    std::vector<int> pending;  // labels waiting for their instruction
    std::vector<std::pair<int, int>> runs;  // (code units, line)
    for (size_t i = 0; i < items_.size(); ++i) {
      const Item& it = items_[i];
      if (it.kind == Item::kLabel) {
        pending.push_back(it.label);
        continue;
      }
      for (int l : pending) opAt_[l] = static_cast<int>(code.size()) + (it.kind == Item::kOp ? 2 * ext[i] : 0);
      pending.clear();
      int units;
      if (it.kind == Item::kRaw) {
        code += it.raw;
        units = static_cast<int>(it.raw.size() / 2);
      } else {
        for (int k = ext[i]; k > 0; --k) {
          code.push_back(static_cast<char>(opByte(Op::EXTENDED_ARG)));
          code.push_back(static_cast<char>((args[i] >> (8 * k)) & 255));
        }
        code.push_back(static_cast<char>(it.op));
        code.push_back(static_cast<char>(args[i] & 255));
        for (int c = 0; c < cachesOf(it.op); ++c) code.append(2, '\0');
        units = 1 + ext[i] + cachesOf(it.op);
      }
      if (!runs.empty() && runs.back().second == it.line) runs.back().first += units;
      else runs.emplace_back(units, it.line);
    }
    linetable = lineTable(runs);
  }

private:
  static Op cellLoadOp() { return opcodeByte(Op::LOAD_CLOSURE) >= 0 ? Op::LOAD_CLOSURE : Op::LOAD_FAST; }
  struct Item {
    enum Kind : uint8_t { kOp, kRaw, kLabel } kind;
    uint8_t op;
    int arg;
    int label;
    std::string raw;
    int line;
  };

  std::string lineTable(const std::vector<std::pair<int, int>>& runs) const {
    std::string out;
    int prev = firstLine_;
    for (auto [total, line] : runs) {
      while (total > 0) {
        int n = std::min(8, total);
        if (line < 0) {
          out.push_back(static_cast<char>(0x80 | (15 << 3) | (n - 1)));
        } else {
          out.push_back(static_cast<char>(0x80 | (13 << 3) | (n - 1)));
          writeLocationSvarint(out, line - prev);
          prev = line;
        }
        total -= n;
      }
    }
    return out;
  }

  std::vector<Item> items_;
  std::map<int, int> opAt_;  ///< label -> offset of its instruction (assemble)
  int line_, firstLine_;
};

/// The resume code of `orig` at byte offset `target` (Note [Resume code] in
/// CodegenResume.cpp); `layout[i]` is false for a NULL stack slot; `unbound`
/// lists locals to delete before jumping (-1 - i: local i if it still holds
/// unboundSentinel()). Null with `error` (or a Python error) on failure.
PyRef makeResume(PyCodeObject* orig, int target, const std::vector<bool>& layout, const std::vector<int>& unbound,
                 std::string& error);
/// Where the prologue of resume code decoded as `bc` ends (byte offset).
int resumePrologueEnd(const Bytecode* bc);
/// Replaces each oparg in `raw` that names a slot (argIsSlot) by `to(slot)`;
/// false when a moved one would need EXTENDED_ARG or is a nibble of a
/// kFusedLocals instruction.
bool remapSlots(std::string& raw, const std::function<int(int)>& to);

/// The closure slots of a code object (Note [Cells across a break] in
/// CodegenCells.cpp): its cell variables, argument cells included, in
/// localsplus order, then its free variables.
struct ClosureSlots {
  std::vector<int> slots;  ///< localsplus index of each, in closure order
  int ncells = 0;          ///< the first `ncells` of `slots` are cells
  int nlocals = 0;         ///< the code's co_nlocals
  /// Position of localsplus slot `j` in closure order, or -1 (a plain local).
  int rank(int j) const {
    auto it = std::find(slots.begin(), slots.end(), j);
    return it == slots.end() ? -1 : static_cast<int>(it - slots.begin());
  }
  int size() const { return static_cast<int>(slots.size()); }
  /// Slot `j` of the code in a code derived from it with `nvar` locals and no
  /// cells (a resume or loop-body code): closure slots follow the locals.
  int derived(int j, int nvar) const {
    const int r = rank(j);
    return r < 0 ? j : nvar + r;
  }
};
ClosureSlots closureSlots(PyCodeObject* code);
/// The name of a cell of `code` (not a free variable) that an instruction of
/// `bc` at offset >= `from` stores or deletes; "" when none (Note [Cells across
/// a break]: the code continuing a split frame cannot write its cells).
std::string cellStoredFrom(PyCodeObject* code, const Bytecode* bc, int from);
/// A derived code's co_freevars: the names of `code`'s closure slots in order.
PyRef derivedFreevars(PyCodeObject* code);
/// `code`'s co_varnames as a list, an argument that is a cell renamed (in a
/// derived code it is a free variable of that name; its local stays unbound).
PyRef derivedVarnames(PyCodeObject* code);
/// `code`'s co_code (bytes); null, error cleared, on failure.
PyRef codeBytes(PyCodeObject* code);
/// The value a loop's driver gives locals that only the loop body binds
/// (Note [Loop bodies]); resume prologues delete locals holding it.
PyObject* unboundSentinel();

// Note [Generated code holds no globals]: the registry and the code objects
// that cache entries keep (break code, resume code, loop-body code, the
// GraphFunction a break function calls) hold code objects only, never a
// function object, a globals dict or a closure. The break function is made
// per call by the hook from its code and the running frame's globals, builtins
// and closure (runEntry in EvalFrameImpl.inc); the break function's bytecode
// makes its resume and loop-body functions with MAKE_FUNCTION (its own globals,
// its own closure cells: the frame's); a GraphFunction reads globals, builtins
// and closure from the frame that calls it. Holding a function or its globals
// from a code object's co_extra made a cycle the collector cannot see (a
// function exec'd into its own dict: dict -> function -> code -> co_extra ->
// break function -> dict), so such functions were never freed
// (test_memory_bound's private-globals case).
struct ResumeRegistry {
  std::mutex mu;
  std::map<PyCodeObject*, std::pair<PyCodeObject*, int>> origin;  // strong refs to both
  std::map<PyCodeObject*, int> target;  // resume code -> the original offset it continues at
  /// (orig, target, layout, unbound) -> resume code (strong; orig strong too)
  std::map<std::tuple<PyCodeObject*, int, std::vector<bool>, std::vector<int>>, PyObject*> fns;
  std::set<PyCodeObject*> bodies;  // loop body code objects (strong refs)
  std::set<PyCodeObject*> pythonBodies;  // those that run as plain Python (a subset of `bodies`)
  /// (orig, loop head, params, runs as Python) -> loop-body code (strong; orig strong too)
  std::map<std::tuple<PyCodeObject*, int, std::vector<int>, bool>, PyObject*> bodyFns;
};

ResumeRegistry& registry();

/// The code `fns` holds for `key`, else null (a resume or loop-body code is
/// made once per code, target and layout, and reused).
template <typename Map, typename Key>
PyRef registeredCode(Map& fns, const Key& key) {
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = fns.find(key);
  return it != fns.end() ? PyRef::borrow(it->second) : PyRef();
}

/// Stores `code` in `fns` under `key` (replacing an older one; `orig`, the
/// code it was made from, stays alive with it). Returns `code`.
template <typename Map, typename Key>
PyRef registerCode(Map& fns, const Key& key, PyObject* code, PyCodeObject* orig) {
  std::lock_guard<std::mutex> lock(registry().mu);
  Py_INCREF(code);
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  auto [it, inserted] = fns.emplace(key, code);
  if (!inserted) {
    Py_DECREF(it->second);
    Py_DECREF(reinterpret_cast<PyObject*>(orig));  // the older entry's reference stays
    it->second = code;
  }
  return PyRef::borrow(code);
}

/// Emits the making of a function of code constant `constIndex` with this
/// frame's globals and the closure `cells` (each as Asm::cellAt takes it):
/// `(cells...) code MAKE_FUNCTION`. Negative (closure) slots are patched by
/// Asm::patchDerefs. Pushes one value; needs cells + 1 stack slots. (Note
/// [Codegen versions]: 3.13 sets the closure with SET_FUNCTION_ATTRIBUTE.)
/// The `nfree` form: a function whose code has `nfree` free variables and no
/// cell variables passes its own closure.
inline void emitMakeFunction(Asm& a, int constIndex, const std::vector<int>& cells) {
  for (int c : cells) a.cellAt(c);
  const int n = static_cast<int>(cells.size());
  if (n) a.op(Op::BUILD_TUPLE, n);
  a.op(Op::LOAD_CONST, constIndex);
  const bool setAttr = opcodeByte(Op::SET_FUNCTION_ATTRIBUTE) >= 0;
  a.op(Op::MAKE_FUNCTION, n && !setAttr ? 0x08 : 0);
  if (n && setAttr) a.op(Op::SET_FUNCTION_ATTRIBUTE, 0x08);
}
inline void emitMakeFunction(Asm& a, int constIndex, int nfree) {
  std::vector<int> cells;
  for (int j = 0; j < nfree; ++j) cells.push_back(-1 - j);
  emitMakeFunction(a, constIndex, cells);
}

// Split points (CodegenSplit.cpp).
/// Byte range [start, end) of the instruction at `offset` of `code` with its
/// EXTENDED_ARG prefixes (and, for CALL, its PRECALL/KW_NAMES) and caches.
std::pair<int, int> instructionGroup(const char* code, int offset);
/// Instructions the frame cannot be split at.
bool notBreakable(Op op);
/// The build's forward conditional jump with the same test as `op`, or NOP.
Op forwardCond(Op op);
/// Values instruction `ins` pushes when run natively, or -1 when one may be NULL.
int pushes(const Instr& ins);

struct LoopPlan {
  int head = -1, end = -1;        ///< orig offsets: the FOR_ITER and the last jump back to it
  int done = -1;                  ///< FOR_ITER's exit target
  std::vector<int> exits;         ///< other targets after the loop (breaks)
  std::set<int> stored, referenced;  ///< orig locals the body stores / uses
  std::set<int> assignedFirst;       ///< stored before any read or jump (the loop target)
  int below = 0;                     ///< stack values under the iterator (outer loops' stand-ins)
  int values = 1;                    ///< the value passed as this many arguments (a tuple target unpacked)
  bool unpacked = false;
  bool isFor = true;                 ///< a `for` loop (else `while`: no iterator, no value)
  int first = -1;                    ///< index of the body's first instruction
};

/// The outermost loop of `bc` around `off`: [head, end] with `head` the jump
/// target and `end` the last backward jump to it; head -1 when none.
std::pair<int, int> outermostLoop(const Bytecode* bc, int off);
/// Checks that the loop at `head` can run as a loop-body function and fills `p`.
bool planLoop(PyCodeObject* orig, const Bytecode* bc, int head, int end, int stackSize, LoopPlan& p,
              std::string& why);
/// The code of the loop body of `p`, a function of (params..., value) ->
/// (flag, payload) (Note [Loop bodies]); cached per loop, parameter list and
/// `asPython` (a body the hook runs as plain Python: Note [Loops left to Python]).
PyRef loopBody(PyCodeObject* orig, const Bytecode* bc, const LoopPlan& p, const std::vector<int>& params,
               bool asPython, std::string& why);

}  // namespace xacc::capture::translate::codegen
