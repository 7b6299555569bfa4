// The standard library's registration machinery and shared helpers: the
// overload table (filled by `define`, read by the front end through
// stdlibEntries()), registerCamelStdlib(), runtime diagnostics, the exit
// request, and the type and datum helpers of StdlibImpl.h.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "StdlibImpl.h"

namespace xacc::camel {

namespace stdlib {

namespace {

std::vector<StdlibEntry>& table() {
  static auto* t = new std::vector<StdlibEntry>();  // leaked like the builtin registry
  return *t;
}

}  // namespace

void define(Def d) {
  StdlibEntry e;
  e.module = d.module;
  e.name = d.name;
  e.gir = d.gir;
  e.withParams = d.withParams;
  e.params = d.params;
  e.varOperands = d.varOperands;
  e.signature = d.signature;
  e.effectful = d.effectful;
  e.deterministic = d.deterministic;
  e.summary = d.summary;
  // Operand counts every form accepts (-1: some form is variadic).
  std::vector<int> counts;
  auto addCount = [&](int with, int params) {
    counts.push_back(with == kVariadic || params == kVariadic ? -1 : with + params);
  };
  addCount(d.withParams, d.params);
  for (const Form& f : d.moreForms) {
    StdlibEntry more = e;
    more.withParams = f.withParams;
    more.params = f.params;
    more.signature = f.signature;
    addCount(f.withParams, f.params);
    table().push_back(e);
    e = std::move(more);
  }
  table().push_back(std::move(e));

  ir::Builtin b;
  b.name = d.gir;
  b.effectful = d.effectful || !d.deterministic;  // see Note [Stdlib effects]
  b.deterministic = d.deterministic;
  b.concurrent = d.concurrent;
  b.summary = d.summary;
  b.fn = std::move(d.fn);
  InferRule rule = std::move(d.infer);
  int with = d.withParams;
  b.infer = [rule, counts, with](const Types& args, Types& results, std::string& err) {
    bool ok = false;
    std::string expected;
    for (int c : counts) {
      ok |= c < 0 || c == int(args.size());
      expected += (expected.empty() ? "" : " or ") + std::to_string(c);
    }
    if (!ok) {
      err = "takes " + expected + " argument" + (expected == "1" ? "" : "s");
      if (with > 0)
        err += " (" + std::to_string(with) + " with-argument" + (with == 1 ? "" : "s") + " first)";
      err += ", got " + std::to_string(args.size());
      return false;
    }
    return rule(args, results, err);
  };
  ir::BuiltinRegistry::get().add(std::move(b));
}

Def effectDef(const std::string& module, const std::string& name, int params, std::string signature,
              std::string summary, bool deterministic) {
  Def d;
  d.module = module;
  d.name = name;
  d.gir = module + "::" + name;
  d.params = params;
  d.signature = std::move(signature);
  d.effectful = true;
  d.deterministic = deterministic;
  d.summary = std::move(summary);
  return d;
}

void alias(const std::string& module, const std::string& name, const std::string& gir) {
  // Each GIR name is defined by exactly one row; later rows with it are aliases.
  auto it = std::find_if(table().begin(), table().end(),
                         [&](const StdlibEntry& e) { return e.gir == gir; });
  if (it == table().end()) return;
  StdlibEntry e = *it;
  e.module = module;
  e.name = name;
  table().push_back(std::move(e));
}

// ---- Types ----------------------------------------------------------------------

std::string typeName(Type t) {
  if (!t) return "?";
  switch (t.kind()) {
    case TypeKind::Int: return t.bitWidth() == 32 ? "i32" : "int";
    case TypeKind::Float: return t.bitWidth() == 32 ? "f32" : "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::Str: return "string";
    case TypeKind::Null: return "void";
    case TypeKind::Any: return "any";
    case TypeKind::List: return typeName(t.elementType()) + "[]";
    case TypeKind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < t.elements().size(); ++i)
        s += (i ? ", " : "") + typeName(t.elements()[i]);
      return s + (t.elements().size() == 1 ? ",)" : ")");
    }
    case TypeKind::Struct: {
      if (t.elements().empty()) return "{}";
      std::string s = "{ ";
      for (size_t i = 0; i < t.elements().size(); ++i)
        s += (i ? ", " : "") + t.fieldNames()[i] + ": " + typeName(t.elements()[i]);
      return s + " }";
    }
    case TypeKind::Func: {
      std::string s = "(";
      for (size_t i = 0; i < t.elements().size(); ++i)
        s += (i ? ", " : "") + typeName(t.elements()[i]);
      s += ") => ";
      const Types& r = t.funcResults();
      if (r.empty()) return s + "void";
      if (r.size() == 1) return s + typeName(r[0]);
      std::string rs = "(";
      for (size_t i = 0; i < r.size(); ++i) rs += (i ? ", " : "") + typeName(r[i]);
      return s + rs + ")";
    }
    default: return t.str();
  }
}

bool want(bool ok, const Types& a, size_t i, std::string_view what, std::string_view expected,
          std::string& err) {
  if (ok) return true;
  err = std::string(what) + " must be " + std::string(expected) + ", got " +
        (i < a.size() ? typeName(a[i]) : std::string("nothing"));
  return false;
}

bool fnSig(Type t, size_t arity, std::string_view what, FnSig& out, std::string& err) {
  out = FnSig();
  if (t.isAny()) {
    out.params.assign(arity, Type::any());
    out.result = Type::any();
    return true;
  }
  if (t.kind() != TypeKind::Func) {
    err = std::string(what) + " must be a function of " + std::to_string(arity) + " parameter" +
          (arity == 1 ? "" : "s") + ", got " + typeName(t);
    return false;
  }
  Types params = t.elements();
  Types results = t.funcResults();
  if (!params.empty() && params[0].isToken()) {
    if (results.empty() || !results[0].isToken()) {
      err = std::string(what) + ": a function taking an effect token must return one first";
      return false;
    }
    out.token = true;
    params.erase(params.begin());
    results.erase(results.begin());
  }
  if (params.size() != arity) {
    err = std::string(what) + " must take " + std::to_string(arity) + " parameter" +
          (arity == 1 ? "" : "s") + ", got " + typeName(t);
    return false;
  }
  if (results.size() > 1) {
    err = std::string(what) + " must return one value, got " + typeName(t);
    return false;
  }
  out.params = std::move(params);
  out.result = results.empty() ? Type::null() : results[0];
  return true;
}

// ---- Datums ---------------------------------------------------------------------

const char* kindName(const Datum& d) {
  switch (d.kind()) {
    case DKind::Null: return "null";
    case DKind::Int: return "int";
    case DKind::Float: return "float";
    case DKind::Bool: return "bool";
    case DKind::Str: return "string";
    case DKind::List: return "array";
    case DKind::Tuple: return "tuple";
    case DKind::Struct: return "struct";
    case DKind::Func: return "function";
    case DKind::Tensor: return "Tensor";
    case DKind::PyObj: return "PyObject";
    case DKind::Token: return "token";
  }
  return "value";
}

bool kindFail(Interpreter& I, const Node& n, std::string_view fn, std::string_view expected,
              const Datum& got) {
  return fail(I, n, RuntimeDiag::TypeMismatch, {fn, expected, kindName(got)});
}

bool getInt(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, int64_t& out) {
  if (d.kind() != DKind::Int) return kindFail(I, n, fn, "int", d);
  out = d.asInt();
  return true;
}

bool getFloat(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, double& out) {
  if (d.kind() != DKind::Float) return kindFail(I, n, fn, "float", d);
  out = d.asFloat();
  return true;
}

bool getNum(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, double& out) {
  if (d.kind() == DKind::Float)
    out = d.asFloat();
  else if (d.kind() == DKind::Int)
    out = double(d.asInt());
  else
    return kindFail(I, n, fn, "a number", d);
  return true;
}

bool getBool(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, bool& out) {
  if (d.kind() != DKind::Bool) return kindFail(I, n, fn, "bool", d);
  out = d.asBool();
  return true;
}

bool getStr(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
            const std::string*& out) {
  if (d.kind() != DKind::Str) return kindFail(I, n, fn, "string", d);
  out = &d.asStr();
  return true;
}

bool getList(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
             std::vector<Datum>*& out) {
  if (d.kind() != DKind::List) return kindFail(I, n, fn, "array", d);
  out = &d.listItems();
  return true;
}

bool getArray(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
              ir::ListObject*& out) {
  if (d.kind() != DKind::List) return kindFail(I, n, fn, "array", d);
  out = ir::listObj(d);
  return true;
}

bool mayMutate(const Datum& f) {
  if (f.kind() != DKind::Func || !f.funcGraph()) return true;
  const ir::Graph* g = f.funcGraph();
  size_t caps = f.funcCaptures().size();
  return g->numParams() > caps && g->param(caps)->type().isToken();
}

DKind resultElemKind(const Node& n, size_t i) {
  // The effect form (func.builtin_effect) gives the token first.
  if (n.numResults() > 0 && n.result(0)->type().isToken()) ++i;
  if (i >= n.numResults()) return DKind::Null;
  Type t = n.result(i)->type();
  if (t.kind() != TypeKind::List) return DKind::Null;
  TypeKind e = t.elementType().kind();
  return e == TypeKind::Int ? DKind::Int : e == TypeKind::Float ? DKind::Float : DKind::Null;
}

namespace {
bool callFnN(Interpreter& I, const Node& n, std::string_view fn, const Datum& f, Datum* args,
             size_t nargs, Datum& out) {
  if (f.kind() != DKind::Func) return kindFail(I, n, fn, "function", f);
  const ir::Graph* g = f.funcGraph();
  size_t caps = f.funcCaptures().size();
  bool token = g && g->numParams() == caps + nargs + 1 && g->param(caps)->type().isToken();
  // Builtins call back once per element: argument and result vectors come
  // from a per-thread pool (one pair per nesting level) instead of being allocated per call.
  constexpr size_t kLevels = 32;
  thread_local std::vector<Datum> fulls[kLevels], resultss[kLevels];
  thread_local size_t depth = 0;
  std::vector<Datum> ownFull, ownResults;  // deeper than the pool: allocate
  std::vector<Datum>& full = depth < kLevels ? fulls[depth] : ownFull;
  std::vector<Datum>& results = depth < kLevels ? resultss[depth] : ownResults;
  struct Level {
    size_t& d;
    explicit Level(size_t& x) : d(x) { ++d; }
    ~Level() { --d; }
  } level(depth);
  full.clear();
  results.clear();
  if (token) full.push_back(Datum::token());
  for (size_t i = 0; i < nargs; ++i) full.push_back(std::move(args[i]));
  bool ok = I.apply(f, full, results, &n);
  full.clear();
  if (!ok) return false;
  size_t first = token ? 1 : 0;
  out = results.size() > first ? std::move(results[first]) : Datum();
  results.clear();
  return true;
}
}  // namespace

bool callFn(Interpreter& I, const Node& n, std::string_view fn, const Datum& f, Datum a, Datum& out) {
  return callFnN(I, n, fn, f, &a, 1, out);
}

bool callFn(Interpreter& I, const Node& n, std::string_view fn, const Datum& f, Datum a, Datum b,
            Datum& out) {
  Datum args[2] = {std::move(a), std::move(b)};
  return callFnN(I, n, fn, f, args, 2, out);
}

bool checkOrdered(Interpreter& I, const Node& n, std::string_view fn,
                  const std::vector<Datum>& xs) {
  if (xs.empty()) return true;
  DKind k = xs[0].kind();
  for (const Datum& x : xs) {
    if (x.kind() != DKind::Int && x.kind() != DKind::Float && x.kind() != DKind::Str)
      return kindFail(I, n, fn, "int, float or string elements", x);
    if (x.kind() != k)
      return fail(I, n, RuntimeDiag::TypeMismatch,
                  {fn, std::string("elements of one kind (") + kindName(xs[0]) + ")", kindName(x)});
  }
  return true;
}

bool lessThan(const Datum& a, const Datum& b) {
  switch (a.kind()) {
    case DKind::Int: return a.asInt() < b.asInt();
    case DKind::Float: {
      double x = a.asFloat(), y = b.asFloat();
      if (std::isnan(x)) return false;  // NaN sorts last
      if (std::isnan(y)) return true;
      return x < y;
    }
    case DKind::Str: return a.asStr() < b.asStr();
    default: return false;
  }
}

}  // namespace stdlib

// ---- Public API -----------------------------------------------------------------

void registerCamelStdlib() {
  static std::once_flag once;
  std::call_once(once, [] {
    using namespace stdlib;
    registerCore();
    registerStrings();
    registerArrays();
    registerMath();
    registerRandom();
    registerAlgo();
    registerStatistics();
    registerCrypto();
    registerFs();
    registerJson();
    registerRe();
    registerSys();
    registerOs();
    registerTime();
    registerThis();
    registerSim();
    registerPara();
    registerGrad();
  });
}

const std::vector<StdlibEntry>& stdlibEntries() {
  registerCamelStdlib();
  return stdlib::table();
}

std::vector<const StdlibEntry*> stdlibOverloads(std::string_view module, std::string_view name) {
  std::vector<const StdlibEntry*> out;
  for (const StdlibEntry& e : stdlibEntries())
    if (e.module == module && e.name == name) out.push_back(&e);
  return out;
}

namespace {
std::mutex gTypesMu;
std::vector<ModuleType>& moduleTypes() {
  static auto* t = new std::vector<ModuleType>();  // leaked like the table
  return *t;
}
}  // namespace

void defineModuleType(ModuleType t) {
  std::lock_guard<std::mutex> lock(gTypesMu);
  for (ModuleType& m : moduleTypes())
    if (m.module == t.module && m.name == t.name) {
      m = std::move(t);
      return;
    }
  moduleTypes().push_back(std::move(t));
}

const ModuleType* moduleType(std::string_view module, std::string_view name) {
  std::lock_guard<std::mutex> lock(gTypesMu);
  for (const ModuleType& m : moduleTypes())
    if (m.module == module && m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> moduleTypeNames(std::string_view module) {
  std::lock_guard<std::mutex> lock(gTypesMu);
  std::vector<std::string> out;
  for (const ModuleType& m : moduleTypes())
    if (m.module == module) out.push_back(m.name);
  return out;
}

bool isStdlibModule(std::string_view module) {
  if (module.empty()) return false;
  for (const StdlibEntry& e : stdlibEntries())
    if (e.module == module) return true;
  return !moduleTypeNames(module).empty();
}

std::string stdlibTableMarkdown() {
  auto count = [](int c) { return c == kVariadic ? std::string("…") : std::to_string(c); };
  std::string s =
      "| module | Camel name | GIR builtin | with | params | var operands | effects | signature |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const StdlibEntry& e : stdlibEntries()) {
    std::string vars;
    for (int v : e.varOperands) vars += (vars.empty() ? "" : ", ") + std::to_string(v);
    std::string eff = !e.deterministic ? "effect, nondet" : e.effectful ? "effect" : "pure";
    std::string sig;  // `|` would end the table cell, even inside backquotes
    for (char c : e.signature) sig += c == '|' ? std::string("\\|") : std::string(1, c);
    s += fmt::format("| {} | `{}` | `{}` | {} | {} | {} | {} | `{}` |\n",
                     e.module.empty() ? "(global)" : e.module, e.name, e.gir, count(e.withParams),
                     count(e.params), vars, eff, sig);
  }
  return s;
}

const RuntimeDiagInfo& runtimeDiagInfo(RuntimeDiag d) {
  static const RuntimeDiagInfo infos[] = {
#define RUNTIME_DIAG(Name, Code, Message) {#Name, Code, Message},
#include "xacc/camel/RuntimeDiags.def"
  };
  return infos[size_t(d)];
}

bool runtimeFail(ir::Interpreter& I, const ir::Node& n, RuntimeDiag d,
                 std::initializer_list<std::string_view> args) {
  const RuntimeDiagInfo& info = runtimeDiagInfo(d);
  // Substitute `{}` by hand: the arguments are user text that may contain braces.
  std::string msg;
  std::string_view tmpl = info.message;
  auto arg = args.begin();
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 1 < tmpl.size() && tmpl[i + 1] == '}') {
      if (arg != args.end()) msg += *arg++;
      ++i;
    } else {
      msg += tmpl[i];
    }
  }
  return I.fail(n, info.code, std::move(msg));
}

namespace {
std::atomic<bool> gExitPending{false};
std::atomic<int> gExitStatus{0};
}  // namespace

void ExitRequest::request(int status) {
  gExitStatus.store(status);
  gExitPending.store(true);
}

bool ExitRequest::take(int& status) {
  if (!gExitPending.exchange(false)) return false;
  status = gExitStatus.load();
  return true;
}

bool ExitRequest::pending() { return gExitPending.load(); }

}  // namespace xacc::camel
