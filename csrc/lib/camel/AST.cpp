// AST support: source ranges, kind and operator spellings, small helpers on
// nodes, and forEachChild, the one place that knows every node's children
// (the printer and ASTVisitor build on it).
#include "xacc/camel/AST.h"

namespace xacc::camel {

support::SourceLoc SourceRange::loc() const {
  uint32_t len = 1;
  if (endLine == line && endCol > col) len = endCol - col;
  return support::SourceLoc{file, line, col, len};
}

SourceRange SourceRange::join(const SourceRange& a, const SourceRange& b) {
  SourceRange r = a;
  r.endLine = b.endLine;
  r.endCol = b.endCol;
  r.endOffset = b.endOffset;
  return r;
}

const char* nodeKindName(NodeKind k) {
  switch (k) {
#define NODE(Kind, Class) \
  case NodeKind::Kind: return #Kind;
#include "xacc/camel/ASTNodes.def"
  }
  return "?";
}

std::string modifierString(uint8_t mods) {
  std::string out;
  auto add = [&](uint8_t bit, const char* word) {
    if (!(mods & bit)) return;
    if (!out.empty()) out += ' ';
    out += word;
  };
  add(ModAtomic, "atomic");
  add(ModShared, "shared");
  add(ModSync, "sync");
  add(ModMacro, "macro");
  return out;
}

std::string Module::name() const {
  for (const Stmt* s : decls)
    if (auto* m = dyn_cast<ModuleDecl>(s)) return m->name.name;
  return "";
}

std::string ModulePath::str() const {
  std::string out = prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += parts[i].name;
  }
  return out;
}

static std::string joinQualified(const std::vector<std::string>& qualifiers,
                                 const std::string& name) {
  std::string out;
  for (const std::string& q : qualifiers) out += q + "::";
  return out + name;
}

std::string NameExpr::fullName() const { return joinQualified(qualifiers, name); }
std::string NamedType::fullName() const { return joinQualified(qualifiers, name); }

const char* unaryOpSpelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Not: return "!";
    case UnaryOp::Neg: return "-";
    case UnaryOp::BitNot: return "~";
  }
  return "?";
}

const char* binaryOpSpelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return "||";
    case BinaryOp::And: return "&&";
    case BinaryOp::StrictEq: return "===";
    case BinaryOp::StrictNe: return "!==";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Pow: return "^";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Coalesce: return "??";
    case BinaryOp::ErrorThen: return "!!";
    case BinaryOp::Pipe: return "->";
    case BinaryOp::NullPipe: return "?->";
    case BinaryOp::Compose: return "..";
    case BinaryOp::NullCompose: return "?..";
  }
  return "?";
}

const char* assignOpSpelling(AssignOp op) {
  switch (op) {
    case AssignOp::Assign: return "=";
    case AssignOp::Add: return "+=";
    case AssignOp::Sub: return "-=";
    case AssignOp::Mul: return "*=";
    case AssignOp::Div: return "/=";
    case AssignOp::Mod: return "%=";
    case AssignOp::Pow: return "^=";
    case AssignOp::MatMul: return "@=";
    case AssignOp::And: return "&=";
    case AssignOp::Or: return "|=";
  }
  return "?";
}

const char* typeOpSpelling(TypeOp op) {
  switch (op) {
    case TypeOp::Union: return "|";
    case TypeOp::Inter: return "&";
    case TypeOp::Diff: return "\\";
    case TypeOp::KeyUnion: return "+";
    case TypeOp::KeyDiff: return "-";
    case TypeOp::KeyInter: return "^";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Children

namespace {

using Fn = std::function<void(Node*)>;

void visitMaybe(Node* n, const Fn& fn) {
  if (n) fn(n);
}

void visitSig(const FunctionSig& sig, const Fn& fn) {
  for (const Param& p : sig.withParams) {
    visitMaybe(p.type, fn);
    visitMaybe(p.defaultValue, fn);
  }
  for (const Param& p : sig.params) {
    visitMaybe(p.type, fn);
    visitMaybe(p.defaultValue, fn);
  }
  visitMaybe(sig.result, fn);
}

void visitArgs(const std::vector<Argument>& args, const Fn& fn) {
  for (const Argument& a : args) visitMaybe(a.value, fn);
}

}  // namespace

void forEachChild(const Node* n, const Fn& fn) {
  if (!n) return;
  switch (n->kind()) {
    case NodeKind::Module:
      for (Stmt* s : cast<Module>(n)->decls) visitMaybe(s, fn);
      return;
    case NodeKind::ModuleDecl:
    case NodeKind::ImportDecl: return;
    case NodeKind::ExportDecl: visitMaybe(cast<ExportDecl>(n)->decl, fn); return;
    case NodeKind::DataDecl: {
      auto* d = cast<DataDecl>(n);
      for (TypeExpr* t : d->types) visitMaybe(t, fn);
      for (Expr* e : d->values) visitMaybe(e, fn);
      return;
    }
    case NodeKind::FuncDecl: {
      auto* f = cast<FuncDecl>(n);
      for (const Decorator& d : f->decorators) {
        visitMaybe(d.name, fn);
        visitArgs(d.args, fn);
      }
      visitSig(f->sig, fn);
      visitMaybe(f->body, fn);
      return;
    }
    case NodeKind::TypeDecl: visitMaybe(cast<TypeDecl>(n)->type, fn); return;
    case NodeKind::UseDecl: visitMaybe(cast<UseDecl>(n)->target, fn); return;
    case NodeKind::ReturnStmt:
      for (Expr* e : cast<ReturnStmt>(n)->values) visitMaybe(e, fn);
      return;
    case NodeKind::BlockStmt: visitMaybe(cast<BlockStmt>(n)->block, fn); return;
    case NodeKind::ExprStmt: visitMaybe(cast<ExprStmt>(n)->expr, fn); return;

    case NodeKind::ErrorExpr:
    case NodeKind::IntLiteral:
    case NodeKind::RealLiteral:
    case NodeKind::StringLiteral:
    case NodeKind::BoolLiteral:
    case NodeKind::NullLiteral:
    case NodeKind::Name: return;
    case NodeKind::Unary: visitMaybe(cast<UnaryExpr>(n)->operand, fn); return;
    case NodeKind::Binary: {
      auto* b = cast<BinaryExpr>(n);
      visitMaybe(b->lhs, fn);
      visitMaybe(b->rhs, fn);
      return;
    }
    case NodeKind::Assign: {
      auto* a = cast<AssignExpr>(n);
      visitMaybe(a->target, fn);
      visitMaybe(a->value, fn);
      return;
    }
    case NodeKind::Wait: visitMaybe(cast<WaitExpr>(n)->operand, fn); return;
    case NodeKind::Cast: {
      auto* c = cast<CastExpr>(n);
      visitMaybe(c->operand, fn);
      visitMaybe(c->type, fn);
      return;
    }
    case NodeKind::Call: {
      auto* c = cast<CallExpr>(n);
      visitMaybe(c->callee, fn);
      visitArgs(c->args, fn);
      return;
    }
    case NodeKind::With: {
      auto* w = cast<WithExpr>(n);
      visitMaybe(w->callee, fn);
      visitArgs(w->args, fn);
      return;
    }
    case NodeKind::Index: {
      auto* i = cast<IndexExpr>(n);
      visitMaybe(i->base, fn);
      visitMaybe(i->index, fn);
      visitMaybe(i->end, fn);
      visitMaybe(i->step, fn);
      return;
    }
    case NodeKind::NonNull: visitMaybe(cast<NonNullExpr>(n)->operand, fn); return;
    case NodeKind::Member: visitMaybe(cast<MemberExpr>(n)->base, fn); return;
    case NodeKind::Array: visitArgs(cast<ArrayExpr>(n)->elements, fn); return;
    case NodeKind::Comprehension: {
      auto* c = cast<ComprehensionExpr>(n);
      visitMaybe(c->element, fn);
      visitMaybe(c->var, fn);
      visitMaybe(c->iterable, fn);
      visitMaybe(c->condition, fn);
      return;
    }
    case NodeKind::Struct:
      for (const FieldInit& f : cast<StructExpr>(n)->fields) visitMaybe(f.value, fn);
      return;
    case NodeKind::Tuple:
      for (Expr* e : cast<TupleExpr>(n)->elements) visitMaybe(e, fn);
      return;
    case NodeKind::Lambda: {
      auto* l = cast<LambdaExpr>(n);
      visitSig(l->sig, fn);
      visitMaybe(l->body, fn);
      return;
    }
    case NodeKind::If: {
      auto* i = cast<IfExpr>(n);
      visitMaybe(i->cond, fn);
      visitMaybe(i->thenArm, fn);
      visitMaybe(i->elseArm, fn);
      return;
    }
    case NodeKind::Match: {
      auto* m = cast<MatchExpr>(n);
      visitMaybe(m->subject, fn);
      for (const MatchCase& c : m->cases) {
        for (Pattern* p : c.patterns) visitMaybe(p, fn);
        visitMaybe(c.body, fn);
      }
      return;
    }
    case NodeKind::Try: {
      auto* t = cast<TryExpr>(n);
      visitMaybe(t->body, fn);
      for (const CatchClause& c : t->catches) {
        visitMaybe(c.type, fn);
        visitMaybe(c.body, fn);
      }
      visitMaybe(t->finallyBlock, fn);
      return;
    }
    case NodeKind::Block:
      for (Stmt* s : cast<BlockExpr>(n)->stmts) visitMaybe(s, fn);
      return;

    case NodeKind::ErrorType:
    case NodeKind::NamedType:
    case NodeKind::TypeasType: return;
    case NodeKind::SpecializedType: {
      auto* s = cast<SpecializedType>(n);
      visitMaybe(s->base, fn);
      for (const TypeArg& a : s->args) {
        visitMaybe(a.type, fn);
        visitMaybe(a.constValue, fn);
      }
      return;
    }
    case NodeKind::ArrayType: visitMaybe(cast<ArrayType>(n)->element, fn); return;
    case NodeKind::TupleType:
      for (TypeExpr* t : cast<TupleType>(n)->elements) visitMaybe(t, fn);
      return;
    case NodeKind::StructType:
      for (const FieldType& f : cast<StructType>(n)->fields) visitMaybe(f.type, fn);
      return;
    case NodeKind::FuncType: visitSig(cast<FuncType>(n)->sig, fn); return;
    case NodeKind::NullableType: {
      auto* t = cast<NullableType>(n);
      visitMaybe(t->base, fn);
      visitMaybe(t->alternative, fn);
      return;
    }
    case NodeKind::BinaryType: {
      auto* t = cast<BinaryType>(n);
      visitMaybe(t->lhs, fn);
      visitMaybe(t->rhs, fn);
      return;
    }
    case NodeKind::TypeofType: visitMaybe(cast<TypeofType>(n)->expr, fn); return;
    case NodeKind::OfType: visitMaybe(cast<OfType>(n)->type, fn); return;

    case NodeKind::WildcardPattern: return;
    case NodeKind::LiteralPattern: visitMaybe(cast<LiteralPattern>(n)->value, fn); return;
    case NodeKind::NamePattern: visitMaybe(cast<NamePattern>(n)->name, fn); return;
    case NodeKind::TuplePattern:
      for (Expr* e : cast<TuplePattern>(n)->elements) visitMaybe(e, fn);
      return;
    case NodeKind::StructPattern:
      for (const FieldInit& f : cast<StructPattern>(n)->fields) visitMaybe(f.value, fn);
      return;
  }
}

}  // namespace xacc::camel
