// Type expressions (spec 4.6) and match patterns (4.4). Type operator levels,
// lowest first: `|`, `&`, `\`, `+`/`-`, `^`, then `name of T`, `T[]`,
// `T<args>` and primary types (names, struct, tuple, parenthesised, function
// types, `typeof e`, `typeas T`); `T?` / `T ? U` wrap a whole type. In
// expression context (after `as`/`is`) the arithmetic-looking `+ - ^` are not
// type operators and type arguments need an adjacent `<` (see Parser.h).
#include "ParserImpl.h"

namespace xacc::camel {

namespace {
constexpr int kTypeUnitLevel = 5;

bool typeOpAt(TokenKind k, int level, bool exprCtx, TypeOp& op) {
  using TK = TokenKind;
  switch (level) {
    case 0: op = TypeOp::Union; return k == TK::pipe;
    case 1: op = TypeOp::Inter; return k == TK::amp;
    case 2: op = TypeOp::Diff; return k == TK::backslash;
    case 3:
      if (exprCtx) return false;
      op = k == TK::plus ? TypeOp::KeyUnion : TypeOp::KeyDiff;
      return k == TK::plus || k == TK::minus;
    case 4: op = TypeOp::KeyInter; return !exprCtx && k == TK::caret;
    default: return false;
  }
}
}  // namespace

TypeExpr* Parser::parseType(bool exprCtx) {
  DepthGuard guard(*this);
  if (!guard.ok) return ctx_.make<ErrorType>(rangeOf(tok()));
  size_t start = pos_;
  TypeExpr* t = parseTypeLevel(0, exprCtx);
  if (at(TK::question)) {
    consume();
    NullableType* n = ctx_.make<NullableType>(rangeFrom(start), t);
    // `T ? U` needs U on the same line, starting like a type name or tuple.
    const Token& next = tok();
    if (!exprCtx && !next.newlineBefore &&
        (next.is(TK::identifier) || next.is(TK::l_paren) || next.is(TK::kw_typeof) ||
         next.is(TK::kw_typeas)))
      n->alternative = parseTypeLevel(0, exprCtx);
    n->setRange(rangeFrom(start));
    t = n;
  }
  return t;
}

TypeExpr* Parser::parseTypeLevel(int level, bool exprCtx) {
  if (level >= kTypeUnitLevel) return parseTypeUnit(exprCtx);
  size_t start = pos_;
  TypeExpr* lhs = parseTypeLevel(level + 1, exprCtx);
  TypeOp op;
  unsigned links = 0;
  while (typeOpAt(tok().kind, level, exprCtx, op) && !bail()) {
    if (chainTooLong(links)) break;
    consume();
    TypeExpr* rhs = parseTypeLevel(level + 1, exprCtx);
    lhs = ctx_.make<BinaryType>(rangeFrom(start), op, lhs, rhs);
  }
  return lhs;
}

TypeExpr* Parser::parseTypeUnit(bool exprCtx) {
  size_t start = pos_;
  if (at(TK::identifier) && peekTok().is(TK::kw_of)) {
    Ident name{std::string(tok().text), rangeOf(tok())};
    consume();
    consume();  // of
    DepthGuard guard(*this);
    if (!guard.ok) return ctx_.make<ErrorType>(rangeOf(tok()));
    TypeExpr* inner = parseTypeUnit(exprCtx);
    return ctx_.make<OfType>(rangeFrom(start), std::move(name), inner);
  }
  TypeExpr* t = parsePrimaryType(exprCtx);
  if (at(TK::less) && (!exprCtx || tok().adjacent())) {
    Token open = consume();
    AngleScope angle(*this, true);
    SpecializedType* s = ctx_.make<SpecializedType>(rangeOf(open), t);
    while (!atClosingAngle() && !at(TK::eof) && !bail()) {
      TypeArg arg;
      if (accept(TK::kw_const))
        arg.constValue = parseExpr();
      else
        arg.type = parseType();
      s->args.push_back(arg);
      if (!accept(TK::comma)) break;
    }
    expectCloser(TK::greater, Diag::ExpectedClosingAngle, "to close the type arguments", open);
    s->setRange(rangeFrom(start));
    t = s;
  }
  unsigned dims = 0;
  while (at(TK::l_square) && peekTok().is(TK::r_square) && !bail()) {
    if (chainTooLong(dims)) break;
    consume();
    consume();
    t = ctx_.make<ArrayType>(rangeFrom(start), t);
  }
  return t;
}

bool Parser::looksLikeFuncTypeParams() const {
  const Token& a = peekTok(1);
  if (a.is(TK::r_paren)) return peekTok(2).is(TK::fat_arrow);
  if (a.is(TK::kw_var)) return true;
  return (a.is(TK::identifier) || isKeyword(a.kind)) && peekTok(2).is(TK::colon);
}

TypeExpr* Parser::parsePrimaryType(bool exprCtx) {
  size_t start = pos_;
  switch (tok().kind) {
    case TK::l_brace: return parseStructType();
    case TK::identifier: {
      NamedType* n = ctx_.make<NamedType>(rangeOf(tok()), std::string(tok().text));
      consume();
      while (at(TK::coloncolon) && peekTok().is(TK::identifier)) {
        consume();
        n->qualifiers.push_back(std::move(n->name));
        n->name = std::string(consume().text);
      }
      n->setRange(rangeFrom(start));
      return n;
    }
    case TK::l_paren: return looksLikeFuncTypeParams() ? parseFuncType() : parseParenType();
    case TK::less:
    case TK::kw_sync:
    case TK::kw_macro:
    case TK::kw_atomic:
    case TK::kw_shared: return parseFuncType();
    case TK::kw_typeof: {
      consume();
      Expr* e = parseLink();
      return ctx_.make<TypeofType>(rangeFrom(start), e);
    }
    case TK::kw_typeas: {
      consume();
      Ident name;
      parseName(name, "a type name");
      return ctx_.make<TypeasType>(rangeFrom(start), std::move(name));
    }
    default: break;
  }
  if (auto* d = error(Diag::ExpectedType, missingLoc(), {describeCur()})) {
    if (at(TK::kw_null)) d->suggestion = "the type of 'null' is 'void'";
    else if (isKeyword(tok().kind) && !exprCtx)
      d->suggestion = "types are names such as 'int', 'float', 'string', 'bool' or 'Point', "
                      "or composites such as 'int[]', '(int, string)', '{ x: float }'";
  }
  return ctx_.make<ErrorType>(rangeOf(tok()));
}

TypeExpr* Parser::parseFuncType() {
  size_t start = pos_;
  FuncType* f = ctx_.make<FuncType>(rangeOf(tok()));
  f->sig.modifiers = parseModifiers();
  if (at(TK::less)) {
    Token open = consume();
    AngleScope angle(*this, true);
    f->sig.hasWithParams = true;
    parseParamList(f->sig.withParams, TK::greater, open);
  }
  if (at(TK::l_paren)) {
    Token open = consume();
    AngleScope angle(*this, false);
    parseParamList(f->sig.params, TK::r_paren, open);
  } else {
    expect(TK::l_paren, "to begin the parameters of a function type");
  }
  if (!accept(TK::fat_arrow)) {
    if (auto* d = error(Diag::ExpectedFatArrow, missingLoc(),
                        {"in a function type", describeCur()}))
      d->suggestion = "a function type is written '(x: int) => int'";
    f->sig.result = ctx_.make<ErrorType>(rangeOf(tok()));
  } else {
    f->sig.result = parseType();
  }
  f->setRange(rangeFrom(start));
  return f;
}

TypeExpr* Parser::parseStructType() {
  size_t start = pos_;
  Token open = consume();
  AngleScope angle(*this, false);
  StructType* s = ctx_.make<StructType>(rangeOf(open));
  while (!at(TK::r_brace) && !at(TK::eof) && !bail()) {
    FieldType f;
    if (!parseName(f.name, "a field name")) break;
    if (!accept(TK::colon)) {
      if (auto* d = error(Diag::ExpectedColon, missingLoc(), {"after the field name", describeCur()}))
        d->suggestion = "struct type fields are written 'name: Type'";
      break;
    }
    f.type = parseType();
    s->fields.push_back(std::move(f));
    if (!accept(TK::comma)) break;
  }
  expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the struct type", open);
  s->setRange(rangeFrom(start));
  return s;
}

TypeExpr* Parser::parseParenType() {
  size_t start = pos_;
  Token open = consume();
  AngleScope angle(*this, false);
  if (accept(TK::r_paren)) return ctx_.make<TupleType>(rangeFrom(start));
  TypeExpr* first = parseType();
  if (!at(TK::comma)) {
    expectCloser(TK::r_paren, Diag::ExpectedClosingParen, "to close the parenthesised type", open);
    return first;
  }
  TupleType* t = ctx_.make<TupleType>(rangeOf(open));
  t->elements.push_back(first);
  while (accept(TK::comma) && !bail()) {
    if (at(TK::r_paren)) break;
    t->elements.push_back(parseType());
  }
  expectCloser(TK::r_paren, Diag::ExpectedClosingParen, "to close the tuple type", open);
  t->setRange(rangeFrom(start));
  return t;
}

// ---------------------------------------------------------------------------
// Patterns

Pattern* Parser::parsePattern() {
  DepthGuard guard(*this);
  size_t start = pos_;
  if (!guard.ok) return ctx_.make<WildcardPattern>(rangeOf(tok()));
  switch (tok().kind) {
    case TK::underscore: consume(); return ctx_.make<WildcardPattern>(rangeFrom(start));
    case TK::identifier: {
      NameExpr* n = parseIdentRef();
      return ctx_.make<NamePattern>(rangeFrom(start), n);
    }
    case TK::minus:
    case TK::plus:
      if (!signFoldsHere()) break;
      [[fallthrough]];
    case TK::integer:
    case TK::real:
    case TK::string:
    case TK::multi_string:
    case TK::fstring:
    case TK::kw_true:
    case TK::kw_false:
    case TK::kw_null: {
      Expr* lit = parsePrimary();
      return ctx_.make<LiteralPattern>(rangeFrom(start), lit);
    }
    case TK::l_paren: {
      Token open = consume();
      AngleScope angle(*this, false);
      TuplePattern* t = ctx_.make<TuplePattern>(rangeOf(open));
      while (!at(TK::r_paren) && !at(TK::eof) && !bail()) {
        t->elements.push_back(parseExpr());
        if (!accept(TK::comma)) break;
      }
      expectCloser(TK::r_paren, Diag::ExpectedClosingParen, "to close the tuple pattern", open);
      t->setRange(rangeFrom(start));
      return t;
    }
    case TK::l_brace: {
      Token open = consume();
      AngleScope angle(*this, false);
      StructPattern* s = ctx_.make<StructPattern>(rangeOf(open));
      while (!at(TK::r_brace) && !at(TK::eof) && !bail()) {
        size_t fstart = pos_;
        FieldInit f;
        if (accept(TK::ellipsis)) {
          f.spread = true;
          f.value = parseExpr();
        } else {
          if (!parseName(f.name, "a field name")) break;
          if (accept(TK::colon)) f.value = parseExpr();  // else shorthand `{ a, b }`
        }
        f.range = rangeFrom(fstart);
        s->fields.push_back(std::move(f));
        if (!accept(TK::comma)) break;
      }
      expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the struct pattern", open);
      s->setRange(rangeFrom(start));
      return s;
    }
    default: break;
  }
  if (auto* d = error(Diag::ExpectedPattern, locOf(tok()), {describeCur()}))
    d->suggestion = "patterns are literals, names, '_', tuples '(a, b)' or structs '{ a: 1 }'";
  return ctx_.make<WildcardPattern>(rangeOf(tok()));
}

}  // namespace xacc::camel
