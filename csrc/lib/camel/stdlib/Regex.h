// A linear-time matcher for ECMAScript regular expressions, used by `re::test`
// because libstdc++'s std::regex recurses once per input character (it crashes
// on texts of a few ten thousand bytes) and backtracks quadratically when
// searching. Patterns compile to a small instruction set run by a Pike VM: all
// threads advance in lock step over the bytes of the text, so time is
// O(text * pattern) and stack use does not grow with the text. Supported:
// literals and escapes (\d \D \w \W \s \S \b \B \t \n \v \f \r \0 \cX \xHH
// \uHHHH and identity escapes), `.`, classes with ranges and negation, groups
// `(…)` and `(?:…)`, alternation, greedy and lazy quantifiers `* + ? {n} {n,}
// {n,m}`, anchors `^` `$` (no multiline) and lookaheads `(?=…)` `(?!…)`
// (memoised per position). Matching is byte-wise, like std::regex over
// std::string. Backreferences cannot be matched by an automaton: compile()
// flags them in `hasBackreference` and the caller decides what to do.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xacc::camel::stdlib::regex {

enum class Op : uint8_t {
  Byte,      ///< consume `byte`
  Set,       ///< consume a byte of sets[x]
  Any,       ///< consume any byte but \n and \r
  Split,     ///< continue at x and at y
  Jmp,       ///< continue at x
  Match,     ///< the (sub)pattern matched
  Bol,       ///< at the start of the text
  Eol,       ///< at the end of the text
  WordB,     ///< at a \w / non-\w boundary
  NotWordB,  ///< not at one
  Look,      ///< continue if program x matches here (y = 1: if it does not)
};

struct Inst {
  Op op;
  uint8_t byte = 0;
  int32_t x = 0;
  int32_t y = 0;
};

struct Program {
  std::vector<std::vector<Inst>> code;  ///< code[0]: the pattern; then lookahead bodies
  std::vector<std::bitset<256>> sets;
  bool hasBackreference = false;
};

/// Compiles `pattern`; on a syntax error returns false with `error` set.
bool compile(std::string_view pattern, Program& out, std::string& error);
/// True when `p` (without backreferences) matches anywhere in `text`.
bool search(const Program& p, std::string_view text);

}  // namespace xacc::camel::stdlib::regex
