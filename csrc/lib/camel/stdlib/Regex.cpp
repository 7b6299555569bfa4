// The ECMAScript regex matcher of Regex.h: a recursive-descent parser (nesting
// capped so that it cannot exhaust the stack) builds a small AST, which is
// compiled Thompson-style into instructions; search() runs them as a Pike VM
// with sparse thread sets and an explicit stack for epsilon closures.
#include "Regex.h"

#include <memory>

namespace xacc::camel::stdlib::regex {

namespace {

constexpr int kMaxNesting = 200;
constexpr size_t kMaxInstructions = 200000;
constexpr int kMaxRepeat = 1000;

struct Node {
  enum Kind { Empty, Byte, Set, Any, Seq, Alt, Repeat, Bol, Eol, WordB, NotWordB, Look } kind;
  uint8_t byte = 0;
  int set = -1;
  int min = 0, max = -1;  ///< Repeat; max -1 = unbounded
  bool negate = false;    ///< Look
  std::vector<std::unique_ptr<Node>> kids;
};
using NodeP = std::unique_ptr<Node>;

NodeP make(Node::Kind k) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  return n;
}

bool isWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class Parser {
public:
  Parser(std::string_view p, Program& prog) : p_(p), prog_(prog) {}

  NodeP parse(std::string& err) {
    NodeP n = disjunction(0);
    if (n && i_ < p_.size()) fail(p_[i_] == ')' ? "unmatched ')'" : "unexpected character");
    if (!err_.empty()) {
      err = err_ + " at offset " + std::to_string(i_);
      return nullptr;
    }
    return n;
  }

private:
  bool more() const { return i_ < p_.size(); }
  char peek() const { return p_[i_]; }
  std::nullptr_t fail(const char* msg) {
    if (err_.empty()) err_ = msg;
    return nullptr;
  }

  int newSet(const std::bitset<256>& s) {
    prog_.sets.push_back(s);
    return int(prog_.sets.size() - 1);
  }
  static std::bitset<256> classOf(char c) {
    std::bitset<256> s;
    for (int b = 0; b < 256; ++b) {
      bool in = c == 'd' || c == 'D'   ? (b >= '0' && b <= '9')
                : c == 'w' || c == 'W' ? isWordByte((unsigned char)b)
                                       : (b == ' ' || (b >= '\t' && b <= '\r'));
      s[size_t(b)] = in;
    }
    return c >= 'A' && c <= 'Z' ? ~s : s;
  }

  NodeP disjunction(int depth) {
    if (depth > kMaxNesting) return fail("groups nested too deeply");
    NodeP first = alternative(depth);
    if (!first || !more() || peek() != '|') return first;
    NodeP alt = make(Node::Alt);
    alt->kids.push_back(std::move(first));
    while (more() && peek() == '|') {
      ++i_;
      NodeP next = alternative(depth);
      if (!next) return nullptr;
      alt->kids.push_back(std::move(next));
    }
    return alt;
  }

  NodeP alternative(int depth) {
    NodeP seq = make(Node::Seq);
    while (more() && peek() != '|' && peek() != ')') {
      NodeP t = term(depth);
      if (!t) return nullptr;
      seq->kids.push_back(std::move(t));
    }
    return seq;
  }

  NodeP term(int depth) {
    char c = peek();
    if (c == '^' || c == '$') {
      ++i_;
      return noQuantifier(make(c == '^' ? Node::Bol : Node::Eol));
    }
    if (c == '\\' && i_ + 1 < p_.size() && (p_[i_ + 1] == 'b' || p_[i_ + 1] == 'B')) {
      i_ += 2;
      return noQuantifier(make(p_[i_ - 1] == 'b' ? Node::WordB : Node::NotWordB));
    }
    NodeP a = atom(depth);
    if (!a) return nullptr;
    return quantified(std::move(a));
  }

  /// Whether a quantifier (`*`, `+`, `?` or a well-formed `{…}`) starts at i_.
  bool quantifierNext() {
    if (!more()) return false;
    if (peek() == '*' || peek() == '+' || peek() == '?') return true;
    size_t at = i_;
    int lo, hi;
    bool braced = peek() == '{' && braces(lo, hi);
    i_ = at;
    return braced;
  }

  NodeP noQuantifier(NodeP n) {
    if (quantifierNext()) return fail("nothing to repeat");
    return n;
  }

  /// Reads `{n}`, `{n,}` or `{n,m}` at i_; false (i_ unchanged) if it is not one.
  bool braces(int& lo, int& hi) {
    size_t j = i_ + 1;
    auto number = [&](int& out) {
      size_t start = j;
      long v = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9' && v <= 100000)
        v = v * 10 + (p_[j++] - '0');
      out = int(v);
      return j > start;
    };
    if (!number(lo)) return false;
    hi = lo;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      hi = -1;
      if (j < p_.size() && p_[j] != '}' && !number(hi)) return false;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    i_ = j + 1;
    return true;
  }

  NodeP quantified(NodeP a) {
    if (!more()) return a;
    int lo, hi;
    char c = peek();
    if (c == '*')
      lo = 0, hi = -1, ++i_;
    else if (c == '+')
      lo = 1, hi = -1, ++i_;
    else if (c == '?')
      lo = 0, hi = 1, ++i_;
    else if (c == '{' && braces(lo, hi)) {
      if (hi >= 0 && hi < lo) return fail("numbers out of order in {} quantifier");
      if (lo > kMaxRepeat || hi > kMaxRepeat) return fail("repetition count too large");
    } else {
      return a;
    }
    if (more() && peek() == '?') ++i_;  // lazy: the same language, which is all test() needs
    if (quantifierNext()) return fail("nothing to repeat");
    NodeP r = make(Node::Repeat);
    r->min = lo;
    r->max = hi;
    r->kids.push_back(std::move(a));
    return r;
  }

  NodeP byteNode(uint8_t b) {
    NodeP n = make(Node::Byte);
    n->byte = b;
    return n;
  }

  NodeP atom(int depth) {
    if (quantifierNext()) return fail("nothing to repeat");
    char c = p_[i_++];
    switch (c) {
      case '.': return make(Node::Any);
      case '[': return charClass();
      case '(': {
        NodeP n;
        if (i_ + 1 < p_.size() && peek() == '?') {
          char k = p_[i_ + 1];
          if (k != ':' && k != '=' && k != '!') return fail("unsupported group syntax");
          i_ += 2;
          NodeP body = disjunction(depth + 1);
          if (!body) return nullptr;
          if (k == ':') {
            n = std::move(body);
          } else {
            n = make(Node::Look);
            n->negate = k == '!';
            n->kids.push_back(std::move(body));
          }
        } else {
          n = disjunction(depth + 1);
          if (!n) return nullptr;
        }
        if (!more() || peek() != ')') return fail("missing ')'");
        ++i_;
        return n;
      }
      case '\\': return escape();
      default: return byteNode(uint8_t(c));
    }
  }

  /// Character escapes shared by atoms and classes: the byte, or -1 if `c` is not one.
  int charEscape(char c) {
    switch (c) {
      case 't': return '\t';
      case 'n': return '\n';
      case 'v': return '\v';
      case 'f': return '\f';
      case 'r': return '\r';
      case 'c':
        if (more() && ((peek() >= 'a' && peek() <= 'z') || (peek() >= 'A' && peek() <= 'Z')))
          return p_[i_++] % 32;
        --i_;  // Annex B: `\c` not followed by a letter is a backslash, then `c`
        return '\\';
      case 'x':
      case 'u': {
        int digits = c == 'x' ? 2 : 4, v = 0;
        if (i_ + size_t(digits) > p_.size()) return c;  // identity escape
        for (int k = 0; k < digits; ++k) {
          char h = p_[i_ + size_t(k)];
          int d = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
          if (d < 0) return c;
          v = v * 16 + d;
        }
        i_ += size_t(digits);
        if (v > 0xFF) {
          fail("\\u escapes above \\u00FF are not supported");
          return 0;
        }
        return v;
      }
      default: return -1;
    }
  }

  NodeP escape() {
    if (!more()) return fail("pattern ends with a backslash");
    char c = p_[i_++];
    if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S') {
      NodeP n = make(Node::Set);
      n->set = newSet(classOf(c));
      return n;
    }
    if (c >= '1' && c <= '9') {
      while (more() && peek() >= '0' && peek() <= '9') ++i_;
      prog_.hasBackreference = true;
      return make(Node::Empty);
    }
    if (c == '0') return byteNode(0);
    int b = charEscape(c);
    if (!err_.empty()) return nullptr;
    return byteNode(uint8_t(b >= 0 ? b : c));
  }

  /// One class atom: a byte (returns true) or a class escape merged into `set`.
  bool classAtom(std::bitset<256>& set, int& byte) {
    char c = p_[i_++];
    byte = -1;
    if (c != '\\') {
      byte = (unsigned char)c;
      return true;
    }
    if (!more()) return fail("pattern ends with a backslash"), false;
    c = p_[i_++];
    if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S') {
      set |= classOf(c);
      return true;
    }
    if (c == 'b')
      byte = '\b';
    else if (c == '0')
      byte = 0;
    else if ((byte = charEscape(c)) < 0)
      byte = (unsigned char)c;
    return err_.empty();
  }

  NodeP charClass() {
    bool negated = more() && peek() == '^';
    if (negated) ++i_;
    std::bitset<256> set;
    while (true) {
      if (!more()) return fail("missing ']'");
      if (peek() == ']') break;
      int lo, hi;
      if (!classAtom(set, lo)) return nullptr;
      if (lo >= 0 && i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (!classAtom(set, hi)) return nullptr;
        if (hi < 0) {  // `[a-\d]`: Annex B reads the dash literally
          set[size_t(lo)] = set['-'] = true;
          continue;
        }
        if (hi < lo) return fail("range out of order in character class");
        for (int b = lo; b <= hi; ++b) set[size_t(b)] = true;
      } else if (lo >= 0) {
        set[size_t(lo)] = true;
      }
    }
    ++i_;
    NodeP n = make(Node::Set);
    n->set = newSet(negated ? ~set : set);
    return n;
  }

  std::string_view p_;
  Program& prog_;
  size_t i_ = 0;
  std::string err_;
};

class Compiler {
public:
  explicit Compiler(Program& p) : p_(p) {}

  bool program(const Node& n, std::string& err) {
    size_t index = p_.code.size();
    p_.code.emplace_back();
    if (!emit(index, n)) {
      err = "pattern too large";
      return false;
    }
    p_.code[index].push_back({Op::Match});
    return true;
  }

private:
  int32_t here(size_t c) const { return int32_t(p_.code[c].size()); }
  bool push(size_t c, Inst i) {
    if (++total_ > kMaxInstructions) return false;
    p_.code[c].push_back(i);
    return true;
  }

  bool emit(size_t c, const Node& n) {
    switch (n.kind) {
      case Node::Empty: return true;
      case Node::Byte: return push(c, {Op::Byte, n.byte});
      case Node::Set: return push(c, {Op::Set, 0, n.set});
      case Node::Any: return push(c, {Op::Any});
      case Node::Bol: return push(c, {Op::Bol});
      case Node::Eol: return push(c, {Op::Eol});
      case Node::WordB: return push(c, {Op::WordB});
      case Node::NotWordB: return push(c, {Op::NotWordB});
      case Node::Seq:
        for (const auto& k : n.kids)
          if (!emit(c, *k)) return false;
        return true;
      case Node::Alt: {
        // split L1, next; L1: a; jmp end; next: split L2, next'; ...; last alternative.
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          size_t split = 0;
          bool last = k + 1 == n.kids.size();
          if (!last) {
            split = size_t(here(c));
            if (!push(c, {Op::Split, 0, here(c) + 1, 0})) return false;
          }
          if (!emit(c, *n.kids[k])) return false;
          if (!last) {
            jumps.push_back(size_t(here(c)));
            if (!push(c, {Op::Jmp})) return false;
            p_.code[c][split].y = here(c);
          }
        }
        for (size_t j : jumps) p_.code[c][j].x = here(c);
        return true;
      }
      case Node::Repeat: {
        const Node& e = *n.kids[0];
        for (int k = 0; k < n.min; ++k)
          if (!emit(c, e)) return false;
        if (n.max < 0) {  // L: split body, end; body; jmp L; end:
          int32_t loop = here(c);
          if (!push(c, {Op::Split, 0, loop + 1, 0}) || !emit(c, e) || !push(c, {Op::Jmp, 0, loop}))
            return false;
          p_.code[c][size_t(loop)].y = here(c);
          return true;
        }
        for (int k = n.min; k < n.max; ++k) {  // optional copies: split body, skip; body
          int32_t split = here(c);
          if (!push(c, {Op::Split, 0, split + 1, 0}) || !emit(c, e)) return false;
          p_.code[c][size_t(split)].y = here(c);
        }
        return true;
      }
      case Node::Look: {
        // Emit the Look first so that `c`'s vector is not touched while the body compiles.
        int32_t at = here(c);
        if (!push(c, {Op::Look, 0, 0, n.negate ? 1 : 0})) return false;
        size_t body = p_.code.size();
        p_.code.emplace_back();
        if (!emit(body, *n.kids[0])) return false;
        p_.code[body].push_back({Op::Match});
        p_.code[c][size_t(at)].x = int32_t(body);
        return true;
      }
    }
    return false;
  }

  Program& p_;
  size_t total_ = 0;
};

/// A set of instruction indices with O(1) insert, test and clear.
class ThreadSet {
public:
  explicit ThreadSet(size_t n) : sparse_(n), dense_(n) {}
  bool insert(int32_t pc) {
    uint32_t s = sparse_[size_t(pc)];
    if (s < size_ && dense_[s] == pc) return false;
    sparse_[size_t(pc)] = uint32_t(size_);
    dense_[size_++] = pc;
    return true;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  int32_t operator[](size_t i) const { return dense_[i]; }

private:
  std::vector<uint32_t> sparse_;
  std::vector<int32_t> dense_;
  size_t size_ = 0;
};

class Vm {
public:
  Vm(const Program& p, std::string_view text) : p_(p), t_(text), memo_(p.code.size()) {}

  /// Runs program `c` from `start`; anchored runs only start threads there.
  bool run(size_t c, size_t start, bool anchored) {
    const auto& code = p_.code[c];
    ThreadSet cur(code.size()), next(code.size());
    for (size_t i = start;; ++i) {
      if ((!anchored || i == start) && closure(c, cur, 0, i)) return true;
      if (i == t_.size() || (anchored && cur.size() == 0)) return false;
      next.clear();
      unsigned char b = (unsigned char)t_[i];
      for (size_t k = 0; k < cur.size(); ++k) {
        const Inst& in = code[size_t(cur[k])];
        bool ok = in.op == Op::Byte  ? in.byte == b
                  : in.op == Op::Set ? p_.sets[size_t(in.x)][b]
                  : in.op == Op::Any ? b != '\n' && b != '\r'
                                     : false;
        if (ok && closure(c, next, cur[k] + 1, i + 1)) return true;
      }
      std::swap(cur, next);
    }
  }

private:
  bool wordAt(size_t i) const { return i < t_.size() && isWordByte((unsigned char)t_[i]); }

  bool lookahead(size_t body, size_t pos) {
    auto& m = memo_[body];
    if (m.empty()) m.assign(t_.size() + 1, -1);
    if (m[pos] < 0) m[pos] = run(body, pos, true) ? 1 : 0;
    return m[pos] == 1;
  }

  /// Adds `pc` and everything reachable from it without consuming input at
  /// position `i`; true if that reaches Match.
  bool closure(size_t c, ThreadSet& set, int32_t pc, size_t i) {
    const auto& code = p_.code[c];
    stack_.clear();
    stack_.push_back(pc);
    while (!stack_.empty()) {
      int32_t at = stack_.back();
      stack_.pop_back();
      if (!set.insert(at)) continue;
      const Inst& in = code[size_t(at)];
      bool go = false;
      switch (in.op) {
        case Op::Match: return true;
        case Op::Jmp: stack_.push_back(in.x); break;
        case Op::Split:
          stack_.push_back(in.y);
          stack_.push_back(in.x);
          break;
        case Op::Bol: go = i == 0; break;
        case Op::Eol: go = i == t_.size(); break;
        case Op::WordB: go = (i > 0 && wordAt(i - 1)) != wordAt(i); break;
        case Op::NotWordB: go = (i > 0 && wordAt(i - 1)) == wordAt(i); break;
        case Op::Look: {
          std::vector<int32_t> saved;
          saved.swap(stack_);  // the lookahead's own run reuses stack_
          go = lookahead(size_t(in.x), i) != (in.y == 1);
          saved.swap(stack_);
          break;
        }
        default: break;  // consuming instructions wait in `set` for the next byte
      }
      if (go) stack_.push_back(at + 1);
    }
    return false;
  }

  const Program& p_;
  std::string_view t_;
  std::vector<std::vector<int8_t>> memo_;
  std::vector<int32_t> stack_;
};

}  // namespace

bool compile(std::string_view pattern, Program& out, std::string& error) {
  out = Program();
  Parser parser(pattern, out);
  NodeP ast = parser.parse(error);
  if (!ast) return false;
  if (out.hasBackreference) return true;
  return Compiler(out).program(*ast, error);
}

bool search(const Program& p, std::string_view text) { return Vm(p, text).run(0, 0, false); }

}  // namespace xacc::camel::stdlib::regex
