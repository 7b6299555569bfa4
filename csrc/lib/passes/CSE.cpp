// Common subexpression elimination over pure, region-free nodes: two nodes
// with the same op, operands (in canonical order for commutative ops),
// attributes and result types compute the same values, so the later one is
// replaced by the earlier. Effectful and nondeterministic nodes are never
// merged, whatever their operands, and neither are nodes that create a mutable
// object (a list): two equal-looking lists are still two identities.
#include <unordered_map>

#include "xacc/passes/PassManager.h"
#include "xacc/support/LargeMemory.h"

namespace xacc::passes {

namespace {

struct Key {
  const ir::Node* n;
};

std::pair<ir::Value*, ir::Value*> orderedPair(const ir::Node* n) {
  ir::Value* a = n->operand(0);
  ir::Value* b = n->operand(1);
  return a < b ? std::make_pair(a, b) : std::make_pair(b, a);
}

bool createsIdentity(const ir::Node* n) {
  for (size_t i = 0; i < n->numResults(); ++i) {
    ir::Type t = n->result(i)->type();
    if (t.kind() == ir::TypeKind::List || t.kind() == ir::TypeKind::PyObj) return true;
  }
  return false;
}

bool commutes(const ir::Node* n) { return n->op().has(ir::kCommutative) && n->numOperands() >= 2; }

struct KeyHash {
  size_t operator()(const Key& k) const {
    const ir::Node* n = k.n;
    size_t h = std::hash<const void*>()(&n->op());
    size_t start = 0;
    if (commutes(n)) {
      auto [a, b] = orderedPair(n);
      h = h * 31 + std::hash<const void*>()(a);
      h = h * 31 + std::hash<const void*>()(b);
      start = 2;
    }
    for (size_t i = start; i < n->numOperands(); ++i) h = h * 31 + std::hash<const void*>()(n->operand(i));
    for (size_t i = 0; i < n->numResults(); ++i) h = h * 31 + std::hash<ir::Type>()(n->result(i)->type());
    h ^= n->attrs().hash();
    // Pointers have zero low bits and the table is indexed by them: finish with
    // a full-avalanche mix (the murmur3 finaliser).
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }
};

struct KeyEq {
  bool operator()(const Key& x, const Key& y) const {
    const ir::Node* a = x.n;
    const ir::Node* b = y.n;
    if (&a->op() != &b->op() || a->numOperands() != b->numOperands() ||
        a->numResults() != b->numResults())
      return false;
    size_t start = 0;
    if (commutes(a)) {
      if (orderedPair(a) != orderedPair(b)) return false;
      start = 2;
    }
    for (size_t i = start; i < a->numOperands(); ++i)
      if (a->operand(i) != b->operand(i)) return false;
    for (size_t i = 0; i < a->numResults(); ++i)
      if (a->result(i)->type() != b->result(i)->type()) return false;
    return a->attrs() == b->attrs();
  }
};

class CSEPass : public Pass {
public:
  std::string_view name() const override { return "cse"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    int64_t merged = 0;
    for (auto& g : m.graphs())
      forEachGraph(*g, [&](ir::Graph& graph) {
        // Open addressing over (hash, node) pairs in one flat table of large
        // memory, sized up front: no per-entry allocation, and a probe compares
        // stored hashes, so it dereferences another node only on a likely match.
        // At 1M nodes each insert is then about one cache miss (the slot).
        size_t cap = 16;
        while (cap < graph.numNodes() * 2) cap <<= 1;
        struct Slot {
          size_t hash;
          ir::Node* node;
        };
        support::LargeArray<Slot> table(cap);
        KeyHash hasher;
        KeyEq eq;
        for (ir::Node* n = graph.front(); n;) {
          ir::Node* next = n->next();
          if (n->isPure() && n->numRegions() == 0 && !n->op().has(ir::kCallLike) &&
              !createsIdentity(n)) {
            size_t h = hasher(Key{n});
            size_t i = h & (cap - 1);
            while (table[i].node && !(table[i].hash == h && eq(Key{table[i].node}, Key{n})))
              i = (i + 1) & (cap - 1);
            if (!table[i].node) {
              table[i] = {h, n};
            } else {
              for (size_t r = 0; r < n->numResults(); ++r)
                n->result(r)->replaceAllUsesWith(table[i].node->result(r));
              graph.erase(n);
              ++merged;
            }
          }
          n = next;
        }
      });
    ctx.stats["cse.nodes-merged"] += merged;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

}  // namespace xacc::passes
