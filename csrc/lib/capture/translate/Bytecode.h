// Decoded CPython code objects for the translator. Every version-specific
// opcode fact comes from the build's Opcodes3XX.def (generated from that
// CPython's `opcode` module by scripts/gen_opcodes.py); this file turns
// `co_code` into instructions with folded EXTENDED_ARG arguments, jump targets
// and line numbers, and reads the exception table (which offsets a `try`/`with`
// covers) and the loop ranges.
//
// Note [Opcode numbering]: translate::Op is xacc's own numbering of the union
// of the opcode names of every supported version (OpcodeNames.def), not
// CPython's numbers, which change between minor versions. The decoder maps a
// raw opcode byte to its Op through the build's table (opcodeInfo(raw).op) and
// the code generator maps back (opcodeByte); an Op the build's version lacks
// (PRECALL on 3.12, say) is never decoded, and emitting it throws.
//
// Invariant: offsets are byte offsets into co_code, as `dis` reports them;
// EXTENDED_ARG prefixes stay instructions of their own (no-ops) so that jump
// targets landing on them resolve.
#pragma once

#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if !(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION >= 11 && PY_MINOR_VERSION <= 13)
#error "no opcode table for this CPython; run scripts/gen_opcodes.py under it and add it to Bytecode.cpp"
#endif
#ifdef LOAD_FAST
#error "CPython's opcode.h macros collide with translate::Op; do not include it here"
#endif

namespace xacc::capture::translate {

enum class Op : uint8_t {
#define XACC_OPNAME(name) name,
#include "OpcodeNames.def"
#undef XACC_OPNAME
  kNumOps
};
static_assert(static_cast<int>(Op::kNumOps) < 256, "Op must stay one byte");

enum OpcodeFlags : uint16_t {
  kHasArg = 1,
  kJumpForward = 2,
  kJumpBackward = 4,
  kArgConst = 8,
  kArgName = 16,
  kArgLocal = 32,
  kArgFree = 64,
  kArgCompare = 128,
};

struct OpcodeInfo {
  const char* name = nullptr;  ///< null for unused numbers
  uint8_t caches = 0;          ///< inline CACHE entries after the instruction
  uint16_t flags = 0;
  Op op = Op::kNumOps;         ///< xacc's name for it (Note [Opcode numbering])
};
/// The build's version's facts about raw opcode byte `op`.
const OpcodeInfo& opcodeInfo(uint8_t op);
/// The facts about `op` on the build's version (name null: this version lacks it).
const OpcodeInfo& opcodeInfo(Op op);
/// The raw opcode byte of `op` on the build's version, or -1 when it has none.
int opcodeByte(Op op);
/// The CPython minor version whose opcode table this build decodes (11, 12, 13).
int opcodeTableVersion();
/// Note [Bytecode versions]: whether the translator's opcode handlers model the
/// bytecode of the build's version. Decoding works on every version with a table;
/// until the handlers model a version, its frames are not translated (GB001).
bool bytecodeModelled();

struct Instr {
  int offset = 0;
  Op op = Op::NOP;
  int arg = 0;     ///< with EXTENDED_ARG prefixes folded in
  int line = 0;
  int next = 0;    ///< offset of the next instruction (after inline caches)
  int target = -1; ///< jump target offset, or -1
  const char* name() const { return opcodeInfo(op).name; }
};

class Bytecode {
public:
  /// Decodes `code` (cached in the code object's co_extra, freed with it).
  static const Bytecode* of(PyCodeObject* code, std::string& error);
  /// Decodes `code` without caching it: for resume code, a copy of the whole
  /// original code per graph break, decoded once for its one translation.
  static std::unique_ptr<Bytecode> decode(PyCodeObject* code, std::string& error);

  /// Decodes resume code `code` that continues `orig` (Note [Resume code]):
  /// its prologue is decoded, the rest, `orig`'s code moved by `shift` bytes
  /// with each slot oparg j (argIsSlot) replaced by slotMap[j], copied from
  /// `orig`'s instructions. Costs the prologue plus a copy of the instructions,
  /// not a decoding of the whole code.
  static std::unique_ptr<Bytecode> derive(PyCodeObject* code, const Bytecode& orig, int shift,
                                          const std::vector<int>& slotMap, std::string& error);

  const std::vector<Instr>& instrs() const { return instrs_; }
  /// Index of the instruction at `offset`, or -1.
  int indexOf(int offset) const {
    return offset >= 0 && static_cast<size_t>(offset / 2) < index_.size() ? index_[offset / 2] : -1;
  }
  /// True if an exception-table entry covers `offset` (a try or with body).
  bool inTry(int offset) const;
  /// Where an exception raised at `offset` goes (co_exceptiontable): the
  /// handler's offset, the stack depth it expects (values below are kept,
  /// the rest popped) and whether the raising instruction's offset is pushed
  /// before the exception (`lasti`). False when no entry covers `offset`: the
  /// exception leaves the frame.
  struct Handler {
    int target = -1;
    int depth = 0;
    bool lasti = false;
  };
  bool handlerAt(int offset, Handler& out) const;
  /// True if `offset` lies inside a loop (between a backward jump's target and it).
  bool inLoop(int offset) const;
  /// The lowest offset that the code from `offset` on reaches by jumps and
  /// exception handlers, in any number of steps: where a copy of the code
  /// that continues at `offset` must start (Note [Resume code]). The table
  /// behind it is made on the first call, in one pass over the code.
  int regionStart(int offset) const;

  /// One entry of co_linetable: its byte position, its first code unit and
  /// the line in force before it (what its line delta is relative to).
  struct LineEntry {
    size_t pos = 0;
    int unit = 0;
    int lineBefore = 0;
  };
  /// The line-table entry that covers the code unit at byte `offset` of
  /// `code` (this Bytecode's code); the entries are listed on the first call.
  LineEntry lineEntryAt(PyCodeObject* code, int offset) const;

private:
  /// Appends the instructions of p[from, to) (after a JUMP_FORWARD, with
  /// `stopAtJump`, none); `lines` by code unit, -1 past its end.
  bool decodeRange(const unsigned char* p, int from, int to, const std::vector<int>& lines, bool stopAtJump,
                   std::string& error);
  void readExceptionTable(PyCodeObject* code);

  std::vector<Instr> instrs_;
  std::vector<int> index_;  ///< offset / 2 -> instruction index or -1
  std::vector<std::pair<int, int>> tryRanges_;   ///< [start, end) byte offsets
  std::vector<std::pair<int, int>> loopRanges_;  ///< [target, jump] byte offsets
  std::vector<int> handlers_;                    ///< each try range's handler offset
  std::vector<int> depths_;                      ///< each try range's depth << 1 | lasti
  mutable std::vector<int> reach_;               ///< by instruction index (regionStart)
  mutable std::vector<LineEntry> lineEntries_;   ///< in code order (lineEntryAt)
};

// The two tables of a 3.11 code object that are not code, read and written
// here only (the decoder above, resume code in CodegenResume.cpp, the
// assembler in CodegenImpl.h).

/// One entry of a location table (co_linetable, CPython's
/// Objects/locations.md): a header byte (bit 7 set, the kind in bits 3-6, its
/// length in code units minus one in bits 0-2) and the kind's data.
struct LocationEntry {
  int kind = 0;       ///< 15: no location, 14: long, 13: no columns, 10-12: one line, 0-9: short
  int length = 0;     ///< code units the entry covers
  int lineDelta = 0;  ///< its line minus the line before it (0: kinds 15 and 0-9)
  /// The long form's fields: end line delta, columns + 1 (0: none).
  unsigned endLineDelta = 0, col = 0, endCol = 0;
};
/// Reads the entry that starts at byte `i` of the table p[0, n) and moves `i`
/// past it.
LocationEntry readLocationEntry(const unsigned char* p, size_t n, size_t& i);
/// Appends a location-table varint (little-endian 6-bit chunks, bit 6 = more).
void writeLocationVarint(std::string& out, unsigned v);
/// Appends a location-table signed varint (sign in bit 0).
void writeLocationSvarint(std::string& out, int v);

/// Reads an exception-table varint (big-endian 6-bit chunks, bit 6 = more)
/// at byte `i` of p[0, n), moving `i` past it.
int readExceptionVarint(const unsigned char* p, size_t n, size_t& i);
/// Appends an exception-table varint; `first`: the first field of an entry
/// (bit 7 set on its first chunk).
void writeExceptionVarint(std::string& out, int val, bool first);

}  // namespace xacc::capture::translate
