// The `dll` executor: `outer` functors `dll://path/lib.so::symbol` call C
// functions through the ABI of xacc/camel/camel_abi.h. The library is opened
// (dlopen) and the symbol resolved (dlsym) when the functor's declaration is
// compiled, so a bad path or symbol is a compile-time error at the URI; each
// call converts the Camel arguments to camel_values, calls the function and
// converts its result back, checking it against the declared result type.
#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "xacc/camel/Executor.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/camel/camel_abi.h"
#include "xacc/ir/Interpreter.h"

namespace {

namespace fs = std::filesystem;
using xacc::ir::Datum;
using xacc::ir::DKind;
using xacc::ir::Type;
using xacc::ir::TypeKind;

/// Only ints, floats, bools, strings, arrays of them, and void (results) cross the ABI.
bool abiType(Type t, bool result) {
  if (!t) return result;
  switch (t.kind()) {
    case TypeKind::Int: return t.bitWidth() == 64;
    case TypeKind::Float: return t.bitWidth() == 64;
    case TypeKind::Bool:
    case TypeKind::Str: return true;
    case TypeKind::Null: return result;
    case TypeKind::List: return abiType(t.elementType(), false);
    default: return false;
  }
}

/// Per-call state behind camel_context: error message and result allocations.
struct CallState {
  camel_context ctx{};
  std::string error;
  std::vector<std::unique_ptr<char[]>> blocks;
  // Argument storage: strings point into the datums, arrays into `items`.
  std::vector<std::unique_ptr<camel_value[]>> items;
};

void setError(camel_context* ctx, const char* message) {
  static_cast<CallState*>(ctx->host)->error = message ? message : "";
}

void* allocBlock(camel_context* ctx, int64_t bytes) {
  if (bytes < 0 || bytes > (int64_t(1) << 40)) return nullptr;
  auto* st = static_cast<CallState*>(ctx->host);
  try {
    st->blocks.push_back(std::make_unique<char[]>(size_t(bytes ? bytes : 1)));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return st->blocks.back().get();
}

bool toValue(const Datum& d, CallState& st, camel_value& out, std::string& err) {
  std::memset(&out, 0, sizeof out);
  switch (d.kind()) {
    case DKind::Null: out.kind = CAMEL_NULL; return true;
    case DKind::Int: out.kind = CAMEL_INT; out.as.i = d.asInt(); return true;
    case DKind::Float: out.kind = CAMEL_FLOAT; out.as.f = d.asFloat(); return true;
    case DKind::Bool: out.kind = CAMEL_BOOL; out.as.b = d.asBool() ? 1 : 0; return true;
    case DKind::Str:
      out.kind = CAMEL_STRING;
      out.as.s.data = d.asStr().c_str();
      out.as.s.len = int64_t(d.asStr().size());
      return true;
    case DKind::List: {
      const auto& xs = d.listItems();
      st.items.push_back(std::make_unique<camel_value[]>(xs.size() ? xs.size() : 1));
      camel_value* arr = st.items.back().get();
      for (size_t i = 0; i < xs.size(); ++i)
        if (!toValue(xs[i], st, arr[i], err)) return false;
      out.kind = CAMEL_ARRAY;
      out.as.a.items = arr;
      out.as.a.len = int64_t(xs.size());
      return true;
    }
    default:
      err = "a value of this kind cannot be passed to C";
      return false;
  }
}

const char* kindText(int32_t k) {
  switch (k) {
    case CAMEL_NULL: return "null";
    case CAMEL_INT: return "int";
    case CAMEL_FLOAT: return "float";
    case CAMEL_BOOL: return "bool";
    case CAMEL_STRING: return "string";
    case CAMEL_ARRAY: return "array";
    default: return "an unknown kind";
  }
}

/// The C result as a datum of type `t` (depth-limited against cyclic arrays).
bool fromValue(const camel_value& v, Type t, Datum& out, std::string& err, int depth = 0) {
  if (depth > 64) {
    err = "the result is nested more than 64 levels deep";
    return false;
  }
  auto mismatch = [&](const char* expected) {
    err = std::string("the function returned ") + kindText(v.kind) + ", expected " + expected;
    return false;
  };
  switch (t ? t.kind() : TypeKind::Null) {
    case TypeKind::Null:
      out = Datum();
      return true;  // a void functor's result is ignored
    case TypeKind::Int:
      if (v.kind != CAMEL_INT) return mismatch("int");
      out = Datum::integer(v.as.i);
      return true;
    case TypeKind::Float:
      if (v.kind == CAMEL_INT) out = Datum::real(double(v.as.i));
      else if (v.kind == CAMEL_FLOAT) out = Datum::real(v.as.f);
      else return mismatch("float");
      return true;
    case TypeKind::Bool:
      if (v.kind != CAMEL_BOOL) return mismatch("bool");
      out = Datum::boolean(v.as.b != 0);
      return true;
    case TypeKind::Str:
      if (v.kind != CAMEL_STRING) return mismatch("string");
      if (v.as.s.len < 0 || (v.as.s.len > 0 && !v.as.s.data)) return mismatch("a valid string");
      out = Datum::string(std::string(v.as.s.data ? v.as.s.data : "", size_t(v.as.s.len)));
      return true;
    case TypeKind::List: {
      if (v.kind != CAMEL_ARRAY) return mismatch("array");
      if (v.as.a.len < 0 || (v.as.a.len > 0 && !v.as.a.items)) return mismatch("a valid array");
      std::vector<Datum> xs(size_t(v.as.a.len));
      for (int64_t i = 0; i < v.as.a.len; ++i)
        if (!fromValue(v.as.a.items[i], t.elementType(), xs[size_t(i)], err, depth + 1)) {
          err = "element " + std::to_string(i) + ": " + err;
          return false;
        }
      out = Datum::list(std::move(xs));
      return true;
    }
    default:
      err = "unsupported result type";
      return false;
  }
}

std::string libraryPath(const xacc::camel::OuterFunctor& f) {
  fs::path p(f.target);
  if (p.is_absolute()) return p.string();
  fs::path local = fs::path(f.baseDir.empty() ? "." : f.baseDir) / p;
  std::error_code ec;
  // Absolute, so that dlopen never reads a relative path as a bare name
  // ("./lib.so" normalises to "lib.so", which dlopen would look up in the
  // system's search path instead of next to the source).
  if (f.target.find('/') != std::string::npos || fs::exists(local, ec))
    return fs::absolute(local, ec).lexically_normal().string();
  return f.target;  // a bare name not next to the source: the system's search
}

bool resolveDll(const xacc::camel::OuterFunctor& f, xacc::ir::Builtin& out, std::string& error) {
  if (f.target.empty()) {
    error = "the URI names no library (expected dll://path/lib.so::symbol)";
    return false;
  }
  if (f.symbol.empty()) {
    error = "the URI names no symbol (expected dll://path/lib.so::symbol)";
    return false;
  }
  for (size_t i = 0; i < f.params.size(); ++i)
    if (!abiType(f.params[i], false)) {
      error = "parameter " + std::to_string(i + 1) + " has type " + f.params[i].str() +
              ", which cannot cross the C ABI (int, float, bool, string and arrays of them)";
      return false;
    }
  if (!abiType(f.result, true)) {
    error = "the result type " + f.result.str() + " cannot cross the C ABI";
    return false;
  }
  std::string path = libraryPath(f);
  // Libraries stay loaded for the process lifetime (functors may be called
  // until the end); RTLD_LOCAL keeps their symbols from clashing.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    error = "cannot open '" + path + "': " + (e ? e : "unknown error");
    return false;
  }
  dlerror();
  void* sym = dlsym(h, f.symbol.c_str());
  if (!sym) {
    error = "'" + path + "' has no symbol '" + f.symbol + "'";
    return false;
  }
  auto fn = reinterpret_cast<camel_outer_fn>(sym);
  std::string what = f.name + " (" + f.uri + ")";
  Type result = f.result;
  out.effectful = true;
  out.deterministic = false;
  out.summary = "C function " + f.symbol + " of " + path;
  out.fn = [fn, what, result](xacc::ir::Interpreter& I, const xacc::ir::Node& n, std::vector<Datum>& args,
                              std::vector<Datum>& results) {
    using xacc::camel::RuntimeDiag;
    CallState st;
    st.ctx.abi_version = CAMEL_ABI_VERSION;
    st.ctx.set_error = setError;
    st.ctx.alloc = allocBlock;
    st.ctx.host = &st;
    std::vector<camel_value> cargs(args.size() ? args.size() : 1);
    std::string err;
    for (size_t i = 0; i < args.size(); ++i)
      if (!toValue(args[i], st, cargs[i], err))
        return xacc::camel::runtimeFail(I, n, RuntimeDiag::ForeignCallFailed,
                                        {what, "argument " + std::to_string(i + 1) + ": " + err});
    camel_value res;
    std::memset(&res, 0, sizeof res);
    int rc = fn(cargs.data(), int64_t(args.size()), &res, &st.ctx);
    if (rc != 0)
      return xacc::camel::runtimeFail(
          I, n, RuntimeDiag::ForeignCallFailed,
          {what, st.error.empty() ? "the function returned " + std::to_string(rc) : st.error});
    Datum d;
    if (!fromValue(res, result, d, err))
      return xacc::camel::runtimeFail(I, n, RuntimeDiag::ForeignCallFailed, {what, err});
    results.push_back(std::move(d));
    return true;
  };
  return true;
}

}  // namespace

XACC_CAMEL_EXECUTOR(dll) {
  ctx->provideScheme("dll", resolveDll);
  return true;
}
