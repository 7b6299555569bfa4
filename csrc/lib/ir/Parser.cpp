// The GIR text parser: a hand-written lexer and recursive-descent parser. See
// Parser.h for the grammar. Every path either builds IR or reports one located
// diagnostic and unwinds; nesting depth is bounded so hostile input cannot
// exhaust the stack.
#include "xacc/ir/Parser.h"
#include "xacc/support/CoreDiags.h"

#include <charconv>
#include <cmath>
#include <limits>

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

namespace {

enum class Tok : uint8_t {
  Eof, Error, Ident, ValueName, SymbolName, RegionName, Int, Float, String,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater, Comma, Colon, Equal, Arrow,
  Bang, Question, Star
};

struct Token {
  Tok kind = Tok::Eof;
  std::string_view text;  // for names: without the sigil
  uint32_t line = 1, col = 1;
  std::string strValue;   // decoded string literal
  int64_t intValue = 0;
  double floatValue = 0;
};

const char* tokName(Tok t) {
  switch (t) {
    case Tok::Eof: return "end of file";
    case Tok::Error: return "invalid token";
    case Tok::Ident: return "identifier";
    case Tok::ValueName: return "value name";
    case Tok::SymbolName: return "symbol";
    case Tok::RegionName: return "region label";
    case Tok::Int: return "integer";
    case Tok::Float: return "float";
    case Tok::String: return "string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Less: return "'<'";
    case Tok::Greater: return "'>'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Equal: return "'='";
    case Tok::Arrow: return "'->'";
    case Tok::Bang: return "'!'";
    case Tok::Question: return "'?'";
    case Tok::Star: return "'*'";
  }
  return "token";
}

bool identStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identChar(char c) { return identStart(c) || (c >= '0' && c <= '9') || c == '.'; }
bool digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next() {
    skipSpace();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= src_.size()) return t;
    char c = src_[pos_];
    size_t start = pos_;
    auto single = [&](Tok k) {
      advance();
      t.kind = k;
      t.text = src_.substr(start, 1);
      return t;
    };
    switch (c) {
      case '(': return single(Tok::LParen);
      case ')': return single(Tok::RParen);
      case '{': return single(Tok::LBrace);
      case '}': return single(Tok::RBrace);
      case '[': return single(Tok::LBracket);
      case ']': return single(Tok::RBracket);
      case '<': return single(Tok::Less);
      case '>': return single(Tok::Greater);
      case ',': return single(Tok::Comma);
      case ':': return single(Tok::Colon);
      case '=': return single(Tok::Equal);
      case '!': return single(Tok::Bang);
      case '?': return single(Tok::Question);
      case '*': return single(Tok::Star);
      case '"': return lexString(t);
      case '%': case '@': case '^': {
        advance();
        size_t s = pos_;
        // Graph symbols may be qualified (`@geo::area`, `@geo::area$lambda3`).
        while (pos_ < src_.size() &&
               (identChar(src_[pos_]) || (c == '@' && (src_[pos_] == ':' || src_[pos_] == '$'))))
          advance();
        if (pos_ == s) return error(t, std::string("expected a name after '") + c + "'");
        t.kind = c == '%' ? Tok::ValueName : c == '@' ? Tok::SymbolName : Tok::RegionName;
        t.text = src_.substr(s, pos_ - s);
        return t;
      }
      case '-':
        if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
          advance();
          advance();
          t.kind = Tok::Arrow;
          t.text = src_.substr(start, 2);
          return t;
        }
        if (pos_ + 1 < src_.size() && (digit(src_[pos_ + 1]) || src_.substr(pos_ + 1, 3) == "inf"))
          return lexNumber(t);
        return error(t, "unexpected '-'");
      default: break;
    }
    if (digit(c)) return lexNumber(t);
    if (identStart(c)) {
      while (pos_ < src_.size() && identChar(src_[pos_])) advance();
      t.text = src_.substr(start, pos_ - start);
      if (t.text == "inf" || t.text == "nan") {
        t.kind = Tok::Float;
        t.floatValue = t.text == "inf" ? std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::quiet_NaN();
        return t;
      }
      t.kind = Tok::Ident;
      return t;
    }
    advance();
    std::string shown = (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f
                            ? std::string("'") + c + "'"
                            : "byte 0x" + hex((unsigned char)c);
    return error(t, "invalid character " + shown);
  }

  std::string errorMessage;

private:
  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return std::string{d[v >> 4], d[v & 15]};
  }

  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skipSpace() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else {
        break;
      }
    }
  }

  Token error(Token t, std::string msg) {
    t.kind = Tok::Error;
    errorMessage = std::move(msg);
    return t;
  }

  Token lexNumber(Token t) {
    size_t start = pos_;
    bool neg = src_[pos_] == '-';
    if (neg) advance();
    if (src_.substr(pos_, 3) == "inf") {
      for (int i = 0; i < 3; ++i) advance();
      t.kind = Tok::Float;
      t.floatValue = -std::numeric_limits<double>::infinity();
      t.text = src_.substr(start, pos_ - start);
      return t;
    }
    bool isFloat = false;
    while (pos_ < src_.size() && digit(src_[pos_])) advance();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      isFloat = true;
      advance();
      while (pos_ < src_.size() && digit(src_[pos_])) advance();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      isFloat = true;
      advance();
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) advance();
      if (pos_ >= src_.size() || !digit(src_[pos_])) return error(t, "malformed exponent");
      while (pos_ < src_.size() && digit(src_[pos_])) advance();
    }
    t.text = src_.substr(start, pos_ - start);
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    if (isFloat) {
      auto res = std::from_chars(b, e, t.floatValue);
      if (res.ec == std::errc::result_out_of_range) return error(t, "float literal out of range");
      if (res.ec != std::errc() || res.ptr != e) return error(t, "malformed float literal");
      t.kind = Tok::Float;
    } else {
      auto res = std::from_chars(b, e, t.intValue);
      if (res.ec == std::errc::result_out_of_range)
        return error(t, "integer literal does not fit in 64 bits");
      if (res.ec != std::errc() || res.ptr != e) return error(t, "malformed integer literal");
      t.kind = Tok::Int;
    }
    return t;
  }

  Token lexString(Token t) {
    advance();  // opening quote
    std::string v;
    while (true) {
      if (pos_ >= src_.size()) return error(t, "unterminated string literal");
      char c = src_[pos_];
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\n') return error(t, "unterminated string literal");
      if (c == '\\') {
        advance();
        if (pos_ >= src_.size()) return error(t, "unterminated string literal");
        char e = src_[pos_];
        advance();
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case '"': v += '"'; break;
          case '\\': v += '\\'; break;
          case 'u': {
            if (pos_ + 4 > src_.size()) return error(t, "malformed \\u escape");
            unsigned code = 0;
            for (int i = 0; i < 4; ++i) {
              char h = src_[pos_];
              unsigned d = digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                           : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : 99;
              if (d > 15) return error(t, "malformed \\u escape");
              code = code * 16 + d;
              advance();
            }
            if (code > 0xff) return error(t, "\\u escape above \\u00ff is not a byte");
            v += char(code);
            break;
          }
          default: return error(t, std::string("unknown escape '\\") + e + "'");
        }
        continue;
      }
      v += c;
      advance();
    }
    t.kind = Tok::String;
    t.strValue = std::move(v);
    return t;
  }

  std::string_view src_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

constexpr int kMaxDepth = 200;

class Parser {
public:
  Parser(std::string_view text, const std::string* file, support::DiagnosticEngine& diag,
         TextLocations* locs)
      : lex_(text), file_(file), diag_(diag), locs_(locs) {
    tok_ = lex_.next();
  }

  std::unique_ptr<Module> module() {
    auto m = std::make_unique<Module>();
    while (tok_.kind != Tok::Eof) {
      if (!isKeyword("graph")) return fail("expected 'graph'");
      support::SourceLoc gloc = here();
      next();
      if (tok_.kind != Tok::SymbolName) return fail("expected graph name like '@main'");
      std::string name(tok_.text);
      if (m->lookup(name))
        return fail("redefinition of graph @" + name, coreCode(CoreDiag::RedefinedGraph));
      next();
      auto g = std::make_unique<Graph>(name);
      if (locs_) locs_->graphs[g.get()] = gloc;
      if (!graphBody(*g, 0)) return nullptr;
      m->add(std::move(g));
    }
    return m;
  }

  Type type(int depth = 0) {
    if (depth > kMaxDepth) return failType("types nested too deeply");
    if (tok_.kind == Tok::Bang) {
      next();
      if (!isKeyword("token")) return failType("expected 'token' after '!'");
      next();
      return Type::token();
    }
    if (tok_.kind != Tok::Ident) return failType("expected a type");
    std::string_view k = tok_.text;
    next();
    if (k == "i64") return Type::i64();
    if (k == "i32") return Type::i32();
    if (k == "f64") return Type::f64();
    if (k == "f32") return Type::f32();
    if (k == "bool") return Type::boolean();
    if (k == "str") return Type::string();
    if (k == "null") return Type::null();
    if (k == "any") return Type::any();
    if (k == "pyobj") {
      if (!accept(Tok::Less)) return Type::pyobj();
      Type e = type(depth + 1);
      if (!e || !expect(Tok::Greater)) return Type();
      return Type::pyobj(e);
    }
    if (k == "list") {
      if (!expect(Tok::Less)) return Type();
      Type e = type(depth + 1);
      if (!e || !expect(Tok::Greater)) return Type();
      return Type::list(e);
    }
    if (k == "tuple") {
      if (!expect(Tok::Less)) return Type();
      std::vector<Type> elems;
      if (tok_.kind != Tok::Greater) {
        do {
          Type e = type(depth + 1);
          if (!e) return Type();
          elems.push_back(e);
        } while (accept(Tok::Comma));
      }
      if (!expect(Tok::Greater)) return Type();
      return Type::tuple(elems);
    }
    if (k == "struct") {
      if (!expect(Tok::Less) || !expect(Tok::LBrace)) return Type();
      std::vector<std::pair<std::string, Type>> fields;
      if (tok_.kind != Tok::RBrace) {
        do {
          if (tok_.kind != Tok::Ident) return failType("expected a field name");
          std::string f(tok_.text);
          for (auto& existing : fields)
            if (existing.first == f) return failType("duplicate field '" + f + "'");
          next();
          if (!expect(Tok::Colon)) return Type();
          Type t = type(depth + 1);
          if (!t) return Type();
          fields.emplace_back(f, t);
        } while (accept(Tok::Comma));
      }
      if (!expect(Tok::RBrace) || !expect(Tok::Greater)) return Type();
      return Type::structure(fields);
    }
    if (k == "func") {
      if (!expect(Tok::Less) || !expect(Tok::LParen)) return Type();
      std::vector<Type> params;
      if (tok_.kind != Tok::RParen) {
        do {
          Type t = type(depth + 1);
          if (!t) return Type();
          params.push_back(t);
        } while (accept(Tok::Comma));
      }
      if (!expect(Tok::RParen) || !expect(Tok::Arrow)) return Type();
      std::vector<Type> results;
      if (!typeList(results, depth + 1) || !expect(Tok::Greater)) return Type();
      return Type::func(params, results);
    }
    if (k == "tensor") {
      if (!expect(Tok::Less)) return Type();
      if (tok_.kind != Tok::Ident) return failType("expected a dtype such as 'f32'");
      DType dt;
      if (!parseDType(tok_.text, dt)) return failType("unknown dtype '" + std::string(tok_.text) + "'");
      next();
      if (!expect(Tok::Comma)) return Type();
      bool ranked = true;
      std::vector<Dim> dims;
      if (accept(Tok::Star)) {
        ranked = false;
      } else {
        if (!expect(Tok::LBracket)) return Type();
        if (tok_.kind != Tok::RBracket) {
          do {
            if (tok_.kind == Tok::Int) {
              if (tok_.intValue < 0) return failType("tensor dims must be non-negative");
              dims.push_back(Dim::fixed(tok_.intValue));
            } else if (tok_.kind == Tok::Question) {
              dims.push_back(Dim::dynamic());
            } else if (tok_.kind == Tok::Ident) {
              dims.push_back(Dim::symbol(std::string(tok_.text)));
            } else {
              return failType("expected a dim: integer, '?' or a symbol");
            }
            next();
          } while (accept(Tok::Comma));
        }
        if (!expect(Tok::RBracket)) return Type();
      }
      if (!expect(Tok::Comma)) return Type();
      if (tok_.kind != Tok::Ident) return failType("expected a device such as 'cpu'");
      std::string device(tok_.text);
      next();
      if (!expect(Tok::Greater)) return Type();
      return ranked ? Type::tensor(dt, dims, device) : Type::unrankedTensor(dt, device);
    }
    return failTypeAt(prevLoc_, "unknown type '" + std::string(k) + "'",
                      coreCode(CoreDiag::UnknownType));
  }

  bool atEnd() const { return tok_.kind == Tok::Eof; }
  bool failed() const { return failed_; }
  std::string firstError;

private:
  /// The values of one graph by name. Printed GIR numbers most values (%0,
  /// %1, ...) in order, so canonical numbers of moderate size index a flat
  /// vector; other names (and huge numbers) go to a string map. A name lives
  /// in exactly one of the two, decided when it is defined.
  struct Scope {
    struct Hash {
      using is_transparent = void;
      size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
    };
    std::vector<Value*> numbered;
    std::unordered_map<std::string, Value*, Hash, std::equal_to<>> named;

    /// The number a canonical numeric name ("0", "17"; not "007") stands for,
    /// or -1.
    static int64_t numberOf(std::string_view s) {
      if (s.empty() || s.size() > 9 || (s[0] == '0' && s.size() > 1)) return -1;
      int64_t n = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return -1;
        n = n * 10 + (c - '0');
      }
      return n;
    }
    Value* find(std::string_view name) const {
      int64_t n = numberOf(name);
      if (n >= 0 && size_t(n) < numbered.size() && numbered[size_t(n)]) return numbered[size_t(n)];
      auto it = named.find(name);
      return it == named.end() ? nullptr : it->second;
    }
    void define(std::string_view name, Value* v) {
      int64_t n = numberOf(name);
      if (n >= 0 && size_t(n) <= 2 * numbered.size() + 1024) {
        if (size_t(n) >= numbered.size()) numbered.resize(size_t(n) + 1, nullptr);
        numbered[size_t(n)] = v;
      } else {
        named.emplace(std::string(name), v);
      }
    }
  };

  support::SourceLoc here() const {
    return support::SourceLoc{file_, tok_.line, tok_.col,
                              uint32_t(std::max<size_t>(1, tok_.text.size()))};
  }

  void next() {
    prevLoc_ = here();
    tok_ = lex_.next();
  }

  bool isKeyword(std::string_view k) const { return tok_.kind == Tok::Ident && tok_.text == k; }

  std::nullptr_t fail(const std::string &msg, const char *code = coreCode(CoreDiag::ParseError)) {
    report(here(), msg, code);
    return nullptr;
  }
  Type failType(const std::string& msg) {
    report(here(), msg, coreCode(CoreDiag::UnknownType));
    return Type();
  }
  Type failTypeAt(support::SourceLoc loc, const std::string& msg, const char* code) {
    report(loc, msg, code);
    return Type();
  }
  void report(support::SourceLoc loc, std::string msg, const char* code) {
    if (failed_) return;
    failed_ = true;
    if (tok_.kind == Tok::Error) {
      // A lexer error explains itself better than "expected X".
      msg = lex_.errorMessage;
      code = coreCode(CoreDiag::LexError);
    }
    firstError = msg;
    diag_.error(code, loc, msg);
  }

  bool accept(Tok k) {
    if (tok_.kind != k) return false;
    next();
    return true;
  }
  bool expect(Tok k) {
    if (accept(k)) return true;
    report(here(), std::string("expected ") + tokName(k) + ", found " + tokName(tok_.kind),
           coreCode(CoreDiag::ParseError));
    return false;
  }

  bool typeList(std::vector<Type>& out, int depth) {
    if (tok_.kind == Tok::LParen) {
      next();
      if (tok_.kind != Tok::RParen) {
        do {
          Type t = type(depth + 1);
          if (!t) return false;
          out.push_back(t);
        } while (accept(Tok::Comma));
      }
      return expect(Tok::RParen);
    }
    Type t = type(depth + 1);
    if (!t) return false;
    out.push_back(t);
    return true;
  }

  bool graphBody(Graph& g, int depth) {
    if (depth > kMaxDepth) {
      report(here(), "regions nested too deeply", coreCode(CoreDiag::ParseError));
      return false;
    }
    Scope scope;
    if (!expect(Tok::LParen)) return false;
    if (tok_.kind != Tok::RParen) {
      do {
        if (tok_.kind != Tok::ValueName) {
          report(here(), "expected a parameter like '%x: i64'", coreCode(CoreDiag::ParseError));
          return false;
        }
        std::string name(tok_.text);
        support::SourceLoc nloc = here();
        next();
        if (!expect(Tok::Colon)) return false;
        Type t = type();
        if (!t) return false;
        if (scope.find(name)) {
          report(nloc, "redefinition of %" + name, coreCode(CoreDiag::RedefinedValue));
          return false;
        }
        Value* p = g.addParam(t, isNumeric(name) ? std::string() : name);
        scope.define(name, p);
      } while (accept(Tok::Comma));
    }
    if (!expect(Tok::RParen) || !expect(Tok::Arrow)) return false;
    std::vector<Type> resultTypes;
    if (!typeList(resultTypes, 0)) return false;
    if (!expect(Tok::LBrace)) return false;
    while (tok_.kind != Tok::RBrace) {
      if (tok_.kind == Tok::Eof) {
        report(here(), "expected '}' to close the graph body", coreCode(CoreDiag::ParseError));
        return false;
      }
      if (isKeyword("return")) {
        support::SourceLoc rloc = here();
        next();
        std::vector<Value*> vals;
        if (tok_.kind == Tok::ValueName) {
          do {
            Value* v = use(scope);
            if (!v) return false;
            vals.push_back(v);
          } while (accept(Tok::Comma));
        }
        if (vals.size() != resultTypes.size()) {
          report(rloc,
                 "return has " + std::to_string(vals.size()) +
                     " values but the signature declares " + std::to_string(resultTypes.size()),
                 coreCode(CoreDiag::ResultCountMismatch));
          return false;
        }
        for (size_t i = 0; i < vals.size(); ++i) g.addResult(vals[i], resultTypes[i]);
        g.setHasReturn(true);
        if (tok_.kind != Tok::RBrace) {
          report(here(), "'return' must be the last statement of a graph",
                 coreCode(CoreDiag::ParseError));
          return false;
        }
        break;
      }
      if (!node(g, scope, depth)) return false;
    }
    next();  // '}'
    if (!g.hasReturn()) {
      if (!resultTypes.empty()) {
        report(prevLoc_, "graph declares results but has no 'return'",
               coreCode(CoreDiag::ResultCountMismatch));
        return false;
      }
      g.setResultTypes({});
    }
    return true;
  }

  static bool isNumeric(const std::string& s) {
    for (char c : s)
      if (!digit(c)) return false;
    return !s.empty();
  }

  Value* use(Scope& scope) {
    if (tok_.kind != Tok::ValueName) {
      report(here(), std::string("expected a value, found ") + tokName(tok_.kind),
             coreCode(CoreDiag::ParseError));
      return nullptr;
    }
    Value* v = scope.find(tok_.text);
    if (!v) {
      report(here(), "use of undefined value %" + std::string(tok_.text),
             coreCode(CoreDiag::UndefinedValue));
      return nullptr;
    }
    next();
    return v;
  }

  bool node(Graph& g, Scope& scope, int depth) {
    std::vector<std::pair<std::string, support::SourceLoc>> names;
    if (tok_.kind == Tok::ValueName) {
      do {
        if (tok_.kind != Tok::ValueName) {
          report(here(), "expected a result name", coreCode(CoreDiag::ParseError));
          return false;
        }
        names.emplace_back(std::string(tok_.text), here());
        next();
      } while (accept(Tok::Comma));
      if (!expect(Tok::Equal)) return false;
    }
    if (tok_.kind != Tok::Ident) {
      report(here(), std::string("expected an operation name, found ") + tokName(tok_.kind),
             coreCode(CoreDiag::ParseError));
      return false;
    }
    support::SourceLoc opLoc = here();
    std::string err;
    const OpInfo* info = OpRegistry::get().lookup(tok_.text, &err);
    if (!info) {
      report(opLoc, err, coreCode(CoreDiag::UnknownOp));
      return false;
    }
    next();
    if (!expect(Tok::LParen)) return false;
    std::vector<Value*> operands;
    if (tok_.kind != Tok::RParen) {
      do {
        Value* v = use(scope);
        if (!v) return false;
        operands.push_back(v);
      } while (accept(Tok::Comma));
    }
    if (!expect(Tok::RParen)) return false;
    AttrDict attrs;
    if (tok_.kind == Tok::LBrace) {
      next();
      do {
        if (tok_.kind != Tok::Ident) {
          report(here(), "expected an attribute name", coreCode(CoreDiag::BadAttribute));
          return false;
        }
        std::string key(tok_.text);
        if (attrs.has(key)) {
          report(here(), "duplicate attribute '" + key + "'", coreCode(CoreDiag::BadAttribute));
          return false;
        }
        next();
        if (!expect(Tok::Equal)) return false;
        Attr a;
        if (!attr(a, 0)) return false;
        attrs.set(key, std::move(a));
      } while (accept(Tok::Comma));
      if (!expect(Tok::RBrace)) return false;
    }
    if (!expect(Tok::Colon)) return false;
    std::vector<Type> types;
    if (!typeList(types, 0)) return false;
    if (types.size() != names.size()) {
      report(opLoc,
             std::to_string(names.size()) + " result names but " + std::to_string(types.size()) +
                 " result types",
             coreCode(CoreDiag::ResultCountMismatch));
      return false;
    }
    support::SourceLoc srcLoc;
    if (isKeyword("loc")) {
      next();
      if (!expect(Tok::LParen)) return false;
      if (tok_.kind != Tok::String) {
        report(here(), "expected a file name string in loc(...)", coreCode(CoreDiag::ParseError));
        return false;
      }
      std::string file = tok_.strValue;
      next();
      if (!expect(Tok::Colon)) return false;
      if (tok_.kind != Tok::Int || tok_.intValue < 0 || tok_.intValue > UINT32_MAX) {
        report(here(), "expected a line number", coreCode(CoreDiag::ParseError));
        return false;
      }
      uint32_t line = uint32_t(tok_.intValue);
      next();
      if (!expect(Tok::Colon)) return false;
      if (tok_.kind != Tok::Int || tok_.intValue < 0 || tok_.intValue > UINT32_MAX) {
        report(here(), "expected a column number", coreCode(CoreDiag::ParseError));
        return false;
      }
      uint32_t col = uint32_t(tok_.intValue);
      next();
      if (!expect(Tok::RParen)) return false;
      if (line > 0) srcLoc = {diag_.sourceManager().internName(file), line, col, 1};
    }
    Node* n = g.create(info, operands, types);
    n->attrs() = std::move(attrs);
    n->setLoc(srcLoc);
    if (locs_) locs_->setNode(n, opLoc);
    if (tok_.kind == Tok::LBrace) {
      next();
      while (tok_.kind == Tok::RegionName) {
        auto r = std::make_unique<Graph>(std::string(tok_.text));
        next();
        Graph* rg = n->addRegion(std::move(r));
        if (locs_) locs_->graphs[rg] = opLoc;
        if (!graphBody(*rg, depth + 1)) return false;
      }
      if (!expect(Tok::RBrace)) return false;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (scope.find(names[i].first)) {
        report(names[i].second, "redefinition of %" + names[i].first,
               coreCode(CoreDiag::RedefinedValue));
        return false;
      }
      if (!isNumeric(names[i].first)) n->result(i)->setName(names[i].first);
      scope.define(names[i].first, n->result(i));
    }
    return true;
  }

  bool attr(Attr& out, int depth) {
    if (depth > kMaxDepth) {
      report(here(), "attribute nested too deeply", coreCode(CoreDiag::BadAttribute));
      return false;
    }
    switch (tok_.kind) {
      case Tok::Int: out = Attr::integer(tok_.intValue); next(); return true;
      case Tok::Float: out = Attr::real(tok_.floatValue); next(); return true;
      case Tok::String: out = Attr::string(tok_.strValue); next(); return true;
      case Tok::SymbolName: out = Attr::symbol(std::string(tok_.text)); next(); return true;
      case Tok::LBracket: {
        next();
        Attr::Array items;
        if (tok_.kind != Tok::RBracket) {
          do {
            Attr a;
            if (!attr(a, depth + 1)) return false;
            items.push_back(std::move(a));
          } while (accept(Tok::Comma));
        }
        if (!expect(Tok::RBracket)) return false;
        out = Attr::array(std::move(items));
        return true;
      }
      case Tok::Ident:
        if (tok_.text == "true" || tok_.text == "false") {
          out = Attr::boolean(tok_.text == "true");
          next();
          return true;
        }
        if (tok_.text == "none") {
          out = Attr::none();
          next();
          return true;
        }
        if (tok_.text == "type") {
          next();
          if (!expect(Tok::LParen)) return false;
          Type t = type();
          if (!t || !expect(Tok::RParen)) return false;
          out = Attr::type(t);
          return true;
        }
        [[fallthrough]];
      default:
        report(here(), std::string("expected an attribute value, found ") + tokName(tok_.kind),
               coreCode(CoreDiag::BadAttribute));
        return false;
    }
  }

  Lexer lex_;
  Token tok_;
  support::SourceLoc prevLoc_;
  const std::string* file_;
  support::DiagnosticEngine& diag_;
  TextLocations* locs_;
  bool failed_ = false;
};

}  // namespace

namespace {
size_t slotOf(const Node* n, size_t mask) {
  uint64_t h = uint64_t(reinterpret_cast<uintptr_t>(n));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return size_t(h) & mask;
}
}  // namespace

void TextLocations::index() const {
  if (indexed_ == entries_.size()) return;
  if (entries_.size() * 2 > table_.size()) {
    size_t cap = 64;
    while (cap < entries_.size() * 2) cap <<= 1;
    table_.assign(cap, 0);
    indexed_ = 0;
  }
  size_t mask = table_.size() - 1;
  for (; indexed_ < entries_.size(); ++indexed_) {
    const Node* n = entries_[indexed_].node;
    size_t i = slotOf(n, mask);
    while (table_[i] && entries_[table_[i] - 1].node != n) i = (i + 1) & mask;
    table_[i] = uint32_t(indexed_ + 1);  // a later entry for the same node wins
  }
}

support::SourceLoc TextLocations::of(const Node& n) const {
  index();
  if (table_.empty()) return n.loc();
  size_t mask = table_.size() - 1;
  for (size_t i = slotOf(&n, mask); table_[i]; i = (i + 1) & mask)
    if (entries_[table_[i] - 1].node == &n) return entries_[table_[i] - 1].loc;
  return n.loc();
}

std::unique_ptr<Module> parseModule(std::string_view text, std::string_view filename,
                                    support::DiagnosticEngine& diag, TextLocations* locs) {
  const std::string* file = diag.sourceManager().addBuffer(std::string(filename), std::string(text));
  std::string_view stored = diag.sourceManager().bufferText(file);
  Parser p(stored, file, diag, locs);
  auto m = p.module();
  if (p.failed()) return nullptr;
  return m;
}

Type parseType(std::string_view text, std::string* error) {
  support::SourceManager sm;
  support::DiagnosticEngine diag(&sm);
  const std::string* file = sm.addBuffer("<type>", std::string(text));
  Parser p(sm.bufferText(file), file, diag, nullptr);
  Type t = p.type();
  if (t && !p.atEnd()) {
    if (error) *error = "trailing characters after type";
    return Type();
  }
  if (!t && error) *error = p.firstError;
  return t;
}

}  // namespace xacc::ir
