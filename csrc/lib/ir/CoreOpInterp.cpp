// Execution rules of the core ops for the reference interpreter. Integer
// arithmetic wraps (two's complement) instead of invoking undefined behaviour;
// division or remainder by zero is a located runtime error.
#include <cmath>
#include <cstring>

#include "xacc/ir/Interpreter.h"
#include "xacc/ir/List.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

namespace {

using Datums = std::vector<Datum>;

int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Narrows an integer result to the node's declared width (i32 wraps).
Datum intResult(const Node& n, int64_t v) {
  if (n.result(0)->type().isInt() && n.result(0)->type().bitWidth() == 32) v = int32_t(v);
  return Datum::integer(v);
}
Datum floatResult(const Node& n, double v) {
  if (n.result(0)->type().isFloat() && n.result(0)->type().bitWidth() == 32) v = float(v);
  return Datum::real(v);
}

bool arith(CoreOp op, Interpreter& I, const Node& n, Datums& a, Datums& r) {
  const Datum& x = a[0];
  if (x.kind() == DKind::Int || x.kind() == DKind::Bool) {
    int64_t p = x.kind() == DKind::Bool ? x.asBool() : x.asInt();
    int64_t q = 0;
    if (a.size() > 1) q = a[1].kind() == DKind::Bool ? a[1].asBool() : a[1].asInt();
    int64_t v = 0;
    switch (op) {
      case CoreOp::Add: v = wrapAdd(p, q); break;
      case CoreOp::Sub: v = wrapSub(p, q); break;
      case CoreOp::Mul: v = wrapMul(p, q); break;
      case CoreOp::Div: case CoreOp::FloorDiv: case CoreOp::Rem: case CoreOp::Mod:
        if (q == 0)
          return I.fail(n, coreCode(CoreDiag::IntegerDivisionByZero), "integer division by zero");
        if (p == INT64_MIN && q == -1) {  // the one overflowing quotient
          v = (op == CoreOp::Div || op == CoreOp::FloorDiv) ? INT64_MIN : 0;
          break;
        }
        v = op == CoreOp::Div ? p / q : op == CoreOp::FloorDiv ? floorDiv(p, q)
            : op == CoreOp::Rem ? p % q : floorMod(p, q);
        break;
      case CoreOp::Pow: {
        if (q < 0)
          return I.fail(n, coreCode(CoreDiag::NegativeIntegerExponent),
                        "negative exponent in integer power");
        int64_t base = p, res = 1;
        for (int64_t e = q; e > 0; e >>= 1) {
          if (e & 1) res = wrapMul(res, base);
          base = wrapMul(base, base);
        }
        v = res;
        break;
      }
      case CoreOp::Neg: v = wrapSub(0, p); break;
      case CoreOp::Abs: v = p < 0 ? wrapSub(0, p) : p; break;
      case CoreOp::Min: v = std::min(p, q); break;
      case CoreOp::Max: v = std::max(p, q); break;
      case CoreOp::BitAnd: v = p & q; break;
      case CoreOp::BitOr: v = p | q; break;
      case CoreOp::BitXor: v = p ^ q; break;
      case CoreOp::BitNot: v = ~p; break;
      case CoreOp::Shl: v = (q < 0 || q > 63) ? 0 : int64_t(uint64_t(p) << q); break;
      case CoreOp::Shr: v = (q < 0 || q > 63) ? (p < 0 ? -1 : 0) : (p >> q); break;
      default:
        return I.fail(n, coreCode(CoreDiag::BadOperation), "bad integer operation");
    }
    if (x.kind() == DKind::Bool && (op == CoreOp::BitAnd || op == CoreOp::BitOr ||
                                    op == CoreOp::BitXor))
      r.push_back(Datum::boolean(v != 0));
    else
      r.push_back(intResult(n, v));
    return true;
  }
  if (x.kind() == DKind::Float) {
    double p = x.asFloat(), q = a.size() > 1 ? a[1].asFloat() : 0.0, v = 0;
    switch (op) {
      case CoreOp::Add: v = p + q; break;
      case CoreOp::Sub: v = p - q; break;
      case CoreOp::Mul: v = p * q; break;
      case CoreOp::Div: v = p / q; break;  // IEEE: inf/nan, like the tensor ops
      case CoreOp::FloorDiv: v = std::floor(p / q); break;
      case CoreOp::Rem: v = std::fmod(p, q); break;
      case CoreOp::Mod: {
        v = std::fmod(p, q);
        if (v != 0 && ((v < 0) != (q < 0))) v += q;
        break;
      }
      case CoreOp::Pow: v = std::pow(p, q); break;
      case CoreOp::Neg: v = -p; break;
      case CoreOp::Abs: v = std::fabs(p); break;
      case CoreOp::Min: v = std::fmin(p, q); break;
      case CoreOp::Max: v = std::fmax(p, q); break;
      default:
        return I.fail(n, coreCode(CoreDiag::BadOperation), "operation not defined on floats");
    }
    r.push_back(floatResult(n, v));
    return true;
  }
  if (op == CoreOp::Add && x.kind() == DKind::Str) {
    r.push_back(Datum::string(x.asStr() + a[1].asStr()));
    return true;
  }
  if (op == CoreOp::Add && x.kind() == DKind::List) {
    r.push_back(listConcat(x, a[1]));
    return true;
  }
  return I.fail(n, coreCode(CoreDiag::BadOperation),
                "operands of " + n.opName() + " have unsupported runtime kinds");
}

int compareDatums(const Datum& a, const Datum& b) {
  switch (a.kind()) {
    case DKind::Int: return a.asInt() < b.asInt() ? -1 : a.asInt() > b.asInt();
    case DKind::Bool: return int(a.asBool()) - int(b.asBool());
    case DKind::Float: return a.asFloat() < b.asFloat() ? -1 : a.asFloat() > b.asFloat();
    case DKind::Str: return a.asStr().compare(b.asStr()) < 0 ? -1 : a.asStr() != b.asStr();
    default: return 0;
  }
}

bool compare(CoreOp op, Interpreter& I, const Node& n, Datums& a, Datums& r) {
  bool v;
  if (op == CoreOp::Eq || op == CoreOp::Ne) {
    bool eq = a[0].kind() == DKind::Float ? a[0].asFloat() == a[1].asFloat() : a[0].equals(a[1]);
    v = op == CoreOp::Eq ? eq : !eq;
  } else {
    if (a[0].kind() == DKind::Float && (std::isnan(a[0].asFloat()) || std::isnan(a[1].asFloat()))) {
      v = false;
    } else {
      int c = compareDatums(a[0], a[1]);
      v = op == CoreOp::Lt ? c < 0 : op == CoreOp::Le ? c <= 0 : op == CoreOp::Gt ? c > 0 : c >= 0;
    }
  }
  r.push_back(Datum::boolean(v));
  return true;
}

// Resolves a possibly negative index against `size`; false when out of range.
bool normIndex(int64_t& i, size_t size) {
  if (i < 0) i += int64_t(size);
  return i >= 0 && size_t(i) < size;
}

void clampSlice(int64_t& lo, int64_t& hi, size_t size) {
  int64_t n = int64_t(size);
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  lo = std::clamp<int64_t>(lo, 0, n);
  hi = std::clamp<int64_t>(hi, lo, n);
}

const char* kindName(DKind k) {
  switch (k) {
    case DKind::Null: return "null";
    case DKind::Int: return "int";
    case DKind::Float: return "float";
    case DKind::Bool: return "bool";
    case DKind::Str: return "str";
    case DKind::List: return "list";
    case DKind::Tuple: return "tuple";
    case DKind::Struct: return "struct";
    case DKind::Func: return "function";
    case DKind::Tensor: return "tensor";
    case DKind::PyObj: return "object";
    case DKind::Token: return "token";
  }
  return "value";
}

// Values typed `any` reach ops unchecked by the verifier, so every rule first
// checks the runtime kinds it reads. A mismatch is a located runtime error.
bool checkKinds(CoreOp op, Interpreter& I, const Node& n, const Datums& a) {
  auto need = [&](size_t i, std::initializer_list<DKind> kinds) {
    for (DKind k : kinds)
      if (a[i].kind() == k) return true;
    std::string want;
    for (DKind k : kinds) want += std::string(want.empty() ? "" : " or ") + kindName(k);
    return I.fail(n, coreCode(CoreDiag::OperandKindMismatch),
                  "operand " + std::to_string(i) + " of '" + n.opName() + "' is a " +
                      kindName(a[i].kind()) + ", expected " + want);
  };
  auto same = [&]() {
    for (size_t i = 1; i < a.size(); ++i)
      if (a[i].kind() != a[0].kind())
        return I.fail(n, coreCode(CoreDiag::OperandKindMismatch),
                      "operands of '" + n.opName() + "' have different kinds (" +
                          kindName(a[0].kind()) + " and " + kindName(a[i].kind()) + ")");
    return true;
  };
  switch (op) {
    case CoreOp::Add:
      return need(0, {DKind::Int, DKind::Float, DKind::Bool, DKind::Str, DKind::List}) && same();
    case CoreOp::Sub: case CoreOp::Mul: case CoreOp::Div: case CoreOp::FloorDiv: case CoreOp::Rem:
    case CoreOp::Mod: case CoreOp::Pow: case CoreOp::Neg: case CoreOp::Abs: case CoreOp::Min:
    case CoreOp::Max:
      return need(0, {DKind::Int, DKind::Float, DKind::Bool}) && same();
    case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::BitXor: case CoreOp::BitNot:
    case CoreOp::Shl: case CoreOp::Shr:
      return need(0, {DKind::Int, DKind::Bool}) && same();
    case CoreOp::Cast: return need(0, {DKind::Int, DKind::Float, DKind::Bool});
    case CoreOp::Lt: case CoreOp::Le: case CoreOp::Gt: case CoreOp::Ge:
      return need(0, {DKind::Int, DKind::Float, DKind::Bool, DKind::Str}) && same();
    case CoreOp::And: case CoreOp::Or: case CoreOp::Not:
      for (size_t i = 0; i < a.size(); ++i)
        if (!need(i, {DKind::Bool})) return false;
      return true;
    case CoreOp::Select: case CoreOp::If: return need(0, {DKind::Bool});
    case CoreOp::StrLen: return need(0, {DKind::Str});
    case CoreOp::StrSlice: return need(0, {DKind::Str}) && need(1, {DKind::Int}) && need(2, {DKind::Int});
    case CoreOp::ListGet: return need(0, {DKind::List}) && need(1, {DKind::Int});
    case CoreOp::ListLen: return need(0, {DKind::List});
    case CoreOp::ListSlice: return need(0, {DKind::List}) && need(1, {DKind::Int}) && need(2, {DKind::Int});
    case CoreOp::ListRange: return need(0, {DKind::Int}) && need(1, {DKind::Int}) && need(2, {DKind::Int});
    case CoreOp::ListSet: case CoreOp::ListLoad: return need(1, {DKind::List}) && need(2, {DKind::Int});
    case CoreOp::ListAppend: case CoreOp::ListPop: return need(1, {DKind::List});
    case CoreOp::TupleGet: return need(0, {DKind::Tuple});
    case CoreOp::StructGet: return need(0, {DKind::Struct});
    case CoreOp::Assert: return need(1, {DKind::Bool});
    default: return true;
  }
}

bool interpCore(CoreOp op, Interpreter& I, const Node& n, Datums& a, Datums& r) {
  if (!checkKinds(op, I, n, a)) return false;
  switch (op) {
    case CoreOp::Const: {
      Datum d;
      if (!attrToDatum(*n.attr("value"), n.result(0)->type(), d))
        return I.fail(n, coreCode(CoreDiag::BadConstant), "constant cannot be materialised");
      r.push_back(std::move(d));
      return true;
    }
    case CoreOp::Cast: {
      Type t = n.result(0)->type();
      const Datum& x = a[0];
      double f = x.kind() == DKind::Float ? x.asFloat()
                 : x.kind() == DKind::Bool ? double(x.asBool()) : double(x.asInt());
      if (t.isFloat()) {
        r.push_back(floatResult(n, x.kind() == DKind::Int ? double(x.asInt()) : f));
      } else if (t.kind() == TypeKind::Bool) {
        r.push_back(Datum::boolean(x.kind() == DKind::Int ? x.asInt() != 0 : f != 0.0));
      } else {
        int64_t v;
        if (x.kind() == DKind::Int) v = x.asInt();
        else if (x.kind() == DKind::Bool) v = x.asBool();
        else {
          if (std::isnan(f) || f >= 9.2233720368547758e18 || f < -9.2233720368547758e18)
            return I.fail(n, coreCode(CoreDiag::FloatToIntOutOfRange),
                          "float " + formatDouble(f) + " does not fit an integer");
          v = int64_t(f);  // truncates toward zero
        }
        r.push_back(intResult(n, v));
      }
      return true;
    }
    case CoreOp::Add: case CoreOp::Sub: case CoreOp::Mul: case CoreOp::Div:
    case CoreOp::FloorDiv: case CoreOp::Rem: case CoreOp::Mod: case CoreOp::Pow:
    case CoreOp::Neg: case CoreOp::Abs: case CoreOp::Min: case CoreOp::Max:
    case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::BitXor: case CoreOp::BitNot:
    case CoreOp::Shl: case CoreOp::Shr:
      return arith(op, I, n, a, r);
    case CoreOp::Eq: case CoreOp::Ne: case CoreOp::Lt: case CoreOp::Le: case CoreOp::Gt:
    case CoreOp::Ge:
      return compare(op, I, n, a, r);
    case CoreOp::And: r.push_back(Datum::boolean(a[0].asBool() && a[1].asBool())); return true;
    case CoreOp::Or: r.push_back(Datum::boolean(a[0].asBool() || a[1].asBool())); return true;
    case CoreOp::Not: r.push_back(Datum::boolean(!a[0].asBool())); return true;
    case CoreOp::Select: r.push_back(a[0].asBool() ? a[1] : a[2]); return true;
    case CoreOp::StrLen: r.push_back(Datum::integer(int64_t(a[0].asStr().size()))); return true;
    case CoreOp::StrFrom: r.push_back(Datum::string(a[0].repr(true))); return true;
    case CoreOp::StrSlice: {
      int64_t lo = a[1].asInt(), hi = a[2].asInt();
      clampSlice(lo, hi, a[0].asStr().size());
      r.push_back(Datum::string(a[0].asStr().substr(size_t(lo), size_t(hi - lo))));
      return true;
    }
    case CoreOp::ListMake: r.push_back(Datum::list(a)); return true;
    case CoreOp::ListGet: {
      const ListObject *items = listObj(a[0]);
      int64_t i = a[1].asInt();
      if (!normIndex(i, items->size()))
        return I.fail(n, coreCode(CoreDiag::IndexOutOfRange),
                      "index " + std::to_string(a[1].asInt()) +
                          " out of range for list of length " + std::to_string(items->size()));
      r.push_back(items->get(size_t(i)));
      return true;
    }
    case CoreOp::ListLen:
      r.push_back(Datum::integer(int64_t(listObj(a[0])->size())));
      return true;
    case CoreOp::ListSlice: {
      int64_t lo = a[1].asInt(), hi = a[2].asInt();
      clampSlice(lo, hi, listObj(a[0])->size());
      r.push_back(listSlice(a[0], size_t(lo), size_t(hi)));
      return true;
    }
    case CoreOp::ListRange: {
      int64_t lo = a[0].asInt(), hi = a[1].asInt(), step = a[2].asInt();
      if (step == 0)
        return I.fail(n, coreCode(CoreDiag::ZeroRangeStep), "range step must not be zero");
      std::vector<int64_t> items;
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
        items.push_back(i);
      r.push_back(items.empty() ? Datum::list({}) : intList(std::move(items)));
      return true;
    }
    case CoreOp::ListSet: {
      ListObject *items = listObj(a[1]);
      int64_t i = a[2].asInt();
      if (!normIndex(i, items->size()))
        return I.fail(n, coreCode(CoreDiag::IndexOutOfRange),
                      "index " + std::to_string(a[2].asInt()) +
                          " out of range for list of length " + std::to_string(items->size()));
      items->set(size_t(i), a[3]);
      r.push_back(Datum::token());
      r.push_back(a[1]);
      return true;
    }
    case CoreOp::ListLoad: {
      const ListObject *items = listObj(a[1]);
      int64_t i = a[2].asInt();
      if (!normIndex(i, items->size()))
        return I.fail(n, coreCode(CoreDiag::IndexOutOfRange),
                      "index " + std::to_string(a[2].asInt()) +
                          " out of range for list of length " + std::to_string(items->size()));
      r.push_back(Datum::token());
      r.push_back(items->get(size_t(i)));
      return true;
    }
    case CoreOp::ListAppend:
      listObj(a[1])->push(a[2]);
      r.push_back(Datum::token());
      r.push_back(a[1]);
      return true;
    case CoreOp::ListPop: {
      ListObject *items = listObj(a[1]);
      if (items->size() == 0)
        return I.fail(n, coreCode(CoreDiag::IndexOutOfRange), "pop from an empty list");
      r.push_back(Datum::token());
      r.push_back(a[1]);
      r.push_back(items->pop());
      return true;
    }
    case CoreOp::TupleMake: r.push_back(Datum::tuple(a)); return true;
    case CoreOp::TupleGet: {
      int64_t i = n.attrs().getInt("index", 0);
      const auto& items = a[0].tupleItems();
      if (!normIndex(i, items.size()))
        return I.fail(n, coreCode(CoreDiag::IndexOutOfRange), "tuple index out of range");
      r.push_back(items[size_t(i)]);
      return true;
    }
    case CoreOp::StructMake: {
      Type t = n.result(0)->type();
      r.push_back(Datum::structure(t.fieldNames(), a));
      return true;
    }
    case CoreOp::StructGet: {
      const std::string f = n.attrs().getStr("field");
      const auto& names = a[0].structNames();
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == f) {
          r.push_back(a[0].structFields()[i]);
          return true;
        }
      return I.fail(n, coreCode(CoreDiag::UnknownField), "struct has no field '" + f + "'");
    }
    case CoreOp::Call: {
      const Attr* callee = n.attr("callee");
      return I.call(callee->getSymbol(), a, r, &n);
    }
    case CoreOp::Once: return I.once(n.attr("callee")->getSymbol(), r, &n);
    case CoreOp::FuncRef: {
      const Module* m = I.module();
      const Graph* g = m ? m->lookup(n.attr("callee")->getSymbol()) : nullptr;
      if (!g)
        return I.fail(n, coreCode(CoreDiag::UnknownGraph),
                      "unknown graph @" + n.attr("callee")->getSymbol());
      r.push_back(Datum::func(g, a));
      return true;
    }
    case CoreOp::Apply: {
      Datum fn = a[0];
      a.erase(a.begin());
      return I.apply(fn, a, r, &n);
    }
    case CoreOp::If: {
      bool c = a[0].asBool();
      a.erase(a.begin());
      return I.run(*n.region(c ? 0 : 1), a, r);
    }
    case CoreOp::Loop: {
      Datums vals = a;
      const Graph& cond = *n.region(0);
      const Graph& body = *n.region(1);
      for (;;) {
        Datums c;
        if (!I.run(cond, vals, c)) return false;
        if (c.empty() || c[0].kind() != DKind::Bool)
          return I.fail(n, coreCode(CoreDiag::OperandKindMismatch), "loop condition is not a bool");
        if (!c[0].asBool()) break;
        Datums next;
        if (!I.run(body, vals, next)) return false;
        vals = std::move(next);
      }
      r = std::move(vals);
      return true;
    }
    case CoreOp::Print: {
      std::string sep = n.attrs().getStr("sep", " ");
      const Attr* endAttr = n.attr("end");
      std::string end = endAttr && endAttr->kind() == Attr::Kind::Str ? endAttr->getStr() : "\n";
      std::string s;
      for (size_t i = 1; i < a.size(); ++i) {
        if (i > 1) s += sep;
        s += a[i].repr(true);
      }
      s += end;
      I.write(s);
      r.push_back(Datum::token());
      return true;
    }
    case CoreOp::Join: r.push_back(Datum::token()); return true;
    case CoreOp::Assert:
      if (!a[1].asBool())
        return I.fail(n, coreCode(CoreDiag::AssertionFailed),
                      n.attrs().getStr("message", "assertion failed"));
      r.push_back(Datum::token());
      return true;
    case CoreOp::Builtin: case CoreOp::BuiltinEffect:  // installed by Builtins.cpp
    case CoreOp::NumCoreOps: break;
  }
  return I.fail(n, coreCode(CoreDiag::BadOperation), "cannot execute " + n.opName());
}

}  // namespace

void installCoreInterp(OpInfo& info) {
  CoreOp op = CoreOp(info.coreId);
  info.interp = [op](Interpreter& I, const Node& n, Datums& args, Datums& results) {
    return interpCore(op, I, n, args, results);
  };
}

}  // namespace xacc::ir
