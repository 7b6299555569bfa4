// The builtin registry and the two ops that call builtins.
#include "xacc/ir/Builtins.h"
#include "xacc/support/CoreDiags.h"

#include <map>
#include <memory>
#include <mutex>

#include "xacc/ir/Graph.h"
#include "xacc/ir/Interpreter.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

struct BuiltinRegistry::Impl {
  mutable std::mutex mu;
  std::map<std::string, std::unique_ptr<Builtin>, std::less<>> table;
};

BuiltinRegistry::Impl* BuiltinRegistry::impl() {
  static Impl* i = new Impl();  // leaked: builtins are referenced until exit
  return i;
}

void registerCoreBuiltins(BuiltinRegistry& reg);  // CoreBuiltins.cpp

BuiltinRegistry& BuiltinRegistry::get() {
  static BuiltinRegistry* r = [] {
    auto* reg = new BuiltinRegistry();
    registerCoreBuiltins(*reg);
    return reg;
  }();
  return *r;
}

void BuiltinRegistry::add(Builtin b) {
  Impl* i = impl();
  std::lock_guard<std::mutex> lock(i->mu);
  auto& slot = i->table[b.name];
  slot = std::make_unique<Builtin>(std::move(b));
}

const Builtin* BuiltinRegistry::lookup(std::string_view name) const {
  Impl* i = const_cast<BuiltinRegistry*>(this)->impl();
  std::lock_guard<std::mutex> lock(i->mu);
  auto it = i->table.find(name);
  return it == i->table.end() ? nullptr : it->second.get();
}

std::vector<const Builtin*> BuiltinRegistry::all() const {
  Impl* i = const_cast<BuiltinRegistry*>(this)->impl();
  std::lock_guard<std::mutex> lock(i->mu);
  std::vector<const Builtin*> out;
  for (auto& [n, b] : i->table) out.push_back(b.get());
  return out;
}

namespace {

bool inferBuiltin(bool effect, const InferInput& in, std::vector<Type>& out, std::string& err) {
  const Attr* name = in.attrs.get("name");
  if (!name || name->kind() != Attr::Kind::Str) {
    err = "missing string attribute 'name'";
    return false;
  }
  const Builtin* b = BuiltinRegistry::get().lookup(name->getStr());
  if (!b) {
    err = "unknown builtin '" + name->getStr() + "'";
    return false;
  }
  // Effectful and nondeterministic builtins must be ordered by a token; a pure
  // builtin may be called either way.
  if ((b->effectful || !b->deterministic) && !effect) {
    err = "builtin '" + b->name + "' has effects and must be called with func.builtin_effect";
    return false;
  }
  if (!b->infer) return true;  // as declared
  std::vector<Type> args(in.operands.begin() + (effect ? 1 : 0), in.operands.end());
  std::vector<Type> res;
  if (!b->infer(args, res, err)) {
    err = b->name + ": " + err;
    return false;
  }
  if (res.empty()) return true;
  out.clear();
  if (effect) out.push_back(Type::token());
  out.insert(out.end(), res.begin(), res.end());
  return true;
}

bool runBuiltin(bool effect, Interpreter& I, const Node& n, std::vector<Datum>& args,
                std::vector<Datum>& results) {
  const Builtin* b = BuiltinRegistry::get().lookup(n.attrs().getStr("name"));
  if (!b)
    return I.fail(n, coreCode(CoreDiag::UnknownBuiltin),
                  "unknown builtin '" + n.attrs().getStr("name") + "'");
  if (effect) {
    args.erase(args.begin());
    results.push_back(Datum::token());
  }
  return b->fn(I, n, args, results);
}

}  // namespace

void installBuiltinOps(OpInfo& info) {
  bool effect = info.is(CoreOp::BuiltinEffect);
  info.infer = [effect](const InferInput& in, std::vector<Type>& out, std::string& err) {
    return inferBuiltin(effect, in, out, err);
  };
  info.interp = [effect](Interpreter& I, const Node& n, std::vector<Datum>& a, std::vector<Datum>& r) {
    return runBuiltin(effect, I, n, a, r);
  };
}

}  // namespace xacc::ir
