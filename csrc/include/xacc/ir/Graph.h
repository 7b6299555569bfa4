// The graph IR: values, nodes, graphs and modules.
//
// A Graph has typed parameters, an ordered node list and a list of returned
// values. The node list is a topological order (every operand is defined by a
// parameter or an earlier node); semantics are those of a DAG of values, so a
// pass may reorder nodes as long as that invariant holds. Regions are nested
// graphs owned by a node and isolated from above: everything a region uses
// enters through its parameters, which keeps every pass local.
//
// Note [Effect tokens]: an op with side effects takes an `!token` as operand 0
// and yields a new `!token` as result 0. Tokens order effects; a graph that has
// effects returns its final token. A node "has effects" iff it has a token
// operand or result, so passes decide by looking at types, not names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Attribute.h"
#include "xacc/ir/Op.h"
#include "xacc/ir/Type.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

class Node;
class Graph;

/// One use of a value: by operand `index` of `user`, or (user == nullptr) as
/// result `index` of the graph that owns the value.
struct Use {
  Node* user;
  uint32_t index;
  bool operator==(const Use& o) const { return user == o.user && index == o.index; }
};

class Value {
public:
  Type type() const { return type_; }
  void setType(Type t) { type_ = t; }
  Node* definingNode() const { return def_; }
  bool isParam() const { return def_ == nullptr; }
  uint32_t index() const { return index_; }  ///< result or parameter index
  Graph* ownerGraph() const;
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  /// Redirects every use of this value to `other`.
  void replaceAllUsesWith(Value* other);

private:
  friend class Node;
  friend class Graph;
  Type type_;
  Node* def_ = nullptr;
  Graph* paramOwner_ = nullptr;
  uint32_t index_ = 0;
  std::string name_;
  std::vector<Use> uses_;
};

class Node {
  friend class Value;
public:
  ~Node();
  const OpInfo& op() const { return *op_; }
  const std::string& opName() const { return op_->name; }

  size_t numOperands() const { return operands_.size(); }
  Value* operand(size_t i) const { return operands_[i]; }
  const std::vector<Value*>& operands() const { return operands_; }
  void setOperand(size_t i, Value* v);
  void addOperand(Value* v);
  void eraseOperand(size_t i);
  void dropAllOperands();

  size_t numResults() const { return numResults_; }
  Value* result(size_t i) const { return &results_[i]; }

  AttrDict& attrs() { return attrs_; }
  const AttrDict& attrs() const { return attrs_; }
  const Attr* attr(std::string_view n) const { return attrs_.get(n); }

  size_t numRegions() const { return regions_.size(); }
  Graph* region(size_t i) const { return regions_[i].get(); }
  const std::vector<std::unique_ptr<Graph>>& regions() const { return regions_; }
  Graph* addRegion(std::unique_ptr<Graph> g);

  const support::SourceLoc& loc() const { return loc_; }
  void setLoc(support::SourceLoc l) { loc_ = l; }
  Graph* parent() const { return parent_; }
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }

  /// See Note [Effect tokens].
  bool hasEffects() const;
  /// Pure and deterministic: safe to CSE, fold, drop when unused.
  bool isPure() const { return !hasEffects() && !op_->has(kNondeterministic); }
  bool allResultsUnused() const;

  /// Scratch stamp for linear-time walks (the verifier's "defined before use"
  /// check): a walk takes a fresh epoch from `nextEpoch()` and stamps nodes.
  mutable uint64_t epoch = 0;
  static uint64_t nextEpoch();

private:
  friend class Graph;
  Node(const OpInfo* op, size_t numResults);
  const OpInfo* op_;
  std::vector<Value*> operands_;
  std::unique_ptr<Value[]> results_;
  uint32_t numResults_;
  AttrDict attrs_;
  std::vector<std::unique_ptr<Graph>> regions_;
  support::SourceLoc loc_;
  Graph* parent_ = nullptr;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
};

/// Iteration over the intrusive node list.
class NodeIterator {
public:
  explicit NodeIterator(Node* n) : n_(n) {}
  Node* operator*() const { return n_; }
  NodeIterator& operator++() {
    n_ = n_->next();
    return *this;
  }
  bool operator!=(const NodeIterator& o) const { return n_ != o.n_; }

private:
  Node* n_;
};

class Module;

class Graph {
  friend class Value;
public:
  explicit Graph(std::string name = {});
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  Node* parentNode() const { return parentNode_; }
  Module* module() const;
  void setModule(Module* m) { module_ = m; }

  // Parameters.
  Value* addParam(Type t, std::string name = {});
  size_t numParams() const { return params_.size(); }
  Value* param(size_t i) const { return params_[i].get(); }
  void eraseParam(size_t i);  ///< requires no uses

  // Results.
  const std::vector<Value*>& results() const { return results_; }
  const std::vector<Type>& resultTypes() const { return resultTypes_; }
  void setResultTypes(std::vector<Type> ts) { resultTypes_ = std::move(ts); }
  void addResult(Value* v, Type declared = Type());
  void setResult(size_t i, Value* v);
  void setResults(const std::vector<Value*>& vs);
  bool hasReturn() const { return hasReturn_; }
  void setHasReturn(bool b) { hasReturn_ = b; }

  // Nodes.
  /// Creates a node at the end of the graph (or before `before`).
  Node* create(const OpInfo* op, const std::vector<Value*>& operands,
               const std::vector<Type>& resultTypes, Node* before = nullptr);
  void erase(Node* n);  ///< node must have no used results
  void moveBefore(Node* n, Node* before);  ///< before == nullptr: to the end
  /// Detaches `n` from this graph and appends it to `other` (same order rules).
  void transferTo(Node* n, Graph& other, Node* before = nullptr);
  Node* front() const { return head_; }
  Node* back() const { return tail_; }
  size_t numNodes() const { return count_; }
  NodeIterator begin() const { return NodeIterator(head_); }
  NodeIterator end() const { return NodeIterator(nullptr); }

  /// Label used for regions when printing (`^then`).
  const std::string& label() const { return name_; }
  /// Total number of nodes including nested regions.
  size_t totalNodes() const;

  /// Deep copy (regions included), not attached to a module.
  std::unique_ptr<Graph> clone() const;

private:
  friend class Node;
  friend class Value;
  void link(Node* n, Node* before);
  void unlink(Node* n);

  std::string name_;
  Node* parentNode_ = nullptr;
  Module* module_ = nullptr;
  std::vector<std::unique_ptr<Value>> params_;
  std::vector<Value*> results_;
  std::vector<Type> resultTypes_;
  bool hasReturn_ = false;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t count_ = 0;
};

/// A set of named top-level graphs.
class Module {
public:
  Graph* add(std::unique_ptr<Graph> g);
  Graph* lookup(std::string_view name) const;
  bool erase(std::string_view name);
  const std::vector<std::unique_ptr<Graph>>& graphs() const { return graphs_; }
  size_t totalNodes() const;

private:
  std::vector<std::unique_ptr<Graph>> graphs_;
};

}  // namespace xacc::ir
