// Implementation of the Camel lexer (spec section 3): trivia and comments,
// identifiers and keywords, integer literals in four bases with the
// exponent-on-integer rule, real literals, the three string forms with escape
// decoding, and longest-match punctuation. Invariant: every call to next()
// consumes at least one byte or returns `eof`, so lexing always terminates.
#include "xacc/camel/Lexer.h"

#include <charconv>
#include <cmath>
#include <unordered_map>

#include "xacc/camel/CamelDiag.h"

namespace xacc::camel {

using support::SourceLoc;

namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool isOctDigit(char c) { return c >= '0' && c <= '7'; }
int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

const std::unordered_map<std::string_view, TokenKind>& keywordTable() {
  static const std::unordered_map<std::string_view, TokenKind> table = {
#define KEYWORD(Name, Spelling) {Spelling, TokenKind::kw_##Name},
#include "xacc/camel/TokenKinds.def"
  };
  return table;
}

struct PunctEntry {
  std::string_view spelling;
  TokenKind kind;
};

constexpr PunctEntry kPuncts[] = {
#define PUNCT(Name, Spelling) {Spelling, TokenKind::Name},
#include "xacc/camel/TokenKinds.def"
};

/// Multiplies `v` by `base` and adds `digit`, reporting overflow of uint64.
bool accumulate(uint64_t& v, unsigned base, unsigned digit) {
  uint64_t r;
  if (__builtin_mul_overflow(v, uint64_t(base), &r)) return false;
  if (__builtin_add_overflow(r, uint64_t(digit), &r)) return false;
  v = r;
  return true;
}

}  // namespace

Lexer::Lexer(std::string_view text, const std::string* file, support::DiagnosticEngine& diags)
    : text_(text), file_(file), diags_(diags) {}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
}

SourceLoc Lexer::locAt(size_t, uint32_t line, uint32_t col, uint32_t len) const {
  return SourceLoc{file_, line, col, len == 0 ? 1 : len};
}

void Lexer::skipTrivia(bool& sawSpace, bool& sawNewline) {
  for (;;) {
    char c = peek();
    if (atEnd()) return;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      sawSpace = true;
      advance();
    } else if (c == '\n') {
      sawSpace = sawNewline = true;
      advance();
    } else if ((c == '/' && peek(1) == '/') || c == '#') {
      // Line comment; `#` lines are tool directives, ignored by the compiler.
      sawSpace = true;
      while (!atEnd() && peek() != '\n') advance();
    } else if (c == '/' && peek(1) == '*') {
      sawSpace = true;
      uint32_t line = line_, col = col_;
      advance(2);
      bool closed = false;
      while (!atEnd()) {
        if (peek() == '*' && peek(1) == '/') {
          advance(2);
          closed = true;
          break;
        }
        if (peek() == '\n') sawNewline = true;
        advance();
      }
      if (!closed) {
        unterminatedComment_ = true;
        report(diags_, Diag::UnterminatedBlockComment, locAt(0, line, col, 2)).suggestion =
            "add '*/' to close the comment (block comments do not nest)";
      }
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  Token t;
  bool sawSpace = false, sawNewline = false;
  for (;;) {
    skipTrivia(sawSpace, sawNewline);
    t.offset = uint32_t(pos_);
    t.line = line_;
    t.col = col_;
    if (atEnd()) {
      t.kind = TokenKind::eof;
      t.unterminated = unterminatedComment_;
      break;
    }
    char c = peek();
    if (isIdentStart(c)) {
      lexIdentifier(t);
    } else if (isDigit(c)) {
      lexNumber(t);
    } else if (c == '\'' || c == '"') {
      if (peek(1) == c && peek(2) == c)
        lexMultiString(t, c);
      else
        lexString(t, c);
    } else if (c == '`') {
      lexFString(t);
    } else if (!lexPunctuation(t)) {
      // Invalid character: report it, skip it and treat it as a separator.
      auto uc = static_cast<unsigned char>(c);
      if (uc >= 0x80) {
        uint32_t line = line_, col = col_;
        size_t n = 1;
        while (pos_ + n < text_.size() && (static_cast<unsigned char>(text_[pos_ + n]) & 0xC0) == 0x80)
          ++n;
        advance(n);
        report(diags_, Diag::NonAsciiCharacter, locAt(0, line, col, 1)).suggestion =
            "identifiers and operators are ASCII; other characters may appear only inside "
            "string literals and comments";
      } else {
        std::string shown = "'" + escapeForDump(std::string_view(&c, 1), '\'') + "'";
        report(diags_, Diag::InvalidCharacter, locAt(0, line_, col_, 1), {shown});
        advance();
      }
      sawSpace = true;
      continue;
    }
    break;
  }
  t.spaceBefore = sawSpace;
  t.newlineBefore = sawNewline || first_;
  t.length = uint32_t(pos_ - t.offset);
  t.text = text_.substr(t.offset, t.length);
  t.endLine = line_;
  t.endCol = col_;
  first_ = false;
  return t;
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> out;
  for (;;) {
    out.push_back(next());
    if (out.back().is(TokenKind::eof)) break;
  }
  return out;
}

void Lexer::lexIdentifier(Token& t) {
  size_t start = pos_;
  while (isIdentChar(peek())) advance();
  std::string_view word = text_.substr(start, pos_ - start);
  if (word == "_") {
    t.kind = TokenKind::underscore;
    return;
  }
  auto it = keywordTable().find(word);
  t.kind = it == keywordTable().end() ? TokenKind::identifier : it->second;
}

void Lexer::lexNumber(Token& t) {
  size_t start = pos_;
  uint32_t line = line_, col = col_;
  auto tokenLoc = [&] { return locAt(start, line, col, uint32_t(pos_ - start)); };
  bool overflow = false;
  uint64_t value = 0;
  bool isReal = false;
  bool allowExponent = true;
  t.kind = TokenKind::integer;

  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
    advance(2);
    t.intDecimal = false;
    allowExponent = false;  // `e` is a hex digit
    size_t digits = 0;
    while (isHexDigit(peek())) {
      overflow |= !accumulate(value, 16, unsigned(hexValue(peek())));
      advance();
      ++digits;
    }
    if (digits == 0) report(diags_, Diag::MissingHexDigits, tokenLoc());
  } else if (peek() == '0' && (peek(1) == 'b' || peek(1) == 'B')) {
    advance(2);
    t.intDecimal = false;
    size_t digits = 0;
    while (peek() == '0' || peek() == '1') {
      overflow |= !accumulate(value, 2, unsigned(peek() - '0'));
      advance();
      ++digits;
    }
    if (isDigit(peek())) {
      uint32_t dcol = col_;
      report(diags_, Diag::InvalidBinDigit, locAt(pos_, line_, dcol, 1),
             {std::string_view(&text_[pos_], 1)});
      while (isDigit(peek())) advance();
    } else if (digits == 0) {
      report(diags_, Diag::MissingBinDigits, tokenLoc());
    }
  } else {
    while (isDigit(peek())) advance();
    std::string_view digits = text_.substr(start, pos_ - start);
    if (peek() == '.' && isDigit(peek(1))) {
      // REAL = [0-9]+ "." [0-9]+ [EXPONENT]; leading zeros are decimal here.
      isReal = true;
      advance();
      while (isDigit(peek())) advance();
    } else if (digits.size() > 1 && digits[0] == '0') {
      t.intDecimal = false;
      for (size_t i = 1; i < digits.size(); ++i) {
        if (!isOctDigit(digits[i])) {
          size_t nz = digits.find_first_not_of('0');
          std::string decimal(nz == std::string_view::npos ? "0" : digits.substr(nz));
          report(diags_, Diag::InvalidOctalDigit, locAt(start + i, line, col + uint32_t(i), 1),
                 {digits.substr(i, 1)})
              .suggestion = "a leading '0' makes an integer octal; write '" + decimal +
                            "' for a decimal number";
          break;
        }
        overflow |= !accumulate(value, 8, unsigned(digits[i] - '0'));
      }
    } else {
      for (char d : digits) overflow |= !accumulate(value, 10, unsigned(d - '0'));
    }
  }

  // Exponent: `1e5` stays an integer (spec 3.5.1); on reals it is ordinary.
  int64_t exponent = 0;
  bool hasExponent = false;
  if (allowExponent && (peek() == 'e' || peek() == 'E')) {
    size_t signLen = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
    if (isDigit(peek(1 + signLen))) {
      hasExponent = true;
      bool negative = peek(1) == '-';
      advance(1 + signLen);
      while (isDigit(peek())) {
        if (exponent < 100000) exponent = exponent * 10 + (peek() - '0');
        advance();
      }
      if (negative) exponent = -exponent;
    } else if (signLen == 1 || !isIdentChar(peek(1))) {
      advance(1 + signLen);
      report(diags_, Diag::MissingExponentDigits, tokenLoc()).suggestion =
          "write the exponent's digits, as in '1e5' or '2.5e-3'";
    }
  }

  // A literal directly followed by identifier characters: `12abc`, `0x1fg`.
  if (isIdentChar(peek())) {
    size_t s = pos_;
    uint32_t scol = col_;
    while (isIdentChar(peek())) advance();
    report(diags_, Diag::InvalidNumberSuffix, locAt(s, line, scol, uint32_t(pos_ - s)),
           {text_.substr(s, pos_ - s)});
  }

  std::string_view spelled = text_.substr(start, pos_ - start);
  if (isReal) {
    t.kind = TokenKind::real;
    // Only the part that forms a valid REAL (no suffix) is converted.
    std::string_view num = spelled;
    size_t end = num.find_first_not_of("0123456789.eE+-");
    if (end != std::string_view::npos) num = num.substr(0, end);
    double d = 0;
    auto res = std::from_chars(num.data(), num.data() + num.size(), d);
    if (res.ec == std::errc::result_out_of_range) {
      bool tiny = num.find("e-") != std::string_view::npos || num.find("E-") != std::string_view::npos;
      if (tiny) {
        d = 0.0;
      } else {
        report(diags_, Diag::RealOutOfRange, tokenLoc(), {spelled});
        d = HUGE_VAL;
      }
    }
    t.realValue = d;
    return;
  }

  if (hasExponent && exponent > 0 && value != 0) {
    for (int64_t i = 0; i < exponent && !overflow; ++i) overflow |= !accumulate(value, 10, 0);
  } else if (hasExponent && exponent < 0) {
    bool lost = false;
    for (int64_t i = 0; i < -exponent && value != 0; ++i) {
      lost |= value % 10 != 0;
      value /= 10;
    }
    if (lost && !overflow) {
      report(diags_, Diag::TruncatedIntegerExponent, tokenLoc(),
             {spelled, std::to_string(value)})
          .suggestion =
          "an exponent keeps an integer literal an int; write a real literal such as '0.01' "
          "for a fraction";
    }
  }
  // Decimal literals may reach 2^63 (the magnitude of INT64_MIN, valid only
  // after a folded minus, which the parser checks); other bases use all 64 bits.
  if (t.intDecimal && value > (uint64_t(1) << 63)) overflow = true;
  if (overflow) {
    report(diags_, Diag::IntegerTooLarge, tokenLoc(), {spelled}).suggestion =
        "int is a 64-bit signed integer; use a real literal for larger magnitudes";
    value = 0;
  }
  t.intValue = value;
}

void Lexer::lexString(Token& t, char quote) {
  uint32_t line = line_, col = col_;
  t.kind = TokenKind::string;
  advance();  // opening quote
  size_t bodyStart = pos_;
  while (!atEnd() && peek() != quote) advance(peek() == '\\' ? 2 : 1);
  std::string_view body = text_.substr(bodyStart, pos_ - bodyStart);
  if (atEnd()) {
    t.unterminated = true;
    report(diags_, Diag::UnterminatedString, locAt(0, line, col, 1)).suggestion =
        std::string("add a closing ") + quote + " to end the string";
  } else {
    advance();  // closing quote
  }
  t.strValue = decodeEscapes(body, false);
}

void Lexer::lexMultiString(Token& t, char quote) {
  uint32_t line = line_, col = col_;
  t.kind = TokenKind::multi_string;
  advance(3);
  size_t bodyStart = pos_;
  // The first triple quote ends the literal (escapes do not protect it).
  while (!atEnd() && !(peek() == quote && peek(1) == quote && peek(2) == quote)) advance();
  std::string_view body = text_.substr(bodyStart, pos_ - bodyStart);
  if (atEnd()) {
    t.unterminated = true;
    report(diags_, Diag::UnterminatedMultiString, locAt(0, line, col, 3)).suggestion =
        std::string("add a closing ") + std::string(3, quote);
  } else {
    advance(3);
  }
  t.strValue = decodeEscapes(body, false);
}

void Lexer::lexFString(Token& t) {
  uint32_t line = line_, col = col_;
  t.kind = TokenKind::fstring;
  advance();
  size_t bodyStart = pos_;
  while (!atEnd() && peek() != '`') advance(peek() == '\\' ? 2 : 1);
  std::string_view body = text_.substr(bodyStart, pos_ - bodyStart);
  if (atEnd()) {
    t.unterminated = true;
    report(diags_, Diag::UnterminatedFString, locAt(0, line, col, 1)).suggestion =
        "add a closing ` to end the format string";
  } else {
    advance();
  }
  t.strValue = decodeEscapes(body, true);
}

bool Lexer::lexPunctuation(Token& t) {
  for (size_t len = 3; len >= 1; --len) {
    if (pos_ + len > text_.size()) continue;
    std::string_view here = text_.substr(pos_, len);
    for (const PunctEntry& p : kPuncts) {
      if (p.spelling.size() == len && p.spelling == here) {
        t.kind = p.kind;
        advance(len);
        return true;
      }
    }
  }
  return false;
}

std::string Lexer::decodeEscapes(std::string_view body, bool fstring) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char n = body[i + 1];
    switch (n) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case '0': {
        // `\0` starts an octal escape of at most three digits, the 0 included.
        unsigned v = 0;
        size_t j = i + 1, count = 0;
        while (count < 3 && j < body.size() && isOctDigit(body[j])) {
          v = v * 8 + unsigned(body[j] - '0');
          ++j;
          ++count;
        }
        out += char(v & 0xFF);
        i = j - 1;
        continue;
      }
      case 'x': {
        unsigned v = 0;
        size_t j = i + 2, count = 0;
        while (count < 2 && j < body.size() && isHexDigit(body[j])) {
          v = v * 16 + unsigned(hexValue(body[j]));
          ++j;
          ++count;
        }
        if (count == 0) {
          out += "\\x";  // no digits: kept verbatim like any unknown escape
          ++i;
        } else {
          out += char(v);
          i = j - 1;
        }
        continue;
      }
      case '`':
        if (fstring) {
          out += '`';
          break;
        }
        [[fallthrough]];
      default:
        // Unknown escapes are kept verbatim: "\d+" is `\`, `d`, `+`.
        out += '\\';
        out += n;
    }
    ++i;
  }
  return out;
}

std::vector<Token> lex(std::string_view text, const std::string* file,
                       support::DiagnosticEngine& diags) {
  return Lexer(text, file, diags).lexAll();
}

}  // namespace xacc::camel
