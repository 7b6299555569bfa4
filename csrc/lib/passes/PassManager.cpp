// Pass registry and pipeline execution.
#include "xacc/passes/PassManager.h"
#include "xacc/support/CoreDiags.h"

#include <chrono>

#include "xacc/ir/Verifier.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::passes {

const std::vector<PassInfo>& passRegistry() {
  static const std::vector<PassInfo> registry = {
#define XACC_PASS(Name, Cli, Desc) {Cli, Desc, &create##Name##Pass},
#include "xacc/passes/Passes.def"
#undef XACC_PASS
  };
  return registry;
}

std::unique_ptr<Pass> createPass(std::string_view name) {
  for (const PassInfo& p : passRegistry())
    if (p.name == name) return p.create();
  return nullptr;
}

bool PassManager::addPipeline(std::string_view pipeline) {
  size_t pos = 0;
  while (pos <= pipeline.size()) {
    size_t comma = pipeline.find(',', pos);
    std::string_view item = pipeline.substr(pos, comma == std::string_view::npos ? pipeline.npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      auto p = createPass(item);
      if (!p) {
        std::string known;
        for (const PassInfo& info : passRegistry()) known += (known.empty() ? "" : ", ") + info.name;
        auto &d = diag_.error(coreCode(CoreDiag::UnknownPass), {},
                              "unknown pass '" + std::string(item) + "'");
        d.suggestion = "available passes: " + known;
        return false;
      }
      passes_.push_back(std::move(p));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return true;
}

bool PassManager::run(ir::Module& m) {
  PassContext ctx{diag_, stats_, locs_, &options_};
  for (auto& p : passes_) {
    auto t0 = std::chrono::steady_clock::now();
    bool ok = p->run(m, ctx);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timings_.emplace_back(std::string(p->name()), secs);
    if (!ok) return false;
    if (afterPass_) afterPass_(p->name(), m);
    if (verifyEach_ && !ir::verifyModule(m, diag_, locs_)) {
      diag_.error(coreCode(CoreDiag::InvalidAfterPass), {},
                  "IR is invalid after pass '" + std::string(p->name()) + "'");
      return false;
    }
  }
  return true;
}

void forEachGraph(ir::Graph& g, const std::function<void(ir::Graph&)>& fn) {
  for (ir::Node* n : g)
    for (auto& r : n->regions()) forEachGraph(*r, fn);
  fn(g);
}

}  // namespace xacc::passes
