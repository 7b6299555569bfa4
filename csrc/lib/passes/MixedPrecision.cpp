// amp: automatic mixed precision. Compute anchors (matmul, linear, conv) and
// the pointwise/layout chains between them run in bfloat16; reductions, norms,
// softmax, losses and exp/log stay float32 (the policy table below); casts
// (`aten._to_copy.default {dtype = ...}`) are inserted only at region
// boundaries, one per value and target dtype, and a widening cast followed by
// the narrowing back (bf16 -> f32 -> bf16) is folded away. Graph results keep
// their declared types. Regions: see Note [AMP regions] in MixedPrecision.h.
//
// Options: exclude=<id>[+<id>...]|all keeps those regions float32 (back-out);
// probe=true appends every region's outputs (as float32) to the graph results,
// which is how xacc._src.amp measures the error of each region.
#include "xacc/passes/MixedPrecision.h"
#include "xacc/support/CoreDiags.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "xacc/ir/Builder.h"
#include "xacc/passes/PassManager.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::passes {

namespace {

using ir::DType;
using ir::Node;
using ir::Type;
using ir::Value;

// The precision policy, one table: ATen base names (no `aten.` prefix, no
// overload) per class. Anything not named here is Other and left untouched.
struct PolicyEntry {
  const char* name;
  AmpClass cls;
};
constexpr PolicyEntry kPolicy[] = {
    // Compute anchors: a bfloat16 GEMM/conv is several times faster on AMX/AVX512-BF16.
    {"mm", AmpClass::Compute}, {"bmm", AmpClass::Compute}, {"matmul", AmpClass::Compute},
    {"addmm", AmpClass::Compute}, {"baddbmm", AmpClass::Compute}, {"addbmm", AmpClass::Compute},
    {"mv", AmpClass::Compute}, {"addmv", AmpClass::Compute}, {"linear", AmpClass::Compute},
    {"conv1d", AmpClass::Compute}, {"conv2d", AmpClass::Compute}, {"conv3d", AmpClass::Compute},
    {"convolution", AmpClass::Compute}, {"_convolution", AmpClass::Compute},
    {"conv_transpose1d", AmpClass::Compute}, {"conv_transpose2d", AmpClass::Compute},
    {"conv_transpose3d", AmpClass::Compute},
    // Pointwise and layout ops: exact or well-conditioned in bfloat16.
    {"add", AmpClass::Follow}, {"sub", AmpClass::Follow}, {"rsub", AmpClass::Follow},
    {"mul", AmpClass::Follow}, {"div", AmpClass::Follow}, {"neg", AmpClass::Follow},
    {"abs", AmpClass::Follow}, {"relu", AmpClass::Follow}, {"relu6", AmpClass::Follow},
    {"gelu", AmpClass::Follow}, {"silu", AmpClass::Follow}, {"sigmoid", AmpClass::Follow},
    {"tanh", AmpClass::Follow}, {"hardtanh", AmpClass::Follow}, {"hardswish", AmpClass::Follow},
    {"hardsigmoid", AmpClass::Follow}, {"leaky_relu", AmpClass::Follow}, {"elu", AmpClass::Follow},
    {"mish", AmpClass::Follow}, {"clamp", AmpClass::Follow}, {"clamp_min", AmpClass::Follow},
    {"clamp_max", AmpClass::Follow}, {"maximum", AmpClass::Follow}, {"minimum", AmpClass::Follow},
    {"where", AmpClass::Follow}, {"view", AmpClass::Follow}, {"_unsafe_view", AmpClass::Follow},
    {"reshape", AmpClass::Follow}, {"t", AmpClass::Follow}, {"transpose", AmpClass::Follow},
    {"permute", AmpClass::Follow}, {"expand", AmpClass::Follow}, {"unsqueeze", AmpClass::Follow},
    {"squeeze", AmpClass::Follow}, {"slice", AmpClass::Follow}, {"select", AmpClass::Follow},
    {"contiguous", AmpClass::Follow}, {"clone", AmpClass::Follow}, {"flatten", AmpClass::Follow},
    {"unflatten", AmpClass::Follow}, {"alias", AmpClass::Follow}, {"detach", AmpClass::Follow},
    // Float32 by policy: accumulations and ill-conditioned functions.
    {"sum", AmpClass::KeepF32}, {"mean", AmpClass::KeepF32}, {"var", AmpClass::KeepF32},
    {"std", AmpClass::KeepF32}, {"var_mean", AmpClass::KeepF32}, {"std_mean", AmpClass::KeepF32},
    {"norm", AmpClass::KeepF32}, {"linalg_vector_norm", AmpClass::KeepF32},
    {"prod", AmpClass::KeepF32}, {"cumsum", AmpClass::KeepF32}, {"cumprod", AmpClass::KeepF32},
    {"logsumexp", AmpClass::KeepF32}, {"amax", AmpClass::KeepF32}, {"amin", AmpClass::KeepF32},
    {"layer_norm", AmpClass::KeepF32}, {"native_layer_norm", AmpClass::KeepF32},
    {"batch_norm", AmpClass::KeepF32}, {"native_batch_norm", AmpClass::KeepF32},
    {"_native_batch_norm_legit", AmpClass::KeepF32},
    {"_native_batch_norm_legit_no_training", AmpClass::KeepF32},
    {"group_norm", AmpClass::KeepF32}, {"native_group_norm", AmpClass::KeepF32},
    {"instance_norm", AmpClass::KeepF32}, {"rms_norm", AmpClass::KeepF32},
    {"_fused_rms_norm", AmpClass::KeepF32},
    {"softmax", AmpClass::KeepF32}, {"_softmax", AmpClass::KeepF32},
    {"log_softmax", AmpClass::KeepF32}, {"_log_softmax", AmpClass::KeepF32},
    {"mse_loss", AmpClass::KeepF32}, {"l1_loss", AmpClass::KeepF32},
    {"smooth_l1_loss", AmpClass::KeepF32}, {"huber_loss", AmpClass::KeepF32},
    {"nll_loss", AmpClass::KeepF32}, {"nll_loss_forward", AmpClass::KeepF32},
    {"nll_loss2d_forward", AmpClass::KeepF32}, {"cross_entropy_loss", AmpClass::KeepF32},
    {"binary_cross_entropy", AmpClass::KeepF32},
    {"binary_cross_entropy_with_logits", AmpClass::KeepF32}, {"kl_div", AmpClass::KeepF32},
    {"exp", AmpClass::KeepF32}, {"log", AmpClass::KeepF32}, {"log1p", AmpClass::KeepF32},
    {"expm1", AmpClass::KeepF32}, {"pow", AmpClass::KeepF32}, {"rsqrt", AmpClass::KeepF32},
    {"sqrt", AmpClass::KeepF32}, {"reciprocal", AmpClass::KeepF32},
};

std::string_view baseName(std::string_view op) {
  if (!op.starts_with("aten.")) return {};
  op.remove_prefix(5);
  return op.substr(0, op.find('.'));
}

bool isTensorOf(const Value* v, DType d) {
  return v && v->type().isTensor() && v->type().dtype() == d;
}
bool isFloatTensor(const Value* v) {
  return v && v->type().isTensor() && ir::isFloatingDType(v->type().dtype());
}

/// A node whose floating tensor operands and results are all float32 (with at
/// least one tensor result): the only nodes the pass may lower.
bool allFloat32(const Node* n) {
  if (n->hasEffects() || n->numRegions() || n->numResults() == 0) return false;
  for (Value* v : n->operands())
    if (isFloatTensor(v) && !isTensorOf(v, DType::F32)) return false;
  bool anyTensor = false;
  for (size_t i = 0; i < n->numResults(); ++i) {
    Value* r = n->result(i);
    if (!r->type().isTensor()) return false;
    if (isFloatTensor(r) && !isTensorOf(r, DType::F32)) return false;
    anyTensor = true;
  }
  return anyTensor;
}

Type withDType(Type t, DType d) {
  return t.ranked() ? Type::tensor(d, t.dims(), t.device()) : Type::unrankedTensor(d, t.device());
}

bool isPlainCast(const Node* n) {
  if (n->opName() != "aten._to_copy.default" || n->numOperands() != 1) return false;
  for (auto& [k, a] : n->attrs().items())
    if (k != "dtype" && !a.isNone()) return false;
  return n->attr("dtype") != nullptr;
}

/// from -> to -> from is the identity for these (to is at least as wide).
bool widening(DType from, DType to) {
  auto rank = [](DType d) { return d == DType::F64 ? 3 : d == DType::F32 ? 2 : 1; };
  if (!ir::isFloatingDType(from) || !ir::isFloatingDType(to)) return false;
  if (from == DType::F16 && to == DType::BF16) return false;
  if (from == DType::BF16 && to == DType::F16) return false;
  return rank(to) > rank(from);
}

}  // namespace

AmpClass ampClassOf(std::string_view opName) {
  static const std::unordered_map<std::string_view, AmpClass> table = [] {
    std::unordered_map<std::string_view, AmpClass> t;
    for (const PolicyEntry& e : kPolicy) t.emplace(e.name, e.cls);
    return t;
  }();
  auto it = table.find(baseName(opName));
  return it == table.end() ? AmpClass::Other : it->second;
}

const char* ampClassName(AmpClass c) {
  switch (c) {
    case AmpClass::Compute: return "compute";
    case AmpClass::Follow: return "follow";
    case AmpClass::KeepF32: return "keep-f32";
    case AmpClass::Other: return "other";
  }
  return "other";
}

AmpPlan planMixedPrecision(const ir::Graph& g) {
  AmpPlan plan;
  std::vector<Node*> order;
  for (Node* n : g) order.push_back(n);
  std::unordered_map<const Node*, size_t> idx;
  for (size_t i = 0; i < order.size(); ++i) idx[order[i]] = i;
  size_t n = order.size();
  std::vector<uint8_t> anchor(n), follow(n), fwd(n), bwd(n);
  for (size_t i = 0; i < n; ++i) {
    AmpClass c = ampClassOf(order[i]->opName());
    bool ok = allFloat32(order[i]);
    anchor[i] = c == AmpClass::Compute && ok;
    follow[i] = c == AmpClass::Follow && ok;
    if (c == AmpClass::KeepF32) {
      bool floats = false;
      for (Value* v : order[i]->operands()) floats |= isFloatTensor(v);
      if (floats) plan.keptF32.push_back(order[i]);
    }
  }
  auto producer = [&](const Value* v) -> long {
    Node* p = v ? v->definingNode() : nullptr;
    return p && p->parent() == &g ? long(idx.at(p)) : -1;
  };
  // Forward: a follow node fed (through a float tensor) by an anchor or such a node.
  for (size_t i = 0; i < n; ++i) {
    if (!follow[i]) continue;
    for (Value* v : order[i]->operands()) {
      long p = producer(v);
      if (p >= 0 && isFloatTensor(v) && (anchor[p] || fwd[p])) fwd[i] = 1;
    }
  }
  // Backward: a follow node that feeds an anchor or such a node.
  for (size_t i = n; i-- > 0;) {
    if (!follow[i]) continue;
    for (size_t r = 0; r < order[i]->numResults() && !bwd[i]; ++r)
      for (const ir::Use& u : order[i]->result(r)->uses()) {
        if (!u.user || u.user->parent() != &g) continue;
        size_t j = idx.at(u.user);
        if (anchor[j] || bwd[j]) bwd[i] = 1;
      }
  }
  std::vector<int> region(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (anchor[i]) {
      region[i] = int(plan.regions.size());
      plan.regions.push_back(AmpRegion{region[i], {}, {}});
    } else if (fwd[i] && bwd[i]) {
      for (Value* v : order[i]->operands()) {
        long p = producer(v);
        if (p >= 0 && isFloatTensor(v) && region[p] >= 0) {
          region[i] = region[p];
          break;
        }
      }
    }
    if (region[i] >= 0) plan.regions[region[i]].nodes.push_back(order[i]);
  }
  for (AmpRegion& r : plan.regions)
    for (Node* m : r.nodes)
      for (size_t k = 0; k < m->numResults(); ++k) {
        Value* v = m->result(k);
        bool out = false;
        for (const ir::Use& u : v->uses())
          out |= !u.user || u.user->parent() != &g || region[idx.at(u.user)] != r.id;
        if (out) r.outputs.push_back(v);
      }
  return plan;
}

bool applyMixedPrecision(ir::Graph& g, const AmpOptions& opts, AmpStats& stats,
                         std::string& error) {
  AmpPlan plan = planMixedPrecision(g);
  std::unordered_set<const Node*> low;
  std::vector<bool> regionLow(plan.regions.size());
  for (const AmpRegion& r : plan.regions) {
    regionLow[r.id] = !opts.excludeAll && !opts.exclude.count(r.id);
    if (!regionLow[r.id]) continue;
    ++stats.regionsLow;
    for (Node* m : r.nodes) low.insert(m);
  }
  stats.regions += int64_t(plan.regions.size());
  stats.nodesLow += int64_t(low.size());

  // One cast per (value, dtype), placed before its first consumer; later
  // consumers come after it in graph order, so the cast dominates them.
  std::map<std::pair<Value*, DType>, Value*> casts;
  std::unordered_map<Value*, DType> original;  // results retyped to bfloat16
  ir::Builder b(g);
  auto castTo = [&](Value* v, DType d, Node* before) -> Value* {
    auto [it, fresh] = casts.try_emplace({v, d}, nullptr);
    if (!fresh) return it->second;
    b.setInsertionPoint(g, before);
    if (Node* def = v->definingNode()) b.setLoc(def->loc());
    Node* c = b.create("aten._to_copy.default", {v},
                       ir::attrs({{"dtype", ir::Attr::string(ir::dtypeName(d))}}),
                       {withDType(v->type(), d)});
    ++stats.castsInserted;
    return it->second = c->result(0);
  };

  std::vector<Node*> order;
  for (Node* m : g) order.push_back(m);
  for (Node* m : order) {
    if (low.count(m)) {
      for (size_t i = 0; i < m->numOperands(); ++i)
        if (isTensorOf(m->operand(i), DType::F32))
          m->setOperand(i, castTo(m->operand(i), DType::BF16, m));
      std::vector<Type> operandTypes, results;
      for (Value* v : m->operands()) operandTypes.push_back(v ? v->type() : Type::any());
      std::string err;
      if (m->op().infer) {
        ir::InferInput in{operandTypes, m->attrs(), &m->regions(), nullptr};
        if (!m->op().infer(in, results, err) || results.size() != m->numResults()) {
          error = m->opName() + " in bfloat16: " + (err.empty() ? "type rule failed" : err);
          return false;
        }
      } else {
        for (size_t r = 0; r < m->numResults(); ++r) {
          Type t = m->result(r)->type();
          results.push_back(isTensorOf(m->result(r), DType::F32) ? withDType(t, DType::BF16) : t);
        }
      }
      for (size_t r = 0; r < m->numResults(); ++r) {
        Value* v = m->result(r);
        if (results[r] != v->type()) {
          original.emplace(v, v->type().dtype());
          v->setType(results[r]);
        }
      }
    } else {
      for (size_t i = 0; i < m->numOperands(); ++i)
        if (auto it = original.find(m->operand(i)); it != original.end())
          m->setOperand(i, castTo(m->operand(i), it->second, m));
    }
  }
  for (size_t i = 0; i < g.results().size(); ++i)
    if (auto it = original.find(g.results()[i]); it != original.end())
      g.setResult(i, castTo(g.results()[i], it->second, nullptr));

  if (opts.probe) {
    std::vector<Type> types = g.resultTypes();
    for (const AmpRegion& r : plan.regions)
      for (Value* v : r.outputs) {
        auto it = original.find(v);
        Value* p = it == original.end() ? v : castTo(v, it->second, nullptr);
        g.addResult(p, p->type());
      }
  }

  // Cast fusion: x -> widen -> narrow back to x's dtype is x.
  for (Node* m = g.front(); m;) {
    Node* next = m->next();
    if (isPlainCast(m)) {
      Node* c0 = m->operand(0)->definingNode();
      if (c0 && isPlainCast(c0)) {
        Value* src = c0->operand(0);
        Type out = m->result(0)->type();
        if (src->type() == out && widening(src->type().dtype(), c0->result(0)->type().dtype())) {
          m->result(0)->replaceAllUsesWith(src);
          if (m == next) next = m->next();
          g.erase(m);
          ++stats.castsFolded;
          if (!c0->result(0)->hasUses()) {
            if (c0 == next) next = c0->next();
            g.erase(c0);
          }
        }
      }
    }
    m = next;
  }
  return true;
}

namespace {

class MixedPrecisionPass : public Pass {
public:
  std::string_view name() const override { return "amp"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    AmpOptions opts;
    std::string ex = ctx.option("exclude");
    if (ex == "all") {
      opts.excludeAll = true;
    } else if (!ex.empty()) {
      size_t pos = 0;
      while (pos <= ex.size()) {
        size_t end = ex.find('+', pos);
        if (end == std::string::npos) end = ex.size();
        std::string_view item(ex.data() + pos, end - pos);
        int id = -1;
        auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (ec != std::errc() || p != item.data() + item.size() || id < 0) {
          ctx.diag.error(coreCode(CoreDiag::MixedPrecisionError), {},
                         "amp: option exclude must be 'all' or region ids joined by '+' "
                         "(e.g. exclude=0+2), not '" +
                             ex + "'");
          return false;
        }
        opts.exclude.insert(id);
        pos = end + 1;
      }
    }
    std::string probe = ctx.option("probe", "false");
    if (probe != "true" && probe != "false") {
      ctx.diag.error(coreCode(CoreDiag::MixedPrecisionError), {},
                     "amp: option probe must be 'true' or 'false', not '" + probe + "'");
      return false;
    }
    opts.probe = probe == "true";
    AmpStats st;
    for (auto& g : m.graphs()) {
      std::string error;
      if (!applyMixedPrecision(*g, opts, st, error)) {
        support::SourceLoc at;
        if (ctx.locs && ctx.locs->graphs.count(g.get())) at = ctx.locs->graphs.at(g.get());
        ctx.diag.error(coreCode(CoreDiag::MixedPrecisionError), at,
                       "amp: graph @" + g->name() + ": " + error);
        return false;
      }
    }
    ctx.stats["amp.regions"] += st.regions;
    ctx.stats["amp.regions-bf16"] += st.regionsLow;
    ctx.stats["amp.nodes-bf16"] += st.nodesLow;
    ctx.stats["amp.casts-inserted"] += st.castsInserted;
    ctx.stats["amp.casts-folded"] += st.castsFolded;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createMixedPrecisionPass() { return std::make_unique<MixedPrecisionPass>(); }

}  // namespace xacc::passes
