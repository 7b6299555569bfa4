// Shared fixture of the camel_stdlib*_test.cpp GoogleTest files: builds a tiny
// GIR graph that calls one standard-library builtin through func.builtin (or
// func.builtin_effect, threading a token, when the builtin is effectful) at a
// known source location, verifies it, runs it through ir::Interpreter with
// output captured, and returns the results or the failure's code and location.
// Function arguments are lambdas built as graphs of the same module.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Builtins.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Verifier.h"

namespace xacc::camel::testing {

using ir::Datum;
using ir::DKind;
using ir::Type;

/// The GIR type a test value would have in Camel (lists take their first
/// element's type).
inline Type typeOf(const Datum& d) {
  switch (d.kind()) {
    case DKind::Int: return Type::i64();
    case DKind::Float: return Type::f64();
    case DKind::Bool: return Type::boolean();
    case DKind::Str: return Type::string();
    case DKind::Null: return Type::null();
    case DKind::List:
      return Type::list(d.listItems().empty() ? Type::any() : typeOf(d.listItems()[0]));
    case DKind::Tuple: {
      std::vector<Type> ts;
      for (const Datum& x : d.tupleItems()) ts.push_back(typeOf(x));
      return Type::tuple(ts);
    }
    case DKind::Struct: {
      std::vector<std::pair<std::string, Type>> fs;
      for (size_t i = 0; i < d.structNames().size(); ++i)
        fs.push_back({d.structNames()[i], typeOf(d.structFields()[i])});
      return Type::structure(fs);
    }
    case DKind::Func: {
      const ir::Graph* g = d.funcGraph();
      std::vector<Type> ps;
      for (size_t i = d.funcCaptures().size(); i < g->numParams(); ++i)
        ps.push_back(g->param(i)->type());
      std::vector<Type> rs;
      for (ir::Value* v : g->results()) rs.push_back(v->type());
      return Type::func(ps, rs);
    }
    default: return Type::any();
  }
}

inline Datum iv(int64_t v) { return Datum::integer(v); }
inline Datum fv(double v) { return Datum::real(v); }
inline Datum bv(bool v) { return Datum::boolean(v); }
inline Datum sv(std::string v) { return Datum::string(std::move(v)); }
inline Datum lv(std::vector<Datum> v) { return Datum::list(std::move(v)); }
inline Datum tv(std::vector<Datum> v) { return Datum::tuple(std::move(v)); }
inline Datum ints(std::vector<int64_t> v) {
  std::vector<Datum> d;
  for (int64_t x : v) d.push_back(iv(x));
  return lv(std::move(d));
}
inline Datum strs(std::vector<std::string> v) {
  std::vector<Datum> d;
  for (auto& x : v) d.push_back(sv(x));
  return lv(std::move(d));
}

struct StdlibTest : ::testing::Test {
  support::SourceManager sm;
  support::DiagnosticEngine diag{&sm};
  ir::Module module;
  std::string out;  ///< everything the builtins printed
  int graphs = 0;
  support::SourceLoc loc;

  static void SetUpTestSuite() { registerCamelStdlib(); }
  void SetUp() override {
    loc.file = sm.addBuffer("prog.cml", "line one\nline two\n    let x = call(here)\n");
    loc.line = 3;
    loc.col = 13;
  }

  /// A lambda: a graph with parameters `params` whose body `body` returns its
  /// results.
  Datum lambda(std::vector<Type> params,
               std::function<std::vector<ir::Value*>(ir::Builder&, std::vector<ir::Value*>)> body,
               std::vector<Datum> captures = {}) {
    ir::Graph& g = *module.add(std::make_unique<ir::Graph>("lambda" + std::to_string(graphs++)));
    std::vector<ir::Value*> ps;
    for (Type t : params) ps.push_back(g.addParam(t));
    ir::Builder b(g);
    for (ir::Value* v : body(b, ps)) g.addResult(v);
    return Datum::func(&g, std::move(captures));
  }

  /// Calls builtin `name` (with operand types `types`, default: typeOf each
  /// argument). Returns false when building, verifying or running fails.
  bool call(const std::string& name, std::vector<Datum> args, std::vector<Datum>& results,
            std::vector<Type> types = {}) {
    const ir::Builtin* bi = ir::BuiltinRegistry::get().lookup(name);
    if (!bi) {
      ADD_FAILURE() << "no builtin " << name;
      return false;
    }
    bool effect = bi->effectful || !bi->deterministic;
    if (types.empty())
      for (const Datum& a : args) types.push_back(typeOf(a));
    std::string graphName = "g";
    graphName += std::to_string(graphs++);  // not "g" + ...: GCC 12 -Wrestrict false positive
    ir::Graph& g = *module.add(std::make_unique<ir::Graph>(graphName));
    std::vector<ir::Value*> operands;
    if (effect) operands.push_back(g.addParam(Type::token()));
    for (Type t : types) operands.push_back(g.addParam(t));
    ir::Builder b(g);
    b.setLoc(loc);
    ir::Node* n = b.create(effect ? "func.builtin_effect" : "func.builtin", operands,
                           ir::attrs({{"name", ir::Attr::string(name)}}));
    if (!n) {
      ADD_FAILURE() << "cannot build " << name << ": " << b.error();
      return false;
    }
    for (size_t i = 0; i < n->numResults(); ++i) g.addResult(n->result(i));
    if (!ir::verifyGraph(g, diag)) {
      ADD_FAILURE() << diag.renderAllText();
      return false;
    }
    std::vector<Datum> all;
    if (effect) all.push_back(Datum::token());
    all.insert(all.end(), args.begin(), args.end());
    ir::Interpreter interp(diag, &module);
    interp.setOutput([this](std::string_view s) { out.append(s); });
    std::vector<Datum> rs;
    if (!interp.run(g, all, rs)) return false;
    results.assign(rs.begin() + (effect ? 1 : 0), rs.end());
    return true;
  }

  /// The single result of a call that must succeed.
  Datum call1(const std::string& name, std::vector<Datum> args, std::vector<Type> types = {}) {
    std::vector<Datum> r;
    bool ok = call(name, std::move(args), r, std::move(types));
    EXPECT_TRUE(ok) << name << ": " << diag.renderAllText();
    EXPECT_EQ(r.size(), 1u) << name;
    return r.empty() ? Datum() : r[0];
  }

  /// The code of the error of a call that must fail; checks it is located at
  /// `loc`.
  std::string failCode(const std::string& name, std::vector<Datum> args,
                       std::vector<Type> types = {}) {
    diag.clear();
    std::vector<Datum> r;
    EXPECT_FALSE(call(name, std::move(args), r, std::move(types))) << name << " should fail";
    if (diag.diagnostics().empty()) return "";
    const support::Diagnostic& d = diag.diagnostics().back();
    EXPECT_EQ(d.loc.line, loc.line) << d.message;
    EXPECT_EQ(d.loc.col, loc.col) << d.message;
    lastMessage = d.message;
    diag.clear();
    return d.code;
  }
  std::string lastMessage;

  /// The builtin's type rule on `types`: the result types, or "error: ...".
  std::string infer(const std::string& name, std::vector<Type> types) {
    const ir::Builtin* bi = ir::BuiltinRegistry::get().lookup(name);
    if (!bi) return "no builtin";
    std::vector<Type> rs;
    std::string err;
    if (!bi->infer(types, rs, err)) return "error: " + err;
    std::string s;
    for (Type t : rs) s += (s.empty() ? "" : ", ") + t.str();
    return s;
  }

  std::string repr(const Datum& d) { return camelRepr(d); }
};

}  // namespace xacc::camel::testing
