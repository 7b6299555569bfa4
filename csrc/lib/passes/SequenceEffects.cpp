// sequence-effects: tidies token-threaded effects without changing what a run
// prints, writes or raises, nor in which order (see Note [Effect tokens]):
//  * effect.join: duplicate operands and operands that an other operand's
//    chain already follows are removed; a join of one token is that token; the
//    remaining operands are sorted by definition order (parameters first), so
//    independent chains are merged in one deterministic order.
//  * io.print followed directly on its chain by another io.print (the first
//    token has no other use) becomes one print when the text composes: the
//    merged `sep` is the first print's `end`, which must equal each print's own
//    `sep` wherever that print has two or more operands. The second print's
//    operands must be defined before the first print, so nothing that runs
//    between the two (and could fail) is moved past an output.
//  * list.set of index i on list l directly followed on its chain by another
//    list.set of the same index value on the list it yields (neither the token
//    nor the list in between has another use) drops the first write: no read
//    can observe it. The second value must be defined before the first write.
// DCE already removes effects whose tokens never reach the final token.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

bool isOp(const ir::Node* n, std::string_view name) { return n && n->opName() == name; }

/// Position of the definition of `v` in `graph` (parameters before nodes).
int64_t defPos(ir::Value* v, const std::unordered_map<const ir::Node*, int64_t>& pos) {
  if (v->isParam()) return static_cast<int64_t>(v->index()) - (1 << 30);
  auto it = pos.find(v->definingNode());
  return it == pos.end() ? 0 : it->second;
}

/// Is `v` defined before node `n` (a parameter, or a node earlier in the list)?
bool definedBefore(ir::Value* v, const ir::Node* n,
                   const std::unordered_map<const ir::Node*, int64_t>& pos) {
  if (v->isParam()) return true;
  auto a = pos.find(v->definingNode()), b = pos.find(n);
  return a != pos.end() && b != pos.end() && a->second < b->second;
}

/// Does the chain that produced token `from` pass through token `target`?
bool follows(ir::Value* from, ir::Value* target, std::unordered_set<ir::Value*>& seen) {
  if (from == target) return true;
  if (from->isParam() || !seen.insert(from).second) return false;
  ir::Node* d = from->definingNode();
  for (ir::Value* o : d->operands())
    if (o->type().isToken() && follows(o, target, seen)) return true;
  return false;
}

bool onlyKeys(const ir::Node* n, std::initializer_list<std::string_view> keys) {
  for (const auto& [k, a] : n->attrs().items())
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) return false;
  return true;
}

std::string strAttr(const ir::Node* n, std::string_view key, const char* dflt) {
  const ir::Attr* a = n->attr(key);
  return a && a->kind() == ir::Attr::Kind::Str ? a->getStr() : std::string(dflt);
}

bool onlyUse(ir::Value* v, const ir::Node* user) {
  return v->uses().size() == 1 && v->uses().front().user == user;
}

bool sameIndex(ir::Value* a, ir::Value* b) {
  if (a == b) return true;
  ir::Node* x = a->definingNode();
  ir::Node* y = b->definingNode();
  return x && y && isOp(x, "arith.const") && isOp(y, "arith.const") && x->attrs() == y->attrs() &&
         a->type() == b->type();
}

class SequenceEffectsPass : public Pass {
public:
  std::string_view name() const override { return "sequence-effects"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    for (auto& g : m.graphs()) forEachGraph(*g, [&](ir::Graph& graph) { runOn(graph, ctx.stats); });
    return true;
  }

private:
  static void number(ir::Graph& graph, std::unordered_map<const ir::Node*, int64_t>& pos) {
    pos.clear();
    int64_t i = 0;
    for (ir::Node* n : graph) pos[n] = i++;
  }

  static void runOn(ir::Graph& graph, Statistics& stats) {
    std::unordered_map<const ir::Node*, int64_t> pos;
    number(graph, pos);
    int64_t joins = 0, prints = 0, sets = 0;
    std::vector<ir::Node*> doomed;
    for (ir::Node* n = graph.front(); n; n = n->next()) {
      if (isOp(n, "effect.join")) {
        joins += simplifyJoin(n, pos);
        if (n->numOperands() == 1) {
          n->result(0)->replaceAllUsesWith(n->operand(0));
          doomed.push_back(n);
          ++joins;
        }
      } else if (isOp(n, "io.print")) {
        prints += mergePrint(graph, n, pos, doomed);
      } else if (isOp(n, "list.set")) {
        sets += dropOverwrittenSet(n, pos, doomed);
      }
    }
    for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) graph.erase(*it);
    stats["sequence-effects.joins-simplified"] += joins;
    stats["sequence-effects.prints-merged"] += prints;
    stats["sequence-effects.writes-dropped"] += sets;
  }

  static int64_t simplifyJoin(ir::Node* n, const std::unordered_map<const ir::Node*, int64_t>& pos) {
    std::vector<ir::Value*> ops = n->operands();
    std::vector<ir::Value*> keep;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (std::find(keep.begin(), keep.end(), ops[i]) != keep.end()) continue;
      bool implied = false;
      for (size_t j = 0; j < ops.size() && !implied; ++j) {
        if (ops[j] == ops[i]) continue;
        std::unordered_set<ir::Value*> seen;
        implied = follows(ops[j], ops[i], seen);
      }
      if (!implied) keep.push_back(ops[i]);
    }
    std::stable_sort(keep.begin(), keep.end(), [&](ir::Value* a, ir::Value* b) {
      int64_t pa = defPos(a, pos), pb = defPos(b, pos);
      return pa != pb ? pa < pb : a->index() < b->index();
    });
    if (keep == ops) return 0;
    int64_t removed = static_cast<int64_t>(ops.size() - keep.size());
    while (n->numOperands()) n->eraseOperand(n->numOperands() - 1);
    for (ir::Value* v : keep) n->addOperand(v);
    return removed;
  }

  /// Merges `p2` (an io.print) into the io.print whose token it takes.
  static int64_t mergePrint(ir::Graph&, ir::Node* p2,
                            const std::unordered_map<const ir::Node*, int64_t>& pos,
                            std::vector<ir::Node*>& doomed) {
    ir::Value* t = p2->operand(0);
    ir::Node* p1 = t->definingNode();
    if (!isOp(p1, "io.print") || !onlyUse(t, p2)) return 0;
    if (std::find(doomed.begin(), doomed.end(), p1) != doomed.end()) return 0;
    if (!onlyKeys(p1, {"sep", "end"}) || !onlyKeys(p2, {"sep", "end"})) return 0;
    size_t na = p1->numOperands() - 1, nb = p2->numOperands() - 1;
    std::string s1 = strAttr(p1, "sep", " "), e1 = strAttr(p1, "end", "\n");
    std::string s2 = strAttr(p2, "sep", " "), e2 = strAttr(p2, "end", "\n");
    std::string sep, end;
    if (nb == 0) {
      sep = s1;
      end = e1 + e2;
    } else if (na == 0) {
      if (!e1.empty()) return 0;
      sep = s2;
      end = e2;
    } else {
      if ((na > 1 && s1 != e1) || (nb > 1 && s2 != e1)) return 0;
      sep = e1;
      end = e2;
    }
    for (size_t i = 1; i < p2->numOperands(); ++i)
      if (!definedBefore(p2->operand(i), p1, pos)) return 0;
    // p2 takes p1's place on the chain: token and operands of p1 first.
    std::vector<ir::Value*> vals(p2->operands().begin() + 1, p2->operands().end());
    while (p2->numOperands()) p2->eraseOperand(p2->numOperands() - 1);
    for (ir::Value* v : p1->operands()) p2->addOperand(v);
    for (ir::Value* v : vals) p2->addOperand(v);
    p2->attrs().set("sep", ir::Attr::string(sep));
    p2->attrs().set("end", ir::Attr::string(end));
    doomed.push_back(p1);
    return 1;
  }

  static int64_t dropOverwrittenSet(ir::Node* s2,
                                    const std::unordered_map<const ir::Node*, int64_t>& pos,
                                    std::vector<ir::Node*>& doomed) {
    ir::Node* s1 = s2->operand(0)->definingNode();
    if (!isOp(s1, "list.set") || s2->operand(1) != s1->result(1)) return 0;
    if (std::find(doomed.begin(), doomed.end(), s1) != doomed.end()) return 0;
    if (!onlyUse(s1->result(0), s2) || !onlyUse(s1->result(1), s2)) return 0;
    if (!sameIndex(s1->operand(2), s2->operand(2))) return 0;
    if (!definedBefore(s2->operand(3), s1, pos) || !definedBefore(s2->operand(2), s1, pos)) return 0;
    // A pure read of the list placed between the two writes would see the first.
    int64_t lo = pos.at(s1), hi = pos.at(s2);
    for (const ir::Use& u : s1->operand(1)->uses())
      if (u.user && u.user != s1) {
        auto it = pos.find(u.user);
        if (it == pos.end() || (it->second > lo && it->second < hi)) return 0;
      }
    s2->setOperand(0, s1->operand(0));
    s2->setOperand(1, s1->operand(1));
    doomed.push_back(s1);
    return 1;
  }
};

}  // namespace

std::unique_ptr<Pass> createSequenceEffectsPass() { return std::make_unique<SequenceEffectsPass>(); }

}  // namespace xacc::passes
