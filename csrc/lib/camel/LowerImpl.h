// The lowering of analysed Camel programs to GIR (Lower*.cpp), following
// docs/camel-lowering.md. Expressions are typed while they are lowered: each
// lowered expression is a GIR value whose type is its Camel type. One Ctx is
// the graph being built (a function, lambda, arm region or global
// initializer): its environment maps bindings to their current SSA value (a
// cell's value is the cell) and `tok` is the current effect token (null in
// graphs without effects). See Note [Block functions] in SemaImpl.h.
#pragma once

#include <functional>
#include <unordered_set>

#include "SemaImpl.h"
#include "xacc/ir/Builder.h"

namespace xacc::camel::sema {

/// A lowered expression: its value (null after an error) and Camel type.
struct LV {
  ir::Value* v = nullptr;
  ir::Type t;
  explicit operator bool() const { return v != nullptr; }
};

struct Ctx {
  FuncInfo* fn = nullptr;
  ir::Graph* g = nullptr;
  ir::Value* tok = nullptr;
  std::unordered_map<Binding*, ir::Value*> env;
};

/// An argument of a call: an expression to lower or an already lowered value.
struct ArgIn {
  Expr* e = nullptr;
  LV v;
  SourceRange range;
};

/// Registers the front end's runtime helpers (LowerBuiltins.cpp); idempotent.
void registerFrontendBuiltins();

class Lowerer {
public:
  Lowerer(Program& p, support::DiagnosticEngine& d, ir::Module& m);
  /// Lowers every function of every unit; fills the main entry.
  bool run(CompiledProgram& out);

  // ---- Functions and globals (Lower.cpp)
  bool lowerFunction(FuncInfo* f);
  std::string graphNameFor(FuncInfo* f);
  std::string uniqueName(std::string base);
  LV funcValue(FuncInfo* f, const SourceRange& at);
  LV readBinding(Binding* b, const SourceRange& at);
  bool lowerGlobal(Binding* b);
  bool lowerEffectfulGlobal(Binding* b);
  /// Compile-time macro expansion (LowerMacro.cpp); returns the calls replaced.
  size_t expandMacros();
  /// Expands `grad<f>(...)` calls on known functions (Note [Camel grad]); false after an error.
  bool expandGrads();
  LV decoratedValue(FuncInfo* f, const SourceRange& at);
  /// Applies f's decorators (bottom-up) to `raw`, checking each result type.
  LV applyDecorators(FuncInfo* f, LV raw);
  /// Lowers a decorated nested function's declaration: binds its hidden local.
  void lowerNestedDecorated(FuncInfo* f);
  ir::Value* captureValue(Binding* b, const SourceRange& at);
  ir::Graph* helperGraph(const std::string& kind, const std::vector<ir::Type>& params,
                         const std::vector<ir::Type>& results);

  // ---- Statements and control (LowerControl.cpp)
  struct BlockResult {
    LV value;
    bool returned = false;
  };
  BlockResult lowerStmts(const std::vector<Stmt*>& stmts);
  LV lowerBody(Expr* body);
  /// The body of an outer functor: one call of the builtin its scheme's
  /// executor resolves the URI to (LowerOuter.cpp).
  LV lowerOuter(FuncInfo* f);
  LV lowerInner(FuncInfo* f);
  void lowerDataDecl(DataDecl* d);
  LV lowerIf(IfExpr* e);
  LV lowerMatch(MatchExpr* e);
  LV joinIf(LV cond, std::unique_ptr<ir::Graph> thenG, LV thenV, std::unique_ptr<ir::Graph> elseG,
            LV elseV, const std::vector<ir::Value*>& extra, const std::vector<Binding*>& caps,
            const SourceRange& at, const char* what);
  /// Builds an arm region: params (token, then `caps`), lowers `body`.
  std::unique_ptr<ir::Graph> buildRegion(const char* label, Expr* body,
                                         const std::vector<ir::Value*>& extra,
                                         const std::vector<Binding*>& caps, LV& value,
                                         const std::function<LV()>& custom = nullptr);

  // ---- Expressions (LowerExpr.cpp)
  LV expr(Expr* e, ir::Type expected = {});
  LV binary(BinaryExpr* e);
  /// `v` as type `to` when the two are equal up to struct field order.
  LV coerce(LV v, ir::Type to, const SourceRange& at);
  LV arith(BinaryOp op, LV a, LV b, const SourceRange& at, const char* spelling);
  LV unary(UnaryExpr* e);
  LV assign(AssignExpr* e);
  void storeTo(Binding* b, LV v, const SourceRange& at);
  LV lambda(LambdaExpr* e);
  LV compose(BinaryExpr* e);
  LV castExpr(CastExpr* e);
  LV nullConst();

  // ---- Calls (LowerCall.cpp)
  LV call(Expr* callee, const std::vector<Argument>* withArgs, std::vector<ArgIn> args,
          const SourceRange& at);
  LV callUser(Binding* b, NameExpr* name, std::vector<LV>& withs, std::vector<LV>& args,
              std::vector<ArgIn>& argIn, const SourceRange& at);
  LV callBuiltin(Binding* b, NameExpr* name, std::vector<LV>& withs, std::vector<LV>& args,
                 std::vector<ArgIn>& argIn, size_t nWithIn, const SourceRange& at);
  LV applyValue(LV f, std::vector<LV>& withs, std::vector<LV>& args,
                std::vector<ArgIn>& argIn, const SourceRange& at);
  LV pipe(BinaryExpr* e);

  // ---- Tensors (LowerTensor.cpp): operators and functions of module `tensor`
  // become `aten.*` nodes (Note [Op lowering recipes] in Executor.h).
  /// True when `op` applied to `a` and `b` is a tensor operation; `out` is its value.
  bool tensorBinary(BinaryOp op, LV a, LV b, const SourceRange& at, const char* spelling, LV& out);
  /// Lowers a call of builtin `gir` by its recipe; false when there is none or it does not apply.
  bool tensorRecipe(const std::string& gir, const std::string& shown, std::vector<LV>& args,
                    const SourceRange& at, LV& out);
  bool tensorRecipeOne(const std::string& recipe, const std::string& shown, std::vector<LV>& args,
                       const SourceRange& at, LV& out);
  /// One aten node (types from its meta inference); reports E2130 on failure.
  ir::Node* atenNode(const std::string& op, const std::vector<ir::Value*>& operands,
                     ir::AttrDict attrs, const std::string& shown, const std::vector<LV>& args,
                     const SourceRange& at);

  // ---- Node helpers
  ir::Node* node(ir::CoreOp op, const std::vector<ir::Value*>& operands, ir::AttrDict attrs,
                 std::vector<ir::Type> results, const SourceRange& at);
  LV one(ir::CoreOp op, const std::vector<ir::Value*>& operands, const SourceRange& at,
         ir::AttrDict attrs = {}, std::vector<ir::Type> results = {});
  /// Creates an effectful node with the current token prepended; updates the token.
  ir::Node* effect(ir::CoreOp op, std::vector<ir::Value*> operands, ir::AttrDict attrs,
                   std::vector<ir::Type> results, const SourceRange& at);
  void setLoc(const SourceRange& r);
  bool typeError(const SourceRange& at, ir::Type expected, ir::Type found);

  Program& prog_;
  support::DiagnosticEngine& diags_;
  ir::Module& mod_;
  ir::Graph scratch_{"scratch"};
  ir::Builder b_{scratch_};
  Ctx* cx_ = nullptr;
  std::set<std::string> usedNames_;
  std::unordered_map<FuncInfo*, ir::Graph*> wrappers_;
  /// Statement context for warnings: inside a sync block (of the current
  /// block-function), and inside a `wait` expression.
  bool inSync_ = false;
  int waitDepth_ = 0;
  /// W2306: a call that mutates a `var` argument outside sync and wait.
  void checkWaited(const std::string& callee, const SourceRange& at);
  /// W2310: a macro's body calls `callee`, which is not a macro.
  void checkMacroCall(const std::string& callee, const SourceRange& at);
  size_t helperCount_ = 0;
  std::vector<ir::Value*> scratchExtra_;  ///< extra params of the region being built
};

/// Switches the lowerer to another graph context for the lifetime of the object.
class CtxScope {
public:
  CtxScope(Lowerer& l, Ctx& c) : l_(l), saved_(l.cx_), savedGraph_(&l.b_.graph()), loc_(l.b_.loc()) {
    l.cx_ = &c;
    l.b_.setInsertionPoint(*c.g);
  }
  ~CtxScope() {
    l_.cx_ = saved_;
    l_.b_.setInsertionPoint(*savedGraph_);
    l_.b_.setLoc(loc_);
  }

private:
  Lowerer& l_;
  Ctx* saved_;
  ir::Graph* savedGraph_;
  support::SourceLoc loc_;
};

}  // namespace xacc::camel::sema
