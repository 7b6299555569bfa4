// Attribute reads of user objects made in the frame, as type(obj).__getattribute__
// runs them (Note [Attribute protocol] in TranslateObjects.cpp): the class's own
// __getattribute__, and object's, which the translator calls where Python code
// calls `object.__getattribute__(obj, name)` or `super().__getattribute__(name)`.
#pragma once

#include <Python.h>

#include "Translator.h"

namespace xacc::capture::translate {

/// The class's own `__getattribute__` when it is not object's (borrowed), else null.
PyObject* ownGetattribute(PyTypeObject* tp);

/// `object.__getattribute__(obj, name)` of a user object: the generic lookup, no __getattr__ fallback.
VarRef objectGetAttribute(Translator& t, const VarRef& obj, PyObject* name);

}  // namespace xacc::capture::translate
