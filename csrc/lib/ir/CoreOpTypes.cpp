// Type rules of the core ops. Each rule sees operand types, attributes and the
// declared result types; it fills the result types or explains the mismatch.
// A null result type means "as declared" (used where the rule needs context the
// node does not carry, e.g. the callee's signature, which the verifier checks).
#include "xacc/ir/Graph.h"

namespace xacc::ir {

namespace {

using Types = std::vector<Type>;

bool sameOperands(const InferInput& in, std::string& err) {
  for (size_t i = 1; i < in.operands.size(); ++i)
    if (!typeCompatible(in.operands[0], in.operands[i])) {
      err = "operand types differ: " + in.operands[0].str() + " and " + in.operands[i].str();
      return false;
    }
  return true;
}

bool needKind(Type t, std::initializer_list<TypeKind> kinds, const char* what, std::string& err) {
  if (t.isAny()) return true;
  for (TypeKind k : kinds)
    if (t.kind() == k) return true;
  err = std::string("expected ") + what + ", got " + t.str();
  return false;
}

Type declaredOr(const InferInput& in, size_t i) {
  return in.declared && i < in.declared->size() ? (*in.declared)[i] : Type();
}

bool inferArith(CoreOp op, const InferInput& in, Types& out, std::string& err) {
  if (!sameOperands(in, err)) return false;
  Type t = in.operands[0];
  bool allowSeq = op == CoreOp::Add;  // concatenation of strings and lists
  bool intsOnly = op == CoreOp::BitAnd || op == CoreOp::BitOr || op == CoreOp::BitXor ||
                  op == CoreOp::BitNot || op == CoreOp::Shl || op == CoreOp::Shr;
  if (intsOnly) {
    if (!needKind(t, {TypeKind::Int, TypeKind::Bool}, "an integer", err)) return false;
  } else if (allowSeq) {
    if (!needKind(t, {TypeKind::Int, TypeKind::Float, TypeKind::Str, TypeKind::List},
                  "a number, str or list", err))
      return false;
  } else if (!needKind(t, {TypeKind::Int, TypeKind::Float}, "a number", err)) {
    return false;
  }
  out = {t};
  return true;
}

bool inferCore(CoreOp op, const InferInput& in, Types& out, std::string& err) {
  const Types& o = in.operands;
  switch (op) {
    case CoreOp::Const: {
      const Attr* v = in.attrs.get("value");
      if (!v) {
        err = "missing attribute 'value'";
        return false;
      }
      Type d = declaredOr(in, 0);
      switch (v->kind()) {
        case Attr::Kind::Int:
          if (d && (d.isInt() || d.isFloat() || d.kind() == TypeKind::Bool)) out = {d};
          else out = {Type::i64()};
          return true;
        case Attr::Kind::Float:
          out = {d && d.isFloat() ? d : Type::f64()};
          return true;
        case Attr::Kind::Bool: out = {Type::boolean()}; return true;
        case Attr::Kind::Str: out = {Type::string()}; return true;
        case Attr::Kind::None: out = {Type::null()}; return true;
        case Attr::Kind::Array:
          // Constant lists/tuples: accept the declared aggregate type.
          if (d && (d.kind() == TypeKind::List || d.kind() == TypeKind::Tuple)) {
            out = {d};
            return true;
          }
          err = "array constant needs a list or tuple result type";
          return false;
        default:
          err = "unsupported constant attribute " + v->str();
          return false;
      }
    }
    case CoreOp::Cast: {
      Type d = declaredOr(in, 0);
      if (!d || !(d.isInt() || d.isFloat() || d.kind() == TypeKind::Bool)) {
        err = "arith.cast converts between numeric and bool types";
        return false;
      }
      if (!needKind(o[0], {TypeKind::Int, TypeKind::Float, TypeKind::Bool}, "a number or bool", err))
        return false;
      out = {d};
      return true;
    }
    case CoreOp::Add: case CoreOp::Sub: case CoreOp::Mul: case CoreOp::Div:
    case CoreOp::FloorDiv: case CoreOp::Rem: case CoreOp::Mod: case CoreOp::Pow:
    case CoreOp::Neg: case CoreOp::Abs: case CoreOp::Min: case CoreOp::Max:
    case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::BitXor: case CoreOp::BitNot:
    case CoreOp::Shl: case CoreOp::Shr:
      return inferArith(op, in, out, err);
    case CoreOp::Eq: case CoreOp::Ne:
      if (!sameOperands(in, err)) return false;
      out = {Type::boolean()};
      return true;
    case CoreOp::Lt: case CoreOp::Le: case CoreOp::Gt: case CoreOp::Ge:
      if (!sameOperands(in, err)) return false;
      if (!needKind(o[0], {TypeKind::Int, TypeKind::Float, TypeKind::Str, TypeKind::Bool},
                    "an ordered type", err))
        return false;
      out = {Type::boolean()};
      return true;
    case CoreOp::And: case CoreOp::Or: case CoreOp::Not:
      for (Type t : o)
        if (!needKind(t, {TypeKind::Bool}, "bool", err)) return false;
      out = {Type::boolean()};
      return true;
    case CoreOp::Select:
      if (!needKind(o[0], {TypeKind::Bool}, "bool condition", err)) return false;
      if (!typeCompatible(o[1], o[2])) {
        err = "select arms differ: " + o[1].str() + " and " + o[2].str();
        return false;
      }
      out = {o[1]};
      return true;
    case CoreOp::StrLen:
      if (!needKind(o[0], {TypeKind::Str}, "str", err)) return false;
      out = {Type::i64()};
      return true;
    case CoreOp::StrFrom: out = {Type::string()}; return true;
    case CoreOp::StrSlice:
      if (!needKind(o[0], {TypeKind::Str}, "str", err) ||
          !needKind(o[1], {TypeKind::Int}, "i64 bound", err) ||
          !needKind(o[2], {TypeKind::Int}, "i64 bound", err))
        return false;
      out = {Type::string()};
      return true;
    case CoreOp::ListMake: {
      if (o.empty()) {
        Type d = declaredOr(in, 0);
        if (!d || d.kind() != TypeKind::List) {
          err = "empty list.make needs a list result type";
          return false;
        }
        out = {d};
        return true;
      }
      if (!sameOperands(in, err)) return false;
      out = {Type::list(o[0])};
      return true;
    }
    case CoreOp::ListGet:
      if (!needKind(o[0], {TypeKind::List}, "list", err) ||
          !needKind(o[1], {TypeKind::Int}, "i64 index", err))
        return false;
      out = {o[0].isAny() ? Type::any() : o[0].elementType()};
      return true;
    case CoreOp::ListLen:
      if (!needKind(o[0], {TypeKind::List}, "list", err)) return false;
      out = {Type::i64()};
      return true;
    case CoreOp::ListSlice:
      if (!needKind(o[0], {TypeKind::List}, "list", err) ||
          !needKind(o[1], {TypeKind::Int}, "i64 bound", err) ||
          !needKind(o[2], {TypeKind::Int}, "i64 bound", err))
        return false;
      out = {o[0]};
      return true;
    case CoreOp::ListRange:
      for (Type t : o)
        if (!needKind(t, {TypeKind::Int}, "i64", err)) return false;
      out = {Type::list(Type::i64())};
      return true;
    case CoreOp::ListSet:
      if (!needKind(o[1], {TypeKind::List}, "list", err) ||
          !needKind(o[2], {TypeKind::Int}, "i64 index", err))
        return false;
      if (!o[1].isAny() && !typeCompatible(o[1].elementType(), o[3])) {
        err = "stored value " + o[3].str() + " does not match " + o[1].str();
        return false;
      }
      out = {Type::token(), o[1]};
      return true;
    case CoreOp::ListAppend:
      if (!needKind(o[1], {TypeKind::List}, "list", err)) return false;
      if (!o[1].isAny() && !typeCompatible(o[1].elementType(), o[2])) {
        err = "appended value " + o[2].str() + " does not match " + o[1].str();
        return false;
      }
      out = {Type::token(), o[1]};
      return true;
    case CoreOp::ListLoad:
      if (!needKind(o[1], {TypeKind::List}, "list", err) ||
          !needKind(o[2], {TypeKind::Int}, "i64 index", err))
        return false;
      out = {Type::token(), o[1].isAny() ? Type::any() : o[1].elementType()};
      return true;
    case CoreOp::ListPop:
      if (!needKind(o[1], {TypeKind::List}, "list", err)) return false;
      out = {Type::token(), o[1], o[1].isAny() ? Type::any() : o[1].elementType()};
      return true;
    case CoreOp::TupleMake: out = {Type::tuple(o)}; return true;
    case CoreOp::TupleGet: {
      const Attr* idx = in.attrs.get("index");
      if (!idx || idx->kind() != Attr::Kind::Int) {
        err = "missing integer attribute 'index'";
        return false;
      }
      if (o[0].isAny()) { out = {Type::any()}; return true; }
      if (!needKind(o[0], {TypeKind::Tuple}, "tuple", err)) return false;
      int64_t i = idx->getInt();
      if (i < 0 || size_t(i) >= o[0].elements().size()) {
        err = "tuple index " + std::to_string(i) + " out of range for " + o[0].str();
        return false;
      }
      out = {o[0].elements()[size_t(i)]};
      return true;
    }
    case CoreOp::StructMake: {
      Type d = declaredOr(in, 0);
      if (!d || d.kind() != TypeKind::Struct || d.elements().size() != o.size()) {
        err = "struct.make needs a struct result type with one field per operand";
        return false;
      }
      for (size_t i = 0; i < o.size(); ++i)
        if (!typeCompatible(d.elements()[i], o[i])) {
          err = "field '" + d.fieldNames()[i] + "' has type " + d.elements()[i].str() +
                " but the operand is " + o[i].str();
          return false;
        }
      out = {d};
      return true;
    }
    case CoreOp::StructGet: {
      const Attr* f = in.attrs.get("field");
      if (!f || f->kind() != Attr::Kind::Str) {
        err = "missing string attribute 'field'";
        return false;
      }
      if (o[0].isAny()) { out = {Type::any()}; return true; }
      if (!needKind(o[0], {TypeKind::Struct}, "struct", err)) return false;
      int i = o[0].fieldIndex(f->getStr());
      if (i < 0) {
        err = "no field '" + f->getStr() + "' in " + o[0].str();
        return false;
      }
      out = {o[0].elements()[size_t(i)]};
      return true;
    }
    case CoreOp::Apply: {
      if (o[0].isAny()) return true;  // results as declared
      if (!needKind(o[0], {TypeKind::Func}, "a function", err)) return false;
      const Types& params = o[0].elements();
      if (params.size() != o.size() - 1) {
        err = "function takes " + std::to_string(params.size()) + " arguments, " +
              std::to_string(o.size() - 1) + " given";
        return false;
      }
      for (size_t i = 0; i < params.size(); ++i)
        if (!typeCompatible(params[i], o[i + 1])) {
          err = "argument " + std::to_string(i) + " is " + o[i + 1].str() + ", expected " +
                params[i].str();
          return false;
        }
      out = o[0].funcResults();
      return true;
    }
    case CoreOp::Print:
      if (!needKind(o[0], {TypeKind::Token}, "!token", err)) return false;
      out = {Type::token()};
      return true;
    case CoreOp::Assert:
      if (!needKind(o[1], {TypeKind::Bool}, "bool", err)) return false;
      out = {Type::token()};
      return true;
    case CoreOp::Join:
      for (Type t : o)
        if (!needKind(t, {TypeKind::Token}, "!token", err)) return false;
      out = {Type::token()};
      return true;
    // Checked by the verifier against callee graphs and regions.
    case CoreOp::Call: case CoreOp::FuncRef: case CoreOp::If: case CoreOp::Loop: case CoreOp::Once:
    case CoreOp::Builtin: case CoreOp::BuiltinEffect:
    case CoreOp::NumCoreOps:
      return true;
  }
  return true;
}

}  // namespace

void installCoreInfer(OpInfo& info) {
  CoreOp op = CoreOp(info.coreId);
  info.infer = [op](const InferInput& in, Types& out, std::string& err) {
    return inferCore(op, in, out, err);
  };
}

}  // namespace xacc::ir
