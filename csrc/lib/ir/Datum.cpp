// Runtime datums: construction, printing and equality.
#include "xacc/ir/Datum.h"

#include "xacc/ir/Attribute.h"
#include "xacc/ir/List.h"

namespace xacc::ir {

template <class T>
static T* adopt(T* o) {
  o->refs.store(1, std::memory_order_relaxed);
  return o;
}

Datum Datum::string(std::string s) {
  auto* o = new StrObject();
  o->value = std::move(s);
  Datum d(DKind::Str);
  d.u_.o = adopt(o);
  return d;
}

Datum Datum::list(std::vector<Datum> items) {
  auto* o = new ListObject();
  o->items = std::move(items);
  o->compact();
  Datum d(DKind::List);
  d.u_.o = adopt(o);
  return d;
}

Datum Datum::tuple(std::vector<Datum> items) {
  auto* o = new SeqObject();
  o->items = std::move(items);
  Datum d(DKind::Tuple);
  d.u_.o = adopt(o);
  return d;
}

Datum Datum::structure(std::vector<std::string> names, std::vector<Datum> fields) {
  auto* o = new StructObject();
  o->names = std::move(names);
  o->fields = std::move(fields);
  Datum d(DKind::Struct);
  d.u_.o = adopt(o);
  return d;
}

Datum Datum::func(const Graph* g, std::vector<Datum> captures) {
  auto* o = new FuncObject();
  o->graph = g;
  o->captures = std::move(captures);
  Datum d(DKind::Func);
  d.u_.o = adopt(o);
  return d;
}

Datum Datum::object(DKind kind, Object* o) {
  Datum d(kind);
  o->refs.fetch_add(1, std::memory_order_relaxed);
  d.u_.o = o;
  return d;
}

void Datum::releaseHeap() {
  if (u_.o->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete u_.o;
}

const std::string& Datum::asStr() const { return static_cast<StrObject*>(u_.o)->value; }
std::vector<Datum>& Datum::listItems() const { return static_cast<ListObject*>(u_.o)->boxed(); }
const std::vector<Datum>& Datum::tupleItems() const { return static_cast<SeqObject*>(u_.o)->items; }
const std::vector<std::string>& Datum::structNames() const {
  return static_cast<StructObject*>(u_.o)->names;
}
const std::vector<Datum>& Datum::structFields() const {
  return static_cast<StructObject*>(u_.o)->fields;
}
const Graph* Datum::funcGraph() const { return static_cast<FuncObject*>(u_.o)->graph; }
const std::vector<Datum>& Datum::funcCaptures() const {
  return static_cast<FuncObject*>(u_.o)->captures;
}

std::string Datum::repr(bool topLevel) const {
  switch (kind_) {
    case DKind::Null: return "null";
    case DKind::Int: return std::to_string(u_.i);
    case DKind::Float: return formatDouble(u_.f);
    case DKind::Bool: return u_.b ? "true" : "false";
    case DKind::Token: return "<token>";
    case DKind::Str: return topLevel ? asStr() : "\"" + asStr() + "\"";
    case DKind::List:
    case DKind::Tuple: {
      ListView view(*this);
      const auto& items = kind_ == DKind::List ? *view : static_cast<SeqObject*>(u_.o)->items;
      std::string s = kind_ == DKind::List ? "[" : "(";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].repr(false);
      if (kind_ == DKind::Tuple && items.size() == 1) s += ",";
      return s + (kind_ == DKind::List ? "]" : ")");
    }
    case DKind::Struct: {
      std::string s = "{";
      for (size_t i = 0; i < structNames().size(); ++i)
        s += (i ? ", " : "") + structNames()[i] + ": " + structFields()[i].repr(false);
      return s + "}";
    }
    case DKind::Func: return "<function>";
    case DKind::Tensor:
    case DKind::PyObj: return static_cast<OpaqueObject*>(u_.o)->repr();
  }
  return "?";
}

bool Datum::equals(const Datum& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case DKind::Null:
    case DKind::Token: return true;
    case DKind::Int: return u_.i == o.u_.i;
    case DKind::Float: return u_.f == o.u_.f;
    case DKind::Bool: return u_.b == o.u_.b;
    case DKind::Str: return asStr() == o.asStr();
    case DKind::List: {
      ListObject *x = static_cast<ListObject*>(u_.o), *y = static_cast<ListObject*>(o.u_.o);
      ListObject::Rep rx = x->form(), ry = y->form();
      if (rx == ry && rx == ListObject::Rep::Int) return x->ints == y->ints;
      if (rx == ry && rx == ListObject::Rep::Float) return x->reals == y->reals;
      ListView a(*this), b(o);
      if (a->size() != b->size()) return false;
      for (size_t i = 0; i < a->size(); ++i)
        if (!(*a)[i].equals((*b)[i])) return false;
      return true;
    }
    case DKind::Tuple: {
      const auto& a = static_cast<SeqObject*>(u_.o)->items;
      const auto& b = static_cast<SeqObject*>(o.u_.o)->items;
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!a[i].equals(b[i])) return false;
      return true;
    }
    case DKind::Struct: {
      if (structNames() != o.structNames()) return false;
      for (size_t i = 0; i < structFields().size(); ++i)
        if (!structFields()[i].equals(o.structFields()[i])) return false;
      return true;
    }
    default: return u_.o == o.u_.o;
  }
}

}  // namespace xacc::ir
