// GraphEmitter one node at a time (see ScalarLoweringImpl.h and
// ScalarLowering.cpp): constants, integer and float arithmetic, casts, calls to
// other graphs, ctrl.if as scf.if and ctrl.loop as scf.while.
#include "ScalarLoweringImpl.h"

#include <fmt/format.h>

namespace xacc::backend::mlir::scalar {

bool GraphEmitter::node(const ir::Node& n, std::string& why) {
  const ir::OpInfo& op = n.op();
  if (op.coreId < 0) return fail("op " + n.opName() + " is not a scalar op", why);
  std::vector<ScalarKind> in, out;
  for (const ir::Value* v : n.operands()) {
    ScalarKind k;
    if (!v || !scalarKind(v->type(), k))
      return fail(n.opName() + " has an operand of type " + (v ? v->type().str() : "?"), why);
    in.push_back(k);
  }
  for (size_t i = 0; i < n.numResults(); ++i) {
    ScalarKind k;
    if (!scalarKind(n.result(i)->type(), k))
      return fail(n.opName() + " yields a " + n.result(i)->type().str(), why);
    out.push_back(k);
  }
  CoreOp c = CoreOp(op.coreId);
  std::vector<std::string> a;
  for (const ir::Value* v : n.operands()) a.push_back(name(v));
  auto sameKinds = [&](ScalarKind k) {
    for (ScalarKind x : in)
      if (x != k) return false;
    return true;
  };
  std::string r;  // the single result's name
  switch (c) {
    case CoreOp::Const: {
      const ir::Attr* v = n.attr("value");
      if (!v) return fail("constant without a value", why);
      if (out[0] == ScalarKind::I64 && v->kind() == ir::Attr::Kind::Int) r = constant(std::to_string(v->getInt()), "i64");
      else if (out[0] == ScalarKind::F64 && v->kind() == ir::Attr::Kind::Float) r = constant(f64Const(v->getFloat()), "f64");
      else if (out[0] == ScalarKind::F64 && v->kind() == ir::Attr::Kind::Int) r = constant(f64Const(double(v->getInt())), "f64");
      else if (out[0] == ScalarKind::Bool && v->kind() == ir::Attr::Kind::Bool) r = constant(v->getBool() ? "true" : "false", "i1");
      else if (out[0] == ScalarKind::Bool && v->kind() == ir::Attr::Kind::Int) r = constant(v->getInt() != 0 ? "true" : "false", "i1");
      else return fail("constant " + v->str() + " of type " + n.result(0)->type().str(), why);
      break;
    }
    case CoreOp::Cast:
      if (!cast(in[0], out[0], a[0], r, why)) return false;
      break;
    case CoreOp::Add: case CoreOp::Sub: case CoreOp::Mul: case CoreOp::Div: case CoreOp::FloorDiv:
    case CoreOp::Rem: case CoreOp::Mod: case CoreOp::Pow: case CoreOp::Neg: case CoreOp::Abs:
    case CoreOp::Min: case CoreOp::Max:
      if (sameKinds(ScalarKind::I64) && out[0] == ScalarKind::I64) r = intArith(c, a);
      else if (sameKinds(ScalarKind::F64) && out[0] == ScalarKind::F64) r = floatArith(c, a);
      else return fail(n.opName() + " on these operand types", why);
      break;
    case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::BitXor: {
      const char* mop = c == CoreOp::BitAnd ? "arith.andi" : c == CoreOp::BitOr ? "arith.ori" : "arith.xori";
      if (sameKinds(ScalarKind::I64) && out[0] == ScalarKind::I64) r = op2(mop, a[0], a[1], "i64");
      else if (sameKinds(ScalarKind::Bool) && out[0] == ScalarKind::Bool) r = op2(mop, a[0], a[1], "i1");
      else return fail(n.opName() + " on these operand types", why);
      break;
    }
    case CoreOp::BitNot:
      if (in[0] != ScalarKind::I64 || out[0] != ScalarKind::I64) return fail("arith.bitnot on a non-integer", why);
      r = op2("arith.xori", a[0], constant("-1", "i64"), "i64");
      break;
    case CoreOp::Shl: case CoreOp::Shr: {
      if (!sameKinds(ScalarKind::I64) || out[0] != ScalarKind::I64) return fail(n.opName() + " on a non-integer", why);
      // Shift counts outside [0, 63] are poison in LLVM; the interpreter
      // gives 0 (shl) or the sign (shr, which shifting by 63 also gives).
      std::string ok = cmp("arith.cmpi", "ult", a[1], constant("64", "i64"), "i64");
      if (c == CoreOp::Shl) {
        std::string amt = select(ok, a[1], constant("0", "i64"), "i64");
        r = select(ok, op2("arith.shli", a[0], amt, "i64"), constant("0", "i64"), "i64");
      } else {
        r = op2("arith.shrsi", a[0], select(ok, a[1], constant("63", "i64"), "i64"), "i64");
      }
      break;
    }
    case CoreOp::Eq: case CoreOp::Ne: case CoreOp::Lt: case CoreOp::Le: case CoreOp::Gt: case CoreOp::Ge: {
      if (in[0] != in[1] || out[0] != ScalarKind::Bool) return fail(n.opName() + " on mixed operand types", why);
      static const std::map<CoreOp, const char*> si = {{CoreOp::Eq, "eq"}, {CoreOp::Ne, "ne"}, {CoreOp::Lt, "slt"},
                                                       {CoreOp::Le, "sle"}, {CoreOp::Gt, "sgt"}, {CoreOp::Ge, "sge"}};
      static const std::map<CoreOp, const char*> ui = {{CoreOp::Eq, "eq"}, {CoreOp::Ne, "ne"}, {CoreOp::Lt, "ult"},
                                                       {CoreOp::Le, "ule"}, {CoreOp::Gt, "ugt"}, {CoreOp::Ge, "uge"}};
      // Ordered predicates: NaN compares false, except != (unordered).
      static const std::map<CoreOp, const char*> fl = {{CoreOp::Eq, "oeq"}, {CoreOp::Ne, "une"}, {CoreOp::Lt, "olt"},
                                                       {CoreOp::Le, "ole"}, {CoreOp::Gt, "ogt"}, {CoreOp::Ge, "oge"}};
      if (in[0] == ScalarKind::I64) r = cmp("arith.cmpi", si.at(c), a[0], a[1], "i64");
      else if (in[0] == ScalarKind::Bool) r = cmp("arith.cmpi", ui.at(c), a[0], a[1], "i1");
      else r = cmp("arith.cmpf", fl.at(c), a[0], a[1], "f64");
      break;
    }
    case CoreOp::And: case CoreOp::Or:
      if (!sameKinds(ScalarKind::Bool)) return fail(n.opName() + " on non-bool operands", why);
      r = op2(c == CoreOp::And ? "arith.andi" : "arith.ori", a[0], a[1], "i1");
      break;
    case CoreOp::Not:
      if (in[0] != ScalarKind::Bool) return fail("logic.not on a non-bool", why);
      r = op2("arith.xori", a[0], constant("true", "i1"), "i1");
      break;
    case CoreOp::Select:
      if (in[0] != ScalarKind::Bool || in[1] != in[2] || out[0] != in[1]) return fail("ctrl.select types", why);
      r = select(a[0], a[1], a[2], mlirType(out[0]));
      break;
    case CoreOp::Builtin: {
      // The numeric conversions of the Camel standard library, with the
      // same semantics as arith.cast (floats truncate; NaN and out of range
      // are runtime errors, here bail-outs).
      std::string b = n.attrs().getStr("name");
      if ((b != "int" && b != "float") || in.size() != 1 || in[0] == ScalarKind::Bool ||
          out[0] != (b == "int" ? ScalarKind::I64 : ScalarKind::F64))
        return fail("builtin '" + b + "' is not lowered to scalar code", why);
      if (!cast(in[0], out[0], a[0], r, why)) return false;
      break;
    }
    case CoreOp::Call: return call(n, a, out, why);
    case CoreOp::If: return ifOp(n, a, out, why);
    case CoreOp::Loop: return loop(n, a, in, out, why);
    default: return fail("op " + n.opName() + " is not lowered to scalar code", why);
  }
  names_[n.result(0)] = r;
  return true;
}

bool GraphEmitter::cast(ScalarKind from, ScalarKind to, const std::string& x, std::string& r, std::string& why) {
  if (from == to) {
    r = x;
    return true;
  }
  std::string n = fresh();
  switch (to) {
    case ScalarKind::F64:
      line(fmt::format("{} = {} {} : {} to f64", n, from == ScalarKind::I64 ? "arith.sitofp" : "arith.uitofp", x,
                       mlirType(from)));
      break;
    case ScalarKind::Bool:
      if (from == ScalarKind::I64) n = cmp("arith.cmpi", "ne", x, constant("0", "i64"), "i64");
      else n = cmp("arith.cmpf", "une", x, constant(f64Const(0.0), "f64"), "f64");
      break;
    case ScalarKind::I64:
      if (from == ScalarKind::Bool) {
        line(fmt::format("{} = arith.extui {} : i1 to i64", n, x));
      } else {
        // NaN and values outside [-2^63, 2^63) are a runtime error.
        std::string below = cmp("arith.cmpf", "olt", x, constant(f64Const(9.2233720368547758e18), "f64"), "f64");
        std::string above = cmp("arith.cmpf", "oge", x, constant(f64Const(-9.2233720368547758e18), "f64"), "f64");
        std::string ok = op2("arith.andi", below, above, "i1");
        bail(op2("arith.xori", ok, constant("true", "i1"), "i1"), ScalarAbi::BadConversion);
        line(fmt::format("{} = arith.fptosi {} : f64 to i64", n, x));
      }
      break;
  }
  r = n;
  return true;
}

std::string GraphEmitter::intArith(CoreOp c, const std::vector<std::string>& a) {
  const char* T = "i64";
  switch (c) {
    case CoreOp::Add: return op2("arith.addi", a[0], a[1], T);
    case CoreOp::Sub: return op2("arith.subi", a[0], a[1], T);
    case CoreOp::Mul: return op2("arith.muli", a[0], a[1], T);
    case CoreOp::Neg: return op2("arith.subi", constant("0", T), a[0], T);
    case CoreOp::Abs: {
      std::string zero = constant("0", T);
      std::string neg = cmp("arith.cmpi", "slt", a[0], zero, T);
      return select(neg, op2("arith.subi", zero, a[0], T), a[0], T);
    }
    case CoreOp::Min: return op2("arith.minsi", a[0], a[1], T);
    case CoreOp::Max: return op2("arith.maxsi", a[0], a[1], T);
    case CoreOp::Pow: return intPow(a[0], a[1]);
    default: break;
  }
  // Division family: q == 0 is an error; q == -1 is computed without the
  // (poison) INT64_MIN / -1 and wraps as the interpreter does.
  std::string zero = constant("0", T), one = constant("1", T);
  std::string isZero = cmp("arith.cmpi", "eq", a[1], zero, T);
  bail(isZero, ScalarAbi::DivByZero);
  std::string isM1 = cmp("arith.cmpi", "eq", a[1], constant("-1", T), T);
  std::string safeQ = select(op2("arith.ori", isZero, isM1, "i1"), one, a[1], T);
  switch (c) {
    case CoreOp::Div: return select(isM1, op2("arith.subi", zero, a[0], T), op2("arith.divsi", a[0], safeQ, T), T);
    case CoreOp::FloorDiv:
      return select(isM1, op2("arith.subi", zero, a[0], T), op2("arith.floordivsi", a[0], safeQ, T), T);
    case CoreOp::Rem: return select(isM1, zero, op2("arith.remsi", a[0], safeQ, T), T);
    default: {  // Mod: the sign of the divisor
      std::string rem = op2("arith.remsi", a[0], safeQ, T);
      std::string nz = cmp("arith.cmpi", "ne", rem, zero, T);
      std::string signs = op2("arith.xori", cmp("arith.cmpi", "slt", rem, zero, T),
                              cmp("arith.cmpi", "slt", a[1], zero, T), "i1");
      std::string fixed = select(op2("arith.andi", nz, signs, "i1"), op2("arith.addi", rem, a[1], T), rem, T);
      return select(isM1, zero, fixed, T);
    }
  }
}

std::string GraphEmitter::intPow(const std::string& p, const std::string& q) {
  const char* T = "i64";
  std::string zero = constant("0", T), one = constant("1", T);
  bail(cmp("arith.cmpi", "slt", q, zero, T), ScalarAbi::NegativeExponent);
  std::string res = fresh();
  std::string e = fresh(), b = fresh(), acc = fresh();
  line(fmt::format("{}:3 = scf.while ({} = {}, {} = {}, {} = {}) : (i64, i64, i64) -> (i64, i64, i64) {{", res, e, q,
                   b, p, acc, one));
  std::string saved = indent_;
  indent_ += "  ";
  std::string more = cmp("arith.cmpi", "sgt", e, zero, T);
  line(fmt::format("scf.condition({}) {}, {}, {} : i64, i64, i64", more, e, b, acc));
  indent_ = saved;
  std::string e2 = fresh(), b2 = fresh(), acc2 = fresh();
  line(fmt::format("}} do {{\n{}^bb0({}: i64, {}: i64, {}: i64):", indent_, e2, b2, acc2));
  indent_ += "  ";
  std::string odd = cmp("arith.cmpi", "ne", op2("arith.andi", e2, one, T), zero, T);
  std::string accN = select(odd, op2("arith.muli", acc2, b2, T), acc2, T);
  std::string bN = op2("arith.muli", b2, b2, T);
  std::string eN = op2("arith.shrsi", e2, one, T);
  line(fmt::format("scf.yield {}, {}, {} : i64, i64, i64", eN, bN, accN));
  indent_ = saved;
  line("}");
  return res + "#2";
}

std::string GraphEmitter::floatArith(CoreOp c, const std::vector<std::string>& a) {
  const char* T = "f64";
  auto un = [&](const char* op) {
    std::string n = fresh();
    line(fmt::format("{} = {} {} : {}", n, op, a[0], T));
    return n;
  };
  switch (c) {
    case CoreOp::Add: return op2("arith.addf", a[0], a[1], T);
    case CoreOp::Sub: return op2("arith.subf", a[0], a[1], T);
    case CoreOp::Mul: return op2("arith.mulf", a[0], a[1], T);
    case CoreOp::Div: return op2("arith.divf", a[0], a[1], T);
    case CoreOp::FloorDiv: {
      std::string q = op2("arith.divf", a[0], a[1], T), n = fresh();
      line(fmt::format("{} = math.floor {} : {}", n, q, T));
      return n;
    }
    case CoreOp::Rem: return op2("arith.remf", a[0], a[1], T);
    case CoreOp::Mod: {
      std::string zero = constant(f64Const(0.0), T);
      std::string rem = op2("arith.remf", a[0], a[1], T);
      std::string nz = cmp("arith.cmpf", "une", rem, zero, T);
      std::string signs = op2("arith.xori", cmp("arith.cmpf", "olt", rem, zero, T),
                              cmp("arith.cmpf", "olt", a[1], zero, T), "i1");
      return select(op2("arith.andi", nz, signs, "i1"), op2("arith.addf", rem, a[1], T), rem, T);
    }
    case CoreOp::Pow: return op2("math.powf", a[0], a[1], T);
    case CoreOp::Neg: return un("arith.negf");
    case CoreOp::Abs: return un("math.absf");
    case CoreOp::Min: return op2("arith.minnumf", a[0], a[1], T);  // fmin: NaN-ignoring
    case CoreOp::Max: return op2("arith.maxnumf", a[0], a[1], T);
    default: return a[0];
  }
}

bool GraphEmitter::call(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
          std::string& why) {
  const ir::Attr* callee = n.attr("callee");
  if (!callee || callee->kind() != ir::Attr::Kind::Symbol) return fail("func.call without a callee", why);
  const ir::Graph* g = module_.lookup(callee->getSymbol());
  if (!g) return fail("calls unknown graph @" + callee->getSymbol(), why);
  if (out.size() != 1 || g->results().size() != 1 || g->numParams() != a.size())
    return fail("calls @" + g->name() + " with a signature that is not one scalar result", why);
  callees_->insert(g->name());
  if (g == self_ && loopForm_ && loopDepth_ < loopLevels_) {
    // A non-tail self-call of a loop-form graph: its own loop, inlined.
    ++loopDepth_;
    std::string fin;
    bool ok = emitLoop(a, fin, why);
    --loopDepth_;
    if (!ok) return false;
    names_[n.result(0)] = fin;
    return true;
  }
  if (g == self_ && inlineSelf_ && inlineDepth_ == 0 && !tail_.count(n.result(0))) return inlineSelfCall(n, a, why);
  std::string args = "%ctx", types = "!llvm.ptr";
  for (size_t i = 0; i < a.size(); ++i) {
    ScalarKind k;
    if (!scalarKind(g->param(i)->type(), k)) return fail("calls @" + g->name() + " with non-scalar parameters", why);
    args += ", " + a[i];
    types += std::string(", ") + mlirType(k);
  }
  std::string r = fresh();
  line(fmt::format("{} = func.call {}({}) : ({}) -> {}", r, symbol(g->name()), args, types, mlirType(out[0])));
  names_[n.result(0)] = r;
  return true;
}

std::string GraphEmitter::typeList(const std::vector<ScalarKind>& ks) {
  std::string s;
  for (size_t i = 0; i < ks.size(); ++i) s += std::string(i ? ", " : "") + mlirType(ks[i]);
  return s;
}

bool GraphEmitter::inlineRegion(const ir::Graph& region, const std::vector<std::string>& args, std::vector<std::string>& res,
                  std::string& why) {
  if (region.numParams() != args.size()) return fail("region parameters do not match the operands", why);
  for (size_t i = 0; i < args.size(); ++i) names_[region.param(i)] = args[i];
  return body(region, res, why);
}

bool GraphEmitter::ifOp(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
          std::string& why) {
  if (n.numRegions() != 2) return fail("ctrl.if without two regions", why);
  std::vector<std::string> args(a.begin() + 1, a.end());
  std::string r = fresh();
  std::string types = typeList(out);
  if (out.empty()) line(fmt::format("scf.if {} {{", a[0]));
  else line(fmt::format("{}{} = scf.if {} -> ({}) {{", r, out.size() > 1 ? ":" + std::to_string(out.size()) : "", a[0], types));
  std::string saved = indent_;
  for (size_t arm = 0; arm < 2; ++arm) {
    indent_ = saved + "  ";
    std::vector<std::string> res;
    if (!inlineRegion(*n.region(arm), args, res, why)) return false;
    if (res.size() != out.size()) return fail("a ctrl.if arm yields the wrong number of values", why);
    if (!out.empty()) {
      std::string list;
      for (size_t i = 0; i < res.size(); ++i) list += (i ? ", " : "") + res[i];
      line(fmt::format("scf.yield {} : {}", list, types));
    }
    indent_ = saved;
    line(arm == 0 ? "} else {" : "}");
  }
  for (size_t i = 0; i < out.size(); ++i) names_[n.result(i)] = out.size() == 1 ? r : r + "#" + std::to_string(i);
  return true;
}

bool GraphEmitter::loop(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& in,
          const std::vector<ScalarKind>& out, std::string& why) {
  if (n.numRegions() != 2 || in != out || in.empty()) return fail("ctrl.loop shape", why);
  std::string types = typeList(in);
  std::string r = fresh();
  std::vector<std::string> cur, next;
  std::string inits;
  for (size_t i = 0; i < a.size(); ++i) {
    cur.push_back(fresh());
    inits += (i ? ", " : "") + cur.back() + " = " + a[i];
  }
  line(fmt::format("{}:{} = scf.while ({}) : ({}) -> ({}) {{", r, in.size(), inits, types, types));
  std::string saved = indent_;
  indent_ = saved + "  ";
  std::vector<std::string> c;
  if (!inlineRegion(*n.region(0), cur, c, why)) return false;
  if (c.size() != 1) return fail("ctrl.loop condition does not yield one bool", why);
  std::string list;
  for (size_t i = 0; i < cur.size(); ++i) list += (i ? ", " : "") + cur[i];
  line(fmt::format("scf.condition({}) {} : {}", c[0], list, types));
  indent_ = saved;
  std::string params;
  for (size_t i = 0; i < in.size(); ++i) {
    next.push_back(fresh());
    params += std::string(i ? ", " : "") + next.back() + ": " + mlirType(in[i]);
  }
  line(fmt::format("}} do {{\n{}^bb0({}):", saved, params));
  indent_ = saved + "  ";
  std::vector<std::string> res;
  if (!inlineRegion(*n.region(1), next, res, why)) return false;
  if (res.size() != in.size()) return fail("ctrl.loop body yields the wrong number of values", why);
  std::string yl;
  for (size_t i = 0; i < res.size(); ++i) yl += (i ? ", " : "") + res[i];
  line(fmt::format("scf.yield {} : {}", yl, types));
  indent_ = saved;
  line("}");
  for (size_t i = 0; i < out.size(); ++i) names_[n.result(i)] = r + "#" + std::to_string(i);
  return true;
}

}  // namespace xacc::backend::mlir::scalar
