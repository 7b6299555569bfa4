// Primary expressions (spec 4.4, 4.5, 4.7): literals with Note [Minus] sign
// folding, names, parenthesised expressions and tuples, array literals and
// comprehensions, struct literals, lambdas, and the control expressions `if`,
// `match` and `try`, plus block-expr (block or struct literal, 4.7).
#include "ParserImpl.h"

#include <limits>

namespace xacc::camel {

namespace {
/// Keywords that programmers often try to use as names (`inner`, `from`,
/// `type`, ...), as opposed to ones that end or structure an expression.
bool keywordLooksLikeName(const Token& t) {
  switch (t.kind) {
    case TokenKind::kw_from:
    case TokenKind::kw_of:
    case TokenKind::kw_in:
    case TokenKind::kw_module:
    case TokenKind::kw_type:
    case TokenKind::kw_enum:
    case TokenKind::kw_namespace:
    case TokenKind::kw_keyof:
    case TokenKind::kw_typeas:
    case TokenKind::kw_typeof:
    case TokenKind::kw_const:
    case TokenKind::kw_inner:
    case TokenKind::kw_outer:
    case TokenKind::kw_atomic:
    case TokenKind::kw_shared:
    case TokenKind::kw_use: return !t.newlineBefore;
    default: return false;
  }
}
}  // namespace

Expr* Parser::parsePrimary() {
  size_t start = pos_;
  switch (tok().kind) {
    case TK::identifier: return parseIdentRef();
    case TK::integer:
    case TK::real: return parseNumber(false, start);
    case TK::minus:
    case TK::plus:
      if (signFoldsHere()) {
        bool negate = consume().is(TK::minus);
        return parseNumber(negate, start);
      }
      break;
    case TK::string:
    case TK::multi_string:
    case TK::fstring: return parseStringLiteral();
    case TK::kw_true:
    case TK::kw_false: {
      bool v = consume().is(TK::kw_true);
      return ctx_.make<BoolLiteral>(rangeFrom(start), v);
    }
    case TK::kw_null: consume(); return ctx_.make<NullLiteral>(rangeFrom(start));
    case TK::l_square: return parseArrayLiteral();
    case TK::l_brace:
      if (looksLikeStruct() || peekTok().is(TK::r_brace)) return parseStructLiteral();
      [[fallthrough]];
    case TK::kw_sync:
      if (at(TK::l_brace) || peekTok().is(TK::l_brace)) {
        if (auto* d = error(Diag::BlockNotExpression, locOf(tok())))
          d->suggestion =
              "'{' in an expression starts a struct literal '{ name: value }'; to compute a "
              "value with statements use an 'if ... then { ... }' arm, a lambda body or a "
              "helper function";
        return parseBlock("the block");
      }
      [[fallthrough]];
    case TK::kw_macro:
    case TK::kw_atomic:
    case TK::kw_shared: {
      TK next = peekTok().kind;
      if (next == TK::l_paren || next == TK::less || next == TK::kw_sync ||
          next == TK::kw_macro || next == TK::kw_atomic || next == TK::kw_shared)
        return parseLambda();
      break;
    }
    case TK::less: return parseLambda();
    case TK::l_paren: return looksLikeLambda() ? parseLambda() : parseParenOrTuple();
    case TK::kw_if: return parseIf();
    case TK::kw_match: return parseMatch();
    case TK::kw_try: return parseTry();
    case TK::underscore:
      if (auto* d = error(Diag::UnderscoreAsName, locOf(tok())))
        d->suggestion = "'_' may only be used as the wildcard pattern 'case _ =>'";
      consume();
      return ctx_.make<ErrorExpr>(rangeFrom(start));
    case TK::period:
      if (peekTok().is(TK::integer) && peekTok().adjacent()) {
        consume();
        const Token& digits = consume();
        std::string text(digits.text);
        if (auto* d = error(Diag::LeadingDotReal, rangeFrom(start).loc(), {text}))
          d->suggestion = "write '0." + text + "'";
        return ctx_.make<RealLiteral>(rangeFrom(start), 0.0);
      }
      break;
    case TK::kw_for:
    case TK::kw_enum:
    case TK::kw_namespace:
    case TK::kw_keyof: {
      std::string word(tok().text);
      if (auto* d = error(Diag::ReservedKeyword, locOf(tok()), {word})) {
        if (at(TK::kw_for))
          d->suggestion = "Camel has no loops: use recursion, 'map', 'filter', 'foreach' or "
                          "'reduce', or a comprehension '[e for x in xs]'";
      }
      consume();
      return ctx_.make<ErrorExpr>(rangeFrom(start));
    }
    case TK::kw_else:
      if (auto* d = error(Diag::ElseWithoutIf, locOf(tok())))
        d->suggestion = "put 'else' directly after the 'then' arm of an 'if'";
      return errorExpr();
    default: break;
  }
  if (auto* d = error(Diag::ExpectedExpression, missingLoc(), {describeCur()})) {
    if (at(TK::plus)) d->suggestion = "there is no unary '+'; remove it";
    else if (at(TK::exclaimexclaim)) d->suggestion = "write '!(!x)' to negate twice";
    else if (at(TK::minus)) d->suggestion = "write '-(-x)' to negate twice";
    else if (keywordLooksLikeName(tok()))
      d->suggestion = "'" + std::string(tok().text) +
                      "' is a reserved keyword and cannot be used as a name";
  }
  return errorExpr();
}

Expr* Parser::parseNumber(bool negate, size_t start) {
  const Token& t = consume();
  if (t.is(TK::real)) return ctx_.make<RealLiteral>(rangeFrom(start), negate ? -t.realValue : t.realValue);
  uint64_t mag = t.intValue;
  int64_t value;
  constexpr uint64_t kMaxInt = uint64_t(std::numeric_limits<int64_t>::max());
  if (t.intDecimal) {
    if (!negate && mag > kMaxInt) {
      std::string text(t.text);
      if (auto* d = error(Diag::IntegerLiteralTooLarge, locOf(t), {text}))
        d->suggestion = "the largest int is 9223372036854775807";
      mag = 0;
    }
    // 2^63 is reachable only negated: -9223372036854775808 is INT64_MIN.
    value = negate ? int64_t(uint64_t(0) - mag) : int64_t(mag);
  } else {
    value = negate ? int64_t(uint64_t(0) - mag) : int64_t(mag);  // two's complement bits
  }
  return ctx_.make<IntLiteral>(rangeFrom(start), value);
}

Expr* Parser::parseStringLiteral() {
  const Token& t = consume();
  StringLiteral::Form form = t.is(TK::string)         ? StringLiteral::Form::Quoted
                             : t.is(TK::multi_string) ? StringLiteral::Form::Multi
                                                      : StringLiteral::Form::Format;
  return ctx_.make<StringLiteral>(rangeOf(t), t.strValue, form);
}

Expr* Parser::parseParenOrTuple() {
  size_t start = pos_;
  Token open = consume();
  AngleScope angle(*this, false);
  if (accept(TK::r_paren)) return ctx_.make<TupleExpr>(rangeFrom(start));
  Expr* first = parseExpr();
  if (!at(TK::comma)) {
    expectCloser(TK::r_paren, Diag::ExpectedClosingParen, "to close the parenthesised expression",
                 open);
    return first;  // `(e)` is `e`
  }
  TupleExpr* t = ctx_.make<TupleExpr>(rangeOf(open));
  t->elements.push_back(first);
  while (accept(TK::comma) && !bail()) {
    if (at(TK::r_paren)) break;
    t->elements.push_back(parseExpr());
  }
  if (!at(TK::r_paren) && !at(TK::eof) && !tok().newlineBefore && canStartOperand(tok()))
    reportMissingSeparator(TK::r_paren, "the tuple", open);
  else
    expectCloser(TK::r_paren, Diag::ExpectedClosingParen, "to close the tuple", open);
  t->setRange(rangeFrom(start));
  return t;
}

Expr* Parser::parseArrayLiteral() {
  size_t start = pos_;
  Token open = consume();
  AngleScope angle(*this, false);
  ArrayExpr* a = ctx_.make<ArrayExpr>(rangeOf(open));
  if (accept(TK::r_square)) {
    a->setRange(rangeFrom(start));
    return a;
  }
  auto element = [&]() {
    size_t s = pos_;
    Argument arg;
    arg.spread = accept(TK::ellipsis);
    arg.value = parseExpr();
    arg.range = rangeFrom(s);
    a->elements.push_back(std::move(arg));
  };
  element();
  if (at(TK::kw_for) && !a->elements.front().spread) {
    ComprehensionExpr* c = ctx_.make<ComprehensionExpr>(rangeOf(open));
    c->element = a->elements.front().value;
    consume();  // for
    c->var = parseIdentRef();
    if (!accept(TK::kw_in)) {
      if (auto* d = error(Diag::ExpectedIn, missingLoc(), {describeCur()}))
        d->suggestion = "write '[e for x in xs]'";
    }
    c->iterable = parseExpr();
    if (accept(TK::kw_if)) c->condition = parseExpr();
    expectCloser(TK::r_square, Diag::ExpectedClosingBracket, "to close the comprehension", open);
    c->setRange(rangeFrom(start));
    return c;
  }
  while (accept(TK::comma) && !bail()) {
    if (at(TK::r_square)) break;
    element();
  }
  if (!at(TK::r_square) && !at(TK::eof) && !tok().newlineBefore && canStartOperand(tok()))
    reportMissingSeparator(TK::r_square, "the array literal", open);
  else
    expectCloser(TK::r_square, Diag::ExpectedClosingBracket, "to close the array literal", open);
  a->setRange(rangeFrom(start));
  return a;
}

Expr* Parser::parseStructLiteral() {
  size_t start = pos_;
  Token open = consume();
  AngleScope angle(*this, false);
  StructExpr* s = ctx_.make<StructExpr>(rangeOf(open));
  while (!at(TK::r_brace) && !at(TK::eof) && !bail()) {
    size_t fstart = pos_;
    FieldInit f;
    if (accept(TK::ellipsis)) {
      f.spread = true;
      f.value = parseExpr();
    } else {
      if (!parseName(f.name, "a field name")) break;
      if (!accept(TK::colon)) {
        if (auto* d = error(Diag::ExpectedColon, missingLoc(), {"after the field name", describeCur()}))
          d->suggestion = "struct fields are written 'name: value'";
        break;
      }
      f.value = parseExpr();
    }
    f.range = rangeFrom(fstart);
    s->fields.push_back(std::move(f));
    if (accept(TK::comma)) continue;
    if (at(TK::r_brace)) break;
    reportMissingSeparator(TK::r_brace, "the struct literal", open);
    s->setRange(rangeFrom(start));
    return s;
  }
  expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the struct literal", open);
  s->setRange(rangeFrom(start));
  return s;
}

Expr* Parser::parseLambda() {
  size_t start = pos_;
  LambdaExpr* l = ctx_.make<LambdaExpr>(rangeOf(tok()));
  l->sig.modifiers = parseModifiers();
  if (at(TK::less)) {
    Token open = consume();
    AngleScope angle(*this, true);
    l->sig.hasWithParams = true;
    parseParamList(l->sig.withParams, TK::greater, open);
  }
  if (at(TK::l_paren)) {
    Token open = consume();
    AngleScope angle(*this, false);
    parseParamList(l->sig.params, TK::r_paren, open);
  } else {
    expect(TK::l_paren, "to begin the lambda's parameters");
  }
  if (accept(TK::colon)) l->sig.result = parseType();
  if (!accept(TK::fat_arrow)) {
    if (auto* d = error(Diag::ExpectedFatArrow, missingLoc(), {"before the lambda body", describeCur()}))
      d->suggestion = "a lambda is written '(x: int): int => x + 1'";
    l->body = errorExpr();
  } else {
    l->body = parseBlockExpr();
  }
  l->setRange(rangeFrom(start));
  return l;
}

Expr* Parser::parseBlockExpr() {
  if ((at(TK::l_brace) && !looksLikeStruct()) || (at(TK::kw_sync) && peekTok().is(TK::l_brace)))
    return parseBlock("the block");
  return parseExpr();
}

Expr* Parser::parseIf() {
  size_t start = pos_;
  consume();  // if
  IfExpr* i = ctx_.make<IfExpr>(rangeOf(tok()), parseBinary(1));
  if (at(TK::equal)) {
    if (auto* d = error(Diag::AssignInCondition, locOf(tok())))
      d->suggestion = "write '==' to compare";
    consume();
    parseBinary(1);
  }
  if (!accept(TK::kw_then)) {
    if (auto* d = error(Diag::ExpectedThen, missingLoc(), {describeCur()}))
      d->suggestion = "write 'if <condition> then <value> else <value>'";
    if (!at(TK::l_brace) && !at(TK::kw_sync)) {
      i->thenArm = errorExpr();
      i->setRange(rangeFrom(start));
      return i;
    }
  }
  i->thenArm = parseBlockExpr();
  if (accept(TK::kw_else)) i->elseArm = parseBlockExpr();
  i->setRange(rangeFrom(start));
  return i;
}

Expr* Parser::parseMatch() {
  size_t start = pos_;
  Token kw = consume();  // match
  NameExpr* subject = nullptr;
  if (at(TK::identifier) && (peekTok().is(TK::l_brace) || peekTok().is(TK::coloncolon))) {
    subject = parseIdentRef();
  } else {
    if (auto* d = error(Diag::MatchSubjectNotName, locOf(tok())))
      d->suggestion = "bind the value first: 'let v = <expression>' and then 'match v { ... }'";
    if (!at(TK::l_brace)) parseBinary(1);
  }
  MatchExpr* m = ctx_.make<MatchExpr>(rangeOf(kw), subject);
  if (!at(TK::l_brace)) {
    expect(TK::l_brace, "to begin the cases of 'match'");
    m->setRange(rangeFrom(start));
    return m;
  }
  Token open = consume();
  AngleScope angle(*this, false);
  while (!at(TK::r_brace) && !at(TK::eof) && !bail()) {
    if (!at(TK::kw_case)) {
      if (auto* d = error(Diag::ExpectedCase, locOf(tok()), {describeCur()}))
        d->suggestion = "each arm is written 'case <pattern> => <value>'";
      // Skip to the next case or the end of the match (Note [Parser termination]).
      int depth = 0;
      while (!at(TK::eof) && !(depth == 0 && (at(TK::kw_case) || at(TK::r_brace)))) {
        if (at(TK::l_brace)) ++depth;
        if (at(TK::r_brace)) --depth;
        consume();
      }
      continue;
    }
    size_t cstart = pos_;
    consume();  // case
    MatchCase mc;
    do {
      mc.patterns.push_back(parsePattern());
    } while (accept(TK::pipe) && !bail());
    if (!accept(TK::fat_arrow)) {
      if (auto* d = error(Diag::ExpectedFatArrow, missingLoc(), {"after the pattern", describeCur()}))
        d->suggestion = "write 'case <pattern> => <value>'";
      mc.body = errorExpr();
    } else {
      mc.body = parseBlockExpr();
    }
    mc.range = rangeFrom(cstart);
    m->cases.push_back(std::move(mc));
  }
  if (m->cases.empty() && at(TK::r_brace)) error(Diag::EmptyMatch, locOf(kw));
  expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the 'match'", open);
  m->setRange(rangeFrom(start));
  return m;
}

Expr* Parser::parseTry() {
  size_t start = pos_;
  consume();  // try
  TryExpr* t = ctx_.make<TryExpr>(rangeOf(tok()), parseBlock("the 'try' block"));
  while (at(TK::kw_catch) && !bail()) {
    size_t cstart = pos_;
    consume();
    CatchClause c;
    parseName(c.name, "the name of the caught value");
    if (!accept(TK::colon)) {
      std::string name = c.name.empty() ? "e" : c.name.name;
      if (auto* d = error(Diag::ExpectedCatchType, missingLoc(), {name}))
        d->suggestion = "write 'catch " + name + ": any { ... }'";
      c.type = ctx_.make<ErrorType>(rangeOf(tok()));
    } else {
      c.type = parseType();
    }
    c.body = parseBlock("the 'catch' block");
    c.range = rangeFrom(cstart);
    t->catches.push_back(std::move(c));
  }
  if (t->catches.empty()) {
    if (auto* d = error(Diag::ExpectedCatch, missingLoc(), {describeCur()}))
      d->suggestion = "add 'catch e: T { ... }' after the 'try' block";
  }
  if (accept(TK::kw_finally)) t->finallyBlock = parseBlock("the 'finally' block");
  t->setRange(rangeFrom(start));
  return t;
}

}  // namespace xacc::camel
