// The `grad` pass: adds, for each selected graph @f, a graph @f_grad built by
// reverse-mode autodiff (Note [Gradient graphs] in Autodiff.h). Options:
//   graph=f,g     graphs to differentiate (default: every top-level graph)
//   wrt=x,1       parameters to differentiate, by name or index (default: all
//                 float and floating-tensor parameters)
//   seed=ones     seed every differentiable result with ones (default), or
//   seed=param    take one cotangent parameter per differentiable result
#include "xacc/passes/Autodiff.h"
#include "xacc/passes/PassManager.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::passes {

namespace {

class GradPass : public Pass {
public:
  std::string_view name() const override { return "grad"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    std::string only = ctx.option("graph");
    std::string wrtSpec = ctx.option("wrt");
    std::string seed = ctx.option("seed", "ones");
    if (seed != "ones" && seed != "param") {
      ctx.diag.error(coreCode(CoreDiag::AutodiffError), {},
                     "grad: option seed must be 'ones' or 'param', not '" + seed + "'");
      return false;
    }
    std::vector<ir::Graph*> todo;
    for (auto& g : m.graphs()) {
      if (!only.empty()) {
        bool listed = false;
        size_t pos = 0;
        while (pos <= only.size()) {
          size_t comma = only.find(',', pos);
          if (only.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos) == g->name())
            listed = true;
          if (comma == std::string::npos) break;
          pos = comma + 1;
        }
        if (!listed) continue;
      }
      todo.push_back(g.get());
    }
    if (!only.empty() && todo.empty()) {
      ctx.diag.error(coreCode(CoreDiag::AutodiffError), {}, "grad: no graph named '" + only + "'");
      return false;
    }
    for (ir::Graph* g : todo) {
      GradOptions opts;
      opts.seedParams = seed == "param";
      if (!wrtSpec.empty()) {
        std::string err;
        if (!parseWrtList(*g, wrtSpec, opts.wrt, err)) {
          ctx.diag.error(coreCode(CoreDiag::AutodiffError),
                         ctx.locs ? ctx.locs->graphs.count(g) ? ctx.locs->graphs.at(g)
                                                              : support::SourceLoc{}
                                  : support::SourceLoc{},
                         "grad: " + err);
          return false;
        }
      }
      if (ctx.locs) opts.locOf = [locs = ctx.locs](const ir::Node& n) { return n.loc().file ? n.loc() : locs->of(n); };
      auto dg = buildGradGraph(*g, opts, ctx.diag);
      if (!dg) return false;
      ctx.stats["grad.nodes-added"] += int64_t(dg->numNodes());
      m.add(std::move(dg));
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createGradPass() { return std::make_unique<GradPass>(); }

}  // namespace xacc::passes
