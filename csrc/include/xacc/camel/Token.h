// Tokens of the Camel lexer. Every kind is declared once in TokenKinds.def.
// A token records its spelling (a view into the source buffer, which must
// outlive it), its position, whether whitespace or a comment separated it from
// the previous token (the adjacency rule of spec 3.7 needs this) and, for
// literals, the decoded value. Integer literals keep their magnitude unsigned:
// the sign is a separate `-` token that the parser folds (see Note [Minus]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xacc::camel {

enum class TokenKind : uint8_t {
#define TOK(Name, Spelling) Name,
#include "xacc/camel/TokenKinds.def"
};

/// Stable name of a kind as used in token dumps ("identifier", "kw_func", "arrow").
const char* tokenKindName(TokenKind k);
/// Source spelling for keywords and punctuation ("func", "->"), or a
/// description for the other kinds ("identifier", "end of file").
const char* tokenSpelling(TokenKind k);
bool isKeyword(TokenKind k);
bool isPunctuation(TokenKind k);

struct Token {
  TokenKind kind = TokenKind::eof;
  uint32_t offset = 0;  ///< byte offset of the first character
  uint32_t length = 0;  ///< bytes of source text
  uint32_t line = 0, col = 0;        ///< 1-based start
  uint32_t endLine = 0, endCol = 0;  ///< one past the last character
  /// Whitespace or a comment precedes this token (false for the first token
  /// of a file only when nothing precedes it). Postfix forms require
  /// `!spaceBefore` (spec 3.7).
  bool spaceBefore = false;
  /// A line break precedes this token (it is the first token on its line).
  bool newlineBefore = false;
  std::string_view text;  ///< spelling in the source buffer
  /// The lexer reported this token (or, for `eof`, the comment before it) as
  /// unterminated; the parser stays quiet about the end of file that follows.
  bool unterminated = false;

  // Literal payloads.
  uint64_t intValue = 0;   ///< integer magnitude (two's complement bits for non-decimal bases)
  bool intDecimal = true;  ///< decimal integer literal (range-checked as signed)
  double realValue = 0.0;
  std::string strValue;  ///< decoded contents of string literals

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
  bool adjacent() const { return !spaceBefore; }
};

/// One line per token: `LINE:COL kind 'spelling' [adj|sp|nl] value=...`.
std::string dumpTokens(const std::vector<Token>& tokens);

/// Shortest round-trip text of a real, always with a '.' or an exponent ("0.0", "1e+20").
std::string formatReal(double v);

/// Escapes control characters, quotes and backslashes C-style for dumps.
std::string escapeForDump(std::string_view s, char quote);

}  // namespace xacc::camel
