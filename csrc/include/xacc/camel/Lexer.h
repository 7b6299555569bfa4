// The hand-written Camel lexer (spec section 3). It turns a source buffer into
// a vector of tokens ending with exactly one `eof` token. Comments and
// whitespace are dropped, but every token records whether they preceded it
// (adjacency rule, spec 3.7). Lexical errors are reported into the
// DiagnosticEngine; the lexer always makes progress, never throws, and
// invalid characters produce a diagnostic and no token.
//
// Note [Minus]: `-` and `+` are always separate operator tokens ([INTENDED]
// rule of spec 3.5.1), so `a-1` lexes as `a`, `-`, `1`. The parser folds a
// sign written directly before a number in prefix position into a negative
// literal (see Parser.h); everything else is binary or unary minus.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "xacc/camel/Token.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

class Lexer {
public:
  /// `text` must outlive the tokens (they keep views into it). `file` is the
  /// interned name used in diagnostics (see SourceManager::addBuffer).
  Lexer(std::string_view text, const std::string* file, support::DiagnosticEngine& diags);

  /// Lexes the next token; returns `eof` forever once the end is reached.
  Token next();
  /// Lexes the whole buffer; the last token is `eof`.
  std::vector<Token> lexAll();

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= text_.size(); }
  void advance(size_t n = 1);
  /// Skips whitespace and comments; records whether any were seen.
  void skipTrivia(bool& sawSpace, bool& sawNewline);
  support::SourceLoc locAt(size_t offset, uint32_t line, uint32_t col, uint32_t len = 1) const;

  void lexIdentifier(Token& t);
  void lexNumber(Token& t);
  void lexString(Token& t, char quote);
  void lexMultiString(Token& t, char quote);
  void lexFString(Token& t);
  bool lexPunctuation(Token& t);
  /// Decodes the escapes of a string body (spec 3.5.3). `fstring` also
  /// decodes "\`" to a back-quote.
  static std::string decodeEscapes(std::string_view body, bool fstring);

  std::string_view text_;
  const std::string* file_;
  support::DiagnosticEngine& diags_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
  bool first_ = true;
  bool unterminatedComment_ = false;
};

/// Convenience: lexes `text` completely.
std::vector<Token> lex(std::string_view text, const std::string* file,
                       support::DiagnosticEngine& diags);

}  // namespace xacc::camel
