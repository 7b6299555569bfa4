// Token kind tables (generated from TokenKinds.def) and the token dump used by
// `camel inspect --tokens`. The dump format is stable because lit tests match
// it: `LINE:COL kind 'spelling' adjacency [value=...]`.
#include "xacc/camel/Token.h"

#include <cstdio>

#include <fmt/format.h>

namespace xacc::camel {

namespace {
enum Category : uint8_t { kSpecial, kKeyword, kPunct };

struct KindInfo {
  const char* name;
  const char* spelling;
  Category category;
};

constexpr KindInfo kKinds[] = {
#define TOK(Name, Spelling) {#Name, Spelling, kSpecial},
#define KEYWORD(Name, Spelling) {"kw_" #Name, Spelling, kKeyword},
#define PUNCT(Name, Spelling) {#Name, Spelling, kPunct},
#include "xacc/camel/TokenKinds.def"
};
}  // namespace

const char* tokenKindName(TokenKind k) { return kKinds[size_t(k)].name; }
const char* tokenSpelling(TokenKind k) { return kKinds[size_t(k)].spelling; }
bool isKeyword(TokenKind k) { return kKinds[size_t(k)].category == kKeyword; }
bool isPunctuation(TokenKind k) { return kKinds[size_t(k)].category == kPunct; }

std::string escapeForDump(std::string_view s, char quote) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += char(c);
        } else if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out;
}

std::string formatReal(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEna") == std::string::npos) s += ".0";  // keep reals recognisable
  return s;
}

std::string dumpTokens(const std::vector<Token>& tokens) {
  std::string out;
  bool first = true;
  for (const Token& t : tokens) {
    out += fmt::format("{}:{} {} '{}'", t.line, t.col, tokenKindName(t.kind),
                       escapeForDump(t.text, '\''));
    // Adjacency: `nl` first on its line, `sp` after whitespace or a comment,
    // `adj` directly touching the previous token.
    const char* adj = t.newlineBefore || first ? "nl" : t.spaceBefore ? "sp" : "adj";
    out += ' ';
    out += adj;
    switch (t.kind) {
      case TokenKind::integer:
        if (t.intDecimal)
          out += fmt::format(" value={}", t.intValue);
        else
          out += fmt::format(" value={}", static_cast<int64_t>(t.intValue));
        break;
      case TokenKind::real: out += " value=" + formatReal(t.realValue); break;
      case TokenKind::string:
      case TokenKind::multi_string:
      case TokenKind::fstring:
        out += " value=\"" + escapeForDump(t.strValue, '"') + "\"";
        break;
      default: break;
    }
    out += '\n';
    first = false;
  }
  return out;
}

}  // namespace xacc::camel
