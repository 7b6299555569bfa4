// The facts about instructions that differ between CPython versions beyond
// what an opcode row says, for the opcode handlers (Note [Opcode families]).
// Each version's values are measured on that interpreter by
// scripts/gen_opcodes.py and stored in its Opcodes3XX.def (XACC_FACT lines).
#pragma once

namespace xacc::capture::translate {

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

/// Note [Bytecode versions]: whether tensor-conditional branches and counted
/// loops may become ctrl.if/ctrl.loop regions: the region builders
/// (TranslateControl.cpp) recognise the shapes CPython 3.11 and 3.12 compile
/// `if`, `while` and `for ... in range` to (Note [While shapes]); on other
/// versions such a branch is a graph break and the loop unrolls.
bool regionsModelled();

/// Whether break, resume and loop-body functions can be generated for the
/// build's version (Codegen*.cpp emits CPython 3.11 and 3.12 bytecode, Note
/// [Codegen versions]). Where not, a frame that would need one runs as plain
/// Python (GB001).
bool codegenModelled();

}  // namespace xacc::capture::translate
