// The facts about instructions that differ between CPython versions beyond
// what an opcode row says, for the opcode handlers (Note [Opcode families]).
// Each version's values are measured on that interpreter by
// scripts/gen_opcodes.py and stored in its Opcodes3XX.def (XACC_FACT lines).
#pragma once

#include "Bytecode.h"

namespace xacc::capture::translate {

/// CPython 3.13's instructions on two locals (the `dis` docs): the argument's
/// high nibble names the local of `first`, its low nibble that of `second`, and
/// the instruction is `first hi; second lo`. The translator steps them as the
/// pair (TranslateOps313.cpp); code generation splits them the same way.
struct FusedLocals {
  Op op, first, second;
};
inline constexpr FusedLocals kFusedLocals[] = {
    {Op::LOAD_FAST_LOAD_FAST, Op::LOAD_FAST, Op::LOAD_FAST},
    {Op::STORE_FAST_LOAD_FAST, Op::STORE_FAST, Op::LOAD_FAST},
    {Op::STORE_FAST_STORE_FAST, Op::STORE_FAST, Op::STORE_FAST},
};
/// The row of `op` in kFusedLocals, or null.
inline const FusedLocals* fusedLocals(Op op) {
  for (const FusedLocals& f : kFusedLocals)
    if (f.op == op) return &f;
  return nullptr;
}
/// Whether `op`'s argument is one slot of the frame (a local, a cell or a free
/// variable): what moves when locals are added before the closure slots
/// (3.13 loads a closure's cells with LOAD_FAST, older versions with
/// LOAD_CLOSURE). kFusedLocals' arguments are two nibbles, not one slot.
inline bool argIsSlot(Op op) { return (opcodeInfo(op).flags & (kArgLocal | kArgFree)) && !fusedLocals(op); }

struct BytecodeFacts {
  /// COMPARE_OP's argument shifted right by this is the index into dis.cmp_op
  /// (3.11: 0; 3.12: 4; 3.13: 5, the lower bits being specialization hints).
  int compareShift = 0;
  /// COMPARE_OP's whole argument for `==` as the compiler writes it: code
  /// generation emits this (3.12 adds a result mask in the low bits, which its
  /// specialized forms read).
  int compareEqArg = 2;
  /// LOAD_ATTR's lowest argument bit asks for a method load (3.12 folded
  /// LOAD_METHOD into it); the name index is then the argument >> 1.
  int loadAttrMethodBit = 0;
  /// FOR_ITER's stack effect when the iterator is exhausted: -1 pops the
  /// iterator (3.11); +1 leaves it and a placeholder for END_FOR to pop.
  int forIterJumpEffect = -1;
  /// How many values END_FOR pops (0: no such opcode).
  int endForPops = 0;
  /// CALL_INTRINSIC_1 arguments the handlers model (-1: none on this version).
  int intrinsicUnaryPositive = -1;
  int intrinsicListToTuple = -1;
  /// Where the NULL of a call without `self` sits: 0 below the callable
  /// (3.11, 3.12: [NULL, callable, args...]), 1 above it (3.13: [callable,
  /// NULL, args...]); LOAD_GLOBAL's and LOAD_ATTR's low bit push it there.
  int nullAfterCallable = 0;
};

/// The build's version's facts.
const BytecodeFacts& bytecodeFacts();

/// How many instructions at a FOR_ITER's target an exhausted iterator skips:
/// none on 3.11 (it pops the iterator itself), else the ones that pop the
/// iterator and FOR_ITER's placeholder: END_FOR (both on 3.12; one on 3.13,
/// where the compiler follows it with POP_TOP) and a POP_TOP for each value
/// END_FOR leaves (measured on 3.13: the exhausted loop goes on two
/// instructions past its target).
inline int forIterSkips() {
  const int pops = bytecodeFacts().endForPops;
  return pops > 0 ? 1 + (2 - pops) : 0;
}

/// Note [Bytecode versions]: whether tensor-conditional branches and counted
/// loops may become ctrl.if/ctrl.loop regions: the region builders
/// (TranslateControl.cpp) recognise the shapes CPython 3.11-3.13 compile
/// `if`, `while` and `for ... in range` to (Note [While shapes]: 3.13's are
/// 3.12's, TO_BOOL before a jump leaving the value; forIterSkips); on other
/// versions such a branch is a graph break and the loop unrolls.
bool regionsModelled();

/// Whether break, resume and loop-body functions can be generated for the
/// build's version (Codegen*.cpp emits CPython 3.11, 3.12 and 3.13 bytecode, Note
/// [Codegen versions]). Where not, a frame that would need one runs as plain
/// Python (GB001).
bool codegenModelled();

/// Whether `op` never falls through to the next instruction: a return, a
/// raise or an unconditional jump (the one list of the code generators, the
/// stack-depth walk (Note [Stack depth by construction] in CodegenStack.cpp)
/// and the decoder's loop finding (Note [Loops are cycles] in Bytecode.cpp)).
inline bool endsBlock(Op op) {
  switch (op) {
    case Op::JUMP_FORWARD: case Op::JUMP_BACKWARD: case Op::JUMP_BACKWARD_NO_INTERRUPT: case Op::RETURN_VALUE:
    case Op::RETURN_CONST: case Op::RAISE_VARARGS: case Op::RERAISE:
      return true;
    default:
      return false;
  }
}

}  // namespace xacc::capture::translate
