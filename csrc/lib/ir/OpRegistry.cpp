// The op registry: core ops from Ops.def plus lazily materialised families.
#include <algorithm>
#include <map>
#include <mutex>

#include "xacc/ir/Graph.h"

namespace xacc::ir {

// Defined in CoreOpTypes.cpp and CoreOpInterp.cpp.
void installCoreInfer(OpInfo& info);
void installCoreInterp(OpInfo& info);
void installBuiltinOps(OpInfo& info);  // Builtins.cpp

static const char* const kCoreNames[] = {
#define XACC_OP(Id, Name, Traits, MinOps, MaxOps, NumRes, NumRegions, Summary) Name,
#include "xacc/ir/Ops.def"
#undef XACC_OP
};

const char* coreOpName(CoreOp op) { return kCoreNames[size_t(op)]; }

struct OpRegistry::Impl {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<OpInfo>, std::less<>> ops;
  std::vector<std::pair<std::string, OpFamilyFn>> families;
  std::vector<const OpInfo*> core;
};

OpRegistry::OpRegistry() : impl_(std::make_unique<Impl>()) {
  struct Row {
    CoreOp id;
    const char* name;
    uint32_t traits;
    int minOps, maxOps, numRes, numRegions;
    const char* summary;
  };
  static const Row rows[] = {
#define XACC_OP(Id, Name, Traits, MinOps, MaxOps, NumRes, NumRegions, Summary) \
  {CoreOp::Id, Name, Traits, MinOps, MaxOps, NumRes, NumRegions, Summary},
#include "xacc/ir/Ops.def"
#undef XACC_OP
  };
  impl_->core.resize(size_t(CoreOp::NumCoreOps));
  for (const Row& r : rows) {
    auto info = std::make_unique<OpInfo>();
    info->name = r.name;
    info->traits = r.traits;
    info->minOperands = r.minOps;
    info->maxOperands = r.maxOps;
    info->numResults = r.numRes;
    info->numRegions = r.numRegions;
    info->summary = r.summary;
    info->coreId = int(r.id);
    installCoreInfer(*info);
    installCoreInterp(*info);
    if (info->is(CoreOp::Builtin) || info->is(CoreOp::BuiltinEffect)) installBuiltinOps(*info);
    impl_->core[size_t(r.id)] = info.get();
    impl_->ops.emplace(info->name, std::move(info));
  }
}

OpRegistry& OpRegistry::get() {
  static OpRegistry* r = new OpRegistry();  // leaked: OpInfo pointers live in nodes until exit
  return *r;
}

const OpInfo* OpRegistry::add(std::unique_ptr<OpInfo> info) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& slot = impl_->ops[info->name];
  slot = std::move(info);
  return slot.get();
}

void OpRegistry::addFamily(std::string prefix, OpFamilyFn fn) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& f : impl_->families)
    if (f.first == prefix) {
      f.second = std::move(fn);
      return;
    }
  impl_->families.emplace_back(std::move(prefix), std::move(fn));
}

bool OpRegistry::hasFamily(std::string_view prefix) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& f : impl_->families)
    if (f.first == prefix) return true;
  return false;
}

const OpInfo* OpRegistry::lookup(std::string_view name, std::string* error) {
  OpFamilyFn fn;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->ops.find(name);
    if (it != impl_->ops.end()) return it->second.get();
    for (auto& f : impl_->families)
      if (name.substr(0, f.first.size()) == f.first) {
        fn = f.second;
        break;
      }
  }
  if (!fn) {
    if (error) {
      *error = "unknown operation '" + std::string(name) + "'";
      if (name.substr(0, 5) == "aten.")
        *error += " (the ATen op family is not loaded in this tool)";
    }
    return nullptr;
  }
  std::string err;
  std::unique_ptr<OpInfo> info = fn(name, err);
  if (!info) {
    if (error) *error = err.empty() ? "unknown operation '" + std::string(name) + "'" : err;
    return nullptr;
  }
  info->name = std::string(name);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->ops.find(name);
  if (it != impl_->ops.end()) return it->second.get();  // another thread won
  const OpInfo* p = info.get();
  impl_->ops.emplace(std::string(name), std::move(info));
  return p;
}

OpInfo* OpRegistry::mutableLookup(std::string_view name) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->ops.find(name);
  return it == impl_->ops.end() ? nullptr : it->second.get();
}

std::vector<const OpInfo*> OpRegistry::all() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<const OpInfo*> out;
  for (auto& [n, info] : impl_->ops) out.push_back(info.get());
  return out;
}

const OpInfo* OpRegistry::core(CoreOp op) const { return impl_->core[size_t(op)]; }

}  // namespace xacc::ir
