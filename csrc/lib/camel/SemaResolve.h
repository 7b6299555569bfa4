// The name resolver of Camel semantic analysis (SemaResolve.cpp). One
// Resolver walks every module unit of a program; `finish` then decides cells
// and effectful functions program-wide. See SemaImpl.h for the data model.
#pragma once

#include <functional>

#include "SemaImpl.h"

namespace xacc::camel::sema {

/// Loads (and analyses) the module an import names; null when it is a
/// standard module or cannot be found (the loader reports the latter).
using UnitLoader = std::function<ModuleUnit*(ImportDecl*, ModuleUnit* from)>;

class Resolver {
public:
  Resolver(Program& p, support::DiagnosticEngine& d, UnitLoader loader);
  void resolveUnit(ModuleUnit& u);
  void finish();

private:
  void pushScope();
  void popScope();
  static FuncInfo* effectOwner(FuncInfo* f);
  bool declare(Binding* b, const SourceRange& r);
  void addCapture(FuncInfo* from, Binding* b);
  void noteUse(Binding* b);
  void noteCall(Expr* callee);
  Binding* lookupBuiltin(const std::string& module, const std::string& name);
  /// The binding an import of builtin `b` gives: `b` itself, or one that also
  /// keeps the global built-in of the same name (Binding::withGlobal).
  Binding* importedBuiltin(Binding* b);
  Binding* lookup(const std::string& name);
  Binding* lookupQualified(const std::vector<std::string>& quals, const std::string& name);
  std::vector<std::string> visibleNames();

  ir::Type resolveType(TypeExpr* t);
  ir::Type resolveTypeImpl(TypeExpr* t);
  void resolveSignature(FuncInfo* f);
  void bindParams(FuncInfo* f);
  void resolveBody(FuncInfo* f, Expr* body);
  FuncInfo* declareFunction(FuncDecl* d, bool topLevel);
  void resolveDecorators(FuncInfo* f);

  void resolveStmts(std::vector<Stmt*>& stmts);
  void resolveStmt(Stmt* s);
  void resolveDataDecl(DataDecl* d, bool global);
  void resolveTypeDecl(TypeDecl* t);
  void resolveArm(Expr* arm);
  void resolveName(NameExpr* n);
  void resolveExpr(Expr* e);
  void resolveImport(ImportDecl* d);

  Program& prog_;
  support::DiagnosticEngine& diags_;
  UnitLoader loader_;
  ModuleUnit* unit_ = nullptr;
  FuncInfo* cur_ = nullptr;
  std::vector<std::map<std::string, Binding*>> scopes_;
  size_t order_ = 0;
  bool inGlobalInit_ = false;
  std::vector<std::pair<FuncInfo*, Binding*>> uses_;
  std::unordered_map<FuncInfo*, std::vector<FuncInfo*>> pendingSelf_;
  static constexpr size_t kMaxExprDepth = 1000;
  size_t exprDepth_ = 0;
  const NameExpr* curName_ = nullptr;  ///< the name being resolved (for capture diagnostics)
  bool depthReported_ = false;
};

}  // namespace xacc::camel::sema
