// xacc-mlir: drives the xpu backend from GIR text, for lit tests and debugging.
//
//   xacc-mlir f.gir --emit=mlir        linalg-on-tensors kernels, one module per region
//   xacc-mlir f.gir --emit=bufferized  after one-shot bufferization
//   xacc-mlir f.gir --emit=llvm        optimised LLVM IR for the host
//   xacc-mlir f.gir --emit=plan        regions and fallback nodes
//   xacc-mlir f.gir --emit=scalar      the scalar partition of the whole module (Camel
//                                      functions): plan as comments, then its MLIR
//   xacc-mlir f.gir --emit=scalar-llvm that module as optimised LLVM IR
//   xacc-mlir f.gir --call G --args 1,2  JIT the scalar partition and print G(1, 2)
//   xacc-mlir f.gir --run              runs the graph on random inputs through the
//                                      xpu backend and through the ATen path and
//                                      compares (prints PASS/FAIL, exit 1 on FAIL)
//
// Dynamic dims get size --dyn-size when inputs are made up.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/backend/mlir/ScalarJit.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Verifier.h"
#include "xacc/support/EnvNames.h"

using namespace xacc;
namespace xm = xacc::backend::mlir;

namespace {

at::Tensor randomInput(ir::Type t, int64_t dynSize, bool nonContiguous) {
  std::vector<int64_t> shape;
  for (const auto& d : t.dims()) shape.push_back(d.isStatic() ? d.size : dynSize);
  auto dt = backend::aten::toScalarType(t.dtype());
  at::Tensor x;
  if (nonContiguous && shape.size() >= 2) {
    // Same values, transposed storage.
    std::vector<int64_t> rev(shape.rbegin(), shape.rend());
    at::Tensor base = randomInput(ir::Type::tensor(t.dtype(), [&] {
      std::vector<ir::Dim> ds;
      for (int64_t n : rev) ds.push_back(ir::Dim::fixed(n));
      return ds;
    }()), dynSize, false);
    std::vector<int64_t> perm;
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    return base.permute(perm);
  }
  if (t.dtype() == ir::DType::Bool) return at::rand(shape) > 0.5;
  if (!ir::isFloatingDType(t.dtype())) return at::randint(-5, 6, shape, at::TensorOptions().dtype(dt));
  return at::randn(shape).to(dt);
}

bool close(const at::Tensor& a, const at::Tensor& b, std::string& why) {
  if (a.sizes() != b.sizes()) {
    why = "shape differs";
    return false;
  }
  if (a.scalar_type() != b.scalar_type()) {
    why = "dtype differs";
    return false;
  }
  if (!at::isFloatingType(a.scalar_type())) {
    if (!at::equal(a, b)) {
      why = "values differ";
      return false;
    }
    return true;
  }
  double tol = a.scalar_type() == at::kDouble ? 1e-10 : a.scalar_type() == at::kFloat ? 1e-4 : 1e-2;
  if (!at::allclose(a, b, tol, tol, /*equal_nan=*/true)) {
    why = "max abs diff " + std::to_string((a.to(at::kDouble) - b.to(at::kDouble)).abs().nan_to_num(0).max().item<double>());
    return false;
  }
  return true;
}

/// --emit=scalar / scalar-llvm / --call: the scalar partition of the module.
int scalarMode(const ir::Module& m, const std::string& emit, const std::string& callGraph,
               const std::string& callArgs, int repeat) {
  xm::ScalarPlan plan = xm::planScalarModule(m);
  if (emit == "scalar") {
    std::stringstream ps(xm::describeScalarPlan(plan));
    for (std::string line; std::getline(ps, line);) std::cout << "// " << line << "\n";
    std::cout << plan.mlir;
  } else if (emit == "scalar-llvm") {
    std::string out, error;
    if (!plan.mlir.empty() && !xm::scalarPlanToLlvm(plan, out, error)) {
      std::cerr << "xacc-mlir: " << error << "\n";
      return 1;
    }
    std::cout << out;
  }
  if (callGraph.empty()) return 0;
  const xm::ScalarFunction* f = nullptr;
  for (const auto& fn : plan.functions)
    if (fn.graph == callGraph) f = &fn;
  if (!f) {
    std::cerr << "xacc-mlir: @" << callGraph << " is not compiled to scalar code\n";
    return 1;
  }
  std::vector<uint64_t> args;
  std::stringstream as(callArgs);
  for (std::string a; std::getline(as, a, ',');) {
    uint64_t slot = 0;
    if (a == "true" || a == "false") slot = a == "true";
    else if (a.find_first_of(".eEn") != std::string::npos) {
      double d = std::stod(a);
      std::memcpy(&slot, &d, sizeof d);
    } else {
      slot = uint64_t(std::stoll(a));
    }
    args.push_back(slot);
  }
  if (args.size() != f->params.size()) {
    std::cerr << "xacc-mlir: @" << callGraph << " takes " << f->params.size() << " arguments\n";
    return 1;
  }
  xm::ScalarJitOptions jo;
  if (const char* d = std::getenv(xacc::env::kCacheDir)) jo.cacheDir = d;
  xm::ScalarCompileInfo info;
  std::string error;
  auto mod = xm::compileScalarPlan(plan, jo, info, error);
  if (!mod) {
    std::cerr << "xacc-mlir: " << error << "\n";
    return 1;
  }
  uint64_t r = 0;
  int code = 0;
  double ms = 1e300;  // the fastest of `repeat` calls
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    code = mod->call(f->index, args.data(), &r);
    ms = std::min(ms, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
  }
  std::cerr << (info.fromDiskCache ? "loaded from disk cache" : "compiled") << " in " << info.seconds * 1e3
            << " ms; call " << ms << " ms\n";
  if (code != 0) {
    std::cout << "bail " << code << "\n";
    return 0;
  }
  if (f->result == xm::ScalarKind::F64) {
    double d;
    std::memcpy(&d, &r, sizeof d);
    std::cout << d << "\n";
  } else if (f->result == xm::ScalarKind::Bool) {
    std::cout << (r ? "true" : "false") << "\n";
  } else {
    std::cout << int64_t(r) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xacc-mlir: GIR through the MLIR (xpu) backend"};
  std::string input = "-", emit, graphName;
  bool run = false, exact = false, nonContiguous = false, stats = false;
  int64_t dynSize = 3;
  int seed = 0;
  app.add_option("input", input, "GIR file ('-' for stdin)");
  app.add_option("--emit", emit, "mlir | bufferized | llvm | plan | scalar | scalar-llvm")
      ->check(CLI::IsMember({"mlir", "bufferized", "llvm", "plan", "scalar", "scalar-llvm"}));
  std::string callGraph, callArgs;
  app.add_option("--call", callGraph, "JIT the module's scalar partition and call this graph");
  app.add_option("--args", callArgs, "--call: comma-separated integer/float/true/false arguments");
  int repeat = 1;
  app.add_option("--repeat", repeat, "--call: call N times and report the fastest");
  app.add_option("--graph", graphName, "graph to compile (default: the first)");
  app.add_flag("--run", run, "run on random inputs and compare with the ATen path");
  app.add_flag("--exact-math", exact, "no polynomial approximations of transcendental functions");
  app.add_flag("--non-contiguous", nonContiguous, "--run: pass transposed (non-contiguous) inputs");
  app.add_flag("--stats", stats, "--run: print compile statistics");
  app.add_option("--dyn-size", dynSize, "size of dynamic dims for --run");
  app.add_option("--seed", seed, "random seed for --run");
  bool split = false;
  int bench = 0;
  app.add_option("--bench", bench, "--run: time N runs of the xpu executable, the ATen path and x.clone()");
  app.add_flag("--split-input-file", split, "process each '// -----' chunk separately");
  CLI11_PARSE(app, argc, argv);

  std::string text;
  if (input == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream f(input);
    if (!f) {
      std::cerr << "xacc-mlir: cannot open " << input << "\n";
      return 1;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  backend::aten::registerAtenOps();
  auto processChunk = [&](const std::string& text, const std::string& name) -> int {
  support::DiagnosticEngine diag;
  auto module = ir::parseModule(text, name, diag);
  if (!module || !ir::verifyModule(*module, diag)) {
    std::cerr << diag.renderAllText();
    return 1;
  }
  if (emit == "scalar" || emit == "scalar-llvm" || !callGraph.empty())
    return scalarMode(*module, emit, callGraph, callArgs, repeat);
  const ir::Graph* g = graphName.empty() ? (module->graphs().empty() ? nullptr : module->graphs()[0].get())
                                         : module->lookup(graphName);
  if (!g) {
    std::cerr << "xacc-mlir: no graph" << (graphName.empty() ? "" : " @" + graphName) << "\n";
    return 1;
  }
  xm::CompileOptions opts;
  opts.fastMath = !exact;
  if (emit == "mlir" || emit == "bufferized" || emit == "llvm") {
    auto stage = emit == "mlir" ? xm::EmitStage::Kernel
                 : emit == "bufferized" ? xm::EmitStage::Bufferized : xm::EmitStage::Llvm;
    std::cout << xm::emitMlir(*g, stage, opts);
    if (!run) return 0;
  }
  auto exe = xm::compileGraph(*g, opts, diag);
  if (!exe) {
    std::cerr << diag.renderAllText();
    return 1;
  }
  if (emit == "plan") std::cout << exe->describe();
  if (!run) return 0;

  at::manual_seed(seed);
  std::vector<ir::Datum> args;
  for (size_t i = 0; i < g->numParams(); ++i) {
    ir::Type t = g->param(i)->type();
    if (t.isTensor()) args.push_back(backend::aten::makeTensorDatum(randomInput(t, dynSize, nonContiguous)));
    else if (t.isInt()) args.push_back(ir::Datum::integer(2));
    else if (t.isFloat()) args.push_back(ir::Datum::real(0.5));
    else if (t.kind() == ir::TypeKind::Bool) args.push_back(ir::Datum::boolean(true));
    else {
      std::cerr << "xacc-mlir: cannot make an input of type " << t.str() << "\n";
      return 1;
    }
  }
  std::vector<ir::Datum> got, want;
  if (!exe->run(args, got, diag)) {
    std::cerr << diag.renderAllText();
    return 1;
  }
  ir::Interpreter interp(diag, module.get());
  if (!interp.run(*g, args, want)) {
    std::cerr << diag.renderAllText();
    return 1;
  }
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    if (!backend::aten::isTensorDatum(want[i])) continue;
    std::string why;
    if (!close(backend::aten::tensorOf(got[i]), backend::aten::tensorOf(want[i]), why)) {
      std::cout << "result " << i << ": " << why << "\n";
      ok = false;
    }
  }
  const auto& st = exe->stats();
  if (stats)
    std::cout << "regions " << st.regions << ", lowered nodes " << st.loweredNodes << ", fallback nodes "
              << st.fallbackNodes << ", kernels compiled " << st.kernelsCompiled << ", disk cache hits "
              << st.diskCacheHits << "\n";
  for (const auto& r : st.fallbackReasons) std::cout << "fallback: " << r << "\n";
  std::cout << (ok ? "PASS" : "FAIL") << "\n";
  if (bench > 0) {
    // Best (minimum) wall time of `bench` calls of f, in seconds: on a shared
    // machine the minimum is the run least disturbed by other processes.
    auto time = [&](const std::function<void()>& f) {
      std::vector<double> ts;
      f();
      for (int i = 0; i < bench; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return *std::min_element(ts.begin(), ts.end());
    };
    double bytes = 0;
    for (const auto& a : args)
      if (backend::aten::isTensorDatum(a)) bytes += double(backend::aten::tensorOf(a).nbytes());
    for (const auto& r : got)
      if (backend::aten::isTensorDatum(r)) bytes += double(backend::aten::tensorOf(r).nbytes());
    std::vector<ir::Datum> out;
    double tx = time([&] { exe->run(args, out, diag); });
    double ta = time([&] { interp.run(*g, args, out); });
    at::Tensor big;
    for (const auto& a : args)
      if (backend::aten::isTensorDatum(a) && (!big.defined() || backend::aten::tensorOf(a).numel() > big.numel()))
        big = backend::aten::tensorOf(a);
    double tc = big.defined() ? time([&] { (void)big.clone(); }) : 0;
    double copyBytes = big.defined() ? 2.0 * double(big.nbytes()) : 0;
    std::printf("bench: xpu %.3f ms %.2f GB/s | aten %.3f ms %.2f GB/s | clone %.3f ms %.2f GB/s | xpu/clone %.2f\n",
                tx * 1e3, bytes / tx / 1e9, ta * 1e3, bytes / ta / 1e9, tc * 1e3, copyBytes / tc / 1e9,
                (bytes / tx) / (copyBytes / tc));
  }
  return ok ? 0 : 1;
};
  if (!split) return processChunk(text, input);
  int status = 0, index = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t next = text.find("// -----", pos);
    std::string chunk = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    // Keep line numbers of later chunks right for diagnostics.
    std::string pad(static_cast<size_t>(std::count(text.begin(), text.begin() + pos, '\n')), '\n');
    std::cout << "// chunk " << index++ << "\n";
    status |= processChunk(pad + chunk, input);
    if (next == std::string::npos) break;
    pos = text.find('\n', next);
    pos = pos == std::string::npos ? text.size() + 1 : pos + 1;
  }
  return status;
}
