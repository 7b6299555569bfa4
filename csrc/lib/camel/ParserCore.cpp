// Parser infrastructure: token access, source ranges, diagnostics with panic
// mode, resynchronisation, depth limiting, `>=` splitting and the module
// entry points. See ParserImpl.h for Note [Parser termination] and
// Note [Panic mode].
#include "ParserImpl.h"

#include "xacc/camel/Lexer.h"

namespace xacc::camel {

using support::SourceLoc;

Parser::Parser(std::vector<Token> tokens, const std::string* file, ASTContext& ctx,
               support::DiagnosticEngine& diags, const ParseOptions& opts)
    : toks_(std::move(tokens)), file_(file), ctx_(ctx), diags_(diags), opts_(opts) {
  if (toks_.empty() || toks_.back().isNot(TK::eof)) {
    Token eof;
    eof.kind = TK::eof;
    if (!toks_.empty()) {
      const Token& last = toks_.back();
      eof.line = last.endLine;
      eof.col = last.endCol;
      eof.offset = last.offset + last.length;
    } else {
      eof.line = eof.col = 1;
    }
    eof.endLine = eof.line;
    eof.endCol = eof.col;
    toks_.push_back(eof);
  }
  // Splitting `>=` inserts one token after the current one; reserving room
  // keeps references to earlier tokens valid (no reallocation).
  size_t splittable = 0;
  for (const Token& t : toks_) splittable += t.is(TK::greaterequal);
  toks_.reserve(toks_.size() + splittable);
  specBudget_ = 8 * toks_.size() + 50000;
}

// ---------------------------------------------------------------------------
// Tokens

bool Parser::atAny(std::initializer_list<TK> ks) const {
  for (TK k : ks)
    if (tok().kind == k) return true;
  return false;
}

const Token& Parser::consume() {
  const Token& t = toks_[pos_];
  if (pos_ + 1 < toks_.size()) ++pos_;
  // Note [Speculation budget]: pathological inputs (`a<a<a<...` without a
  // closing `>`) would make nested speculations rescan the rest of the file
  // at every level; past the budget, speculations fail and `<` compares.
  if (speculating_ > 0 && ++specWork_ > specBudget_) specFailed_ = true;
  return t;
}

bool Parser::accept(TK k) {
  if (!at(k)) return false;
  consume();
  return true;
}

void Parser::splitGreaterEqual() {
  if (!at(TK::greaterequal)) return;
  Token original = tok();
  Token gt = original, eq = original;
  gt.kind = TK::greater;
  gt.length = 1;
  gt.text = original.text.substr(0, 1);
  gt.endLine = original.line;
  gt.endCol = original.col + 1;
  eq.kind = TK::equal;
  eq.offset = original.offset + 1;
  eq.length = 1;
  eq.text = original.text.substr(1, 1);
  eq.col = original.col + 1;
  eq.spaceBefore = eq.newlineBefore = false;
  toks_[pos_] = gt;
  toks_.insert(toks_.begin() + long(pos_) + 1, eq);
  splits_.emplace_back(pos_, original);
}

bool Parser::atClosingAngle() {
  if (at(TK::greaterequal)) splitGreaterEqual();
  return at(TK::greater);
}

// ---------------------------------------------------------------------------
// Ranges

SourceRange Parser::rangeOf(const Token& t) const {
  SourceRange r;
  r.file = file_;
  r.line = t.line;
  r.col = t.col;
  r.endLine = t.endLine;
  r.endCol = t.endCol;
  r.offset = t.offset;
  r.endOffset = t.offset + t.length;
  return r;
}

SourceRange Parser::rangeFrom(size_t start) const {
  SourceRange r = rangeOf(toks_[start]);
  if (pos_ > start) {
    const Token& last = toks_[pos_ - 1];
    r.endLine = last.endLine;
    r.endCol = last.endCol;
    r.endOffset = last.offset + last.length;
  }
  return r;
}

SourceLoc Parser::missingLoc() const {
  const Token& t = tok();
  if ((t.is(TK::eof) || t.newlineBefore) && pos_ > 0) {
    const Token& p = prevTok();
    return SourceLoc{file_, p.endLine, p.endCol, 1};
  }
  return locOf(t);
}

// ---------------------------------------------------------------------------
// Diagnostics

support::Diagnostic* Parser::error(Diag d, SourceLoc loc,
                                   std::initializer_list<std::string_view> args) {
  if (speculating_ > 0) {
    specFailed_ = true;
    return nullptr;
  }
  if (panic_ || abort_) return nullptr;
  panic_ = true;
  // An unterminated string or comment already explains a premature end of file.
  if (at(TK::eof) && (tok().unterminated || prevTok().unterminated)) return nullptr;
  support::Diagnostic& diag = report(diags_, d, loc, args);
  if (++errors_ >= opts_.maxErrors) abort_ = true;
  return &diag;
}

void Parser::warn(Diag d, SourceLoc loc, std::initializer_list<std::string_view> args,
                  std::string suggestion) {
  if (speculating_ > 0 || panic_ || abort_) return;
  report(diags_, d, loc, args).suggestion = std::move(suggestion);
}

void Parser::addNote(support::Diagnostic* d, const Token& at, std::string msg) const {
  if (!d) return;
  support::Diagnostic note;
  note.severity = support::Severity::Note;
  note.loc = locOf(at);
  note.message = std::move(msg);
  d->notes.push_back(std::move(note));
}

std::string Parser::describe(const Token& t) const {
  switch (t.kind) {
    case TK::eof: return "end of file";
    case TK::identifier: return "identifier '" + std::string(t.text) + "'";
    case TK::integer:
    case TK::real: return std::string(tokenSpelling(t.kind)) + " '" + std::string(t.text) + "'";
    case TK::string:
    case TK::multi_string:
    case TK::fstring: return tokenSpelling(t.kind);
    default:
      if (isKeyword(t.kind)) return "keyword '" + std::string(t.text) + "'";
      return "'" + std::string(t.text) + "'";
  }
}

bool Parser::expectCloser(TK closer, Diag d, std::string_view context, const Token& opener) {
  if (closer == TK::greater ? atClosingAngle() : at(closer)) {
    consume();
    return true;
  }
  std::string found = describeCur();
  if (auto* diag = error(d, missingLoc(), {context, found})) {
    addNote(diag, opener, std::string("to match this '") + std::string(opener.text) + "'");
    diag->suggestion = std::string("add '") + tokenSpelling(closer) + "'";
  }
  return false;
}

bool Parser::expect(TK k, std::string_view context) {
  if (accept(k)) return true;
  std::string what = std::string("'") + tokenSpelling(k) + "'";
  std::string found = describeCur();
  error(Diag::ExpectedToken, missingLoc(), {what, context, found});
  return false;
}

bool Parser::startsStatementKeyword(const Token& t) const {
  switch (t.kind) {
    case TK::kw_let:
    case TK::kw_var:
    case TK::kw_func:
    case TK::kw_type:
    case TK::kw_use:
    case TK::kw_return:
    case TK::kw_raise:
    case TK::kw_throw:
    case TK::kw_import:
    case TK::kw_export:
    case TK::kw_module:
    case TK::kw_with: return true;
    case TK::at: return t.newlineBefore;  // `@` mid-line is matrix product
    default: return false;
  }
}

void Parser::synchronize(bool topLevel) {
  // Skip to a likely statement start at the current nesting level: after a
  // `;`, before a `}` closing the enclosing block (skipped at the top level,
  // where it closes nothing), before a declaration or return keyword, or
  // before an operand that begins a line.
  panic_ = false;
  int depth = 0;
  while (!at(TK::eof) && !abort_) {
    const Token& t = tok();
    if (depth == 0) {
      if (t.is(TK::semi)) {
        consume();
        return;
      }
      if ((t.is(TK::r_brace) && !topLevel) || startsStatementKeyword(t)) return;
      if (t.newlineBefore && canStartOperand(t)) return;
    }
    if (t.is(TK::l_brace) || t.is(TK::l_paren) || t.is(TK::l_square)) {
      ++depth;
    } else if (t.is(TK::r_brace) || t.is(TK::r_paren) || t.is(TK::r_square)) {
      if (depth > 0) --depth;
    }
    consume();
  }
}

Parser::DepthGuard::DepthGuard(Parser& parser) : p(parser) {
  ok = ++p.depth_ <= p.opts_.maxDepth;
  if (!ok) p.tooDeep();
}

void Parser::tooDeep() {
  if (speculating_ > 0) {
    specFailed_ = true;
  } else if (!abort_) {
    std::string limit = std::to_string(opts_.maxDepth);
    report(diags_, Diag::NestingTooDeep, locOf(tok()), {limit}).suggestion =
        "split the expression with 'let' bindings or helper functions";
    abort_ = true;
  }
}

bool Parser::chainTooLong(unsigned& links) {
  if (++links <= opts_.maxDepth) return false;
  tooDeep();
  return true;
}

// ---------------------------------------------------------------------------
// Module

Module* Parser::parseModule() {
  SourceRange whole = rangeOf(toks_.front());
  Module* m = ctx_.make<Module>(whole);
  while (!at(TK::eof) && !abort_) {
    size_t before = pos_;
    if (accept(TK::semi)) continue;
    if (Stmt* s = parseTopDecl()) m->decls.push_back(s);
    if (panic_) synchronize(/*topLevel=*/true);
    if (pos_ == before && !at(TK::eof)) consume();  // Note [Parser termination]
  }
  const Token& last = toks_.back();
  whole.endLine = last.endLine;
  whole.endCol = last.endCol;
  whole.endOffset = last.offset + last.length;
  m->setRange(whole);
  return m;
}

Module* parseModule(std::vector<Token> tokens, const std::string* file, ASTContext& ctx,
                    support::DiagnosticEngine& diags, const ParseOptions& opts) {
  Parser p(std::move(tokens), file, ctx, diags, opts);
  return p.parseModule();
}

Module* parseSource(std::string_view text, const std::string* file, ASTContext& ctx,
                    support::DiagnosticEngine& diags, const ParseOptions& opts) {
  return parseModule(lex(text, file, diags), file, ctx, diags, opts);
}

}  // namespace xacc::camel
