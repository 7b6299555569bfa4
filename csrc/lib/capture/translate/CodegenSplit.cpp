// Where a frame can be split: the instructions a break function may stop at
// and copy (Codegen.cpp), declared per version by opcode (Note [Codegen
// versions] in CodegenImpl.h).
#include "CodegenImpl.h"

namespace xacc::capture::translate::codegen {

/// Byte range [start, end) of the instruction at `offset` with its
/// EXTENDED_ARG prefixes (and, for CALL, its PRECALL/KW_NAMES) and caches.
std::pair<int, int> instructionGroup(const char* code, int offset) {
  auto at = [&](int o) { return static_cast<uint8_t>(code[o]); };
  uint8_t op = at(offset);
  int end = offset + 2 * (1 + cachesOf(op));
  int start = offset;
  auto skipExt = [&] {
    while (start >= 2 && at(start - 2) == opByte(Op::EXTENDED_ARG)) start -= 2;
  };
  if (op == opByte(Op::CALL)) {
    if (opcodeByte(Op::PRECALL) >= 0) {  // 3.11 (Note [Codegen versions])
      start -= 2 * (1 + cachesOf(opByte(Op::PRECALL)));
      skipExt();
    }
    // 3.11, 3.12 (3.13's CALL_KW takes its names from the stack).
    if (opcodeByte(Op::KW_NAMES) >= 0 && start >= 2 && at(start - 2) == opByte(Op::KW_NAMES)) {
      start -= 2;
      skipExt();
    }
  }
  skipExt();
  return {start, end};
}

/// Instructions the frame cannot be split at.
bool notBreakable(Op op) {
  switch (op) {
    case Op::LOAD_METHOD: case Op::FOR_ITER: case Op::JUMP_FORWARD: case Op::JUMP_BACKWARD:
    case Op::JUMP_BACKWARD_NO_INTERRUPT: case Op::JUMP_IF_TRUE_OR_POP: case Op::JUMP_IF_FALSE_OR_POP:
    case Op::SEND: case Op::YIELD_VALUE: case Op::UNPACK_SEQUENCE: case Op::UNPACK_EX: case Op::LIST_APPEND:
    case Op::SET_ADD: case Op::MAP_ADD: case Op::LOAD_CLOSURE: case Op::MAKE_CELL: case Op::COPY_FREE_VARS:
    case Op::RETURN_GENERATOR: case Op::PUSH_EXC_INFO: case Op::POP_EXCEPT: case Op::RERAISE:
    case Op::CHECK_EXC_MATCH: case Op::WITH_EXCEPT_START: case Op::LOAD_FAST: case Op::STORE_FAST:
    case Op::DELETE_FAST: case Op::LOAD_FAST_CHECK: case Op::LOAD_FAST_AND_CLEAR: case Op::END_FOR:
    // 3.13 (Note [Codegen versions]): locals, and a function not yet complete.
    case Op::LOAD_FAST_LOAD_FAST: case Op::STORE_FAST_LOAD_FAST: case Op::STORE_FAST_STORE_FAST:
    case Op::SET_FUNCTION_ATTRIBUTE:
    // 3.11/3.12: a call's names and 3.11's PRECALL belong to the CALL after them
    // (instructionGroup); a break there (the step budget can stop anywhere) would
    // copy them alone and resume at the CALL with a short stack.
    case Op::KW_NAMES: case Op::PRECALL:
      return true;
    default:
      return false;
  }
}

/// The build's forward conditional jump with the same test as `op`, or NOP.
Op forwardCond(Op op) { return forwardJumpIf(jumpTest(op)); }

/// Values instruction `ins` pushes when run natively (the rest push one), or
/// -1 when one of them may be NULL, which a resume function cannot take as an
/// argument: LOAD_GLOBAL's NULL, and the method forms of 3.12's LOAD_ATTR and
/// LOAD_SUPER_ATTR (argument bit 0; 3.11's LOAD_METHOD is not breakable).
int pushes(const Instr& ins) {
  switch (ins.op) {
    case Op::LOAD_GLOBAL: case Op::LOAD_SUPER_ATTR: return (ins.arg & 1) ? -1 : 1;
    case Op::LOAD_ATTR: return (bytecodeFacts().loadAttrMethodBit && (ins.arg & 1)) ? -1 : 1;
    case Op::STORE_SLICE: return 0;
    default: break;
  }
  switch (ins.op) {
    case Op::BEFORE_WITH: return 2;
    case Op::STORE_ATTR: case Op::STORE_SUBSCR: case Op::STORE_GLOBAL: case Op::DELETE_ATTR:
    case Op::DELETE_SUBSCR: case Op::POP_TOP: case Op::RAISE_VARARGS: case Op::IMPORT_STAR:
    case Op::STORE_DEREF: case Op::DELETE_GLOBAL: case Op::PRINT_EXPR:
      return 0;
    default: return 1;
  }
}


}  // namespace xacc::capture::translate::codegen
