// Attribute writes on nn.Modules reached from a source (`self.name = value` in
// a forward): which ones the translator models as a write replayed after the
// graph (Note [Replayed attribute writes]), and which stay GB007. The rules
// follow nn.Module.__setattr__ (torch/nn/modules/module.py): a write is
// modelled only where that method's effect is known at capture time.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

bool Translator::moduleAttrWritable(const VarRef& obj, PyObject* name, const VarRef& value) {
  const PyTypes* T = pyTypes();
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ...";
  PyObject* o = obj->obj.get();
  // nn.Module.__setattr__ stores a plain Python value (not a tensor or a
  // module) under a name that is no parameter, buffer or child in the
  // instance dict, like object.__setattr__ (swin's `self.shift_size = 0`).
  static PyObject* setattrName = PyUnicode_InternFromString("__setattr__");
  if (_PyType_Lookup(Py_TYPE(o), setattrName) !=
          _PyType_Lookup(reinterpret_cast<PyTypeObject*>(T->module), setattrName) ||
      !value->is(Var::Kind::Const))
    return fail(GB::AttributeWrite, what);
  PyObject* dict = PyObject_GenericGetDict(o, nullptr);
  if (!dict) {
    PyErr_Clear();
    return fail(GB::AttributeWrite, what);
  }
  bool registered = false;
  for (const char* reg : {"_parameters", "_buffers", "_modules"}) {
    PyObject* d = PyDict_GetItemString(dict, reg);
    registered = registered || !d || !PyDict_Check(d) || PyDict_Contains(d, name) != 0;
  }
  Py_DECREF(dict);
  if (registered) return fail(GB::AttributeWrite, what + " (a parameter, buffer or child module)");
  return true;
}

}  // namespace xacc::capture::translate
