// The AST dump of `camel inspect --ast`: one node per line, indented two
// spaces per level, `role: Kind attributes <range>`. Roles name the part of
// the parent a child fills (`callee:`, `then:`, `param:`); list elements of
// one role repeat it. Ranges are `<line:col-endcol>` on one line and
// `<line:col-endline:endcol>` otherwise (end exclusive). The format is stable:
// lit tests match it with FileCheck. A tree deeper than kMaxDepth levels (a
// long left-nested chain) is cut there with one "... (deeper levels not
// shown)" line.
#include <fmt/format.h>

#include "xacc/camel/AST.h"
#include "xacc/camel/Token.h"

namespace xacc::camel {

namespace {

std::string rangeStr(const SourceRange& r) {
  if (!r.valid()) return "<?>";
  if (r.endLine == r.line) return fmt::format("<{}:{}-{}>", r.line, r.col, r.endCol);
  return fmt::format("<{}:{}-{}:{}>", r.line, r.col, r.endLine, r.endCol);
}

std::string quoted(std::string_view s) { return "\"" + escapeForDump(s, '"') + "\""; }

const char* implName(ImplMark m) {
  return m == ImplMark::Inner ? "inner" : m == ImplMark::Outer ? "outer" : "";
}

std::string identList(const std::vector<Ident>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ", ";
    out += ids[i].name;
  }
  return out;
}

class Printer {
public:
  std::string out;

  void node(const Node* n, std::string_view role, int depth) {
    if (!n) return;
    // Left-nested operator chains parse without recursion and can be far
    // deeper than any nesting the parser accepts; printing them recurses.
    if (depth > kMaxDepth) {
      if (!clipped_) line(depth, role, "... (deeper levels not shown)", n->range());
      clipped_ = true;
      return;
    }
    line(depth, role, describe(n), n->range());
    children(n, depth + 1);
  }

private:
  /// Deeper than semantic analysis accepts (SemaResolve's kMaxExprDepth).
  static constexpr int kMaxDepth = 1200;
  bool clipped_ = false;

  void line(int depth, std::string_view role, const std::string& text, const SourceRange& r) {
    out.append(size_t(depth) * 2, ' ');
    if (!role.empty()) {
      out += role;
      out += ": ";
    }
    out += text;
    out += ' ';
    out += rangeStr(r);
    out += '\n';
  }

  void sig(const FunctionSig& s, int depth) {
    for (const Param& p : s.withParams) param(p, "with-param", depth);
    for (const Param& p : s.params) param(p, "param", depth);
    node(s.result, "result", depth);
  }

  void param(const Param& p, std::string_view role, int depth) {
    line(depth, role, std::string("Param ") + (p.isVar ? "var " : "") + p.name.name, p.range);
    node(p.type, "type", depth + 1);
    node(p.defaultValue, "default", depth + 1);
  }

  void args(const std::vector<Argument>& as, std::string_view role, int depth) {
    for (const Argument& a : as) {
      if (a.spread)
        node(a.value, "spread", depth);
      else if (!a.name.empty())
        node(a.value, std::string(role) + " " + a.name.name, depth);
      else
        node(a.value, role, depth);
    }
  }

  void fields(const std::vector<FieldInit>& fs, int depth) {
    for (const FieldInit& f : fs) {
      if (f.spread)
        node(f.value, "spread", depth);
      else if (f.value)
        node(f.value, "field " + f.name.name, depth);
      else
        line(depth, "", "Shorthand " + f.name.name, f.range);
    }
  }

  static std::string describe(const Node* n) {
    std::string k = nodeKindName(n->kind());
    switch (n->kind()) {
      case NodeKind::ModuleDecl: return k + " " + cast<ModuleDecl>(n)->name.name;
      case NodeKind::ImportDecl: {
        auto* d = cast<ImportDecl>(n);
        std::string from = d->path.str();
        switch (d->form) {
          case ImportDecl::Form::Module: return k + " module " + from;
          case ImportDecl::Form::Names: return k + " {" + identList(d->names) + "} from " + from;
          case ImportDecl::Form::Alias: return k + " " + d->alias.name + " from " + from;
        }
        return k;
      }
      case NodeKind::ExportDecl: {
        auto* d = cast<ExportDecl>(n);
        return d->decl ? k : k + " {" + identList(d->names) + "}";
      }
      case NodeKind::DataDecl: {
        auto* d = cast<DataDecl>(n);
        const char* carrier[] = {"", "tuple ", "struct ", "array "};
        return k + (d->isVar ? " var " : " let ") + carrier[int(d->carrier)] + identList(d->names);
      }
      case NodeKind::FuncDecl: {
        auto* f = cast<FuncDecl>(n);
        std::string s = k + " " + f->name.name;
        if (f->isExport) s += " export";
        if (f->impl != ImplMark::None) s += std::string(" ") + implName(f->impl);
        if (f->sig.modifiers) s += " [" + modifierString(f->sig.modifiers) + "]";
        if (f->sig.hasWithParams) s += " with";
        return s;
      }
      case NodeKind::TypeDecl: {
        auto* t = cast<TypeDecl>(n);
        std::string s = k + " " + t->name.name;
        if (t->impl != ImplMark::None) s += std::string(" ") + implName(t->impl);
        if (!t->type) s += " uri=" + quoted(t->uri);
        return s;
      }
      case NodeKind::UseDecl: {
        auto* u = cast<UseDecl>(n);
        return u->alias.empty() ? k : k + " " + u->alias.name + " =";
      }
      case NodeKind::ReturnStmt: {
        const char* forms[] = {"return", "raise", "throw"};
        return k + " " + forms[int(cast<ReturnStmt>(n)->form)];
      }
      case NodeKind::BlockStmt: return cast<BlockStmt>(n)->isWait ? k + " wait" : k;
      case NodeKind::IntLiteral: return k + " " + std::to_string(cast<IntLiteral>(n)->value);
      case NodeKind::RealLiteral: return k + " " + formatReal(cast<RealLiteral>(n)->value);
      case NodeKind::StringLiteral: {
        auto* s = cast<StringLiteral>(n);
        const char* forms[] = {"", "multi ", "format "};
        return k + " " + forms[int(s->form)] + quoted(s->value);
      }
      case NodeKind::BoolLiteral: return k + (cast<BoolLiteral>(n)->value ? " true" : " false");
      case NodeKind::Name: return k + " " + cast<NameExpr>(n)->fullName();
      case NodeKind::Unary: return k + " " + unaryOpSpelling(cast<UnaryExpr>(n)->op);
      case NodeKind::Binary: return k + " " + binaryOpSpelling(cast<BinaryExpr>(n)->op);
      case NodeKind::Assign: return k + " " + assignOpSpelling(cast<AssignExpr>(n)->op);
      case NodeKind::Cast: return k + (cast<CastExpr>(n)->isTest ? " is" : " as");
      case NodeKind::Index: return cast<IndexExpr>(n)->isSlice() ? k + " slice" : k;
      case NodeKind::Member: return k + " ." + cast<MemberExpr>(n)->member.name;
      case NodeKind::Lambda: {
        auto* l = cast<LambdaExpr>(n);
        std::string s = k;
        if (l->sig.modifiers) s += " [" + modifierString(l->sig.modifiers) + "]";
        if (l->sig.hasWithParams) s += " with";
        return s;
      }
      case NodeKind::Block: return cast<BlockExpr>(n)->isSync ? k + " sync" : k;
      case NodeKind::NamedType: return k + " " + cast<NamedType>(n)->fullName();
      case NodeKind::FuncType: {
        auto* f = cast<FuncType>(n);
        std::string s = k;
        if (f->sig.modifiers) s += " [" + modifierString(f->sig.modifiers) + "]";
        if (f->sig.hasWithParams) s += " with";
        return s;
      }
      case NodeKind::BinaryType: return k + " " + typeOpSpelling(cast<BinaryType>(n)->op);
      case NodeKind::TypeasType: return k + " " + cast<TypeasType>(n)->name.name;
      case NodeKind::OfType: return k + " " + cast<OfType>(n)->name.name;
      default: return k;
    }
  }

  void children(const Node* n, int d) {
    switch (n->kind()) {
      case NodeKind::FuncDecl: {
        auto* f = cast<FuncDecl>(n);
        for (const Decorator& dec : f->decorators) {
          line(d, "decorator", "Decorator " + (dec.name ? dec.name->fullName() : std::string()),
               dec.range);
          args(dec.args, "arg", d + 1);
        }
        sig(f->sig, d);
        node(f->body, "body", d);
        return;
      }
      case NodeKind::DataDecl: {
        auto* dd = cast<DataDecl>(n);
        for (TypeExpr* t : dd->types) node(t, "type", d);
        for (Expr* e : dd->values) node(e, "value", d);
        return;
      }
      case NodeKind::TypeDecl: node(cast<TypeDecl>(n)->type, "type", d); return;
      case NodeKind::UseDecl: node(cast<UseDecl>(n)->target, "target", d); return;
      case NodeKind::Assign: {
        auto* a = cast<AssignExpr>(n);
        node(a->target, "target", d);
        node(a->value, "value", d);
        return;
      }
      case NodeKind::Cast: {
        auto* c = cast<CastExpr>(n);
        node(c->operand, "", d);
        node(c->type, "type", d);
        return;
      }
      case NodeKind::Call: {
        auto* c = cast<CallExpr>(n);
        node(c->callee, "callee", d);
        args(c->args, "arg", d);
        return;
      }
      case NodeKind::With: {
        auto* w = cast<WithExpr>(n);
        node(w->callee, "callee", d);
        args(w->args, "with", d);
        return;
      }
      case NodeKind::Index: {
        auto* i = cast<IndexExpr>(n);
        node(i->base, "base", d);
        node(i->index, "index", d);
        node(i->end, "end", d);
        node(i->step, "step", d);
        return;
      }
      case NodeKind::Array: args(cast<ArrayExpr>(n)->elements, "", d); return;
      case NodeKind::Comprehension: {
        auto* c = cast<ComprehensionExpr>(n);
        node(c->element, "element", d);
        node(c->var, "var", d);
        node(c->iterable, "in", d);
        node(c->condition, "if", d);
        return;
      }
      case NodeKind::Struct: fields(cast<StructExpr>(n)->fields, d); return;
      case NodeKind::Lambda: {
        auto* l = cast<LambdaExpr>(n);
        sig(l->sig, d);
        node(l->body, "body", d);
        return;
      }
      case NodeKind::If: {
        auto* i = cast<IfExpr>(n);
        node(i->cond, "cond", d);
        node(i->thenArm, "then", d);
        node(i->elseArm, "else", d);
        return;
      }
      case NodeKind::Match: {
        auto* m = cast<MatchExpr>(n);
        node(m->subject, "subject", d);
        for (const MatchCase& c : m->cases) {
          line(d, "", "Case", c.range);
          for (Pattern* p : c.patterns) node(p, "pattern", d + 1);
          node(c.body, "body", d + 1);
        }
        return;
      }
      case NodeKind::Try: {
        auto* t = cast<TryExpr>(n);
        node(t->body, "body", d);
        for (const CatchClause& c : t->catches) {
          line(d, "", "Catch " + c.name.name, c.range);
          node(c.type, "type", d + 1);
          node(c.body, "body", d + 1);
        }
        node(t->finallyBlock, "finally", d);
        return;
      }
      case NodeKind::SpecializedType: {
        auto* s = cast<SpecializedType>(n);
        node(s->base, "base", d);
        for (const TypeArg& a : s->args) {
          node(a.type, "arg", d);
          node(a.constValue, "const", d);
        }
        return;
      }
      case NodeKind::StructType:
        for (const FieldType& f : cast<StructType>(n)->fields) node(f.type, "field " + f.name.name, d);
        return;
      case NodeKind::FuncType: sig(cast<FuncType>(n)->sig, d); return;
      case NodeKind::NullableType: {
        auto* t = cast<NullableType>(n);
        node(t->base, "", d);
        node(t->alternative, "else", d);
        return;
      }
      case NodeKind::StructPattern: fields(cast<StructPattern>(n)->fields, d); return;
      default:
        // Children without distinguished roles, in source order.
        forEachChild(n, [&](Node* c) { node(c, "", d); });
        return;
    }
  }
};

}  // namespace

std::string dumpAST(const Node* n) {
  Printer p;
  p.node(n, "", 0);
  return p.out;
}

}  // namespace xacc::camel
