// Expressions (spec 4.5, precedence of section 5, ambiguity rules of 4.7).
// Levels 3-8 (`||` ... `*`) use precedence climbing; `??`/`!!`, unary
// operators and casts, pipes, composition, the adjacent postfix forms and
// member access each have a function. Primary expressions include literals
// (with Note [Minus] sign folding), names, composite literals, lambdas and the
// control expressions `if`, `match` and `try`.
#include "ParserImpl.h"

#include <limits>

namespace xacc::camel {

namespace {

struct BinInfo {
  BinaryOp op;
  int prec;
};

/// Binary operators of levels 3-8, lowest precedence 1.
bool binaryInfo(TokenKind k, BinInfo& out) {
  using TK = TokenKind;
  switch (k) {
    case TK::pipepipe: out = {BinaryOp::Or, 1}; return true;
    case TK::ampamp: out = {BinaryOp::And, 2}; return true;
    case TK::equalequalequal: out = {BinaryOp::StrictEq, 3}; return true;
    case TK::exclaimequalequal: out = {BinaryOp::StrictNe, 3}; return true;
    case TK::equalequal: out = {BinaryOp::Eq, 3}; return true;
    case TK::exclaimequal: out = {BinaryOp::Ne, 3}; return true;
    case TK::less: out = {BinaryOp::Lt, 4}; return true;
    case TK::greater: out = {BinaryOp::Gt, 4}; return true;
    case TK::lessequal: out = {BinaryOp::Le, 4}; return true;
    case TK::greaterequal: out = {BinaryOp::Ge, 4}; return true;
    case TK::plus: out = {BinaryOp::Add, 5}; return true;
    case TK::minus: out = {BinaryOp::Sub, 5}; return true;
    case TK::star: out = {BinaryOp::Mul, 6}; return true;
    case TK::slash: out = {BinaryOp::Div, 6}; return true;
    case TK::caret: out = {BinaryOp::Pow, 6}; return true;
    case TK::at: out = {BinaryOp::MatMul, 6}; return true;
    case TK::percent: out = {BinaryOp::Mod, 6}; return true;
    default: return false;
  }
}

bool assignInfo(TokenKind k, AssignOp& out) {
  using TK = TokenKind;
  switch (k) {
    case TK::equal: out = AssignOp::Assign; return true;
    case TK::plusequal: out = AssignOp::Add; return true;
    case TK::minusequal: out = AssignOp::Sub; return true;
    case TK::starequal: out = AssignOp::Mul; return true;
    case TK::slashequal: out = AssignOp::Div; return true;
    case TK::percentequal: out = AssignOp::Mod; return true;
    case TK::caretequal: out = AssignOp::Pow; return true;
    case TK::atequal: out = AssignOp::MatMul; return true;
    case TK::ampequal: out = AssignOp::And; return true;
    case TK::pipeequal: out = AssignOp::Or; return true;
    default: return false;
  }
}

bool isNumber(const Token& t) { return t.is(TokenKind::integer) || t.is(TokenKind::real); }

}  // namespace

// ---------------------------------------------------------------------------
// Helpers

Expr* Parser::errorExpr() { return ctx_.make<ErrorExpr>(rangeOf(tok())); }

bool Parser::signFoldsHere() const {
  return (at(TK::minus) || at(TK::plus)) && isNumber(peekTok()) && peekTok().adjacent();
}

bool Parser::canStartOperand(const Token& t) const {
  switch (t.kind) {
    case TK::identifier:
    case TK::integer:
    case TK::real:
    case TK::string:
    case TK::multi_string:
    case TK::fstring:
    case TK::kw_true:
    case TK::kw_false:
    case TK::kw_null:
    case TK::l_paren:
    case TK::l_square:
    case TK::l_brace:
    case TK::minus:
    case TK::exclaim:
    case TK::tilde:
    case TK::kw_if:
    case TK::kw_match:
    case TK::kw_try:
    case TK::kw_wait: return true;
    case TK::plus: return true;  // only valid folded into a number, but never a binary start
    default: return false;
  }
}

bool Parser::greaterIsComparison() const {
  // A closing `>` is followed by a call, a pipe, another closer, an operator
  // or a new line; a comparison by an operand. `x > 2` (spaced) and `x>2`
  // (a name or literal right after) compare; `f<a>(x)` and `f<a> -1` close.
  const Token& g = tok();
  const Token& n = peekTok();
  if (n.newlineBefore) return false;
  if (g.spaceBefore && n.spaceBefore && canStartOperand(n)) return true;
  switch (n.kind) {
    case TK::identifier:
    case TK::integer:
    case TK::real:
    case TK::string:
    case TK::multi_string:
    case TK::fstring:
    case TK::kw_true:
    case TK::kw_false:
    case TK::kw_null: return true;
    default: return false;
  }
}

bool Parser::looksLikeStruct() const {
  if (!at(TK::l_brace)) return false;
  const Token& a = peekTok(1);
  if (a.is(TK::ellipsis)) return true;
  return (a.is(TK::identifier) || isKeyword(a.kind)) && peekTok(2).is(TK::colon);
}

bool Parser::looksLikeLambda() const {
  const Token& a = peekTok(1);
  if (a.is(TK::r_paren)) return peekTok(2).is(TK::fat_arrow) || peekTok(2).is(TK::colon);
  if (a.is(TK::kw_var)) return true;
  return (a.is(TK::identifier) || isKeyword(a.kind)) && peekTok(2).is(TK::colon);
}

NameExpr* Parser::parseIdentRef() {
  size_t start = pos_;
  Ident id;
  if (!parseName(id, "a name")) return ctx_.make<NameExpr>(rangeOf(tok()), "");
  NameExpr* n = ctx_.make<NameExpr>(id.range, id.name);
  while (at(TK::coloncolon) && peekTok().is(TK::identifier)) {
    consume();
    n->qualifiers.push_back(std::move(n->name));
    n->name = std::string(consume().text);
  }
  n->setRange(rangeFrom(start));
  return n;
}

// ---------------------------------------------------------------------------
// Operator levels

Expr* Parser::parseExpr() {
  size_t start = pos_;
  if (at(TK::kw_wait)) {
    consume();
    Expr* operand = parseAssign();
    return ctx_.make<WaitExpr>(rangeFrom(start), operand);
  }
  return parseAssign();
}

Expr* Parser::parseAssign() {
  size_t start = pos_;
  Expr* lhs = parseBinary(1);
  AssignOp op;
  if (!assignInfo(tok().kind, op)) return lhs;
  consume();
  Expr* rhs = parseBinary(1);
  Expr* e = ctx_.make<AssignExpr>(rangeFrom(start), op, lhs, rhs);
  if (assignInfo(tok().kind, op)) {
    if (auto* d = error(Diag::ChainedAssignment, locOf(tok())))
      d->suggestion = "assign in separate statements: 'y = z' and then 'x = y'";
    consume();
    parseBinary(1);
  }
  return e;
}

Expr* Parser::parseBinary(int minPrec) {
  size_t start = pos_;
  Expr* lhs = parseNullable();
  while (!bail()) {
    BinInfo info;
    if (!binaryInfo(tok().kind, info) || info.prec < minPrec) break;
    // Inside `f<...>` a `>` closes the list unless it reads as a comparison.
    if (inAngle_ && (at(TK::greater) || at(TK::greaterequal)) && !greaterIsComparison()) break;
    // A line-leading `@name` is a decorator of the next function, not `@`.
    if (at(TK::at) && tok().newlineBefore) break;
    Token opTok = consume();
    if (info.op == BinaryOp::Sub && opTok.spaceBefore && isNumber(tok()) && tok().adjacent()) {
      warn(Diag::AmbiguousMinus, locOf(opTok), {},
           "write '- " + std::string(tok().text) + "' for subtraction, or '(-" +
               std::string(tok().text) + ")' for a negative number");
    }
    Expr* rhs = parseBinary(info.prec + 1);
    lhs = ctx_.make<BinaryExpr>(rangeFrom(start), info.op, lhs, rhs);
  }
  return lhs;
}

Expr* Parser::parseNullable() {
  size_t start = pos_;
  Expr* e = parseUnary();
  if (at(TK::questionquestion) || at(TK::exclaimexclaim)) {
    BinaryOp op = consume().is(TK::questionquestion) ? BinaryOp::Coalesce : BinaryOp::ErrorThen;
    // The right operand is a whole data-expr: `a ?? b ?? c` nests to the right.
    DepthGuard guard(*this);
    if (!guard.ok) return errorExpr();
    Expr* rhs = parseExpr();
    e = ctx_.make<BinaryExpr>(rangeFrom(start), op, e, rhs);
  }
  return e;
}

Expr* Parser::parseUnary() {
  DepthGuard guard(*this);
  if (!guard.ok) return errorExpr();
  size_t start = pos_;
  Expr* e;
  if ((at(TK::minus) && !signFoldsHere()) || at(TK::exclaim) || at(TK::tilde)) {
    TK k = consume().kind;
    UnaryOp op = k == TK::minus ? UnaryOp::Neg : k == TK::exclaim ? UnaryOp::Not : UnaryOp::BitNot;
    if (op == UnaryOp::Neg && at(TK::minus) && !signFoldsHere()) {
      if (auto* d = error(Diag::DoubleNegation, locOf(prevTok())))
        d->suggestion = "write '-(-x)' to negate twice";
      size_t inner = pos_;
      consume();
      Expr* operand = parseLink();
      Expr* neg = ctx_.make<UnaryExpr>(rangeFrom(inner), UnaryOp::Neg, operand);
      e = ctx_.make<UnaryExpr>(rangeFrom(start), op, neg);
    } else {
      Expr* operand = parseLink();
      e = ctx_.make<UnaryExpr>(rangeFrom(start), op, operand);
    }
  } else {
    e = parseLink();
  }
  while ((at(TK::kw_as) || at(TK::kw_is)) && !bail()) {
    bool isTest = consume().is(TK::kw_is);
    TypeExpr* t = parseType(/*exprCtx=*/true);
    e = ctx_.make<CastExpr>(rangeFrom(start), isTest, e, t);
  }
  return e;
}

Expr* Parser::parseLink() {
  size_t start = pos_;
  Expr* lhs = parseComp();
  while ((at(TK::arrow) || at(TK::question_arrow)) && !bail()) {
    BinaryOp op = consume().is(TK::arrow) ? BinaryOp::Pipe : BinaryOp::NullPipe;
    Expr* rhs = parseComp();
    lhs = ctx_.make<BinaryExpr>(rangeFrom(start), op, lhs, rhs);
  }
  return lhs;
}

Expr* Parser::parseComp() {
  size_t start = pos_;
  Expr* lhs = parsePostfix();
  while ((at(TK::dotdot) || at(TK::question_dotdot)) && !bail()) {
    BinaryOp op = consume().is(TK::dotdot) ? BinaryOp::Compose : BinaryOp::NullCompose;
    Expr* rhs = parsePostfix();
    lhs = ctx_.make<BinaryExpr>(rangeFrom(start), op, lhs, rhs);
  }
  return lhs;
}

// ---------------------------------------------------------------------------
// Postfix forms and member access

Expr* Parser::parsePostfix() {
  size_t start = pos_;
  Expr* e = parsePrimary();
  while (!bail()) {
    if (at(TK::period)) {
      const Token& after = peekTok();
      if (isa<IntLiteral>(e) && tok().adjacent() &&
          !(after.is(TK::identifier) || after.is(TK::integer)) &&
          (after.spaceBefore || !after.is(TK::real))) {
        std::string lit(prevTok().text);
        if (auto* d = error(Diag::TrailingDotReal, locOf(tok()), {lit}))
          d->suggestion = "write '" + lit + ".0'";
        consume();
        break;
      }
      consume();
      MemberExpr* m = ctx_.make<MemberExpr>(rangeOf(tok()), e);
      const Token& name = tok();
      if (name.is(TK::identifier)) {
        m->member = Ident{std::string(name.text), rangeOf(name)};
        consume();
      } else if (name.is(TK::integer)) {
        m->member = Ident{std::string(name.text), rangeOf(name)};
        m->isIndex = true;
        m->index = name.intValue;
        consume();
      } else if (name.is(TK::real)) {
        std::string text(name.text);
        if (auto* d = error(Diag::TupleIndexIsReal, locOf(name), {text}))
          d->suggestion = "access one level at a time: '(t." + text.substr(0, text.find('.')) +
                          ")." + text.substr(text.find('.') + 1) + "'";
        m->member = Ident{text, rangeOf(name)};
        m->isIndex = true;
        consume();
      } else {
        error(Diag::ExpectedMemberName, missingLoc(), {describeCur()});
        m->setRange(rangeFrom(start));
        return m;
      }
      m->setRange(rangeFrom(start));
      e = m;
      continue;
    }
    if (tok().spaceBefore) {
      // Postfix forms must touch (spec 3.7): `f (x)` is `f` and then `(x)`.
      bool call = at(TK::l_paren);
      if ((call || at(TK::l_square)) && !tok().newlineBefore &&
          (isa<NameExpr>(e) || isa<CallExpr>(e) || isa<WithExpr>(e) || isa<MemberExpr>(e))) {
        std::string callee = isa<NameExpr>(e) ? "'" + cast<NameExpr>(e)->fullName() + "'"
                                              : std::string("the expression before it");
        const char* bracket = call ? "(" : "[";
        warn(Diag::SpaceBeforePostfix, locOf(tok()), {bracket, call ? "call" : "index", callee},
             std::string("remove the space to ") + (call ? "call it" : "index it") +
                 ", or start the new expression on its own line");
      }
      break;
    }
    if (at(TK::l_paren)) {
      Token open = consume();
      AngleScope angle(*this, false);
      CallExpr* c = ctx_.make<CallExpr>(rangeOf(open), e);
      parseArgs(c->args, TK::r_paren, open, "the argument list");
      c->setRange(rangeFrom(start));
      e = c;
    } else if (at(TK::l_square)) {
      Token open = consume();
      AngleScope angle(*this, false);
      IndexExpr* ix = ctx_.make<IndexExpr>(rangeOf(open), e, parseExpr());
      if (accept(TK::colon)) {
        ix->end = parseExpr();
        if (accept(TK::colon)) ix->step = parseExpr();
      }
      expectCloser(TK::r_square, Diag::ExpectedClosingBracket, "to close the index", open);
      ix->setRange(rangeFrom(start));
      e = ix;
    } else if (at(TK::less)) {
      if (!withArgsFollow()) break;
      Token open = consume();
      AngleScope angle(*this, true);
      WithExpr* w = ctx_.make<WithExpr>(rangeOf(open), e);
      parseArgs(w->args, TK::greater, open, "the with-arguments");
      w->setRange(rangeFrom(start));
      e = w;
    } else if (at(TK::exclaim)) {
      consume();
      e = ctx_.make<NonNullExpr>(rangeFrom(start), e);
    } else {
      break;
    }
  }
  return e;
}

bool Parser::withArgsFollow() {
  uint32_t key = tok().offset;  // offsets survive `>=` splits, indices do not
  if (notWithArgs_.count(key) || specWork_ > specBudget_) return false;
  size_t savedPos = pos_, savedNodes = ctx_.size(), savedSplits = splits_.size();
  bool savedFailed = specFailed_;
  ++speculating_;
  specFailed_ = false;
  {
    Token open = consume();
    AngleScope angle(*this, true);
    std::vector<Argument> args;
    parseArgs(args, TK::greater, open, "the with-arguments");
  }
  bool ok = !specFailed_;
  --speculating_;
  while (splits_.size() > savedSplits) {
    auto [index, original] = splits_.back();
    splits_.pop_back();
    toks_[index] = original;
    toks_.erase(toks_.begin() + long(index) + 1);
  }
  pos_ = savedPos;
  ctx_.truncate(savedNodes);
  specFailed_ = savedFailed;
  if (!ok) notWithArgs_.insert(key);
  return ok;
}

void Parser::parseArgs(std::vector<Argument>& out, TK closer, const Token& opener,
                       std::string_view context) {
  auto atCloser = [&] { return closer == TK::greater ? atClosingAngle() : at(closer); };
  bool seenNamed = false;
  while (!atCloser() && !at(TK::eof) && !bail()) {
    size_t start = pos_;
    Argument a;
    if (accept(TK::ellipsis)) {
      a.spread = true;
    } else if (at(TK::identifier) && peekTok().is(TK::colon)) {
      a.name = Ident{std::string(tok().text), rangeOf(tok())};
      consume();
      consume();
      seenNamed = true;
    } else if (seenNamed) {
      if (auto* d = error(Diag::PositionalAfterNamed, locOf(tok())))
        d->suggestion = "put positional arguments before named ones";
    }
    a.value = parseExpr();
    a.range = rangeFrom(start);
    out.push_back(std::move(a));
    if (accept(TK::comma)) continue;
    if (atCloser()) break;
    reportMissingSeparator(closer, context, opener);
    return;
  }
  Diag d = closer == TK::greater  ? Diag::ExpectedClosingAngle
           : closer == TK::r_paren ? Diag::ExpectedClosingParen
                                   : Diag::ExpectedClosingBracket;
  expectCloser(closer, d, "to close " + std::string(context), opener);
}

void Parser::reportMissingSeparator(TK closer, std::string_view context, const Token& opener) {
  std::string closeStr = std::string("'") + tokenSpelling(closer) + "'";
  std::string found = describeCur();
  bool sameLine = !tok().newlineBefore && !at(TK::eof);
  if (auto* d = error(Diag::ExpectedArgSeparator, missingLoc(), {closeStr, context, found})) {
    addNote(d, opener, std::string("to match this '") + std::string(opener.text) + "'");
    bool args = context.find("argument") != std::string_view::npos;
    d->suggestion = sameLine && canStartOperand(tok())
                        ? std::string("add ',' between the ") + (args ? "arguments" : "elements")
                        : "add " + closeStr;
  }
}

}  // namespace xacc::camel
