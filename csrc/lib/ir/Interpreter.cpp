// The reference interpreter. A Plan per graph lists the live nodes (those a
// result depends on) in order, with operand and result slots precomputed, so a
// run is a linear walk over a datum array.
#include "xacc/ir/Interpreter.h"
#include "xacc/support/CoreDiags.h"

#include <cstdio>
#include <unordered_map>

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

struct Interpreter::Plan {
  struct Step {
    const Node* node;
    std::vector<uint32_t> operandSlots;
    uint32_t firstResultSlot;
  };
  std::vector<Step> steps;
  std::vector<uint32_t> resultSlots;
  uint32_t numSlots = 0;
};

Interpreter::Interpreter(support::DiagnosticEngine& diag, const Module* module)
    : diag_(diag), module_(module) {}
Interpreter::~Interpreter() = default;

void Interpreter::write(std::string_view s) {
  if (out_) {
    out_(s);
  } else {
    std::fwrite(s.data(), 1, s.size(), stdout);
  }
}

bool Interpreter::fail(const Node& n, std::string code, std::string message) {
  // A node without a location (an `outer` functor's foreign call) is reported
  // at the innermost call that reached it.
  support::SourceLoc at = n.loc();
  for (size_t i = sites_.size(); !at.valid() && i-- > 0;) at = sites_[i]->loc();
  diag_.error(std::move(code), at, std::move(message));
  return false;
}

const Interpreter::Plan& Interpreter::planFor(const Graph& g) {
  auto it = plans_.find(&g);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  // Liveness: walk backwards from the results; a node is live if any result is used by
  // a live node or by the graph's return.
  std::unordered_map<const Node*, bool> live;
  std::vector<const Node*> order;
  for (Node* n : g) order.push_back(n);
  std::unordered_map<const Value*, bool> needed;
  for (Value* v : g.results())
    if (v) needed[v] = true;
  std::vector<bool> keep(order.size(), false);
  for (size_t i = order.size(); i-- > 0;) {
    const Node* n = order[i];
    bool isLive = false;
    for (size_t r = 0; r < n->numResults() && !isLive; ++r) isLive = needed.count(n->result(r));
    if (!isLive) continue;
    keep[i] = true;
    for (Value* v : n->operands())
      if (v) needed[v] = true;
  }
  std::unordered_map<const Value*, uint32_t> slot;
  for (size_t i = 0; i < g.numParams(); ++i) slot[g.param(i)] = plan->numSlots++;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!keep[i]) continue;
    const Node* n = order[i];
    Plan::Step step{n, {}, plan->numSlots};
    for (Value* v : n->operands()) step.operandSlots.push_back(v ? slot[v] : 0);
    for (size_t r = 0; r < n->numResults(); ++r) slot[n->result(r)] = plan->numSlots++;
    plan->steps.push_back(std::move(step));
  }
  for (Value* v : g.results()) plan->resultSlots.push_back(v ? slot[v] : 0);
  auto* p = plan.get();
  plans_.emplace(&g, std::move(plan));
  return *p;
}

bool Interpreter::run(const Graph& g, const std::vector<Datum>& args, std::vector<Datum>& results) {
  if (args.size() != g.numParams()) {
    diag_.error(coreCode(CoreDiag::ArgumentCountMismatch), {},
                "graph '" + g.name() + "' expects " + std::to_string(g.numParams()) +
                    " arguments, got " + std::to_string(args.size()));
    return false;
  }
  if (depth_ >= maxDepth_) {
    diag_.error(coreCode(CoreDiag::CallDepthExceeded),
                g.front() ? g.front()->loc() : support::SourceLoc{},
                "maximum call depth (" + std::to_string(maxDepth_) + ") exceeded");
    return false;
  }
  struct DepthGuard {
    unsigned& d;
    explicit DepthGuard(unsigned& x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);

  const Plan& plan = planFor(g);
  std::vector<Datum> slots(plan.numSlots);
  for (size_t i = 0; i < args.size(); ++i) slots[i] = args[i];
  std::vector<Datum> opArgs, opResults;
  for (const Plan::Step& step : plan.steps) {
    const Node& n = *step.node;
    if (!n.op().interp)
      return fail(n, coreCode(CoreDiag::NoExecutionRule),
                  "no interpreter rule for '" + n.opName() + "'");
    opArgs.clear();
    for (uint32_t s : step.operandSlots) opArgs.push_back(slots[s]);
    opResults.clear();
    if (!n.op().interp(*this, n, opArgs, opResults)) return false;
    if (opResults.size() != n.numResults())
      return fail(n, coreCode(CoreDiag::WrongResultCount),
                  "'" + n.opName() + "' produced " + std::to_string(opResults.size()) +
                      " values, expected " + std::to_string(n.numResults()));
    for (size_t r = 0; r < opResults.size(); ++r)
      slots[step.firstResultSlot + r] = std::move(opResults[r]);
  }
  results.clear();
  for (uint32_t s : plan.resultSlots) results.push_back(slots[s]);
  return true;
}

bool Interpreter::call(std::string_view name, const std::vector<Datum>& args,
                       std::vector<Datum>& results, const Node* site) {
  const Graph* g = module_ ? module_->lookup(name) : nullptr;
  if (!g) {
    if (site)
      return fail(*site, coreCode(CoreDiag::UnknownGraph), "unknown graph @" + std::string(name));
    diag_.error(coreCode(CoreDiag::UnknownGraph), {}, "unknown graph @" + std::string(name));
    return false;
  }
  SiteScope scope(sites_, site);
  return run(*g, args, results);
}

bool Interpreter::once(std::string_view name, std::vector<Datum>& results, const Node* site) {
  auto it = onceResults_.find(std::string(name));
  if (it != onceResults_.end()) {
    results = it->second;
    return true;
  }
  if (!call(name, {}, results, site)) return false;
  onceResults_.emplace(std::string(name), results);
  return true;
}

bool Interpreter::forEachChunk(const Datum&, size_t n,
                               const std::function<bool(Interpreter&, size_t, size_t)>& body) {
  return n == 0 || body(*this, 0, n);
}

bool Interpreter::apply(const Datum& fn, const std::vector<Datum>& args,
                        std::vector<Datum>& results, const Node* site) {
  if (fn.kind() != DKind::Func) {
    if (site)
      return fail(*site, coreCode(CoreDiag::NotAFunction), "called value is not a function");
    diag_.error(coreCode(CoreDiag::NotAFunction), {}, "called value is not a function");
    return false;
  }
  std::vector<Datum> all = fn.funcCaptures();
  all.insert(all.end(), args.begin(), args.end());
  SiteScope scope(sites_, site);
  return run(*fn.funcGraph(), all, results);
}

bool attrToDatum(const Attr& a, Type t, Datum& out) {
  switch (a.kind()) {
    case Attr::Kind::None: out = Datum(); return true;
    case Attr::Kind::Int:
      if (t && t.isFloat()) out = Datum::real(double(a.getInt()));
      else if (t && t.kind() == TypeKind::Bool) out = Datum::boolean(a.getInt() != 0);
      else out = Datum::integer(a.getInt());
      return true;
    case Attr::Kind::Float: out = Datum::real(a.getFloat()); return true;
    case Attr::Kind::Bool: out = Datum::boolean(a.getBool()); return true;
    case Attr::Kind::Str: out = Datum::string(a.getStr()); return true;
    case Attr::Kind::Array: {
      std::vector<Datum> items;
      bool isTuple = t && t.kind() == TypeKind::Tuple;
      size_t i = 0;
      for (const Attr& e : a.getArray()) {
        Type et;
        if (t && t.kind() == TypeKind::List) et = t.elementType();
        else if (isTuple && i < t.elements().size()) et = t.elements()[i];
        Datum d;
        if (!attrToDatum(e, et, d)) return false;
        items.push_back(std::move(d));
        ++i;
      }
      out = isTuple ? Datum::tuple(std::move(items)) : Datum::list(std::move(items));
      return true;
    }
    default: return false;
  }
}

bool datumToAttr(const Datum& d, Attr& out) {
  switch (d.kind()) {
    case DKind::Null: out = Attr::none(); return true;
    case DKind::Int: out = Attr::integer(d.asInt()); return true;
    case DKind::Float: out = Attr::real(d.asFloat()); return true;
    case DKind::Bool: out = Attr::boolean(d.asBool()); return true;
    case DKind::Str: out = Attr::string(d.asStr()); return true;
    case DKind::Tuple: {
      Attr::Array items;
      for (const Datum& e : d.tupleItems()) {
        Attr a;
        if (!datumToAttr(e, a)) return false;
        items.push_back(std::move(a));
      }
      out = Attr::array(std::move(items));
      return true;
    }
    default: return false;  // lists are mutable identities; tensors and objects have no attr form
  }
}

}  // namespace xacc::ir
