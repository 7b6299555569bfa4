// Break and resume functions. See Codegen.h.
#include "Codegen.h"

#include "PyTypes.h"

#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace xacc::capture::translate {

namespace {

uint8_t opByte(Op op) { return static_cast<uint8_t>(op); }
int cachesOf(uint8_t op) { return opcodeInfo(op).caches; }

bool isDerefOp(uint8_t op) {
  return op == opByte(Op::LOAD_DEREF) || op == opByte(Op::STORE_DEREF) || op == opByte(Op::DELETE_DEREF) ||
         op == opByte(Op::LOAD_CLOSURE) || op == opByte(Op::LOAD_CLASSDEREF) || op == opByte(Op::MAKE_CELL);
}

/// A tiny assembler: instructions with forward labels, inline caches,
/// EXTENDED_ARG prefixes and a line table that maps everything to one line.
class Asm {
public:
  Asm(int line, int firstLine) : line_(line), firstLine_(firstLine) {}
  void op(Op o, int arg = 0) { items_.push_back({Item::kOp, opByte(o), arg, -1, {}, line_}); }
  void jump(Op o, int label) { items_.push_back({Item::kOp, opByte(o), 0, label, {}, line_}); }
  void label(int l) { items_.push_back({Item::kLabel, 0, 0, l, {}, line_}); }
  void raw(std::string bytes) { items_.push_back({Item::kRaw, 0, 0, -1, std::move(bytes), line_}); }
  /// The line of the instructions added from now on (-1: no location).
  void setLine(int line) { line_ = line; }
  /// Patches every LOAD_DEREF with a negative arg (a closure slot) to nvar + slot.
  void patchDerefs(int nvar) {
    for (Item& it : items_)
      if (it.kind == Item::kOp && it.op == opByte(Op::LOAD_DEREF) && it.arg < 0) it.arg = nvar + (-1 - it.arg);
  }

  void assemble(std::string& code, std::string& linetable) {
    std::vector<int> ext(items_.size(), 0);
    std::vector<int> args(items_.size(), 0);
    for (int round = 0; round < 4; ++round) {
      std::vector<int> offsets(items_.size());
      std::map<int, int> labels;
      int pos = 0;
      for (size_t i = 0; i < items_.size(); ++i) {
        offsets[i] = pos;
        const Item& it = items_[i];
        if (it.kind == Item::kLabel) labels[it.label] = pos;
        else if (it.kind == Item::kRaw) pos += static_cast<int>(it.raw.size());
        else pos += 2 * (1 + ext[i] + cachesOf(it.op));
      }
      bool changed = false;
      for (size_t i = 0; i < items_.size(); ++i) {
        const Item& it = items_[i];
        if (it.kind != Item::kOp) continue;
        int arg = it.arg;
        if (it.label >= 0) {
          int end = offsets[i] + 2 * (1 + ext[i] + cachesOf(it.op));
          arg = (labels[it.label] - end) / 2;
          if (opcodeInfo(it.op).flags & kJumpBackward) arg = -arg;
        }
        int need = arg < 256 ? 0 : arg < 65536 ? 1 : 2;
        if (need != ext[i]) {
          ext[i] = need;
          changed = true;
        }
        args[i] = arg;
      }
      if (!changed) break;
    }
    code.clear();
    std::vector<std::pair<int, int>> runs;  // (code units, line)
    for (size_t i = 0; i < items_.size(); ++i) {
      const Item& it = items_[i];
      if (it.kind == Item::kLabel) continue;
      int units;
      if (it.kind == Item::kRaw) {
        code += it.raw;
        units = static_cast<int>(it.raw.size() / 2);
      } else {
        for (int k = ext[i]; k > 0; --k) {
          code.push_back(static_cast<char>(opByte(Op::EXTENDED_ARG)));
          code.push_back(static_cast<char>((args[i] >> (8 * k)) & 255));
        }
        code.push_back(static_cast<char>(it.op));
        code.push_back(static_cast<char>(args[i] & 255));
        for (int c = 0; c < cachesOf(it.op); ++c) code.append(2, '\0');
        units = 1 + ext[i] + cachesOf(it.op);
      }
      if (!runs.empty() && runs.back().second == it.line) runs.back().first += units;
      else runs.emplace_back(units, it.line);
    }
    linetable = lineTable(runs);
  }

private:
  struct Item {
    enum Kind : uint8_t { kOp, kRaw, kLabel } kind;
    uint8_t op;
    int arg;
    int label;
    std::string raw;
    int line;
  };

  static void svarint(std::string& out, int val) {
    unsigned v = val < 0 ? (static_cast<unsigned>(-val) << 1) | 1 : static_cast<unsigned>(val) << 1;
    while (v >= 64) {
      out.push_back(static_cast<char>(64 | (v & 63)));
      v >>= 6;
    }
    out.push_back(static_cast<char>(v));
  }

  std::string lineTable(const std::vector<std::pair<int, int>>& runs) const {
    std::string out;
    int prev = firstLine_;
    for (auto [total, line] : runs) {
      while (total > 0) {
        int n = std::min(8, total);
        if (line < 0) {
          out.push_back(static_cast<char>(0x80 | (15 << 3) | (n - 1)));
        } else {
          out.push_back(static_cast<char>(0x80 | (13 << 3) | (n - 1)));
          svarint(out, line - prev);
          prev = line;
        }
        total -= n;
      }
    }
    return out;
  }

  std::vector<Item> items_;
  int line_, firstLine_;
};

void varint(std::string& out, int val, bool first) {
  std::vector<int> chunks{val & 63};
  val >>= 6;
  while (val) {
    chunks.push_back(val & 63);
    val >>= 6;
  }
  std::reverse(chunks.begin(), chunks.end());
  for (size_t i = 0; i < chunks.size(); ++i) {
    int c = chunks[i] | (i + 1 < chunks.size() ? 64 : 0);
    if (i == 0 && first) c |= 128;
    out.push_back(static_cast<char>(c));
  }
}

/// Re-encodes `code`'s exception table with every offset moved by `shift` bytes.
std::string shiftedExceptionTable(PyCodeObject* code, int shift) {
  std::string out;
  PyObject* et = code->co_exceptiontable;
  if (!et || !PyBytes_Check(et)) return out;
  const auto* q = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(et));
  size_t m = static_cast<size_t>(PyBytes_GET_SIZE(et)), i = 0;
  auto read = [&] {
    int v = 0;
    while (i < m) {
      unsigned char b = q[i++];
      v = (v << 6) | (b & 63);
      if (!(b & 64)) break;
    }
    return v;
  };
  while (i < m) {
    int start = read(), length = read(), target = read(), dl = read();
    varint(out, start + shift / 2, true);
    varint(out, length, false);
    varint(out, target + shift / 2, false);
    varint(out, dl, false);
  }
  return out;
}

/// Adds `shift` to closure-variable opargs that index past `nvars` locals.
bool shiftDerefs(std::string& raw, int nvars, int shift) {
  if (shift == 0) return true;
  for (size_t i = 0; i + 1 < raw.size(); i += 2) {
    auto op = static_cast<uint8_t>(raw[i]);
    auto arg = static_cast<uint8_t>(raw[i + 1]);
    if (isDerefOp(op) && arg >= nvars && (i == 0 || static_cast<uint8_t>(raw[i - 2]) != opByte(Op::EXTENDED_ARG))) {
      if (arg + shift > 255) return false;
      raw[i + 1] = static_cast<char>(arg + shift);
    }
  }
  return true;
}

std::string rawCode(PyCodeObject* code) {
  PyObject* b = PyCode_GetCode(code);
  if (!b) {
    PyErr_Clear();
    return {};
  }
  std::string s(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
  Py_DECREF(b);
  return s;
}

/// `code.replace(**kwargs)`; null with a Python error on failure.
PyRef replaceCode(PyCodeObject* code, PyObject* kwargs) {
  PyRef method = PyRef::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "replace"));
  if (!method) return {};
  PyRef empty = PyRef::steal(PyTuple_New(0));
  return PyRef::steal(PyObject_Call(method.get(), empty.get(), kwargs));
}

void setItem(PyObject* d, const char* k, PyObject* v) {
  PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
}

struct ResumeRegistry {
  std::mutex mu;
  std::map<PyCodeObject*, std::pair<PyCodeObject*, int>> origin;  // strong refs to both
  std::map<std::tuple<PyCodeObject*, int, std::vector<bool>, std::vector<int>, PyObject*>, PyObject*> fns;
  std::set<PyCodeObject*> bodies;  // loop body code objects (strong refs)
  std::map<std::tuple<PyCodeObject*, int, std::vector<int>, PyObject*>, PyObject*> bodyFns;
};

/// The value a loop's driver gives locals that only the loop body binds
/// (Note [Loop bodies]); resume prologues delete locals holding it.
PyObject* unboundSentinel() {
  static PyObject* s = [] {
    PyObject* o = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
    return o;
  }();
  return s;
}

ResumeRegistry& registry() {
  static auto* r = new ResumeRegistry();
  return *r;
}

/// The resume code of `orig` at byte offset `target`; `layout[i]` is false for
/// a NULL stack slot; `unbound` lists locals to delete before jumping.
PyRef makeResume(PyCodeObject* orig, int target, const std::vector<bool>& layout, const std::vector<int>& unbound,
                 std::string& error) {
  const int nvar = orig->co_nlocals;
  int nvals = 0;
  for (bool b : layout) nvals += b;
  Asm asm_(-1, orig->co_firstlineno);
  if (orig->co_nfreevars) asm_.op(Op::COPY_FREE_VARS, orig->co_nfreevars);
  asm_.op(Op::RESUME, 0);
  int k = 0;
  for (bool b : layout) {
    if (b) asm_.op(Op::LOAD_FAST, nvar + k++);
    else asm_.op(Op::PUSH_NULL);
  }
  const int sentinelConst = static_cast<int>(PyTuple_GET_SIZE(orig->co_consts));
  int maybeLabel = 1000;
  for (int i : unbound) {
    if (i >= 0) {
      asm_.op(Op::DELETE_FAST, i);
      continue;
    }
    // Bound only if the loop body ran and bound it (Note [Loop bodies]).
    const int j = -1 - i;
    asm_.op(Op::LOAD_FAST, j);
    asm_.op(Op::LOAD_CONST, sentinelConst);
    asm_.op(Op::IS_OP, 0);
    asm_.jump(Op::POP_JUMP_FORWARD_IF_FALSE, maybeLabel);
    asm_.op(Op::DELETE_FAST, j);
    asm_.label(maybeLabel++);
  }
  // The jump is relative to its own end, which is where the copied body
  // starts: its argument is the target's offset within the body.
  asm_.op(Op::JUMP_FORWARD, target / 2);
  std::string prologue, lt;
  asm_.assemble(prologue, lt);
  std::string body = rawCode(orig);
  if (!shiftDerefs(body, nvar, nvals)) {
    error = "closure index needs EXTENDED_ARG";
    return {};
  }
  PyObject* varnames = PyObject_GetAttrString(reinterpret_cast<PyObject*>(orig), "co_varnames");
  if (!varnames) return {};
  PyRef names = PyRef::steal(PyList_New(0));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(varnames); ++i) PyList_Append(names.get(), PyTuple_GET_ITEM(varnames, i));
  Py_DECREF(varnames);
  for (int i = 0; i < nvals; ++i) {
    PyRef n = PyRef::steal(PyUnicode_FromFormat("__xacc_stack%d", i));
    PyList_Append(names.get(), n.get());
  }
  PyRef kw = PyRef::steal(PyDict_New());
  std::string code = prologue + body;
  std::string linetable = lt + std::string(PyBytes_AS_STRING(orig->co_linetable),
                                           static_cast<size_t>(PyBytes_GET_SIZE(orig->co_linetable)));
  Py_ssize_t nnames = PyList_GET_SIZE(names.get());
  setItem(kw.get(), "co_code", PyBytes_FromStringAndSize(code.data(), static_cast<Py_ssize_t>(code.size())));
  setItem(kw.get(), "co_varnames", PyList_AsTuple(names.get()));
  setItem(kw.get(), "co_nlocals", PyLong_FromSsize_t(nnames));
  setItem(kw.get(), "co_argcount", PyLong_FromSsize_t(nnames));
  setItem(kw.get(), "co_posonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_kwonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_flags", PyLong_FromLong(orig->co_flags & ~(CO_VARARGS | CO_VARKEYWORDS)));
  setItem(kw.get(), "co_linetable", PyBytes_FromStringAndSize(linetable.data(), static_cast<Py_ssize_t>(linetable.size())));
  std::string exc = shiftedExceptionTable(orig, static_cast<int>(prologue.size()));
  setItem(kw.get(), "co_exceptiontable", PyBytes_FromStringAndSize(exc.data(), static_cast<Py_ssize_t>(exc.size())));
  setItem(kw.get(), "co_stacksize", PyLong_FromLong(orig->co_stacksize + static_cast<int>(layout.size()) + 2));
  if (maybeLabel > 1000) {
    // The sentinel is not marshallable: only resume functions after a split loop hold it.
    PyRef consts = PyRef::steal(PySequence_List(orig->co_consts));
    PyList_Append(consts.get(), unboundSentinel());
    setItem(kw.get(), "co_consts", PyList_AsTuple(consts.get()));
  }
  setItem(kw.get(), "co_name", PyUnicode_FromFormat("__xacc_resume_%U_at_%d", orig->co_name, target));
  setItem(kw.get(), "co_qualname", PyUnicode_FromFormat("%U.<resume at %d>", orig->co_qualname, target));
  PyRef out = replaceCode(orig, kw.get());
  if (!out) return {};
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  Py_INCREF(out.get());
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  reg.origin[reinterpret_cast<PyCodeObject*>(out.get())] = {orig, static_cast<int>(prologue.size())};
  return out;
}

/// Byte range [start, end) of the instruction at `offset` with its
/// EXTENDED_ARG prefixes (and, for CALL, its PRECALL/KW_NAMES) and caches.
std::pair<int, int> instructionGroup(const std::string& code, int offset) {
  auto at = [&](int o) { return static_cast<uint8_t>(code[static_cast<size_t>(o)]); };
  uint8_t op = at(offset);
  int end = offset + 2 * (1 + cachesOf(op));
  int start = offset;
  auto skipExt = [&] {
    while (start >= 2 && at(start - 2) == opByte(Op::EXTENDED_ARG)) start -= 2;
  };
  if (op == opByte(Op::CALL)) {
    start -= 2 * (1 + cachesOf(opByte(Op::PRECALL)));
    skipExt();
    if (start >= 2 && at(start - 2) == opByte(Op::KW_NAMES)) {
      start -= 2;
      skipExt();
    }
  }
  skipExt();
  return {start, end};
}

/// What the break function rebuilds values from.
struct Emitter {
  Translator& t;
  BreakHost& host;
  PyCodeObject* code;
  Asm asm_;
  PyRef consts;    ///< list
  PyRef names;     ///< list
  PyRef varnames;  ///< list
  Py_ssize_t origConsts = 0;
  int maxDepth = 8;
  std::map<int, int> outIndex;  ///< graph value -> output index
  int outLocal = -1;
  Failure* fallback = nullptr;
  /// Mutable containers already rebuilt, by tracker: the local holding the one
  /// object, so a list on the stack and in a local stay the same list.
  std::map<const Var*, int> built;

  Emitter(Translator& tr, BreakHost& h, PyCodeObject* c, int line)
      : t(tr), host(h), code(c), asm_(line, c->co_firstlineno) {
    consts = PyRef::steal(PySequence_List(c->co_consts));
    origConsts = PyList_GET_SIZE(consts.get());
    names = PyRef::steal(PySequence_List(c->co_names));
    PyObject* vn = PyObject_GetAttrString(reinterpret_cast<PyObject*>(c), "co_varnames");
    varnames = PyRef::steal(PySequence_List(vn));
    Py_XDECREF(vn);
  }

  bool failWith(const char* codeName, const std::string& detail) {
    fallback->code = codeName;
    fallback->detail = detail;
    return false;
  }

  int local(const char* name) {
    PyRef n = PyRef::steal(PyUnicode_FromString(name));
    Py_ssize_t i = PySequence_Index(varnames.get(), n.get());
    if (i >= 0) return static_cast<int>(i);
    PyErr_Clear();
    PyList_Append(varnames.get(), n.get());
    return static_cast<int>(PyList_GET_SIZE(varnames.get()) - 1);
  }
  int constant(PyObject* obj) {
    for (Py_ssize_t i = origConsts; i < PyList_GET_SIZE(consts.get()); ++i)
      if (PyList_GET_ITEM(consts.get(), i) == obj) return static_cast<int>(i);
    PyList_Append(consts.get(), obj);
    return static_cast<int>(PyList_GET_SIZE(consts.get()) - 1);
  }
  int name(PyObject* n) {
    Py_ssize_t i = PySequence_Index(names.get(), n);
    if (i >= 0) return static_cast<int>(i);
    PyErr_Clear();
    PyList_Append(names.get(), n);
    return static_cast<int>(PyList_GET_SIZE(names.get()) - 1);
  }

  bool source(const SourceRef& s) {
    switch (s->access) {
      case Access::Local: asm_.op(Op::LOAD_FAST, static_cast<int>(s->index)); return true;
      case Access::Global: asm_.op(Op::LOAD_GLOBAL, name(s->key.get()) << 1); return true;
      case Access::Closure: asm_.op(Op::LOAD_DEREF, -1 - static_cast<int>(s->index)); return true;
      case Access::Const: {
        PyObject* c = host.constAt(static_cast<int>(s->index));
        if (!c) return failWith("GB020", "entry constant");
        asm_.op(Op::LOAD_CONST, constant(c));
        return true;
      }
      case Access::Attr:
        if (!source(s->parent)) return false;
        asm_.op(Op::LOAD_ATTR, name(s->key.get()));
        return true;
      case Access::Item: {
        if (!source(s->parent)) return false;
        PyRef key = s->key ? s->key : PyRef::steal(PyLong_FromLongLong(s->index));
        asm_.op(Op::LOAD_CONST, constant(key.get()));
        asm_.op(Op::BINARY_SUBSCR);
        return true;
      }
      case Access::AsTensor:
        return failWith("GB020", "rebuilding a from_numpy source");
    }
    return false;
  }

  bool output(int vid) {
    auto it = outIndex.find(vid);
    if (it == outIndex.end()) return false;
    asm_.op(Op::LOAD_FAST, outLocal);
    PyRef k = PyRef::steal(PyLong_FromLong(it->second));
    asm_.op(Op::LOAD_CONST, constant(k.get()));
    asm_.op(Op::BINARY_SUBSCR);
    return true;
  }

  bool rebuild(const VarRef& v) {
    using K = Var::Kind;
    bool shared = !v->source && (v->is(K::List) || v->is(K::Dict) || (v->is(K::Set) && PySet_CheckExact(v->obj.get())));
    if (shared) {
      auto it = built.find(v.get());
      if (it != built.end()) {
        asm_.op(Op::LOAD_FAST, it->second);
        return true;
      }
    }
    if (!rebuildOnce(v)) return false;
    if (shared) {
      int slot = local(("__xacc_obj" + std::to_string(built.size())).c_str());
      asm_.op(Op::COPY, 1);
      asm_.op(Op::STORE_FAST, slot);
      built[v.get()] = slot;
    }
    return true;
  }

  bool rebuildOnce(const VarRef& v) {
    using K = Var::Kind;
    maxDepth += 1;
    switch (v->kind) {
      case K::Null: asm_.op(Op::PUSH_NULL); return true;
      case K::Tensor: {
        if (v->source) return source(v->source);
        int vid = t.valueOf(v);
        if (v->isNumpy()) {
          // The graph's tensor as the ndarray (or NumPy scalar) the code expects.
          const PyTypes* T = pyTypes();
          asm_.op(Op::PUSH_NULL);
          asm_.op(Op::LOAD_CONST, constant(v->np == Var::Np::Scalar ? T->npToScalar : T->npToArray));
          maxDepth += 2;
          if (vid < 0 || !output(vid)) return failWith("GB020", "ndarray with no source and no graph output");
          asm_.op(Op::PRECALL, 1);
          asm_.op(Op::CALL, 1);
          return true;
        }
        if (vid >= 0 && output(vid)) return true;
        return failWith("GB020", "tensor with no source and no graph output");
      }
      case K::SymScalar:
        if (v->source) return source(v->source);
        if (v->vid >= 0 && output(v->vid)) return true;
        return failWith("GB020", "number with no source and no graph output");
      case K::Const: asm_.op(Op::LOAD_CONST, constant(v->obj.get())); return true;
      default: break;
    }
    if ((v->is(K::List) || v->is(K::Dict) || v->is(K::Tuple) || v->is(K::Object) || v->is(K::Set)) && v->source)
      return source(v->source);
    switch (v->kind) {
      case K::Tuple:
      case K::List:
        for (const VarRef& i : v->items)
          if (!rebuild(i)) return false;
        asm_.op(v->is(K::Tuple) ? Op::BUILD_TUPLE : Op::BUILD_LIST, static_cast<int>(v->items.size()));
        return true;
      case K::Dict:
        if (v->obj) {  // a ModelOutput: cls(**{...})
          asm_.op(Op::PUSH_NULL);
          asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
          asm_.op(Op::BUILD_TUPLE, 0);
          maxDepth += 3;
        }
        maxDepth += static_cast<int>(v->keys.size());
        for (size_t i = 0; i < v->keys.size(); ++i) {
          asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
          if (!rebuild(v->items[i])) return false;
        }
        asm_.op(Op::BUILD_MAP, static_cast<int>(v->keys.size()));
        if (v->obj) asm_.op(Op::CALL_FUNCTION_EX, 1);
        return true;
      case K::Set: {
        if (PyFrozenSet_CheckExact(v->obj.get())) {
          asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
          return true;
        }
        PyRef items = PyRef::steal(PySequence_List(v->obj.get()));
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i)
          asm_.op(Op::LOAD_CONST, constant(PyList_GET_ITEM(items.get(), i)));
        asm_.op(Op::BUILD_SET, static_cast<int>(PyList_GET_SIZE(items.get())));
        maxDepth += static_cast<int>(PyList_GET_SIZE(items.get()));
        return true;
      }
      case K::Object: asm_.op(Op::LOAD_CONST, constant(v->obj.get())); return true;
      case K::TensorMethod:
      case K::ContainerMethod: {
        if (!rebuild(v->self)) return false;
        PyRef n = PyRef::steal(PyUnicode_FromString(v->name.c_str()));
        asm_.op(Op::LOAD_ATTR, name(n.get()));
        return true;
      }
      case K::BoundMethod: {
        asm_.op(Op::PUSH_NULL);
        asm_.op(Op::LOAD_CONST, constant(reinterpret_cast<PyObject*>(&PyMethod_Type)));
        asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
        if (!rebuild(v->self)) return false;
        asm_.op(Op::PRECALL, 2);
        asm_.op(Op::CALL, 2);
        return true;
      }
      case K::Iter:
        if (v->pos == 0 && v->self && v->self->is(K::List)) {
          // A fresh iterator over a list (a loop split at its header): over the
          // list itself, so that appends made by the loop body are iterated as in eager.
          if (!rebuild(v->self)) return false;
          asm_.op(Op::GET_ITER);
          return true;
        }
        for (size_t i = v->pos; i < v->items.size(); ++i)
          if (!rebuild(v->items[i])) return false;
        asm_.op(Op::BUILD_TUPLE, static_cast<int>(v->items.size() - v->pos));
        asm_.op(Op::GET_ITER);
        return true;
      default:
        return failWith("GB011", "cannot rebuild this value at a break");
    }
  }
};

/// Graph outputs: every computed tensor or number live on the stack or in a local.
void collectOutputs(Translator& t, const VarRef& v, std::set<const Var*>& seen, std::vector<int>& outs,
                    bool& bad) {
  if (!v || !seen.insert(v.get()).second) return;
  using K = Var::Kind;
  switch (v->kind) {
    case K::Tensor:
      if (!v->source) {
        int vid = t.valueOf(v);
        if (vid < 0) bad = true;
        else if (std::find(outs.begin(), outs.end(), vid) == outs.end()) outs.push_back(vid);
      }
      break;
    case K::SymScalar:
      if (!v->source && v->vid >= 0 && std::find(outs.begin(), outs.end(), v->vid) == outs.end())
        outs.push_back(v->vid);
      break;
    case K::Tuple:
    case K::List:
    case K::Dict:
      for (const VarRef& i : v->items) collectOutputs(t, i, seen, outs, bad);
      break;
    case K::Iter:
      for (size_t i = v->pos; i < v->items.size(); ++i) collectOutputs(t, v->items[i], seen, outs, bad);
      break;
    case K::TensorMethod:
    case K::BoundMethod:
    case K::ContainerMethod:
      collectOutputs(t, v->self, seen, outs, bad);
      break;
    default:
      break;
  }
}

/// Instructions the frame cannot be split at.
bool notBreakable(Op op) {
  switch (op) {
    case Op::LOAD_METHOD: case Op::FOR_ITER: case Op::JUMP_FORWARD: case Op::JUMP_BACKWARD:
    case Op::JUMP_BACKWARD_NO_INTERRUPT: case Op::JUMP_IF_TRUE_OR_POP: case Op::JUMP_IF_FALSE_OR_POP:
    case Op::SEND: case Op::YIELD_VALUE: case Op::UNPACK_SEQUENCE: case Op::UNPACK_EX: case Op::LIST_APPEND:
    case Op::SET_ADD: case Op::MAP_ADD: case Op::LOAD_CLOSURE: case Op::MAKE_CELL: case Op::COPY_FREE_VARS:
    case Op::RETURN_GENERATOR: case Op::PUSH_EXC_INFO: case Op::POP_EXCEPT: case Op::RERAISE:
    case Op::CHECK_EXC_MATCH: case Op::WITH_EXCEPT_START: case Op::LOAD_FAST: case Op::STORE_FAST:
    case Op::DELETE_FAST:
      return true;
    default:
      return false;
  }
}

/// The forward conditional jump with the same test as `op`, or NOP.
Op forwardCond(Op op) {
  switch (op) {
    case Op::POP_JUMP_FORWARD_IF_TRUE: case Op::POP_JUMP_BACKWARD_IF_TRUE: return Op::POP_JUMP_FORWARD_IF_TRUE;
    case Op::POP_JUMP_FORWARD_IF_FALSE: case Op::POP_JUMP_BACKWARD_IF_FALSE: return Op::POP_JUMP_FORWARD_IF_FALSE;
    case Op::POP_JUMP_FORWARD_IF_NONE: case Op::POP_JUMP_BACKWARD_IF_NONE: return Op::POP_JUMP_FORWARD_IF_NONE;
    case Op::POP_JUMP_FORWARD_IF_NOT_NONE: case Op::POP_JUMP_BACKWARD_IF_NOT_NONE:
      return Op::POP_JUMP_FORWARD_IF_NOT_NONE;
    default: return Op::NOP;
  }
}

/// Values an instruction pushes when run natively (the rest push one).
int pushes(Op op) {
  switch (op) {
    case Op::BEFORE_WITH: return 2;
    case Op::STORE_ATTR: case Op::STORE_SUBSCR: case Op::STORE_GLOBAL: case Op::DELETE_ATTR:
    case Op::DELETE_SUBSCR: case Op::POP_TOP: case Op::RAISE_VARARGS: case Op::IMPORT_STAR:
    case Op::STORE_DEREF: case Op::DELETE_GLOBAL: case Op::PRINT_EXPR:
      return 0;
    default: return 1;
  }
}


// Note [Loop bodies]
// A graph break inside a `for` loop does not drop the frame. The frame is
// split at the header of the outermost loop around the break (its FOR_ITER,
// reached once: the translation restarts with a break recorded there), and
// the break function runs the loop natively:
//
//     prefix graph; rebuild stack (the iterator) and locals
//   loop:
//     FOR_ITER done
//     flag, payload = body(<locals the body uses>, value)
//     flag 0 (next iteration): store the locals the body assigns; loop
//     flag 1 (return):         return payload
//     flag 2+k (break):        store the locals; resume at exit k
//   done:
//     resume after the loop
//
// `body` is a function of its own, made from the loop body's instructions
// (re-assembled: locals renumbered, jumps to the header and out of the loop
// sent to epilogues that return (flag, locals), RETURN_VALUE to one that
// returns (1, value)). The hook captures it like any function, so each
// iteration runs its graphs around the break (the body's own break function
// and resume functions), in the order eager runs them. Locals that only the
// body binds start as a sentinel object (a Python read of one before its first
// assignment sees the sentinel, not UnboundLocalError); resume functions after
// the loop delete those still holding it. Not split (GB015 with the reason):
// a try or with block, yield or `del` inside the body, generator frames. A
// `while` loop is split the same way at the first instruction of its body
// (after the first test of its condition, which the prefix runs); its body
// function ends with the test and has no iterator and no value.
struct LoopPlan {
  int head = -1, end = -1;        ///< orig offsets: the FOR_ITER and the last jump back to it
  int done = -1;                  ///< FOR_ITER's exit target
  std::vector<int> exits;         ///< other targets after the loop (breaks)
  std::set<int> stored, referenced;  ///< orig locals the body stores / uses
  std::set<int> assignedFirst;       ///< stored before any read or jump (the loop target)
  int below = 0;                     ///< stack values under the iterator (outer loops' stand-ins)
  int values = 1;                    ///< the value passed as this many arguments (a tuple target unpacked)
  bool unpacked = false;
  bool isFor = true;                 ///< a `for` loop (else `while`: no iterator, no value)
  int first = -1;                    ///< index of the body's first instruction
};

bool isUncond(Op op) {
  switch (op) {
    case Op::JUMP_FORWARD: case Op::JUMP_BACKWARD: case Op::JUMP_BACKWARD_NO_INTERRUPT: case Op::RETURN_VALUE:
    case Op::RAISE_VARARGS: case Op::RERAISE:
      return true;
    default:
      return false;
  }
}

Op forwardJump(Op op) {
  switch (op) {
    case Op::JUMP_BACKWARD: return Op::JUMP_FORWARD;
    case Op::POP_JUMP_BACKWARD_IF_TRUE: return Op::POP_JUMP_FORWARD_IF_TRUE;
    case Op::POP_JUMP_BACKWARD_IF_FALSE: return Op::POP_JUMP_FORWARD_IF_FALSE;
    case Op::POP_JUMP_BACKWARD_IF_NONE: return Op::POP_JUMP_FORWARD_IF_NONE;
    case Op::POP_JUMP_BACKWARD_IF_NOT_NONE: return Op::POP_JUMP_FORWARD_IF_NOT_NONE;
    default: return op;
  }
}

/// The outermost loop of `bc` around `off`: [head, end] with `head` the jump
/// target and `end` the last backward jump to it; head -1 when none.
std::pair<int, int> outermostLoop(const Bytecode* bc, int off) {
  std::map<int, int> ends;
  for (const Instr& ins : bc->instrs())
    if (opcodeInfo(static_cast<uint8_t>(ins.op)).flags & kJumpBackward)
      ends[ins.target] = std::max(ends.count(ins.target) ? ends[ins.target] : -1, ins.offset);
  std::pair<int, int> best{-1, -1};
  for (auto [h, e] : ends)
    if (h <= off && off <= e && (best.first < 0 || h < best.first)) best = {h, e};
  return best;
}

/// Checks that the loop at `head` can run as a loop-body function and fills `p`.
bool planLoop(PyCodeObject* orig, const Bytecode* bc, int head, int end, int stackSize, LoopPlan& p,
              std::string& why) {
  const auto& instrs = bc->instrs();
  const int hi = bc->indexOf(head), ei = bc->indexOf(end);
  if (hi < 0 || ei < 0) return (why = "internal: loop offsets"), false;
  p.isFor = instrs[hi].op == Op::FOR_ITER;
  if (!p.isFor && !(opcodeInfo(static_cast<uint8_t>(instrs[ei].op)).flags & kJumpBackward))
    return (why = "internal: loop shape"), false;
  if (orig->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
    return (why = "a loop in a generator or coroutine"), false;
  p.head = head;
  p.end = end;
  p.done = p.isFor ? instrs[hi].target : -1;
  // Stack values under the iterator (a for loop) or at the header (a while loop).
  const int below = std::max(0, stackSize - (p.isFor ? 1 : 0));
  p.below = below;
  p.first = p.isFor ? hi + 1 : hi;
  if (!p.isFor) {
    p.values = 0;
    // The loop's condition at the end: falling through it leaves the loop.
    if (!isUncond(instrs[ei].op)) {
      if (static_cast<size_t>(ei + 1) >= instrs.size()) return (why = "internal: loop end"), false;
      p.exits.push_back(instrs[ei + 1].offset);
    }
  }
  // `for a, b in ...`: the value is passed unpacked, so numbers in it are
  // arguments of their own (symbolic, not specialized per iteration).
  if (p.isFor && hi + 1 <= ei && instrs[hi + 1].op == Op::UNPACK_SEQUENCE && instrs[hi + 1].arg >= 1 &&
      instrs[hi + 1].arg <= 8) {
    p.values = instrs[hi + 1].arg;
    p.unpacked = true;
  }
  const int nlocals = orig->co_nlocals;
  auto inBody = [&](int off) { return off > head && off <= end; };
  for (int k = 0; k < static_cast<int>(instrs.size()); ++k) {
    const Instr& ins = instrs[k];
    if (k > hi && k <= ei) continue;
    if (ins.target >= 0 && inBody(ins.target)) return (why = "a jump into the loop body"), false;
  }
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[k];
    if (bc->inTry(ins.offset)) return (why = "a try or with block inside the loop"), false;
    switch (ins.op) {
      case Op::YIELD_VALUE: case Op::SEND: case Op::RETURN_GENERATOR: case Op::JUMP_BACKWARD_NO_INTERRUPT:
      case Op::GET_YIELD_FROM_ITER: case Op::BEFORE_WITH: case Op::MAKE_CELL: case Op::LOAD_CLOSURE:
        return (why = std::string(ins.name()) + " inside the loop"), false;
      case Op::DELETE_FAST: return (why = "`del` of a local inside the loop"), false;
      case Op::LOAD_FAST: case Op::STORE_FAST:
        if (ins.arg >= nlocals) return (why = "internal: local index"), false;
        p.referenced.insert(ins.arg);
        if (ins.op == Op::STORE_FAST) p.stored.insert(ins.arg);
        break;
      default: break;
    }
    if (ins.target >= 0 && !inBody(ins.target) && ins.target != head) {
      if (ins.target < head) return (why = "a jump out of the loop backwards"), false;
      if (std::find(p.exits.begin(), p.exits.end(), ins.target) == p.exits.end()) p.exits.push_back(ins.target);
    }
  }
  // Locals the body's straight-line start stores before reading them (the
  // loop target): never passed in.
  std::set<int> targets, read;
  for (const Instr& ins : instrs)
    if (ins.target >= 0) targets.insert(ins.target);
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[k];
    if (targets.count(ins.offset) || ins.target >= 0 || isUncond(ins.op)) break;
    if (ins.op == Op::LOAD_FAST) read.insert(ins.arg);
    if (ins.op == Op::STORE_FAST && !read.count(ins.arg)) p.assignedFirst.insert(ins.arg);
  }
  // Stack depths: the body starts with (iterator, value); a jump back to the
  // header leaves the iterator, a jump out leaves nothing, a return its value.
  std::vector<int> depth(instrs.size(), -1);
  // A while loop has neither: it starts with `below` and goes back with it.
  const int back = p.isFor ? below + 1 : below;
  std::vector<int> work{p.first};
  depth[static_cast<size_t>(p.first)] = p.isFor ? below + 2 : below;
  auto setDepth = [&](int idx, int d) {
    if (depth[static_cast<size_t>(idx)] < 0) {
      depth[static_cast<size_t>(idx)] = d;
      work.push_back(idx);
      return true;
    }
    return depth[static_cast<size_t>(idx)] == d;
  };
  while (!work.empty()) {
    int k = work.back();
    work.pop_back();
    const Instr& ins = instrs[static_cast<size_t>(k)];
    const int d = depth[static_cast<size_t>(k)];
    const auto op = static_cast<uint8_t>(ins.op);
    if (ins.op == Op::EXTENDED_ARG) {
      if (k + 1 > ei || !setDepth(k + 1, d)) return (why = "internal: stack depths"), false;
      continue;
    }
    if (ins.op == Op::RETURN_VALUE) {
      if (d != 1) return (why = "a return with values left on the stack"), false;
      continue;
    }
    const int arg = op >= 90 ? ins.arg : 0;
    if (ins.target >= 0) {
      int e = PyCompile_OpcodeStackEffectWithJump(op, arg, 1);
      if (e == PY_INVALID_STACK_EFFECT) return (why = std::string("stack effect of ") + ins.name()), false;
      if (ins.target == head) {
        if (d + e != back) return (why = "a jump back to the loop header with other stack values"), false;
      } else if (!inBody(ins.target)) {
        if (d + e != below) return (why = "a jump out of the loop with stack values"), false;
      } else if (!setDepth(bc->indexOf(ins.target), d + e)) {
        return (why = "internal: stack depths"), false;
      }
    }
    if (isUncond(ins.op)) continue;
    int e = PyCompile_OpcodeStackEffectWithJump(op, arg, 0);
    if (e == PY_INVALID_STACK_EFFECT) return (why = std::string("stack effect of ") + ins.name()), false;
    if (k + 1 > ei) {
      if (p.isFor || d + e != below) return (why = "the loop body falls through its end"), false;
      continue;  // a while loop's condition was false: the fall-through exit
    }
    if (!setDepth(k + 1, d + e)) return (why = "internal: stack depths"), false;
  }
  return true;
}

/// The loop body of `p` as a function of (params..., value) -> (flag, payload)
/// (Note [Loop bodies]); cached per loop and parameter list.
PyRef loopBody(PyCodeObject* orig, const Bytecode* bc, const LoopPlan& p, const std::vector<int>& params,
               PyFunctionObject* fn, std::string& why) {
  auto& reg = registry();
  auto key = std::make_tuple(orig, p.head, params, fn->func_globals);
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.bodyFns.find(key);
    if (it != reg.bodyFns.end() && reinterpret_cast<PyFunctionObject*>(it->second)->func_closure == fn->func_closure)
      return PyRef::borrow(it->second);
  }
  const int nlocals = orig->co_nlocals;
  // New local numbering: the parameters, the loop value, the other locals the body uses.
  std::map<int, int> slot;
  for (int i : params) slot[i] = static_cast<int>(slot.size());
  const int valueSlot = static_cast<int>(params.size());
  int next = valueSlot + p.values;
  for (int i : p.referenced)
    if (!slot.count(i)) slot[i] = next++;
  const int nvar = next;
  PyObject* vn = PyObject_GetAttrString(reinterpret_cast<PyObject*>(orig), "co_varnames");
  if (!vn) return (why = "co_varnames"), PyRef();
  PyRef origNames = PyRef::steal(vn);
  PyRef names = PyRef::steal(PyList_New(nvar));
  for (auto [i, j] : slot) {
    PyObject* n = PyTuple_GET_ITEM(origNames.get(), i);
    Py_INCREF(n);
    PyList_SET_ITEM(names.get(), j, n);
  }
  for (int k = 0; k < p.values; ++k)
    PyList_SET_ITEM(names.get(), valueSlot + k, PyUnicode_FromFormat("__xacc_loop_value%d", k));
  PyRef consts = PyRef::steal(PySequence_List(orig->co_consts));
  auto constant = [&](PyObject* o) {
    PyList_Append(consts.get(), o);
    return static_cast<int>(PyList_GET_SIZE(consts.get()) - 1);
  };
  const auto& instrs = bc->instrs();
  const int hi = bc->indexOf(p.head), ei = bc->indexOf(p.end);
  Asm a(instrs[static_cast<size_t>(hi)].line, orig->co_firstlineno);
  if (orig->co_nfreevars) a.op(Op::COPY_FREE_VARS, orig->co_nfreevars);
  a.op(Op::RESUME, 0);
  for (int k = 0; k < p.below + (p.isFor ? 1 : 0); ++k) a.op(Op::LOAD_CONST, constant(Py_None));  // the iterators
  for (int k = 0; k < p.values; ++k) a.op(Op::LOAD_FAST, valueSlot + k);
  if (p.unpacked) a.op(Op::BUILD_TUPLE, p.values);
  enum { kNext = -2, kRet = -3 };
  auto exitLabel = [&](int target) -> int {
    if (target == p.head) return kNext;
    auto it = std::find(p.exits.begin(), p.exits.end(), target);
    return it == p.exits.end() ? -100 : -10 - static_cast<int>(it - p.exits.begin());
  };
  // Labels: instruction offsets for internal targets, negatives for epilogues
  // (shifted to non-negative ids for the assembler).
  auto lab = [&](int l) { return l >= 0 ? l : 1000000 - l; };
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[static_cast<size_t>(k)];
    if (ins.op == Op::EXTENDED_ARG) continue;
    a.setLine(ins.line > 0 ? ins.line : -1);
    a.label(lab(ins.offset));
    const uint16_t flags = opcodeInfo(static_cast<uint8_t>(ins.op)).flags;
    if (ins.op == Op::RETURN_VALUE) {
      a.jump(Op::JUMP_FORWARD, lab(kRet));
    } else if (ins.op == Op::LOAD_FAST || ins.op == Op::STORE_FAST) {
      a.op(ins.op, slot.at(ins.arg));
    } else if (flags & kArgFree) {
      a.op(ins.op, ins.arg - nlocals + nvar);
    } else if (ins.target >= 0) {
      bool inside = ins.target > p.head && ins.target <= p.end;
      if (inside) {
        int t = bc->indexOf(ins.target);
        while (instrs[static_cast<size_t>(t)].op == Op::EXTENDED_ARG) ++t;
        a.jump(ins.op, lab(instrs[static_cast<size_t>(t)].offset));
      } else {
        int l = exitLabel(ins.target);
        if (l == -100) return (why = "internal: loop exit"), PyRef();
        a.jump(forwardJump(ins.op), lab(l));
      }
    } else {
      a.op(ins.op, ins.arg);
    }
  }
  if (!p.isFor && !isUncond(instrs[static_cast<size_t>(ei)].op)) {
    a.jump(Op::JUMP_FORWARD, lab(exitLabel(instrs[static_cast<size_t>(ei) + 1].offset)));
  }
  // Epilogues: (flag, (assigned locals...)) or (1, return value).
  a.setLine(-1);
  auto locals = [&] {
    for (int i : p.stored) a.op(Op::LOAD_FAST, slot.at(i));
    a.op(Op::BUILD_TUPLE, static_cast<int>(p.stored.size()));
  };
  PyRef zero = PyRef::steal(PyLong_FromLong(0)), one = PyRef::steal(PyLong_FromLong(1));
  a.label(lab(kNext));
  for (int k = 0; k < p.below + (p.isFor ? 1 : 0); ++k) a.op(Op::POP_TOP);
  a.op(Op::LOAD_CONST, constant(zero.get()));
  locals();
  a.op(Op::BUILD_TUPLE, 2);
  a.op(Op::RETURN_VALUE);
  for (size_t k = 0; k < p.exits.size(); ++k) {
    a.label(lab(-10 - static_cast<int>(k)));
    for (int j = 0; j < p.below; ++j) a.op(Op::POP_TOP);
    PyRef flag = PyRef::steal(PyLong_FromLong(2 + static_cast<long>(k)));
    a.op(Op::LOAD_CONST, constant(flag.get()));
    locals();
    a.op(Op::BUILD_TUPLE, 2);
    a.op(Op::RETURN_VALUE);
  }
  a.label(lab(kRet));
  a.op(Op::LOAD_CONST, constant(one.get()));
  a.op(Op::SWAP, 2);
  a.op(Op::BUILD_TUPLE, 2);
  a.op(Op::RETURN_VALUE);
  std::string bytes, lt;
  a.assemble(bytes, lt);
  PyRef kw = PyRef::steal(PyDict_New());
  const int line = instrs[static_cast<size_t>(hi)].line;
  setItem(kw.get(), "co_code", PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size())));
  setItem(kw.get(), "co_consts", PyList_AsTuple(consts.get()));
  setItem(kw.get(), "co_varnames", PyList_AsTuple(names.get()));
  setItem(kw.get(), "co_nlocals", PyLong_FromLong(nvar));
  setItem(kw.get(), "co_argcount", PyLong_FromLong(valueSlot + p.values));
  setItem(kw.get(), "co_posonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_kwonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_flags", PyLong_FromLong(orig->co_flags & ~(CO_VARARGS | CO_VARKEYWORDS)));
  setItem(kw.get(), "co_stacksize",
          PyLong_FromLong(orig->co_stacksize + static_cast<int>(p.stored.size()) + p.below + p.values + 4));
  setItem(kw.get(), "co_exceptiontable", PyBytes_FromStringAndSize("", 0));
  setItem(kw.get(), "co_linetable", PyBytes_FromStringAndSize(lt.data(), static_cast<Py_ssize_t>(lt.size())));
  setItem(kw.get(), "co_name", PyUnicode_FromFormat("__xacc_loop_%U_at_%d", orig->co_name, p.head));
  setItem(kw.get(), "co_qualname", PyUnicode_FromFormat("%U.<loop body at line %d>", orig->co_qualname, line));
  PyRef code = replaceCode(orig, kw.get());
  if (!code) {
    PyErr_Clear();
    return (why = "building the loop body's code"), PyRef();
  }
  PyObject* f = PyFunction_New(code.get(), fn->func_globals);
  if (!f) {
    PyErr_Clear();
    return (why = "loop body function object"), PyRef();
  }
  if (fn->func_closure) PyFunction_SetClosure(f, fn->func_closure);
  std::lock_guard<std::mutex> lock(reg.mu);
  Py_INCREF(code.get());
  reg.bodies.insert(reinterpret_cast<PyCodeObject*>(code.get()));
  Py_INCREF(f);
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  auto [it, inserted] = reg.bodyFns.emplace(key, f);
  if (!inserted) {
    Py_DECREF(it->second);
    it->second = f;
  }
  return PyRef::steal(f);
}
}  // namespace

PyCodeObject* resumeOrigin(PyCodeObject* code, int* prologue) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.origin.find(code);
  if (it == reg.origin.end()) return nullptr;
  if (prologue) *prologue = it->second.second;
  return it->second.first;
}

bool isLoopBody(PyCodeObject* code) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  return reg.bodies.count(code) > 0;
}

void registerResume(PyCodeObject* code, PyCodeObject* orig, int prologue) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  if (reg.origin.count(code)) return;
  Py_INCREF(reinterpret_cast<PyObject*>(code));
  Py_INCREF(reinterpret_cast<PyObject*>(orig));
  reg.origin[code] = {orig, prologue};
}

PyRef emitBreak(Translator& t, Frame& top, const Instr& ins, PyObject* func, BreakHost& host, Failure& fallback) {
  auto* fn = reinterpret_cast<PyFunctionObject*>(func);
  PyCodeObject* code = top.code;
  auto bail = [&](const char* c, const std::string& d) -> PyRef {
    fallback.code = c;
    fallback.detail = d;
    return {};
  };
  int shift = 0;
  PyCodeObject* orig = resumeOrigin(code, &shift);
  if (!orig) orig = code;
  const int off = ins.offset;
  // A split at RETURN_VALUE (a return value or attribute writes rebuilt by
  // bytecode) needs no resume function and no locals: closure cells are fine.
  const bool atReturn = ins.op == Op::RETURN_VALUE;
  if (code->co_ncellvars && !atReturn) return bail("GB017", "frame defines closure cells");
  if (off < shift) return bail("GB020", "break inside a resume prologue");
  if (top.bc->inTry(off)) return bail("GB014", "break inside a try/with block");
  // A break inside a loop: split at the outermost loop's header (Note [Loop bodies]).
  LoopPlan loop;
  if (top.bc->inLoop(off)) {
    std::string error;
    const Bytecode* obc = orig == code ? top.bc : Bytecode::of(orig, error);
    if (!obc) return bail("GB020", error);
    auto [head, end] = outermostLoop(obc, off - shift);
    std::string why;
    const int stackSize = off - shift == head ? static_cast<int>(top.stack.size()) : 0;
    if (head < 0 || !planLoop(orig, obc, head, end, stackSize, loop, why))
      return bail("GB015", t.failure().code + " inside a loop, which cannot run as a function of its own: " +
                               (why.empty() ? "no loop found" : why));
    if (off - shift != head) {
      // Translate again, stopping before the loop's first iteration.
      fallback.code = "LOOP";
      fallback.offset = head + shift;
      fallback.line = obc->instrs()[static_cast<size_t>(obc->indexOf(head))].line;
      return {};
    }
  }
  const bool isLoop = loop.head >= 0;
  Op cond = forwardCond(ins.op);
  bool isJump = opcodeInfo(static_cast<uint8_t>(ins.op)).flags & (kJumpForward | kJumpBackward);
  if (!isLoop && (notBreakable(ins.op) || (isJump && cond == Op::NOP)))
    return bail("GB001", std::string("cannot split the frame at ") + ins.name());
  const int origOff = off - shift;
  const int nargs = code->co_argcount + code->co_kwonlyargcount + ((code->co_flags & CO_VARARGS) ? 1 : 0) +
                    ((code->co_flags & CO_VARKEYWORDS) ? 1 : 0);
  const int nlocals = code->co_nlocals;

  std::vector<int> outs;
  std::set<const Var*> seen;
  bool bad = false;
  for (const VarRef& v : top.stack) collectOutputs(t, v, seen, outs, bad);
  if (!atReturn)
    for (int i = 0; i < nlocals; ++i) collectOutputs(t, top.slots[static_cast<size_t>(i)], seen, outs, bad);
  for (const auto& w : t.attrWrites()) collectOutputs(t, w.value, seen, outs, bad);
  if (bad) return bail("GB020", "a live tensor that is not a graph value");
  PyRef graphFn = host.finishGraph(outs);
  if (!graphFn) {
    PyErr_Clear();
    return bail("GB020", "finishing the prefix graph");
  }
  bool hasGraph = graphFn.get() != Py_None;
  if (!hasGraph && !outs.empty()) return bail("GB020", "live tensors without a graph");

  Emitter em(t, host, code, top.line);
  em.fallback = &fallback;
  em.outLocal = em.local("__xacc_out");
  for (size_t k = 0; k < outs.size(); ++k) em.outIndex[outs[k]] = static_cast<int>(k);
  Asm& a = em.asm_;
  if (code->co_nfreevars) a.op(Op::COPY_FREE_VARS, code->co_nfreevars);
  a.op(Op::RESUME, 0);
  if (hasGraph) {
    a.op(Op::PUSH_NULL);
    a.op(Op::LOAD_CONST, em.constant(graphFn.get()));
    for (int i = 0; i < nargs; ++i) a.op(Op::LOAD_FAST, i);
    a.op(Op::PRECALL, nargs);
    a.op(Op::CALL, nargs);
    a.op(Op::STORE_FAST, em.outLocal);
  }
  // 0. the attribute writes the prefix made (Note [Replayed attribute writes]),
  // in program order: `value; obj; STORE_ATTR name`.
  for (const auto& w : t.attrWrites()) {
    if (!em.rebuild(w.value) || !em.source(w.obj->source)) return {};
    a.op(Op::STORE_ATTR, em.name(w.name.get()));
  }
  // 1. the stack, 2. the locals (all loads before any store), 3. store locals.
  for (const VarRef& v : top.stack)
    if (!em.rebuild(v)) return {};
  std::vector<int> bound;
  for (int i = 0; i < nlocals && !atReturn; ++i) {
    const VarRef& v = top.slots[static_cast<size_t>(i)];
    if (v && !v->is(Var::Kind::Cell)) bound.push_back(i);
  }
  for (int i : bound)
    if (!em.rebuild(top.slots[static_cast<size_t>(i)])) return {};
  for (auto it = bound.rbegin(); it != bound.rend(); ++it) a.op(Op::STORE_FAST, *it);

  // The resume function takes every original local, then the stack values.
  const int origLocals = orig->co_nlocals;
  std::vector<int> unbound;
  for (int i = 0; i < origLocals; ++i) {
    // Locals of a resume frame keep their indices (its extra locals come after).
    if (std::find(bound.begin(), bound.end(), i) == bound.end()) unbound.push_back(i);
  }
  // Locals only the loop body binds: the sentinel, deleted by resume prologues if still there.
  std::vector<int> maybe;
  if (isLoop) {
    for (int i : loop.stored) {
      auto it = std::find(unbound.begin(), unbound.end(), i);
      if (it == unbound.end()) continue;
      unbound.erase(it);
      unbound.push_back(-1 - i);
      maybe.push_back(i);
    }
  }
  std::vector<bool> layout;
  for (const VarRef& v : top.stack) layout.push_back(!v->is(Var::Kind::Null));

  int tempCount = 0;
  auto callResume = [&](int target, const std::vector<bool>& lay) -> bool {
    auto& reg = registry();
    PyRef resumeFn;
    auto key = std::make_tuple(orig, target, lay, unbound, fn->func_globals);
    {
      std::lock_guard<std::mutex> lock(reg.mu);
      auto it = reg.fns.find(key);
      if (it != reg.fns.end() && reinterpret_cast<PyFunctionObject*>(it->second)->func_closure == fn->func_closure)
        resumeFn = PyRef::borrow(it->second);
    }
    if (!resumeFn) {
      std::string error;
      PyRef rcode = makeResume(orig, target, lay, unbound, error);
      if (!rcode) {
        if (PyErr_Occurred()) PyErr_Clear();
        return em.failWith("GB020", "resume function: " + error);
      }
      PyObject* f = PyFunction_New(rcode.get(), fn->func_globals);
      if (!f) {
        PyErr_Clear();
        return em.failWith("GB020", "resume function object");
      }
      if (fn->func_closure) PyFunction_SetClosure(f, fn->func_closure);
      resumeFn = PyRef::steal(f);
      std::lock_guard<std::mutex> lock(reg.mu);
      Py_INCREF(f);
      Py_INCREF(reinterpret_cast<PyObject*>(orig));
      auto [it, inserted] = reg.fns.emplace(key, f);
      if (!inserted) {
        Py_DECREF(it->second);
        it->second = f;
      }
    }
    std::vector<int> temps;
    for (size_t i = 0; i < lay.size(); ++i) {
      std::string n = "__xacc_tmp" + std::to_string(tempCount + static_cast<int>(i));
      temps.push_back(em.local(n.c_str()));
    }
    tempCount += static_cast<int>(lay.size());
    for (auto it = temps.rbegin(); it != temps.rend(); ++it) a.op(Op::STORE_FAST, *it);
    a.op(Op::PUSH_NULL);
    a.op(Op::LOAD_CONST, em.constant(resumeFn.get()));
    for (int i = 0; i < origLocals; ++i) {
      if (std::find(unbound.begin(), unbound.end(), i) != unbound.end()) {
        a.op(Op::LOAD_CONST, em.constant(Py_None));
      } else {
        a.op(Op::LOAD_FAST, i);
      }
    }
    int nvals = 0;
    for (size_t i = 0; i < lay.size(); ++i)
      if (lay[i]) {
        a.op(Op::LOAD_FAST, temps[i]);
        ++nvals;
      }
    a.op(Op::PRECALL, origLocals + nvals);
    a.op(Op::CALL, origLocals + nvals);
    a.op(Op::RETURN_VALUE);
    em.maxDepth += origLocals + nvals + 2;
    return true;
  };

  if (isLoop) {
    // The loop, run natively around the body function (Note [Loop bodies]).
    std::vector<int> params;
    for (int i = 0; i < origLocals; ++i) {
      bool isBound = std::find(bound.begin(), bound.end(), i) != bound.end();
      if (loop.assignedFirst.count(i)) continue;
      if (loop.stored.count(i) || (isBound && loop.referenced.count(i))) params.push_back(i);
    }
    std::string why, error;
    const Bytecode* obc = orig == code ? top.bc : Bytecode::of(orig, error);
    PyRef body = obc ? loopBody(orig, obc, loop, params, fn, why) : PyRef();
    if (!body) return bail("GB015", "loop body function: " + (obc ? why : error));
    for (int i : maybe) {
      a.op(Op::LOAD_CONST, em.constant(unboundSentinel()));
      a.op(Op::STORE_FAST, i);
    }
    std::vector<int> values;
    for (int k = 0; k < loop.values; ++k) values.push_back(em.local(("__xacc_loop_value" + std::to_string(k)).c_str()));
    const int flag = em.local("__xacc_loop_flag"), payload = em.local("__xacc_loop_payload");
    std::vector<bool> belowLayout(layout.begin(), layout.end() - (loop.isFor ? 1 : 0));
    PyRef zero = PyRef::steal(PyLong_FromLong(0)), one = PyRef::steal(PyLong_FromLong(1));
    auto storeAssigned = [&] {
      a.op(Op::LOAD_FAST, payload);
      a.op(Op::UNPACK_SEQUENCE, static_cast<int>(loop.stored.size()));
      for (int i : loop.stored) a.op(Op::STORE_FAST, i);
    };
    auto flagIs = [&](PyObject* k, int skipLabel) {
      a.op(Op::LOAD_FAST, flag);
      a.op(Op::LOAD_CONST, em.constant(k));
      a.op(Op::COMPARE_OP, 2);  // ==
      a.jump(Op::POP_JUMP_FORWARD_IF_FALSE, skipLabel);
    };
    enum { kLoop = 10, kNotNext, kDone, kExit0 = 100 };
    a.label(kLoop);
    if (loop.isFor) a.jump(Op::FOR_ITER, kDone);
    if (loop.unpacked) a.op(Op::UNPACK_SEQUENCE, loop.values);
    for (int v : values) a.op(Op::STORE_FAST, v);
    a.op(Op::PUSH_NULL);
    a.op(Op::LOAD_CONST, em.constant(body.get()));
    for (int i : params) a.op(Op::LOAD_FAST, i);
    for (int v : values) a.op(Op::LOAD_FAST, v);
    const int nargsBody = static_cast<int>(params.size() + values.size());
    a.op(Op::PRECALL, nargsBody);
    a.op(Op::CALL, nargsBody);
    a.op(Op::UNPACK_SEQUENCE, 2);
    a.op(Op::STORE_FAST, flag);
    a.op(Op::STORE_FAST, payload);
    flagIs(zero.get(), kNotNext);
    storeAssigned();
    a.jump(Op::JUMP_BACKWARD, kLoop);
    a.label(kNotNext);
    if (loop.isFor) a.op(Op::POP_TOP);  // the iterator
    flagIs(one.get(), kExit0);
    for (size_t k = 0; k < belowLayout.size(); ++k) a.op(Op::POP_TOP);
    a.op(Op::LOAD_FAST, payload);
    a.op(Op::RETURN_VALUE);
    for (size_t k = 0; k < loop.exits.size(); ++k) {
      a.label(kExit0 + static_cast<int>(k));
      PyRef fk = PyRef::steal(PyLong_FromLong(2 + static_cast<long>(k)));
      if (k + 1 < loop.exits.size()) flagIs(fk.get(), kExit0 + static_cast<int>(k) + 1);
      storeAssigned();
      if (!callResume(loop.exits[k], belowLayout)) return {};
    }
    if (loop.exits.empty()) a.label(kExit0);
    if (loop.isFor) {
      a.label(kDone);
      if (!callResume(loop.done, belowLayout)) return {};
    } else if (loop.exits.empty()) {  // `while True` left only by return (flag 1): not reached
      for (size_t k = 0; k < belowLayout.size(); ++k) a.op(Op::POP_TOP);
      a.op(Op::LOAD_FAST, payload);
      a.op(Op::RETURN_VALUE);
    }
    em.maxDepth += static_cast<int>(params.size()) + static_cast<int>(loop.stored.size()) + 4;
  } else if (ins.op == Op::RETURN_VALUE) {
    a.op(Op::RETURN_VALUE);
  } else if (cond != Op::NOP) {
    std::vector<bool> rest(layout.begin(), layout.end() - 1);
    a.jump(cond, 1);
    if (!callResume(ins.next - shift, rest)) return {};
    a.label(1);
    if (!callResume(ins.target - shift, rest)) return {};
  } else {
    std::string origCode = rawCode(orig);
    auto [start, end] = instructionGroup(origCode, origOff);
    std::string raw = origCode.substr(static_cast<size_t>(start), static_cast<size_t>(end - start));
    int effect = 0;
    for (size_t i = 0; i + 1 < raw.size(); i += 2) {
      auto op = static_cast<uint8_t>(raw[i]);
      if (op == opByte(Op::CACHE) || op == opByte(Op::EXTENDED_ARG)) continue;
      int arg = op == static_cast<uint8_t>(ins.op) ? ins.arg : static_cast<uint8_t>(raw[i + 1]);
      effect += PyCompile_OpcodeStackEffectWithJump(op, op >= 90 ? arg : 0, 0);
    }
    int consumed = pushes(ins.op) - effect;
    if (consumed > static_cast<int>(layout.size()) || consumed < 0)
      return bail("GB020", std::string("stack effect of ") + ins.name());
    std::vector<bool> after(layout.begin(), layout.end() - consumed);
    for (int i = 0; i < pushes(ins.op); ++i) after.push_back(true);
    // The temps callResume stores into exist before the copy is made, so the
    // copy's closure opargs can be moved past every added local now.
    for (size_t i = 0; i < after.size(); ++i) em.local(("__xacc_tmp" + std::to_string(i)).c_str());
    int nvarFinal = static_cast<int>(PyList_GET_SIZE(em.varnames.get()));
    if (!shiftDerefs(raw, orig->co_nlocals, nvarFinal - orig->co_nlocals))
      return bail("GB020", "closure index needs EXTENDED_ARG");
    a.raw(raw);
    em.maxDepth = std::max(em.maxDepth, static_cast<int>(after.size()) + 8);
    if (!callResume(end, after)) return {};
  }
  const int nvar = static_cast<int>(PyList_GET_SIZE(em.varnames.get()));
  a.patchDerefs(nvar);
  std::string bytes, lt;
  a.assemble(bytes, lt);
  PyRef kw = PyRef::steal(PyDict_New());
  setItem(kw.get(), "co_code", PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size())));
  setItem(kw.get(), "co_consts", PyList_AsTuple(em.consts.get()));
  setItem(kw.get(), "co_names", PyList_AsTuple(em.names.get()));
  setItem(kw.get(), "co_varnames", PyList_AsTuple(em.varnames.get()));
  setItem(kw.get(), "co_nlocals", PyLong_FromLong(nvar));
  setItem(kw.get(), "co_argcount", PyLong_FromLong(nargs));
  setItem(kw.get(), "co_posonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_kwonlyargcount", PyLong_FromLong(0));
  setItem(kw.get(), "co_flags", PyLong_FromLong(code->co_flags & ~(CO_VARARGS | CO_VARKEYWORDS)));
  setItem(kw.get(), "co_stacksize", PyLong_FromLong(em.maxDepth + code->co_stacksize));
  setItem(kw.get(), "co_exceptiontable", PyBytes_FromStringAndSize("", 0));
  setItem(kw.get(), "co_linetable", PyBytes_FromStringAndSize(lt.data(), static_cast<Py_ssize_t>(lt.size())));
  setItem(kw.get(), "co_name", PyUnicode_FromFormat("__xacc_break_%U", code->co_name));
  setItem(kw.get(), "co_qualname", PyUnicode_FromFormat("%U.<break>", code->co_qualname));
  PyRef newCode = replaceCode(code, kw.get());
  if (!newCode) {
    std::string what = "break function";
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    if (ev) {
      PyObject* s = PyObject_Str(ev);
      if (s && PyUnicode_AsUTF8(s)) what += std::string(": ") + PyUnicode_AsUTF8(s);
      Py_XDECREF(s);
    }
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    PyErr_Clear();
    return bail("GB020", what);
  }
  PyObject* f = PyFunction_New(newCode.get(), fn->func_globals);
  if (!f) {
    PyErr_Clear();
    return bail("GB020", "break function object");
  }
  if (fn->func_closure) PyFunction_SetClosure(f, fn->func_closure);
  return PyRef::steal(f);
}

}  // namespace xacc::capture::translate
