// Runtime values ("datums") of the reference interpreter and the runtimes: a
// tagged scalar or an intrusively refcounted heap object. Tensors and Python
// objects are opaque objects implemented by the component that owns them (the
// ATen backend, the Python bindings), so the IR library never links libtorch
// or libpython. Lists are mutable and shared by reference (Camel and Python
// semantics); tuples, structs and strings are immutable.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "xacc/ir/Type.h"

namespace xacc::ir {

class Graph;
class Datum;

struct Object {
  std::atomic<int32_t> refs{0};
  virtual ~Object() = default;
};

enum class DKind : uint8_t { Null, Int, Float, Bool, Str, List, Tuple, Struct, Func, Tensor, PyObj, Token };

class Datum {
public:
  Datum() : kind_(DKind::Null) { u_.i = 0; }
  static Datum integer(int64_t v) { Datum d(DKind::Int); d.u_.i = v; return d; }
  static Datum real(double v) { Datum d(DKind::Float); d.u_.f = v; return d; }
  static Datum boolean(bool v) { Datum d(DKind::Bool); d.u_.b = v; return d; }
  static Datum token() { return Datum(DKind::Token); }
  static Datum string(std::string s);
  static Datum list(std::vector<Datum> items);
  static Datum tuple(std::vector<Datum> items);
  static Datum structure(std::vector<std::string> names, std::vector<Datum> fields);
  static Datum func(const Graph* g, std::vector<Datum> captures);
  /// Wraps an opaque object (tensor or Python object); takes a reference.
  static Datum object(DKind kind, Object* o);

  Datum(const Datum& o) : kind_(o.kind_), u_(o.u_) { retain(); }
  Datum(Datum&& o) noexcept : kind_(o.kind_), u_(o.u_) { o.kind_ = DKind::Null; }
  Datum& operator=(const Datum& o) {
    if (this != &o) {
      Datum tmp(o);
      swap(tmp);
    }
    return *this;
  }
  Datum& operator=(Datum&& o) noexcept {
    if (this != &o) {
      release();
      kind_ = o.kind_;
      u_ = o.u_;
      o.kind_ = DKind::Null;
    }
    return *this;
  }
  ~Datum() { release(); }
  void swap(Datum& o) noexcept {
    std::swap(kind_, o.kind_);
    std::swap(u_, o.u_);
  }

  /// In-place scalar stores (no temporary, no refcount traffic for scalars).
  void setInt(int64_t v) {
    if (isHeap()) releaseHeap();
    kind_ = DKind::Int;
    u_.i = v;
  }
  void setFloat(double v) {
    if (isHeap()) releaseHeap();
    kind_ = DKind::Float;
    u_.f = v;
  }
  void setBool(bool v) {
    if (isHeap()) releaseHeap();
    kind_ = DKind::Bool;
    u_.i = 0;
    u_.b = v;
  }

  DKind kind() const { return kind_; }
  bool isHeap() const { return kind_ >= DKind::Str && kind_ <= DKind::PyObj; }
  int64_t asInt() const { return u_.i; }
  double asFloat() const { return u_.f; }
  bool asBool() const { return u_.b; }
  const std::string& asStr() const;
  std::vector<Datum>& listItems() const;        ///< List (mutable, shared)
  const std::vector<Datum>& tupleItems() const; ///< Tuple
  const std::vector<std::string>& structNames() const;
  const std::vector<Datum>& structFields() const;
  const Graph* funcGraph() const;
  const std::vector<Datum>& funcCaptures() const;
  Object* object() const { return isHeap() ? u_.o : nullptr; }

  /// Python-like repr used by `io.print` and diagnostics (floats always carry
  /// a fractional part or exponent, strings print raw at top level).
  std::string repr(bool topLevel = true) const;
  /// Structural equality (tensors by identity).
  bool equals(const Datum& o) const;

private:
  explicit Datum(DKind k) : kind_(k) { u_.i = 0; }
  void retain() const {
    if (isHeap()) u_.o->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // The scalar path stays inline (runtime fast paths overwrite scalar slots in
  // hot loops); dropping a heap reference is out of line.
  void release() {
    if (isHeap()) releaseHeap();
    kind_ = DKind::Null;
  }
  void releaseHeap();

  DKind kind_;
  union {
    int64_t i;
    double f;
    bool b;
    Object* o;
  } u_;
};

struct StrObject : Object {
  std::string value;
};
struct SeqObject : Object {
  std::vector<Datum> items;
};
struct StructObject : Object {
  std::vector<std::string> names;
  std::vector<Datum> fields;
};
struct FuncObject : Object {
  const Graph* graph = nullptr;
  std::vector<Datum> captures;
};

/// Base of opaque objects that know how to print themselves (tensors, PyObjects).
struct OpaqueObject : Object {
  virtual std::string repr() const = 0;
};

}  // namespace xacc::ir
