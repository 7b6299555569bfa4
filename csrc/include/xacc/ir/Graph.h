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

#include <cstddef>
#include <cstdint>
#include <iterator>
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
class Value;

/// One use of a value: by operand `index` of `user`, or (user == nullptr) as
/// result `index` of the graph that owns the value.
struct Use {
  Node* user;
  uint32_t index;
  bool operator==(const Use& o) const { return user == o.user && index == o.index; }
};

// Note [IR storage]
// A graph's nodes live in one bump arena owned by the graph (detail::NodeArena),
// in creation order: each node is one block [Node | result Values | operand
// slots], so a walk over the node list reads memory sequentially instead of
// chasing a handful of separately heap-allocated pieces per node. Operand slots
// double as use-list entries: a value's uses form an intrusive doubly-linked list
// through the slots that refer to it (see detail::UseSlot), so adding or
// removing a use is O(1) and allocates nothing, whatever the value's use count.
// Erased nodes are destroyed in place and their block goes on a free list of its
// size; the arena is released with the graph (and kept alive by any graph that
// received a node from it through transferTo).
namespace detail {

/// One operand slot of a node, or one result slot of a graph: the value it
/// refers to and its links in that value's use list (in insertion order).
struct UseSlot {
  Value* value = nullptr;
  UseSlot* prev = nullptr;
  UseSlot* next = nullptr;
  Use use{nullptr, 0};
};

class NodeArena;

/// What Node::regions() returns for a node without regions.
extern const std::vector<std::unique_ptr<Graph>> kNoRegions;

}  // namespace detail

/// The uses of a value, in the order they were added. size() is O(1).
class UseRange {
public:
  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Use;
    using difference_type = std::ptrdiff_t;
    using pointer = const Use*;
    using reference = const Use&;
    iterator() = default;
    explicit iterator(const detail::UseSlot* s) : s_(s) {}
    const Use& operator*() const { return s_->use; }
    const Use* operator->() const { return &s_->use; }
    iterator& operator++() {
      s_ = s_->next;
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      s_ = s_->next;
      return t;
    }
    bool operator==(const iterator& o) const { return s_ == o.s_; }
    bool operator!=(const iterator& o) const { return s_ != o.s_; }

  private:
    const detail::UseSlot* s_ = nullptr;
  };

  UseRange(const detail::UseSlot* first, size_t count) : first_(first), count_(count) {}
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(nullptr); }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const Use& front() const { return first_->use; }

private:
  const detail::UseSlot* first_;
  size_t count_;
};

/// The operands of a node: a random-access range of Value* (null for a missing
/// operand). Converts to std::vector<Value*> where a copy is wanted.
class OperandRange {
public:
  class iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Value*;
    using difference_type = std::ptrdiff_t;
    using pointer = Value* const*;
    using reference = Value* const&;
    iterator() = default;
    explicit iterator(const detail::UseSlot* s) : s_(s) {}
    Value* const& operator*() const { return s_->value; }
    Value* const& operator[](difference_type i) const { return s_[i].value; }
    iterator& operator++() { ++s_; return *this; }
    iterator operator++(int) { iterator t = *this; ++s_; return t; }
    iterator& operator--() { --s_; return *this; }
    iterator operator--(int) { iterator t = *this; --s_; return t; }
    iterator& operator+=(difference_type d) { s_ += d; return *this; }
    iterator& operator-=(difference_type d) { s_ -= d; return *this; }
    iterator operator+(difference_type d) const { return iterator(s_ + d); }
    friend iterator operator+(difference_type d, iterator it) { return it + d; }
    iterator operator-(difference_type d) const { return iterator(s_ - d); }
    difference_type operator-(const iterator& o) const { return s_ - o.s_; }
    bool operator==(const iterator& o) const { return s_ == o.s_; }
    bool operator!=(const iterator& o) const { return s_ != o.s_; }
    bool operator<(const iterator& o) const { return s_ < o.s_; }
    bool operator>(const iterator& o) const { return s_ > o.s_; }
    bool operator<=(const iterator& o) const { return s_ <= o.s_; }
    bool operator>=(const iterator& o) const { return s_ >= o.s_; }

  private:
    const detail::UseSlot* s_ = nullptr;
  };

  OperandRange(const detail::UseSlot* slots, size_t count) : slots_(slots), count_(count) {}
  iterator begin() const { return iterator(slots_); }
  iterator end() const { return iterator(slots_ + count_); }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Value* operator[](size_t i) const { return slots_[i].value; }
  Value* front() const { return slots_[0].value; }
  Value* back() const { return slots_[count_ - 1].value; }
  std::vector<Value*> vec() const { return std::vector<Value*>(begin(), end()); }
  operator std::vector<Value*>() const { return vec(); }

private:
  const detail::UseSlot* slots_;
  size_t count_;
};

class Value {
public:
  Value() = default;
  ~Value() = default;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  Type type() const { return type_; }
  void setType(Type t) { type_ = t; }
  /// The node whose result this is (null for a parameter). A result lives
  /// right after its node (see Note [IR storage]), so this reads nothing.
  Node* definingNode() const;
  bool isParam() const { return param_; }
  uint32_t index() const { return index_; }  ///< result or parameter index
  /// The graph this value is a parameter or node result of (kept in the value,
  /// so that asking does not touch the defining node).
  Graph* ownerGraph() const { return graph_; }
  /// Dense number of this value in its graph: ids are unique within
  /// ownerGraph() and below its valueIdBound(), so a walk can keep per-value
  /// data in a flat vector instead of a pointer-keyed map. Not reused after
  /// the value dies; a value moved to another graph (transferTo) is renumbered.
  uint32_t id() const { return id_; }
  const std::string& name() const;
  void setName(std::string n);

  UseRange uses() const { return UseRange(firstUse_, numUses_); }
  bool hasUses() const { return numUses_ != 0; }
  size_t numUses() const { return numUses_; }
  /// Redirects every use of this value to `other`.
  void replaceAllUsesWith(Value* other);

private:
  friend class Node;
  friend class Graph;
  void addUse(detail::UseSlot* s);
  void removeUse(detail::UseSlot* s);

  Type type_;
  Graph* graph_ = nullptr;
  uint32_t index_ : 31 = 0;
  uint32_t param_ : 1 = 1;  ///< a detached Value() counts as a parameter of no graph
  uint32_t numUses_ = 0;
  uint32_t id_ = 0;
  detail::UseSlot* firstUse_ = nullptr;
  detail::UseSlot* lastUse_ = nullptr;
  std::unique_ptr<std::string> name_;  ///< null when unnamed (most values)
};

class Node {
  friend class Value;
public:
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  const OpInfo& op() const { return *op_; }
  const std::string& opName() const { return op_->name; }

  size_t numOperands() const { return numOperands_; }
  Value* operand(size_t i) const { return operands_[i].value; }
  OperandRange operands() const { return OperandRange(operands_, numOperands_); }
  void setOperand(size_t i, Value* v);
  void addOperand(Value* v);
  void eraseOperand(size_t i);
  void dropAllOperands();

  size_t numResults() const { return numResults_; }
  Value* result(size_t i) const { return resultStorage() + i; }

  AttrDict& attrs() { return attrs_; }
  const AttrDict& attrs() const { return attrs_; }
  const Attr* attr(std::string_view n) const { return attrs_.get(n); }

  size_t numRegions() const { return regions_ ? regions_->size() : 0; }
  Graph* region(size_t i) const { return (*regions_)[i].get(); }
  const std::vector<std::unique_ptr<Graph>>& regions() const {
    return regions_ ? *regions_ : detail::kNoRegions;
  }
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

private:
  friend class Graph;
  // See Note [IR storage]: the result values and `inlineCap` operand slots
  // follow the Node in its arena block.
  Node(const OpInfo* op, uint32_t numResults, uint32_t inlineCap);
  static size_t blockSize(uint32_t numResults, uint32_t inlineCap);
  Value* resultStorage() const {
    return reinterpret_cast<Value*>(const_cast<Node*>(this) + 1);
  }
  detail::UseSlot* inlineSlots() const {
    return reinterpret_cast<detail::UseSlot*>(resultStorage() + numResults_);
  }
  void reserveOperands(uint32_t cap);
  /// Unlinks operand slot `i` from its value's use list (if any).
  void unlinkOperand(uint32_t i);

  const OpInfo* op_;
  detail::UseSlot* operands_;  ///< inlineSlots() or a heap array once grown
  uint32_t numOperands_ = 0;
  uint32_t operandCap_;
  uint32_t numResults_;
  uint32_t inlineCap_;
  Graph* parent_ = nullptr;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  AttrDict attrs_;
  /// Null for the (many) nodes without regions: one pointer in the node, not
  /// a vector.
  std::unique_ptr<std::vector<std::unique_ptr<Graph>>> regions_;
  support::SourceLoc loc_;
};

inline Node* Value::definingNode() const {
  return param_ ? nullptr : reinterpret_cast<Node*>(const_cast<Value*>(this) - index_) - 1;
}

static_assert(sizeof(Node) % alignof(Value) == 0 && alignof(Node) >= alignof(detail::UseSlot));

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
  /// Every value of this graph (parameter or result) has an id() below this.
  uint32_t valueIdBound() const { return nextValueId_; }
  /// Total number of nodes including nested regions.
  size_t totalNodes() const;

  /// Deep copy (regions included), not attached to a module.
  std::unique_ptr<Graph> clone() const;

private:
  friend class Node;
  friend class Value;
  void link(Node* n, Node* before);
  void unlink(Node* n);
  /// Destroys `n` in place and recycles its block (see Note [IR storage]).
  void destroyNode(Node* n);
  /// Graph result slots: results_[i] is resultSlots_[i]->value.
  struct ResultSlot : detail::UseSlot {
    Graph* graph = nullptr;
  };
  void linkResult(size_t i, Value* v);

  std::string name_;
  Node* parentNode_ = nullptr;
  Module* module_ = nullptr;
  std::vector<std::unique_ptr<Value>> params_;
  std::vector<Value*> results_;
  std::vector<std::unique_ptr<ResultSlot>> resultSlots_;
  std::vector<Type> resultTypes_;
  bool hasReturn_ = false;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t count_ = 0;
  uint32_t nextValueId_ = 0;
  std::shared_ptr<detail::NodeArena> arena_;
  /// Arenas of other graphs holding nodes moved here by transferTo.
  std::vector<std::shared_ptr<detail::NodeArena>> adopted_;
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
