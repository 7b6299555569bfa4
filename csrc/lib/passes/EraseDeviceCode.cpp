// erase-device-code: makes a graph single-device. Every tensor type (params,
// results, node results, type attributes, nested in lists/tuples) and every
// string `device` attribute is rewritten to the target device (pass option
// `device`, default "cpu"). Copies whose only job was to change the device
// (`aten._to_copy.default`, `aten.to.device`, `aten.to.dtype_layout` whose
// result type equals the operand's after the rewrite and that ask for no memory
// format) then compute their operand again and are dropped, except when the
// result would alias what the user passed in (the operand may alias a graph
// parameter), an effectful node reads or writes the operand or the copy (the
// copy is then a distinct buffer that matters), or both are graph results.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

ir::Type onDevice(ir::Type t, const std::string& dev) {
  if (!t) return t;
  switch (t.kind()) {
    case ir::TypeKind::Tensor:
      if (t.device() == dev) return t;
      return t.ranked() ? ir::Type::tensor(t.dtype(), t.dims(), dev)
                        : ir::Type::unrankedTensor(t.dtype(), dev);
    case ir::TypeKind::List: {
      ir::Type e = onDevice(t.elementType(), dev);
      return e == t.elementType() ? t : ir::Type::list(e);
    }
    case ir::TypeKind::Tuple: {
      std::vector<ir::Type> es;
      bool changed = false;
      for (ir::Type e : t.elements()) {
        es.push_back(onDevice(e, dev));
        changed |= es.back() != e;
      }
      return changed ? ir::Type::tuple(es) : t;
    }
    default: return t;
  }
}

/// ATen ops whose result may share storage with a tensor operand (views, and
/// ops that may return their input unchanged). By base name, the part between
/// "aten." and the overload.
const std::unordered_set<std::string>& aliasingOps() {
  static const std::unordered_set<std::string> s = {
      "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "transpose", "permute",
      "expand", "expand_as", "select", "slice", "narrow", "squeeze", "unsqueeze", "as_strided",
      "alias", "detach", "unbind", "split", "split_with_sizes", "unsafe_split", "chunk",
      "unsafe_chunk", "tensor_split", "diagonal", "unfold", "view_as", "view_as_real",
      "view_as_complex", "movedim", "moveaxis", "real", "imag", "flatten", "unflatten",
      "contiguous", "to", "lift_fresh", "numpy_T", "T", "mT", "mH", "H", "swapaxes", "swapdims",
      "indices", "values", "_indices", "_values", "type_as", "_conj", "conj", "_neg_view",
      "resolve_conj", "resolve_neg", "positive", "broadcast_to", "align_as", "rename"};
  return s;
}

std::string atenBase(const std::string& op) {
  if (op.rfind("aten.", 0) != 0) return {};
  size_t dot = op.find('.', 5);
  return op.substr(5, dot == std::string::npos ? std::string::npos : dot - 5);
}

bool isDeviceCopy(const ir::Node* n) {
  const std::string& op = n->opName();
  return op == "aten._to_copy.default" || op == "aten.to.device" || op == "aten.to.dtype_layout";
}

class EraseDeviceCodePass : public Pass {
public:
  std::string_view name() const override { return "erase-device-code"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    std::string dev = ctx.option("device", "cpu");
    int64_t rewritten = 0, dropped = 0;
    for (auto& g : m.graphs())
      forEachGraph(*g, [&](ir::Graph& graph) {
        auto retype = [&](ir::Value* v) {
          ir::Type t = onDevice(v->type(), dev);
          if (t != v->type()) {
            v->setType(t);
            ++rewritten;
          }
        };
        for (size_t i = 0; i < graph.numParams(); ++i) retype(graph.param(i));
        std::vector<ir::Type> rts;
        for (ir::Type t : graph.resultTypes()) rts.push_back(onDevice(t, dev));
        if (rts != graph.resultTypes()) graph.setResultTypes(rts);
        for (ir::Node* n : graph) {
          for (size_t i = 0; i < n->numResults(); ++i) retype(n->result(i));
          std::vector<std::pair<std::string, ir::Attr>> sets;
          for (const auto& [k, a] : n->attrs().items()) {
            if (k == "device" && a.kind() == ir::Attr::Kind::Str && a.getStr() != dev)
              sets.emplace_back(k, ir::Attr::string(dev));
            else if (a.kind() == ir::Attr::Kind::Type && onDevice(a.getType(), dev) != a.getType())
              sets.emplace_back(k, ir::Attr::type(onDevice(a.getType(), dev)));
          }
          for (auto& [k, a] : sets) n->attrs().set(k, a);
          rewritten += static_cast<int64_t>(sets.size());
        }
        dropped += dropCopies(graph);
      });
    ctx.stats["erase-device-code.rewritten"] += rewritten;
    ctx.stats["erase-device-code.copies-dropped"] += dropped;
    return true;
  }

private:
  /// May `v` share storage with a graph parameter?
  static bool mayAliasParam(ir::Value* v, std::unordered_map<ir::Value*, bool>& memo) {
    if (v->isParam()) return true;
    auto it = memo.find(v);
    if (it != memo.end()) return it->second;
    ir::Node* d = v->definingNode();
    bool r = false;
    std::string base = atenBase(d->opName());
    bool aliasing = d->hasEffects() || base.empty() || aliasingOps().count(base) ||
                    (!base.empty() && base.back() == '_');
    if (aliasing)
      for (ir::Value* o : d->operands())
        if (!o->type().isToken() && mayAliasParam(o, memo)) {
          r = true;
          break;
        }
    memo[v] = r;
    return r;
  }

  static bool effectUser(ir::Value* v) {
    for (const ir::Use& u : v->uses())
      if (u.user && u.user->hasEffects()) return true;
    return false;
  }

  static bool isResult(ir::Value* v) {
    for (const ir::Use& u : v->uses())
      if (!u.user) return true;
    return false;
  }

  static int64_t dropCopies(ir::Graph& graph) {
    std::unordered_map<ir::Value*, bool> memo;
    std::vector<ir::Node*> doomed;
    for (ir::Node* n : graph) {
      if (!isDeviceCopy(n) || n->hasEffects() || n->numResults() != 1 || n->numOperands() < 1)
        continue;
      ir::Value* src = n->operand(0);
      ir::Value* res = n->result(0);
      if (!src->type().isTensor() || src->type() != res->type()) continue;
      if (const ir::Attr* mf = n->attr("memory_format"); mf && !mf->isNone()) continue;
      if (const ir::Attr* c = n->attr("copy"); c && c->kind() == ir::Attr::Kind::Bool && c->getBool())
        continue;
      if (mayAliasParam(src, memo) || effectUser(src) || effectUser(res)) continue;
      if (isResult(src) && isResult(res)) continue;
      doomed.push_back(n);
    }
    for (ir::Node* n : doomed) {
      n->result(0)->replaceAllUsesWith(n->operand(0));
      graph.erase(n);
    }
    return static_cast<int64_t>(doomed.size());
  }
};

}  // namespace

std::unique_ptr<Pass> createEraseDeviceCodePass() { return std::make_unique<EraseDeviceCodePass>(); }

}  // namespace xacc::passes
