// Private definition of the Camel parser, shared by ParserCore.cpp (token
// handling, diagnostics, recovery, speculation), ParseDecl.cpp (declarations
// and statements), ParseExpr.cpp (expressions) and ParseType.cpp (types and
// patterns). See Parser.h for the contract.
//
// Note [Parser termination]: every loop either consumes a token per iteration
// or exits; statement loops additionally force one token of progress when a
// statement consumed nothing. `bail()` becomes true after too many errors or
// too deep nesting (abort) and while a failed speculation unwinds, and every
// loop checks it, so unwinding is quick.
//
// Note [Panic mode]: after an error, further errors are suppressed until the
// enclosing statement loop resynchronises (synchronize()), so each statement
// reports at most one error and cascades are avoided.
#pragma once

#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "xacc/camel/AST.h"
#include "xacc/camel/CamelDiag.h"
#include "xacc/camel/Parser.h"
#include "xacc/camel/Token.h"

namespace xacc::camel {

class Parser {
public:
  Parser(std::vector<Token> tokens, const std::string* file, ASTContext& ctx,
         support::DiagnosticEngine& diags, const ParseOptions& opts);
  Module* parseModule();

private:
  using TK = TokenKind;

  // ---- Tokens (ParserCore.cpp) ----
  const Token& tok() const { return toks_[pos_]; }
  const Token& peekTok(size_t n = 1) const {
    return toks_[pos_ + n < toks_.size() ? pos_ + n : toks_.size() - 1];
  }
  const Token& prevTok() const { return toks_[pos_ > 0 ? pos_ - 1 : 0]; }
  bool at(TK k) const { return tok().kind == k; }
  bool atAny(std::initializer_list<TK> ks) const;
  const Token& consume();
  bool accept(TK k);
  /// Splits a `>=` token into `>` and `=` (closing angle brackets).
  void splitGreaterEqual();
  bool atClosingAngle();

  // ---- Ranges ----
  SourceRange rangeOf(const Token& t) const;
  /// From token index `start` to the end of the last consumed token.
  SourceRange rangeFrom(size_t start) const;
  support::SourceLoc locOf(const Token& t) const { return rangeOf(t).loc(); }
  /// Where a missing token should be reported: after the previous token when
  /// the current one starts a new line (or is eof), else at the current one.
  support::SourceLoc missingLoc() const;

  // ---- Diagnostics and recovery ----
  /// Reports an error unless suppressed (panic mode or speculation); returns
  /// the diagnostic to attach a suggestion/notes to, or null.
  support::Diagnostic* error(Diag d, support::SourceLoc loc,
                             std::initializer_list<std::string_view> args = {});
  void warn(Diag d, support::SourceLoc loc, std::initializer_list<std::string_view> args,
            std::string suggestion);
  /// "'foo'", "identifier 'x'", "end of file", ... for messages.
  std::string describe(const Token& t) const;
  std::string describeCur() const { return describe(tok()); }
  /// Consumes `closer` or reports `d` with a note pointing at `opener`.
  bool expectCloser(TK closer, Diag d, std::string_view context, const Token& opener);
  /// Consumes `k` or reports ExpectedToken.
  bool expect(TK k, std::string_view context);
  void synchronize(bool topLevel = false);
  bool bail() const { return abort_ || (speculating_ > 0 && specFailed_); }
  bool startsStatementKeyword(const Token& t) const;
  void addNote(support::Diagnostic* d, const Token& at, std::string msg) const;

  /// Reports NestingTooDeep once and stops parsing (fails a speculation).
  void tooDeep();
  /// Counts one more link of a left-nested chain parsed by a loop (`A | B | ...`,
  /// `T[][]...`): later passes recurse on it, so it is limited like nesting.
  bool chainTooLong(unsigned& links);

  struct DepthGuard {
    Parser& p;
    bool ok;
    explicit DepthGuard(Parser& parser);
    ~DepthGuard() { --p.depth_; }
  };

  /// Saves and sets whether a bare `>` closes an angle list.
  struct AngleScope {
    Parser& p;
    bool saved;
    AngleScope(Parser& parser, bool inAngle) : p(parser), saved(parser.inAngle_) {
      p.inAngle_ = inAngle;
    }
    ~AngleScope() { p.inAngle_ = saved; }
  };

  // ---- Declarations and statements (ParseDecl.cpp) ----
  Stmt* parseTopDecl();
  Stmt* parseStmt();
  Stmt* parseModuleDecl();
  Stmt* parseImportDecl();
  Stmt* parseExportDecl();
  Stmt* parseDataDecl();
  Stmt* parseFuncDecl();
  Stmt* parseTypeDecl();
  Stmt* parseUseDecl();
  Stmt* parseReturnStmt();
  Stmt* parseBlockStmt();
  Stmt* parseExprStmt();
  bool parseModulePath(ModulePath& path);
  void parseBracedIdents(std::vector<Ident>& out, std::string_view what);
  /// Parses a binding/declaration name; reports keywords, `_` and others.
  bool parseName(Ident& out, std::string_view what);
  /// Parses `[var] name: T [= e], ...` up to `closer` (which it consumes).
  void parseParamList(std::vector<Param>& out, TK closer, const Token& opener);
  uint8_t parseModifiers();
  /// `[sync] { stmts }`.
  BlockExpr* parseBlock(std::string_view context);
  void parseStmtList(BlockExpr* block);

  // ---- Expressions (ParseExpr.cpp) ----
  Expr* parseExpr();  ///< data-expr
  Expr* parseAssign();
  Expr* parseBinary(int minPrec);
  Expr* parseNullable();
  Expr* parseUnary();
  Expr* parseLink();
  Expr* parseComp();
  Expr* parsePostfix();
  Expr* parsePrimary();
  Expr* parseParenOrTuple();
  Expr* parseArrayLiteral();
  Expr* parseStructLiteral();
  Expr* parseLambda();
  Expr* parseIf();
  Expr* parseMatch();
  Expr* parseTry();
  Expr* parseNumber(bool negate, size_t start);
  Expr* parseStringLiteral();
  /// block-expr: a block where one may start (4.7), else an expression.
  Expr* parseBlockExpr();
  NameExpr* parseIdentRef();
  /// Arguments up to `closer` (consumed): positional, `...e`, `name: e`.
  void parseArgs(std::vector<Argument>& out, TK closer, const Token& opener,
                 std::string_view context);
  /// Speculatively checks that an adjacent `<` starts a with-argument list.
  bool withArgsFollow();
  void reportMissingSeparator(TK closer, std::string_view context, const Token& opener);
  bool looksLikeStruct() const;
  bool looksLikeLambda() const;
  bool signFoldsHere() const;
  bool canStartOperand(const Token& t) const;
  /// In a with-argument list: whether the current `>`/`>=` is a comparison.
  bool greaterIsComparison() const;
  Expr* errorExpr();

  // ---- Types and patterns (ParseType.cpp) ----
  /// `exprCtx` after `as`/`is`: no `+ - ^` type operators, `<` must be adjacent.
  TypeExpr* parseType(bool exprCtx = false);
  TypeExpr* parseTypeLevel(int level, bool exprCtx);
  TypeExpr* parseTypeUnit(bool exprCtx);
  TypeExpr* parsePrimaryType(bool exprCtx);
  TypeExpr* parseFuncType();
  TypeExpr* parseStructType();
  TypeExpr* parseParenType();
  bool looksLikeFuncTypeParams() const;
  Pattern* parsePattern();

  // ---- State ----
  std::vector<Token> toks_;
  const std::string* file_;
  ASTContext& ctx_;
  support::DiagnosticEngine& diags_;
  ParseOptions opts_;
  size_t pos_ = 0;
  unsigned depth_ = 0;
  unsigned errors_ = 0;
  bool panic_ = false;
  bool abort_ = false;
  bool inAngle_ = false;
  unsigned speculating_ = 0;
  bool specFailed_ = false;
  /// Tokens consumed while speculating, and the limit (Note [Speculation budget]).
  size_t specWork_ = 0, specBudget_ = 0;
  /// `>=` tokens split into `>` `=`: (index, original token), undone on rewind.
  std::vector<std::pair<size_t, Token>> splits_;
  /// Token indices of `<` where a with-argument list was ruled out.
  std::unordered_set<size_t> notWithArgs_;
};

}  // namespace xacc::camel
