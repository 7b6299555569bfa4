// Declarations and statements (spec 4.2, 4.3): top-level declarations,
// imports/exports, `let`/`var` with carriers, function declarations with
// decorators, with-parameters, export, implementation marks and modifiers in
// their fixed order, type and use declarations, returns, blocks and
// expression statements.
#include "ParserImpl.h"

namespace xacc::camel {

// ---------------------------------------------------------------------------
// Dispatch

Stmt* Parser::parseTopDecl() {
  switch (tok().kind) {
    case TK::kw_module: return parseModuleDecl();
    case TK::kw_import: return parseImportDecl();
    case TK::kw_export: {
      TK next = peekTok().kind;
      bool funcNext = next == TK::kw_func || next == TK::kw_sync || next == TK::kw_macro ||
                      next == TK::kw_atomic || next == TK::kw_shared ||
                      ((next == TK::kw_inner || next == TK::kw_outer) &&
                       !peekTok(2).is(TK::kw_type));
      return funcNext ? parseFuncDecl() : parseExportDecl();
    }
    case TK::kw_let:
    case TK::kw_var: return parseDataDecl();
    case TK::kw_type: return parseTypeDecl();
    case TK::kw_inner:
    case TK::kw_outer:
      return peekTok().is(TK::kw_type) ? parseTypeDecl() : parseFuncDecl();
    case TK::kw_use: return parseUseDecl();
    case TK::kw_func:
    case TK::at:
    case TK::kw_with:
    case TK::kw_macro:
    case TK::kw_atomic:
    case TK::kw_shared: return parseFuncDecl();
    case TK::kw_sync:
      if (!peekTok().is(TK::l_brace)) return parseFuncDecl();
      break;
    case TK::kw_return:
    case TK::kw_raise:
    case TK::kw_throw: {
      std::string word(tok().text);
      if (auto* d = error(Diag::ReturnAtTopLevel, locOf(tok()), {word}))
        d->suggestion = "'" + word + "' may only appear inside a function body";
      parseReturnStmt();
      return nullptr;
    }
    case TK::r_brace:
    case TK::r_paren:
    case TK::r_square:
      error(Diag::UnmatchedCloser, locOf(tok()), {describeCur()});
      consume();
      return nullptr;
    case TK::kw_enum:
    case TK::kw_namespace: {
      std::string word(tok().text);
      error(Diag::ReservedKeyword, locOf(tok()), {word});
      consume();
      return nullptr;
    }
    default: break;
  }
  if (auto* d = error(Diag::ExpectedDeclaration, locOf(tok()), {describeCur()}))
    d->suggestion =
        "only module, import, export, let, var, func, type and use may appear at the top "
        "level; put statements inside a function such as 'func main(): int sync { ... }'";
  parseStmt();  // skip the statement so that recovery starts after it
  return nullptr;
}

Stmt* Parser::parseStmt() {
  switch (tok().kind) {
    case TK::kw_let:
    case TK::kw_var: return parseDataDecl();
    case TK::kw_func:
    case TK::at:
    case TK::kw_with:
    case TK::kw_macro:
    case TK::kw_atomic:
    case TK::kw_shared: {
      TK next = peekTok().kind;
      if (!at(TK::kw_func) && !at(TK::at) && !at(TK::kw_with) &&
          (next == TK::l_paren || next == TK::less))
        return parseExprStmt();  // a lambda with modifiers
      return parseFuncDecl();
    }
    case TK::kw_sync: {
      TK next = peekTok().kind;
      if (next == TK::l_brace) return parseBlockStmt();
      if (next == TK::l_paren || next == TK::less) return parseExprStmt();
      if (next == TK::kw_func || next == TK::kw_sync || next == TK::kw_macro ||
          next == TK::kw_atomic || next == TK::kw_shared || next == TK::kw_export)
        return parseFuncDecl();
      consume();
      error(Diag::MisplacedSync, missingLoc(), {describeCur()});
      return nullptr;
    }
    case TK::kw_inner:
    case TK::kw_outer: {
      TK next = peekTok().kind;
      if (next == TK::kw_type) return parseTypeDecl();
      if (next == TK::kw_func || next == TK::kw_sync || next == TK::kw_macro ||
          next == TK::kw_atomic || next == TK::kw_shared)
        return parseFuncDecl();
      return parseExprStmt();  // reports the keyword used as a name
    }
    case TK::kw_type: return parseTypeDecl();
    case TK::kw_use: return parseUseDecl();
    case TK::kw_return:
    case TK::kw_raise:
    case TK::kw_throw: return parseReturnStmt();
    case TK::kw_wait: {
      TK next = peekTok().kind;
      if (next == TK::l_brace || (next == TK::kw_sync && peekTok(2).is(TK::l_brace)))
        return parseBlockStmt();
      if (next == TK::kw_let || next == TK::kw_var || next == TK::kw_func ||
          next == TK::kw_type) {
        if (auto* d = error(Diag::WaitBeforeDecl, locOf(tok())))
          d->suggestion = "remove 'wait'; write 'wait' before the assignment or call whose "
                          "effect later code relies on";
        consume();
        return parseStmt();
      }
      return parseExprStmt();
    }
    case TK::l_brace:
      if (looksLikeStruct()) return parseExprStmt();
      return parseBlockStmt();
    case TK::kw_import:
    case TK::kw_export:
    case TK::kw_module: {
      if (auto* d = error(Diag::ExpectedStatement, locOf(tok()), {describeCur()}))
        d->suggestion = "'" + std::string(tok().text) +
                        "' declarations may only appear at the top level of a file";
      consume();
      return nullptr;
    }
    case TK::kw_else:
      if (auto* d = error(Diag::ElseWithoutIf, locOf(tok())))
        d->suggestion = "put 'else' directly after the 'then' arm of an 'if'";
      consume();
      return nullptr;
    case TK::r_paren:
    case TK::r_square:
      error(Diag::UnmatchedCloser, locOf(tok()), {describeCur()});
      consume();
      return nullptr;
    default: return parseExprStmt();
  }
}

// ---------------------------------------------------------------------------
// Module-level declarations

Stmt* Parser::parseModuleDecl() {
  size_t start = pos_;
  consume();  // module
  Ident name;
  if (!parseName(name, "a module name")) return nullptr;
  return ctx_.make<ModuleDecl>(rangeFrom(start), std::move(name));
}

bool Parser::parseModulePath(ModulePath& path) {
  size_t start = pos_;
  if (atAny({TK::period, TK::dotdot, TK::ellipsis})) path.prefix = std::string(consume().text);
  if (!at(TK::identifier)) {
    if (auto* d = error(Diag::ExpectedModuleName, missingLoc(), {describeCur()}))
      d->suggestion = "module names are identifiers separated by '.', as in 'geo.shapes'";
    return false;
  }
  for (;;) {
    const Token& t = consume();
    path.parts.push_back(Ident{std::string(t.text), rangeOf(t)});
    if (!(at(TK::period) && peekTok().is(TK::identifier))) break;
    consume();
  }
  path.range = rangeFrom(start);
  return true;
}

void Parser::parseBracedIdents(std::vector<Ident>& out, std::string_view what) {
  Token open = consume();  // {
  while (!at(TK::r_brace) && !bail()) {
    Ident id;
    if (!parseName(id, what)) break;
    out.push_back(std::move(id));
    if (!accept(TK::comma)) break;
  }
  expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the name list", open);
}

Stmt* Parser::parseImportDecl() {
  size_t start = pos_;
  consume();  // import
  ImportDecl* d;
  if (at(TK::l_brace)) {
    d = ctx_.make<ImportDecl>(rangeOf(tok()), ImportDecl::Form::Names);
    parseBracedIdents(d->names, "an imported name");
  } else if (at(TK::identifier) && peekTok().is(TK::kw_from)) {
    d = ctx_.make<ImportDecl>(rangeOf(tok()), ImportDecl::Form::Alias);
    const Token& t = consume();
    d->alias = Ident{std::string(t.text), rangeOf(t)};
  } else {
    d = ctx_.make<ImportDecl>(rangeOf(tok()), ImportDecl::Form::Module);
    parseModulePath(d->path);
    d->setRange(rangeFrom(start));
    return d;
  }
  if (!accept(TK::kw_from)) {
    if (auto* diag = error(Diag::ExpectedFrom, missingLoc(), {describeCur()}))
      diag->suggestion = "write 'import { a, b } from module'";
  } else {
    parseModulePath(d->path);
  }
  d->setRange(rangeFrom(start));
  return d;
}

Stmt* Parser::parseExportDecl() {
  size_t start = pos_;
  consume();  // export
  ExportDecl* e = ctx_.make<ExportDecl>(rangeOf(tok()));
  if (at(TK::l_brace)) {
    parseBracedIdents(e->names, "an exported name");
  } else if (atAny({TK::kw_let, TK::kw_var})) {
    e->decl = parseDataDecl();
  } else if (atAny({TK::kw_type, TK::kw_inner, TK::kw_outer})) {
    e->decl = parseTypeDecl();
  } else {
    error(Diag::ExpectedExportItem, missingLoc(), {describeCur()});
  }
  e->setRange(rangeFrom(start));
  return e;
}

bool Parser::parseName(Ident& out, std::string_view what) {
  const Token& t = tok();
  if (t.is(TK::identifier)) {
    out = Ident{std::string(t.text), rangeOf(t)};
    consume();
    return true;
  }
  if (t.is(TK::underscore)) {
    if (auto* d = error(Diag::UnderscoreAsName, locOf(t)))
      d->suggestion = "use a name such as '_unused' instead";
    consume();
    return false;
  }
  if (isKeyword(t.kind) && !t.is(TK::kw_true) && !t.is(TK::kw_false) && !t.is(TK::kw_null) &&
      !t.newlineBefore) {
    std::string word(t.text);
    if (auto* d = error(Diag::KeywordAsName, locOf(t), {word}))
      d->suggestion = "choose another name, such as '" + word + "_'";
    consume();
    return false;
  }
  error(Diag::ExpectedIdentifier, missingLoc(), {what, describe(t)});
  return false;
}

Stmt* Parser::parseDataDecl() {
  size_t start = pos_;
  bool isVar = consume().is(TK::kw_var);
  DataDecl* d = ctx_.make<DataDecl>(rangeOf(toks_[start]), isVar);
  const char* kw = isVar ? "var" : "let";
  auto parseList = [&](TK closer, DataDecl::Carrier carrier) {
    Token open = consume();
    d->carrier = carrier;
    while (!at(closer) && !bail()) {
      Ident id;
      if (!parseName(id, "a name to bind")) break;
      d->names.push_back(std::move(id));
      if (!accept(TK::comma)) break;
    }
    Diag diag = closer == TK::r_paren    ? Diag::ExpectedClosingParen
                : closer == TK::r_brace  ? Diag::ExpectedClosingBrace
                                         : Diag::ExpectedClosingBracket;
    expectCloser(closer, diag, "to close the names being bound", open);
  };
  if (at(TK::l_paren)) {
    parseList(TK::r_paren, DataDecl::Carrier::Tuple);
  } else if (at(TK::l_brace)) {
    parseList(TK::r_brace, DataDecl::Carrier::Struct);
  } else if (at(TK::l_square)) {
    parseList(TK::r_square, DataDecl::Carrier::Array);
  } else {
    do {
      Ident id;
      if (!parseName(id, "a name to bind")) break;
      d->names.push_back(std::move(id));
    } while (accept(TK::comma) && !bail());
  }
  if (accept(TK::colon)) {
    do {
      d->types.push_back(parseType());
    } while (accept(TK::comma) && !bail());
  }
  if (!accept(TK::equal)) {
    if (auto* diag = error(Diag::ExpectedInitializer, missingLoc(), {kw, describeCur()}))
      diag->suggestion = std::string("every '") + kw + "' binding needs a value, as in '" + kw +
                         " x = 0'";
    d->setRange(rangeFrom(start));
    return d;
  }
  do {
    d->values.push_back(parseExpr());
  } while (accept(TK::comma) && !bail());
  d->setRange(rangeFrom(start));
  return d;
}

uint8_t Parser::parseModifiers() {
  uint8_t mods = 0;
  for (;;) {
    uint8_t bit = 0;
    switch (tok().kind) {
      case TK::kw_atomic: bit = ModAtomic; break;
      case TK::kw_shared: bit = ModShared; break;
      case TK::kw_sync: bit = ModSync; break;
      case TK::kw_macro: bit = ModMacro; break;
      default: return mods;
    }
    // `sync {` is a sync block, not a modifier.
    if (bit == ModSync && peekTok().is(TK::l_brace)) return mods;
    if (mods & bit) {
      std::string word(tok().text);
      if (auto* d = error(Diag::DuplicateModifier, locOf(tok()), {word}))
        d->suggestion = "remove the repeated '" + word + "'";
    }
    mods |= bit;
    consume();
  }
}

void Parser::parseParamList(std::vector<Param>& out, TK closer, const Token& opener) {
  while (!(closer == TK::greater ? atClosingAngle() : at(closer)) && !bail()) {
    size_t start = pos_;
    Param p;
    p.isVar = accept(TK::kw_var);
    if (!parseName(p.name, "a parameter name")) break;
    if (accept(TK::colon)) {
      p.type = parseType();
    } else {
      if (auto* d = error(Diag::MissingParamType, p.name.range.loc(), {p.name.name}))
        d->suggestion = "every parameter needs a type: write '" + p.name.name + ": int'";
    }
    if (accept(TK::equal)) {
      AngleScope angle(*this, closer == TK::greater);
      p.defaultValue = parseExpr();
    }
    p.range = rangeFrom(start);
    out.push_back(std::move(p));
    if (!accept(TK::comma)) break;
  }
  Diag d = closer == TK::greater ? Diag::ExpectedClosingAngle : Diag::ExpectedClosingParen;
  expectCloser(closer, d, "to close the parameter list", opener);
}

Stmt* Parser::parseFuncDecl() {
  size_t start = pos_;
  FuncDecl* f = ctx_.make<FuncDecl>(rangeOf(tok()));
  while (at(TK::at) && !bail()) {
    size_t dstart = pos_;
    consume();
    Decorator dec;
    dec.name = parseIdentRef();
    if (at(TK::less)) {
      Token open = consume();
      AngleScope angle(*this, true);
      dec.hasArgs = true;
      parseArgs(dec.args, TK::greater, open, "decorator arguments");
    }
    dec.range = rangeFrom(dstart);
    f->decorators.push_back(std::move(dec));
  }
  bool hasWith = false;
  if (at(TK::kw_with)) {
    consume();
    hasWith = true;
    f->sig.hasWithParams = true;
    if (at(TK::less)) {
      Token open = consume();
      AngleScope angle(*this, true);
      parseParamList(f->sig.withParams, TK::greater, open);
    } else {
      expect(TK::less, "after 'with'");
    }
  }
  f->isExport = accept(TK::kw_export);
  if (at(TK::kw_inner) || at(TK::kw_outer))
    f->impl = consume().is(TK::kw_inner) ? ImplMark::Inner : ImplMark::Outer;
  size_t modStart = pos_;
  f->sig.modifiers = parseModifiers();
  if (at(TK::kw_export) && pos_ > modStart) {
    std::string first(toks_[modStart].text);
    if (auto* d = error(Diag::MisorderedExport, locOf(tok()), {first}))
      d->suggestion = "write 'export " + modifierString(f->sig.modifiers) + " func ...'";
    consume();
    f->isExport = true;
  }
  if (!accept(TK::kw_func)) {
    std::string found = describeCur();
    bool bare = !f->isExport && f->impl == ImplMark::None && f->sig.modifiers == 0;
    if (bare && !f->decorators.empty() && !hasWith)
      error(Diag::DecoratorWithoutFunc, locOf(tok()), {found});
    else if (bare && hasWith)
      error(Diag::WithWithoutFunc, locOf(tok()), {found});
    else
      error(Diag::ExpectedFunc, locOf(tok()), {"'" + std::string(prevTok().text) + "'", found});
    f->setRange(rangeFrom(start));
    return f;
  }
  parseName(f->name, "a function name");
  if (at(TK::l_paren)) {
    Token open = consume();
    AngleScope angle(*this, false);
    parseParamList(f->sig.params, TK::r_paren, open);
  } else {
    expect(TK::l_paren, "to begin the parameter list");
  }
  if (accept(TK::colon)) f->sig.result = parseType();
  if (f->impl == ImplMark::Outer && accept(TK::equal)) {
    // An outer functor names its implementation by URI (Executor.h).
    if (at(TK::string)) {
      f->outerUriRange = rangeOf(tok());
      f->outerUri = consume().strValue;
    } else {
      error(Diag::ExpectedOuterUri, locOf(tok()), {f->name.name, describeCur()});
    }
  } else if (at(TK::l_brace) || (at(TK::kw_sync) && peekTok().is(TK::l_brace))) {
    f->body = parseBlock("the function body");
  } else if (f->impl == ImplMark::Inner) {
    // A body-less inner functor names a C++ builtin of the runtime registry
    // (architecture 3); lowering looks it up (LowerOuter.cpp).
  } else {
    std::string found = describeCur();
    if (auto* d = error(Diag::ExpectedFuncBody, missingLoc(), {f->name.name, found})) {
      d->suggestion = at(TK::fat_arrow)
                          ? "declared functions need a block body: write '{ return ... }'"
                          : "add a body: '{ ... }' (or 'sync { ... }')";
    }
  }
  f->setRange(rangeFrom(start));
  return f;
}

Stmt* Parser::parseTypeDecl() {
  size_t start = pos_;
  TypeDecl* t = ctx_.make<TypeDecl>(rangeOf(tok()));
  if (at(TK::kw_inner) || at(TK::kw_outer))
    t->impl = consume().is(TK::kw_inner) ? ImplMark::Inner : ImplMark::Outer;
  expect(TK::kw_type, "in a type declaration");
  parseName(t->name, "a type name");
  if (!accept(TK::equal)) {
    if (auto* d = error(Diag::ExpectedInitializer, missingLoc(), {"type", describeCur()}))
      d->suggestion = "write 'type " + t->name.name + " = { ... }'";
  } else if (at(TK::string)) {
    t->uri = consume().strValue;
  } else {
    t->type = parseType();
  }
  t->setRange(rangeFrom(start));
  return t;
}

Stmt* Parser::parseUseDecl() {
  size_t start = pos_;
  consume();  // use
  UseDecl* u = ctx_.make<UseDecl>(rangeOf(tok()));
  if (at(TK::identifier) && peekTok().is(TK::equal)) {
    parseName(u->alias, "an alias");
    consume();  // =
  }
  u->target = parseIdentRef();
  u->setRange(rangeFrom(start));
  return u;
}

// ---------------------------------------------------------------------------
// Statements

Stmt* Parser::parseReturnStmt() {
  size_t start = pos_;
  const Token& kw = consume();
  ReturnStmt::Form form = kw.is(TK::kw_return)  ? ReturnStmt::Form::Return
                          : kw.is(TK::kw_raise) ? ReturnStmt::Form::Raise
                                                : ReturnStmt::Form::Throw;
  ReturnStmt* r = ctx_.make<ReturnStmt>(rangeOf(kw), form);
  // A bare `return` (nothing that can start an expression follows) means `return null`.
  if (canStartOperand(tok())) {
    do {
      r->values.push_back(parseExpr());
    } while (accept(TK::comma) && !bail());
  }
  r->setRange(rangeFrom(start));
  return r;
}

Stmt* Parser::parseBlockStmt() {
  size_t start = pos_;
  bool isWait = accept(TK::kw_wait);
  BlockExpr* b = parseBlock("the block");
  return ctx_.make<BlockStmt>(rangeFrom(start), isWait, b);
}

Stmt* Parser::parseExprStmt() {
  size_t start = pos_;
  Expr* e = parseExpr();
  return ctx_.make<ExprStmt>(rangeFrom(start), e);
}

BlockExpr* Parser::parseBlock(std::string_view context) {
  DepthGuard guard(*this);
  size_t start = pos_;
  bool isSync = accept(TK::kw_sync);
  BlockExpr* b = ctx_.make<BlockExpr>(rangeOf(tok()), isSync);
  if (!guard.ok) return b;
  if (!at(TK::l_brace)) {
    std::string ctx = "to begin " + std::string(context);
    expect(TK::l_brace, ctx);
    b->setRange(rangeFrom(start));
    return b;
  }
  Token open = consume();
  // Reaching a block's `{` resynchronises: errors in a signature or a
  // condition do not hide errors inside the block (Note [Panic mode]).
  if (speculating_ == 0) panic_ = false;
  AngleScope angle(*this, false);
  parseStmtList(b);
  expectCloser(TK::r_brace, Diag::ExpectedClosingBrace, "to close the block", open);
  b->setRange(rangeFrom(start));
  return b;
}

void Parser::parseStmtList(BlockExpr* block) {
  while (!at(TK::r_brace) && !at(TK::eof) && !bail()) {
    size_t before = pos_;
    if (accept(TK::semi)) continue;
    if (Stmt* s = parseStmt()) block->stmts.push_back(s);
    if (panic_ && speculating_ == 0) synchronize();
    if (pos_ == before) consume();  // Note [Parser termination]
  }
}

}  // namespace xacc::camel
