// xacc._C.capture: the XJIT pieces the Python translator drives — the frame
// hook and its thread state, per-code caches, guard trees, graph building and
// compiled graphs. Everything here is a thin conversion layer; behaviour lives
// in csrc/lib/capture. Python objects handed to C++ are retained by the C++
// side for as long as it needs them.
#include <pybind11/stl.h>

#include <torch/csrc/autograd/python_variable.h>

#include "Backends.h"
#include "Bindings.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/capture/EvalFrame.h"
#include "xacc/capture/GraphBuilder.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/Autodiff.h"
#include "xacc/passes/GraphSplit.h"

namespace cap = xacc::capture;
namespace support = xacc::support;
namespace ir = xacc::ir;

namespace {

/// The graph `graph` of `m` ("": its first) prepared for `device`.
std::shared_ptr<cap::CompiledGraph> compileModule(std::unique_ptr<ir::Module> m, const std::string& graph,
                                                  const std::string& where, const std::string& device) {
  ir::Graph* g = graph.empty() ? (m->graphs().empty() ? nullptr : m->graphs().front().get()) : m->lookup(graph);
  if (!g) throw py::value_error("no graph @" + graph + " in " + where);
  std::string error;
  auto cg = cap::CompiledGraph::create(std::move(m), g, error, device);
  if (!cg) throw py::value_error(error);
  return cg;
}

// A frame as guard trees read it, built from Python values (check/resolve from
// Python); `storage` holds the argument pointers and must outlive the view.
cap::FrameView frameViewOf(py::tuple args, py::dict globals, py::handle builtins, py::handle closure,
                           py::tuple consts, std::vector<PyObject*>& storage) {
  storage.clear();
  for (py::handle h : args) storage.push_back(h.ptr());
  return cap::FrameView::of(storage.data(), storage.size(), globals.ptr(),
                            builtins.is_none() ? nullptr : builtins.ptr(),
                            closure.is_none() ? nullptr : closure.ptr(), consts.ptr());
}

ir::Type typeFromSpec(py::handle spec) {
  if (py::isinstance<py::str>(spec)) {
    std::string s = spec.cast<std::string>();
    if (s == "i64") return ir::Type::i64();
    if (s == "f64") return ir::Type::f64();
    if (s == "bool") return ir::Type::boolean();
    if (s == "null") return ir::Type::null();
    if (s == "str") return ir::Type::string();
    if (s == "any") return ir::Type::any();
    if (s == "pyobj") return ir::Type::pyobj();
    throw py::value_error("unknown type spec '" + s + "'");
  }
  py::tuple t = spec.cast<py::tuple>();
  std::string kind = t[0].cast<std::string>();
  if (kind == "tensor") {
    ir::DType d;
    if (!ir::parseDType(t[1].cast<std::string>(), d)) throw py::value_error("unknown dtype");
    std::vector<ir::Dim> dims;
    for (py::handle s : t[2]) {
      if (py::isinstance<py::str>(s)) dims.push_back(ir::Dim::symbol(s.cast<std::string>()));
      else {
        int64_t n = s.cast<int64_t>();
        dims.push_back(n < 0 ? ir::Dim::dynamic() : ir::Dim::fixed(n));
      }
    }
    return ir::Type::tensor(d, dims, t[3].cast<std::string>());
  }
  if (kind == "list") return ir::Type::list(typeFromSpec(t[1]));
  if (kind == "tuple") {
    std::vector<ir::Type> elems;
    for (py::handle e : t[1]) elems.push_back(typeFromSpec(e));
    return ir::Type::tuple(elems);
  }
  throw py::value_error("unknown type spec '" + kind + "'");
}

ir::Attr attrFromPython(py::handle v) {
  if (v.is_none()) return ir::Attr::none();
  if (PyBool_Check(v.ptr())) return ir::Attr::boolean(v.ptr() == Py_True);
  if (PyLong_Check(v.ptr())) return ir::Attr::integer(v.cast<int64_t>());
  if (PyFloat_Check(v.ptr())) return ir::Attr::real(v.cast<double>());
  if (PyUnicode_Check(v.ptr())) return ir::Attr::string(v.cast<std::string>());
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    ir::Attr::Array items;
    for (py::handle e : v) items.push_back(attrFromPython(e));
    return ir::Attr::array(std::move(items));
  }
  throw py::type_error(std::string("cannot make an attribute of a '") + Py_TYPE(v.ptr())->tp_name + "'");
}

cap::OutTemplate templateFromSpec(py::handle spec) {
  py::tuple t = spec.cast<py::tuple>();
  std::string kind = t[0].cast<std::string>();
  cap::OutTemplate o;
  if (kind == "out") {
    o.kind = cap::OutTemplate::Kind::Out;
    o.index = t[1].cast<int>();
  } else if (kind == "call") {
    o.kind = cap::OutTemplate::Kind::Call;
    o.obj = py::object(t[1]).release().ptr();
    o.index = t[2].cast<int>();
  } else if (kind == "const") {
    o.kind = cap::OutTemplate::Kind::Const;
    o.obj = py::object(t[1]).release().ptr();
  } else if (kind == "tuple" || kind == "list") {
    o.kind = kind == "tuple" ? cap::OutTemplate::Kind::Tuple : cap::OutTemplate::Kind::List;
    for (py::handle e : t[1]) o.items.push_back(templateFromSpec(e));
  } else if (kind == "dict") {
    o.kind = cap::OutTemplate::Kind::Dict;
    o.obj = py::tuple(t[1]).release().ptr();
    for (py::handle e : t[2]) o.items.push_back(templateFromSpec(e));
  } else {
    throw py::value_error("unknown output template '" + kind + "'");
  }
  return o;
}

cap::Access accessFromName(const std::string& s) {
  if (s == "L") return cap::Access::Local;
  if (s == "G") return cap::Access::Global;
  if (s == "C") return cap::Access::Closure;
  if (s == "K") return cap::Access::Const;
  if (s == "A") return cap::Access::Attr;
  if (s == "I") return cap::Access::Item;
  if (s == "T") return cap::Access::AsTensor;
  if (s == "D") return cap::Access::DictItem;
  if (s == "W") return cap::Access::Deref;
  if (s == "Y") return cap::Access::TypeOf;
  if (s == "M") return cap::Access::ClassAttr;
  throw py::value_error("unknown source kind '" + s + "'");
}

PyCodeObject* asCode(py::handle h) {
  if (!PyCode_Check(h.ptr())) throw py::type_error("expected a code object");
  return reinterpret_cast<PyCodeObject*>(h.ptr());
}

py::dict entryInfo(const std::shared_ptr<cap::CacheEntry>& e) {
  py::dict d;
  const char* kinds[] = {"graph", "code", "default"};
  d["kind"] = kinds[static_cast<int>(e->kind)];
  d["label"] = e->label;
  d["hits"] = e->hits.load();
  d["guards"] = e->guards ? e->guards->describe() : std::vector<std::string>{};
  d["graph"] = e->graph ? e->graph->text() : std::string();
  d["device"] = e->graph ? e->graph->device() : std::string();
  d["plan"] = e->graph ? e->graph->describe() : std::string();
  // Code entries: the break function's code (made into a function per call).
  d["code"] = e->fn && PyCode_Check(e->fn) ? py::reinterpret_borrow<py::object>(e->fn) : py::none();
  return d;
}

}  // namespace

void bindTranslate(py::module_& c);  // translate_bindings.cpp
void bindTrainingRunner(py::module_& c);  // training_runner.cpp
size_t functionalizeFreshInplace(ir::Graph& g);  // training_inplace.cpp

void bindCapture(py::module_& m) {
  py::module_ c = m.def_submodule("capture", "XJIT frame hook, caches, guards and graphs");

  // "xpu" registers when xacc._C_mlir is imported (Note [Lazy backend modules]).
  xacc::python::registerAtenBackend();
  c.def("register_aten", [] { xacc::backend::aten::registerAtenOps(); });
  c.def("device_available", [](const std::string& d) {
          xacc::python::ensureBackend(d);
          return cap::deviceAvailable(d);
        },
        "Whether captured graphs can run on `d` ('cpu', or 'xpuN' when the MLIR backend is built); "
        "imports the module of `d`'s backend when it is not loaded yet (Note [Lazy backend modules]).");
  c.def("backends", [] {
    py::list out;
    for (const auto& b : cap::backends()) {
      py::dict d;
      d["target"] = b->target;
      d["name"] = b->name;
      d["description"] = b->description;
      d["native_code"] = b->capabilities.nativeCode;
      d["profiles"] = b->capabilities.profiles;
      out.append(d);
    }
    return out;
  }, "The registered backends of captured graphs (Note [Backend interface]), by target.");

  py::class_<cap::CompiledGraph, std::shared_ptr<cap::CompiledGraph>>(c, "CompiledGraph")
      .def("text", &cap::CompiledGraph::text)
      .def_property_readonly("num_inputs", &cap::CompiledGraph::numInputs)
      .def_property_readonly("id", &cap::CompiledGraph::id)
      .def_property_readonly("num_nodes", [](const cap::CompiledGraph& g) { return g.graph().numNodes(); })
      .def_property_readonly("has_effects", &cap::CompiledGraph::hasEffects)
      .def_property_readonly("device", &cap::CompiledGraph::device)
      .def("describe", &cap::CompiledGraph::describe)
      .def("profile_json", &cap::CompiledGraph::profileJson,
           "What the device runner measured when compiled with options={'profile': '1'} (JSON; docs/pgo.md).")
      .def("op_names", [](const cap::CompiledGraph& g) {
        std::vector<std::string> names;
        for (ir::Node* n : g.graph()) names.push_back(n->opName());
        return names;
      })
      .def("__call__", [](const cap::CompiledGraph& g, py::args args) {
        std::vector<PyObject*> in;
        for (py::handle a : args) in.push_back(a.ptr());
        PyObject* r = g.call(in.data(), in.size());
        if (!r) {
          cap::raiseAsEager();  // See Note [ATen error translation]
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(r);
      });

  py::class_<cap::GraphBuilder>(c, "GraphBuilder")
      .def(py::init<std::string>())
      .def("add_input", [](cap::GraphBuilder& b, py::handle spec, std::string name) {
        return b.addInput(typeFromSpec(spec), std::move(name));
      })
      .def("add_op", [](cap::GraphBuilder& b, const std::string& op, const std::vector<int>& operands,
                        py::dict attrs, py::list types) {
        ir::AttrDict a;
        for (auto item : attrs) a.set(item.first.cast<std::string>(), attrFromPython(item.second));
        std::vector<ir::Type> ts;
        for (py::handle t : types) ts.push_back(typeFromSpec(t));
        std::vector<int> results;
        std::string error;
        if (!b.addOp(op, operands, std::move(a), std::move(ts), results, error))
          throw py::value_error(error);
        return results;
      })
      .def("add_const", [](cap::GraphBuilder& b, py::handle v, py::handle spec) {
        return b.addConst(attrFromPython(v), typeFromSpec(spec));
      })
      .def("begin_region", [](cap::GraphBuilder& b, const std::string& label, py::list inputs) {
        std::vector<ir::Type> ts;
        for (py::handle t : inputs)  // a type spec, or the id of a value of that type
          ts.push_back(py::isinstance<py::int_>(t) ? b.typeOf(t.cast<int>()) : typeFromSpec(t));
        std::vector<int> ids;
        b.beginRegion(label, ts, ids);
        return ids;
      })
      .def("end_region", &cap::GraphBuilder::endRegion)
      .def("abandon_region", &cap::GraphBuilder::abandonRegion)
      .def_property_readonly("region_depth", &cap::GraphBuilder::regionDepth)
      .def("add_if", [](cap::GraphBuilder& b, int cond, int a, int e, const std::vector<int>& ta,
                        const std::vector<int>& te) {
        std::vector<int> results;
        std::string error;
        if (!b.addIf(cond, a, e, ta, te, results, error)) throw py::value_error(error);
        return results;
      })
      .def("add_loop", [](cap::GraphBuilder& b, const std::vector<int>& init, int c, int body, int condId,
                          const std::vector<int>& bodyIds) {
        std::vector<int> results;
        std::string error;
        if (!b.addLoop(init, c, body, condId, bodyIds, results, error)) throw py::value_error(error);
        return results;
      })
      .def("set_outputs", &cap::GraphBuilder::setOutputs)
      .def("set_loc", &cap::GraphBuilder::setLoc)
      .def("type_of", [](const cap::GraphBuilder& b, int id) { return b.typeOf(id).str(); })
      .def_property_readonly("num_nodes", &cap::GraphBuilder::numNodes)
      .def_property_readonly("has_effects", &cap::GraphBuilder::hasEffects)
      .def("text", &cap::GraphBuilder::text)
      .def("module",
           [](const cap::GraphBuilder& b) {
             auto pm = std::make_shared<xacc::python::PyModule>();
             pm->module = b.cloneModule();
             return pm;
           })
      .def(
          "run_passes",
          [](cap::GraphBuilder& b, const std::string& pipeline,
             const std::map<std::string, std::string>& options) {
            std::string error;
            if (!b.runPasses(pipeline, error, options)) throw py::value_error(error);
          },
          py::arg("pipeline"), py::arg("options") = std::map<std::string, std::string>{})
      .def(
          "compile",
          [](cap::GraphBuilder& b, const std::string& device, const std::map<std::string, std::string>& options) {
            xacc::python::ensureBackend(device);
            std::string error;
            auto g = b.compile(error, device, options);
            if (!g) throw py::value_error(error);
            return g;
          },
          py::arg("device") = "cpu", py::arg("options") = std::map<std::string, std::string>{});

  py::class_<cap::GuardTree, std::shared_ptr<cap::GuardTree>>(c, "GuardTree")
      .def(py::init<>())
      .def("node", [](cap::GuardTree& t, int parent, const std::string& kind, int64_t index,
                      py::handle key) {
        return t.node(parent, accessFromName(kind), index, key.is_none() ? nullptr : key.ptr());
      })
      .def("leaf_type", [](cap::GuardTree& t, int id, py::handle type) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Type;
        l.obj = type.inc_ref().ptr();
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_id", [](cap::GuardTree& t, int id, py::handle obj) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Id;
        l.obj = obj.inc_ref().ptr();
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_equals", [](cap::GuardTree& t, int id, py::handle obj) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Equals;
        l.obj = obj.inc_ref().ptr();
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_len", [](cap::GuardTree& t, int id, int64_t n) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Length;
        l.n = n;
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_hasattr", [](cap::GuardTree& t, int id, py::str name, bool has) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::HasAttr;
        l.obj = name.inc_ref().ptr();
        l.n = has ? 1 : 0;
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_haskey", [](cap::GuardTree& t, int id, py::handle key, bool has) {
        if (PyObject_Hash(key.ptr()) == -1) throw py::error_already_set();
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::HasKey;
        l.obj = key.inc_ref().ptr();
        l.n = has ? 1 : 0;
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_keys", [](cap::GuardTree& t, int id, py::tuple keys) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Keys;
        l.obj = keys.inc_ref().ptr();
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_same", [](cap::GuardTree& t, int id, int other, bool same) {
        if (other < 0 || other >= id) throw py::value_error("leaf_same: the other node must come first");
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::SameAs;
        l.n = other;
        l.obj = Py_NewRef(same ? Py_True : Py_False);
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_distinct", [](cap::GuardTree& t, int id) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Distinct;
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_not_tensor", [](cap::GuardTree& t, int id) {
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::NotTensor;
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_tensor", [](cap::GuardTree& t, int id, py::handle obj, std::vector<int> dynamicDims) {
        if (!THPVariable_Check(obj.ptr())) throw py::type_error("leaf_tensor expects a tensor");
        const at::Tensor& x = THPVariable_Unpack(obj.ptr());
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Tensor;
        l.tensorType = Py_TYPE(obj.ptr());
        l.keySet = x.key_set().raw_repr();
        l.dtype = static_cast<int8_t>(x.scalar_type());
        l.deviceType = static_cast<int8_t>(x.device().type());
        l.deviceIndex = x.device().index();
        l.requiresGrad = x.requires_grad();
        l.sizes.assign(x.sizes().begin(), x.sizes().end());
        l.strides.assign(x.strides().begin(), x.strides().end());
        for (int d : dynamicDims)
          if (d >= 0 && d < static_cast<int>(l.sizes.size())) l.sizes[d] = -2;
        // A dynamic dim of a contiguous tensor makes the strides depend on it:
        // require contiguity instead. The dynamic dims of a non-contiguous one
        // are dims no other stride depends on (Note [Dynamic dims of strided
        // tensors] in dynamic.py): its strides are guarded exactly.
        if (!dynamicDims.empty() && x.is_contiguous()) {
          l.contiguous = true;
          l.strides.clear();
        }
        t.addLeaf(id, std::move(l));
      })
      .def("leaf_tensor_meta", [](cap::GuardTree& t, int id, py::handle tensorType, uint64_t keySet, int dtype,
                                  int deviceType, int deviceIndex, bool requiresGrad, bool contiguous,
                                  std::vector<int64_t> sizes, std::vector<int64_t> strides) {
        // A tensor leaf from its recorded metadata (see dump()): AOT artifacts.
        if (!PyType_Check(tensorType.ptr()) ||
            !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(tensorType.ptr()),
                              reinterpret_cast<PyTypeObject*>(THPVariableClass)))
          throw py::type_error("leaf_tensor_meta expects a tensor type");
        cap::Leaf l;
        l.kind = cap::Leaf::Kind::Tensor;
        l.tensorType = reinterpret_cast<PyTypeObject*>(tensorType.ptr());
        l.keySet = keySet;
        l.dtype = static_cast<int8_t>(dtype);
        l.deviceType = static_cast<int8_t>(deviceType);
        l.deviceIndex = static_cast<int8_t>(deviceIndex);
        l.requiresGrad = requiresGrad;
        l.contiguous = contiguous;
        l.sizes = std::move(sizes);
        l.strides = std::move(strides);
        t.addLeaf(id, std::move(l));
      })
      .def("dump", [](const cap::GuardTree& t) {
        // (local_names, grad_mode, [(parent, kind, index, key, [leaf, ...]), ...], dims, autocast,
        // inference_mode) where a
        // leaf is ("type", T) | ("id", obj) | ("eq", obj) | ("len", n) | ("not_tensor",) | ("hasattr", name, has) |
        // ("haskey", key, has) | ("keys", tuple) | ("same", other_node, is) | ("distinct",) |
        // ("tensor", type, key_set, dtype, device_type, device_index, requires_grad,
        // contiguous, sizes, strides), and dims lists the dim guards as (a, dim_a, op, b,
        // dim_b, value, what), op "" for dims_equal (what: the symbol) else dim_relation's.
        // Rebuilding with node()/leaf_*()/dims_equal()/dim_relation() in this order gives
        // the same tree.
        // Indexed by cap::Access; accessFromName() reads these names back.
        static const char* kinds[] = {"L", "G", "C", "K", "A", "I", "T", "D", "W", "Y", "M"};
        static_assert(sizeof(kinds) / sizeof(kinds[0]) == static_cast<size_t>(cap::Access::ClassAttr) + 1);
        py::list nodes;
        for (size_t i = 0; i < t.size(); ++i) {
          int id = static_cast<int>(i);
          py::list leaves;
          for (const cap::Leaf& l : t.nodeLeaves(id)) {
            auto obj = [&] {  // Type and Id: the object (None once it died: Note [Identity guards hold weakly])
              PyObject* o = l.kind == cap::Leaf::Kind::Type || l.kind == cap::Leaf::Kind::Id ? l.target() : l.obj;
              return py::reinterpret_borrow<py::object>(o ? o : Py_None);
            };
            switch (l.kind) {
              case cap::Leaf::Kind::Type: leaves.append(py::make_tuple("type", obj())); break;
              case cap::Leaf::Kind::Id: leaves.append(py::make_tuple("id", obj())); break;
              case cap::Leaf::Kind::Equals: leaves.append(py::make_tuple("eq", obj())); break;
              case cap::Leaf::Kind::Length: leaves.append(py::make_tuple("len", l.n)); break;
              case cap::Leaf::Kind::NotTensor: leaves.append(py::make_tuple("not_tensor")); break;
              case cap::Leaf::Kind::HasAttr: leaves.append(py::make_tuple("hasattr", obj(), l.n != 0)); break;
              case cap::Leaf::Kind::HasKey:
                leaves.append(py::make_tuple("haskey", obj(), l.n != 0));
                break;
              case cap::Leaf::Kind::Keys: leaves.append(py::make_tuple("keys", obj())); break;
              case cap::Leaf::Kind::SameAs:
                leaves.append(py::make_tuple("same", l.n, l.obj == Py_True));
                break;
              case cap::Leaf::Kind::Distinct: leaves.append(py::make_tuple("distinct")); break;
              case cap::Leaf::Kind::Tensor:
                leaves.append(py::make_tuple(
                    "tensor", py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(l.tensorType)),
                    l.keySet, static_cast<int>(l.dtype), static_cast<int>(l.deviceType),
                    static_cast<int>(l.deviceIndex), l.requiresGrad, l.contiguous, l.sizes, l.strides));
                break;
            }
          }
          PyObject* key = t.nodeKey(id);
          nodes.append(py::make_tuple(t.nodeParent(id), kinds[static_cast<int>(t.nodeAccess(id))],
                                      t.nodeIndex(id),
                                      key ? py::reinterpret_borrow<py::object>(key) : py::none(), leaves));
        }
        py::list dims;
        for (const auto& d : t.dimGuards())
          dims.append(py::make_tuple(d.a, d.dimA, d.op, d.b, d.dimB, d.value, d.what));
        py::object modes = py::none();
        if (t.modesGuarded()) {
          py::list types;
          for (PyObject* ty : t.fnModeTypes()) types.append(py::reinterpret_borrow<py::object>(ty));
          modes = py::make_tuple(py::tuple(types), t.dispatchModes());
        }
        return py::make_tuple(t.localNames(), t.gradMode(), nodes, dims, t.autocast(), t.inferenceMode(), modes);
      })
      .def("dims_equal", &cap::GuardTree::addDimEquality, py::arg("a"), py::arg("dim_a"), py::arg("b"),
           py::arg("dim_b"), py::arg("symbol"))
      .def("dim_relation", &cap::GuardTree::addDimRelation, py::arg("a"), py::arg("dim_a"), py::arg("op"),
           py::arg("b"), py::arg("dim_b"), py::arg("value"), py::arg("what"))
      .def("set_grad_mode", &cap::GuardTree::setGradMode)
      .def("set_autocast", &cap::GuardTree::setAutocast)
      .def("set_inference_mode", &cap::GuardTree::setInferenceMode)
      .def("set_modes",
           [](cap::GuardTree& t, py::tuple fnModeTypes, int64_t dispatchModes) {
             std::vector<PyObject*> types;
             for (py::handle ty : fnModeTypes) types.push_back(ty.ptr());
             t.setModes(types, dispatchModes);
           },
           py::arg("fn_mode_types"), py::arg("dispatch_modes"))
      .def("set_local_names", &cap::GuardTree::setLocalNames)
      .def("path", &cap::GuardTree::path)
      .def("describe", &cap::GuardTree::describe)
      .def_property_readonly("num_leaves", &cap::GuardTree::numLeaves)
      .def_property_readonly("num_nodes", &cap::GuardTree::size)
      .def("check", [](cap::GuardTree& t, py::tuple args, py::dict globals, py::handle builtins,
                       py::handle closure, py::tuple consts) {
        std::vector<PyObject*> a;
        cap::FrameView v = frameViewOf(args, globals, builtins, closure, consts, a);
        std::vector<PyObject*> r(t.size());
        std::string why;
        bool ok = t.check(v, r.data(), &why);
        t.release(r.data());
        return py::make_tuple(ok, why);
      });

  // The objects guard-tree nodes `nodes` resolve to in a frame (what a cache
  // entry would pass its graph); None when the guards fail. Used to run a graph
  // on the inputs it is being compiled for (xacc._src.amp).
  c.def("resolve", [](cap::GuardTree& t, py::tuple args, py::dict globals, py::handle builtins,
                      py::handle closure, py::tuple consts, const std::vector<int>& nodes) -> py::object {
    std::vector<PyObject*> a;
    cap::FrameView v = frameViewOf(args, globals, builtins, closure, consts, a);
    std::vector<PyObject*> r(t.size());
    std::string why;
    py::object out = py::none();
    if (t.check(v, r.data(), &why)) {
      py::list values;
      for (int n : nodes) {
        if (n < 0 || size_t(n) >= r.size() || !r[n]) {
          values = py::list();
          break;
        }
        values.append(py::reinterpret_borrow<py::object>(r[n]));
      }
      if (values.size() == nodes.size()) out = values;
    }
    t.release(r.data());
    return out;
  });

  py::class_<cap::CacheEntry, std::shared_ptr<cap::CacheEntry>>(c, "CacheEntry")
      .def_property_readonly("info", [](const std::shared_ptr<cap::CacheEntry>& e) { return entryInfo(e); });

  c.def("graph_entry", [](std::shared_ptr<cap::GuardTree> tree, py::tuple consts,
                          std::shared_ptr<cap::CompiledGraph> graph, std::vector<int> inputs,
                          py::handle ret, std::string label, py::handle runner) {
    auto e = std::make_shared<cap::CacheEntry>();
    e->kind = cap::CacheEntry::Kind::Graph;
    if (!runner.is_none()) e->runner = runner.inc_ref().ptr();
    e->guards = std::move(tree);
    e->consts = consts.inc_ref().ptr();
    e->graph = std::move(graph);
    e->inputNodes = std::move(inputs);
    e->ret = templateFromSpec(ret);
    e->label = std::move(label);
    return e;
  }, py::arg("tree"), py::arg("consts"), py::arg("graph"), py::arg("inputs"), py::arg("ret"), py::arg("label"),
     py::arg("runner") = py::none());
  c.def("code_entry", [](std::shared_ptr<cap::GuardTree> tree, py::tuple consts, py::handle fn,
                         std::string label) {
    auto e = std::make_shared<cap::CacheEntry>();
    e->kind = cap::CacheEntry::Kind::Code;
    e->guards = std::move(tree);
    e->consts = consts.inc_ref().ptr();
    e->fn = fn.inc_ref().ptr();
    e->label = std::move(label);
    return e;
  });
  c.def("default_entry", [](std::shared_ptr<cap::GuardTree> tree, py::tuple consts, std::string label) {
    auto e = std::make_shared<cap::CacheEntry>();
    e->kind = cap::CacheEntry::Kind::Default;
    e->guards = std::move(tree);
    e->consts = consts.inc_ref().ptr();
    e->label = std::move(label);
    return e;
  });

  py::class_<cap::GraphFunction, std::shared_ptr<cap::GraphFunction>>(c, "GraphFunction")
      .def(py::init([](std::shared_ptr<cap::CompiledGraph> graph, std::shared_ptr<cap::GuardTree> tree,
                       std::vector<int> inputs, py::tuple consts, py::handle runner) {
        auto f = std::make_shared<cap::GraphFunction>();
        if (!runner.is_none()) f->runner = runner.inc_ref().ptr();
        f->graph = std::move(graph);
        f->sources = std::move(tree);
        f->inputNodes = std::move(inputs);
        f->consts = consts.inc_ref().ptr();
        return f;
      }), py::arg("graph"), py::arg("tree"), py::arg("inputs"), py::arg("consts"), py::arg("runner") = py::none())
      .def_property_readonly("graph", [](const cap::GraphFunction& f) { return f.graph; })
      .def_property_readonly("inputs", [](const cap::GraphFunction& f) { return f.inputNodes; })
      .def("__call__", [](const cap::GraphFunction& f, py::args args) {
        PyObject* r = f.call(&PyTuple_GET_ITEM(args.ptr(), 0), args.size());
        if (!r) {
          cap::raiseAsEager();  // See Note [ATen error translation]
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(r);
      });

  c.def("set_graph_tap", [](py::handle tap) { cap::setGraphTap(tap.is_none() ? nullptr : tap.ptr()); },
        "See Note [Graph tap] in CacheEntry.h");
  // GIR text (e.g. an exported .gir file) prepared for `device`'s executor
  // (cpu: the ATen executor; xpuN: the MLIR backend).
  c.def(
      "compile_gir",
      [](const std::string& text, const std::string& graph, const std::string& filename,
         const std::string& device, bool verify) {
        // verify=False: text printed from a verified graph and read back from a
        // hash-checked AOT artifact; re-inferring every node's type with meta
        // kernels would cost more than the compile it saves.
        xacc::python::ensureBackend(device);
        support::DiagnosticEngine diag;
        std::unique_ptr<ir::Module> m = ir::parseModule(text, filename, diag);
        if (!m || (verify && !ir::verifyModule(*m, diag))) xacc::python::raiseDiagnostics(diag);
        return compileModule(std::move(m), graph, filename, device);
      },
      py::arg("text"), py::arg("graph") = "", py::arg("filename") = "<gir>", py::arg("device") = "cpu",
      py::arg("verify") = true);
  // A copy of an xacc._C.Module (GraphBuilder.module(), after passes) prepared
  // for `device`: what compile_gir does without printing and parsing text.
  c.def(
      "compile_module",
      [](const xacc::python::PyModule& pm, const std::string& graph, const std::string& device, bool verify) {
        xacc::python::ensureBackend(device);
        std::unique_ptr<ir::Module> m = std::move(pm.clone()->module);
        support::DiagnosticEngine diag;
        if (verify && !ir::verifyModule(*m, diag)) xacc::python::raiseDiagnostics(diag);
        return compileModule(std::move(m), graph, "<module>", device);
      },
      py::arg("module"), py::arg("graph") = "", py::arg("device") = "cpu", py::arg("verify") = true);
  // The first graph of a module held for what a cache entry reports, not
  // prepared for any backend (CompiledGraph::unprepared): a training graph
  // split at DDP buckets runs its pieces instead (training.py).
  c.def(
      "unprepared_module",
      [](const xacc::python::PyModule& pm, const std::string& device, const std::string& plan) {
        std::unique_ptr<ir::Module> m = std::move(pm.clone()->module);
        ir::Graph* g = m->graphs().empty() ? nullptr : m->graphs().front().get();
        if (!g) throw py::value_error("no graph in <module>");
        return cap::CompiledGraph::unprepared(std::move(m), g, device, plan);
      },
      py::arg("module"), py::arg("device"), py::arg("plan"));
  // Note [Training graphs]: the compiled forward and backward graphs of the
  // captured graph (a copy: GraphBuilder.module()) differentiated with respect to its inputs `wrt`;
  // raises xacc.CompileError (E0303, naming the op) when some op has no rule. With
  // forward_only: None when no result depends on `wrt` (passes::dependsOnWrt: nothing to
  // differentiate; the caller compiles the graph alone, which is exact only without
  // effects: an in-place write to an input that requires grad must stay on the path that
  // raises or replays as eager does).
  c.def(
      "training_graphs",
      [](const xacc::python::PyModule& pm, const std::vector<size_t>& wrt, const std::string& device,
         bool forwardOnly) -> py::object {
        xacc::python::ensureBackend(device);
        support::DiagnosticEngine diag;
        // A copy whose fresh in-place writes are out of place (Note [Fresh
        // in-place ops in training graphs], training_inplace.cpp).
        auto copy = pm.clone();
        const ir::Module* m = copy->module.get();
        if (m->graphs().empty()) throw py::value_error("training_graphs: the module has no graph");
        functionalizeFreshInplace(*m->graphs().front());
        // `wrt`, savedParams and the result lists count graph inputs (what the
        // executable takes and returns): token parameters and results are skipped.
        const ir::Graph& g = *m->graphs().front();
        std::vector<size_t> paramOf;
        for (size_t i = 0; i < g.numParams(); ++i)
          if (!g.param(i)->type().isToken()) paramOf.push_back(i);
        std::vector<size_t> wrtParams;
        for (size_t i : wrt) {
          if (i >= paramOf.size()) throw py::value_error("training_graphs: no input #" + std::to_string(i));
          wrtParams.push_back(paramOf[i]);
        }
        // No result depends on `wrt` (the frame's tensor work ran under no_grad, or
        // on detached values): eager records no history, nothing needs a backward.
        std::vector<bool> dep = xacc::passes::dependsOnWrt(g, wrtParams);
        if (forwardOnly && std::none_of(dep.begin(), dep.end(), [](bool b) { return b; })) return py::none();
        xacc::passes::TrainingGraphs tg;
        if (!xacc::passes::buildTrainingGraphs(g, wrtParams, tg, diag)) xacc::python::raiseDiagnostics(diag);
        std::vector<size_t> saved;
        for (size_t p : tg.savedParams) {
          auto it = std::find(paramOf.begin(), paramOf.end(), p);
          if (it == paramOf.end()) throw py::value_error("training_graphs: the backward reads a token");
          saved.push_back(size_t(it - paramOf.begin()));
        }
        std::vector<bool> cot, req;
        size_t numResults = 0;
        for (size_t i = 0; i < tg.numResults; ++i) {
          if (g.results()[i]->type().isToken()) continue;
          ++numResults;
          cot.push_back(tg.cotangent[i]);
          req.push_back(tg.requiresGrad[i]);
        }
        auto prepare = [&](std::unique_ptr<ir::Graph> g) {
          auto mod = std::make_unique<ir::Module>();
          ir::Graph* gp = mod->add(std::move(g));
          std::string error;
          auto cg = cap::CompiledGraph::create(std::move(mod), gp, error, device);
          if (!cg) throw py::value_error(error);
          return cg;
        };
        auto fwd = prepare(std::move(tg.forward));
        auto bwd = prepare(std::move(tg.backward));
        return py::make_tuple(fwd, bwd, numResults, tg.numResiduals, saved, cot, req);
      },
      py::arg("module"), py::arg("wrt"), py::arg("device") = "cpu", py::arg("forward_only") = false);
  // Note [Bucket split]: the captured graph (a copy: GraphBuilder.module()) cut
  // into pieces at gradient-bucket boundaries, given the bytes of each input
  // that DDP buckets (0: not bucketed) and the bucket caps. Returns (pieces,
  // results, reason): pieces as [(Module, [(piece, index) per input])], the
  // original results as [(piece, index)] (piece -1: an input); ([], [], why)
  // when the graph is not split.
  c.def(
      "split_buckets",
      [](const xacc::python::PyModule& pm, const std::vector<uint64_t>& inputBytes,
         const std::vector<uint64_t>& caps) -> py::tuple {
        auto none = [](const std::string& why) -> py::tuple { return py::make_tuple(py::list(), py::list(), why); };
        const ir::Module* m = pm.module.get();
        if (m->graphs().size() != 1) return none("the module has more than one graph");
        const ir::Graph& g = *m->graphs().front();
        for (size_t i = 0; i < g.numParams(); ++i)
          if (g.param(i)->type().isToken()) return none("the graph has effects");
        if (inputBytes.size() != g.numParams()) throw py::value_error("split_buckets: one size per input expected");
        std::vector<size_t> pieceOf = xacc::passes::bucketPieces(g, inputBytes, caps);
        if (pieceOf.empty() || pieceOf.back() == 0) return none("one bucket");
        xacc::passes::GraphSplit split;
        std::string error;
        if (!xacc::passes::splitGraph(g, pieceOf, split, error)) return none(error);
        auto source = [](const xacc::passes::SplitSource& s) { return py::make_tuple(s.piece, s.index); };
        py::list pieces, results;
        for (size_t k = 0; k < split.pieces.size(); ++k) {
          auto piece = std::make_shared<xacc::python::PyModule>();
          piece->module = std::make_unique<ir::Module>();
          piece->module->add(std::move(split.pieces[k]));
          support::DiagnosticEngine diag;
          if (!ir::verifyModule(*piece->module, diag)) xacc::python::raiseDiagnostics(diag);
          py::list inputs;
          for (const auto& s : split.inputs[k]) inputs.append(source(s));
          pieces.append(py::make_tuple(piece, inputs));
        }
        for (const auto& s : split.results) results.append(source(s));
        return py::make_tuple(pieces, results, std::string());
      },
      py::arg("module"), py::arg("input_bytes"), py::arg("caps"));
  c.def("autocast_state", &cap::GuardTree::autocastState);
  // (TorchFunctionMode types bottom first, TorchDispatchMode count): Note [Mode stacks].
  c.def("mode_state", []() {
    py::list types;
    for (PyObject* ty : cap::GuardTree::currentFnModeTypes()) types.append(py::reinterpret_steal<py::object>(ty));
    return py::make_tuple(py::tuple(types), cap::GuardTree::currentDispatchModes());
  });
  c.def("install", &cap::installHook);
  c.def("uninstall", &cap::uninstallHook);
  c.def("installed", &cap::hookInstalled);
  c.def("set_state", [](int s) { return static_cast<int>(cap::setState(static_cast<cap::CaptureState>(s))); });
  c.def("get_state", [] { return static_cast<int>(cap::state()); });
  c.def("set_callback", [](py::handle cb) { cap::setCallback(cb.is_none() ? nullptr : cb.ptr()); });
  c.def("set_recompile_limit", &cap::setRecompileLimit);
  c.def("recompile_limit", &cap::recompileLimit);
  c.def("add_entry", [](py::handle code, std::shared_ptr<cap::CacheEntry> e) { cap::addEntry(asCode(code), std::move(e)); });
  c.def("mark_skip", [](py::handle code) { cap::markSkip(asCode(code)); });
  c.def("mark_run_only", [](py::handle code) { cap::markRunOnly(asCode(code)); });
  c.def("code_action", [](py::handle code) { return cap::codeAction(asCode(code)); });
  c.def("clear_code", [](py::handle code) { cap::clearCode(asCode(code)); });
  c.def("clear_all", &cap::clearAll);
  c.def("entries", [](py::handle code) {
    py::list out;
    for (auto& e : cap::entries(asCode(code))) out.append(entryInfo(e));
    return out;
  });
  c.def("stats", [] {
    cap::HookStats s = cap::hookStats();
    py::dict d;
    d["frames"] = s.frames;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["compiles"] = s.compiles;
    d["fallbacks"] = s.fallbacks;
    return d;
  });
  c.def("reset_stats", &cap::resetHookStats);
  bindTranslate(c);
  bindTrainingRunner(c);
}
