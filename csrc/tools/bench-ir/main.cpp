// xacc-bench-ir: times the GIR core on generated graphs of N nodes (default 10k,
// 100k, 1M): build (Builder with type inference), verify, print, parse, each pass
// (dce, cse, const-fold, canonicalize) on its own copy of the built graph, and
// destruction; then the pipeline build+verify+dce+cse in one go. Reports wall and
// CPU milliseconds, nodes per second and nanoseconds per node (by CPU time) for
// each phase, as a table or (--json) one JSON object per line for
// benchmarks/ir/run.py.
//
// The generated graph is deterministic (--seed) and shaped like front-end output:
// mostly integer and float arithmetic, comparisons feeding selects, tuples built
// and taken apart, constants (some pairs foldable, some identities such as x + 0
// for canonicalize), about 7% exact duplicates of earlier nodes (for cse), about
// 6% nodes whose results are never used (for dce), and an io.print every ~1000
// nodes threaded on one effect token. Operands come mostly from the last few
// values, and every value but the dead ones is used, so the graph is one wide,
// connected DAG rather than a chain or a forest. --shape=fanout instead makes one
// value used by every node, which exposes costs that grow with a use count.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "xacc/ir/Builder.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"

using namespace xacc;
using ir::Attr;
using ir::CoreOp;
using ir::Type;
using ir::Value;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// CPU time of this process: unlike wall time it does not grow when other
/// processes compete for the cores, so it is the stable measure on a shared machine.
double cpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// Wall and CPU seconds of one measurement.
struct Timing {
  double wall = 0;
  double cpu = 0;
};

/// Values of one type: a FIFO of not-yet-used values (consumed first, so almost
/// every value gets a use) and a window of recent ones.
struct Pool {
  std::deque<Value*> unused;
  std::vector<Value*> recent;  // ring buffer
  size_t next = 0;

  void add(Value* v) {
    unused.push_back(v);
    if (recent.size() < 256) {
      recent.push_back(v);
    } else {
      recent[next] = v;
      next = (next + 1) % recent.size();
    }
  }
  bool empty() const { return recent.empty(); }
};

class Generator {
public:
  Generator(ir::Graph& g, uint64_t seed) : g_(g), b_(g), rng_(seed) {}

  void run(size_t target) {
    token_ = g_.addParam(Type::token(), "t");
    ints_.add(g_.addParam(Type::i64(), "x"));
    ints_.add(g_.addParam(Type::i64(), "y"));
    floats_.add(g_.addParam(Type::f64(), "f"));
    while (g_.numNodes() < target) {
      if (g_.numNodes() - lastPrint_ >= 1000) {
        print();
        continue;
      }
      step();
    }
    // Whatever is still unused goes to the final prints, so only the intended
    // dead nodes are dead.
    while (!ints_.unused.empty() || !floats_.unused.empty() || !bools_.unused.empty() ||
           !tuples_.unused.empty())
      print();
    g_.addResult(token_);
    g_.addResult(ints_.recent[ints_.next ? ints_.next - 1 : ints_.recent.size() - 1]);
  }

private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  /// An operand: the oldest unused value if any, else a recent one (mostly very recent).
  Value* operand(Pool& p, bool preferUnused = true) {
    if (preferUnused && !p.unused.empty()) {
      Value* v = p.unused.front();
      p.unused.pop_front();
      return v;
    }
    size_t n = p.recent.size();
    size_t back = chance(0.7) ? pick(std::min<size_t>(n, 16)) : pick(n);
    size_t idx = (p.next + n - 1 - back) % n;
    return p.recent[idx];
  }

  Value* make(CoreOp op, const std::vector<Value*>& operands, ir::AttrDict attrs = {}) {
    ir::Node* n = b_.create(op, operands, std::move(attrs));
    if (!n) {
      std::fprintf(stderr, "xacc-bench-ir: generator bug: %s\n", b_.error().c_str());
      std::exit(2);
    }
    if (n->isPure() && n->numResults() == 1) {
      if (dupCandidates_.size() < 512) dupCandidates_.push_back(n);
      else dupCandidates_[pick(dupCandidates_.size())] = n;
    }
    return n->result(0);
  }

  void addTo(Value* v) {
    Type t = v->type();
    if (t == Type::i64()) ints_.add(v);
    else if (t == Type::f64()) floats_.add(v);
    else if (t == Type::boolean()) bools_.add(v);
    else tuples_.add(v);
  }

  void print() {
    std::vector<Value*> ops{token_};
    for (Pool* p : {&ints_, &floats_, &bools_, &tuples_})
      for (int i = 0; i < 4 && !p->unused.empty(); ++i) {
        ops.push_back(p->unused.front());
        p->unused.pop_front();
      }
    token_ = make(CoreOp::Print, ops);
    lastPrint_ = g_.numNodes();
  }

  void step() {
    static const CoreOp kIntOps[] = {CoreOp::Add, CoreOp::Sub, CoreOp::Mul, CoreOp::BitAnd,
                                     CoreOp::BitOr, CoreOp::BitXor, CoreOp::Min, CoreOp::Max};
    static const CoreOp kFloatOps[] = {CoreOp::Add, CoreOp::Sub, CoreOp::Mul, CoreOp::Max};
    static const CoreOp kCmpOps[] = {CoreOp::Lt, CoreOp::Le, CoreOp::Eq, CoreOp::Ne};
    int r = int(pick(100));
    if (r < 8) {  // integer constant
      addTo(b_.constInt(int64_t(pick(1000)) - 500));
    } else if (r < 11) {
      addTo(b_.constFloat(double(pick(1000)) / 8.0));
    } else if (r < 12) {
      addTo(b_.constBool(chance(0.5)));
    } else if (r < 42) {
      Value* a = operand(ints_);
      addTo(make(kIntOps[pick(8)], {a, operand(ints_, false)}));
    } else if (r < 50) {
      Value* a = operand(floats_);
      addTo(make(kFloatOps[pick(4)], {a, operand(floats_, false)}));
    } else if (r < 53) {
      addTo(make(chance(0.5) ? CoreOp::Neg : CoreOp::Abs, {operand(ints_)}));
    } else if (r < 61) {
      if (chance(0.8)) {
        Value* a = operand(ints_);
        addTo(make(kCmpOps[pick(4)], {a, operand(ints_, false)}));
      } else {
        Value* a = operand(floats_);
        addTo(make(CoreOp::Lt, {a, operand(floats_, false)}));
      }
    } else if (r < 69 && !bools_.empty()) {
      Value* c = operand(bools_);
      Value* a = operand(ints_);
      addTo(make(CoreOp::Select, {c, a, operand(ints_, false)}));
    } else if (r < 72 && !bools_.empty()) {
      Value* a = operand(bools_);
      if (chance(0.3)) addTo(make(CoreOp::Not, {a}));
      else addTo(make(chance(0.5) ? CoreOp::And : CoreOp::Or, {a, operand(bools_, false)}));
    } else if (r < 76) {
      Value* a = operand(ints_);
      Value* f = operand(floats_);
      std::vector<Value*> ops{a, f};
      if (!bools_.empty()) ops.push_back(operand(bools_));
      addTo(make(CoreOp::TupleMake, ops));
    } else if (r < 80 && !tuples_.empty()) {
      Value* t = operand(tuples_);
      int64_t i = int64_t(pick(t->type().elements().size()));
      addTo(make(CoreOp::TupleGet, {t}, ir::attrs({{"index", Attr::integer(i)}})));
    } else if (r < 87 && !dupCandidates_.empty()) {
      // An exact duplicate of an earlier pure node: cse merges it.
      ir::Node* orig = dupCandidates_[pick(dupCandidates_.size())];
      ir::Node* dup = b_.create(&orig->op(), orig->operands(), orig->attrs(),
                                {orig->result(0)->type()});
      addTo(dup->result(0));
    } else if (r < 93) {
      // Dead: computed, never used; dce removes it.
      Value* a = operand(ints_, false);
      make(kIntOps[pick(8)], {a, operand(ints_, false)});
    } else if (r < 96) {
      // Constant-foldable: const op const.
      Value* a = b_.constInt(int64_t(pick(100)));
      Value* c = b_.constInt(int64_t(pick(100)) + 1);
      addTo(make(kIntOps[pick(8)], {a, c}));
    } else {
      // Canonicalizable identities: x + 0, x * 1, tuple.get(tuple.make(...)).
      Value* x = operand(ints_);
      int k = int(pick(3));
      if (k == 0) {
        addTo(make(CoreOp::Add, {x, b_.constInt(0)}));
      } else if (k == 1) {
        addTo(make(CoreOp::Mul, {b_.constInt(1), x}));
      } else {
        Value* t = make(CoreOp::TupleMake, {x, operand(floats_, false)});
        addTo(make(CoreOp::TupleGet, {t}, ir::attrs({{"index", Attr::integer(0)}})));
      }
    }
  }

  ir::Graph& g_;
  ir::Builder b_;
  std::mt19937_64 rng_;
  Pool ints_, floats_, bools_, tuples_;
  std::vector<ir::Node*> dupCandidates_;
  Value* token_ = nullptr;
  size_t lastPrint_ = 0;
};

/// The stress shape: one parameter used by every node -- half of them the same
/// `arith.neg(%x)` (cse merges them all), half a chain `arith.add(%x, prev)`. Real
/// graphs have such hot values (a constant, `self`, a loop bound); cost that grows
/// with a value's use count shows up here and not in the realistic shape.
void generateFanout(ir::Graph& g, size_t n) {
  Value* t = g.addParam(Type::token(), "t");
  Value* x = g.addParam(Type::i64(), "x");
  ir::Builder b(g);
  Value* prev = x;
  while (g.numNodes() + 1 < n) {
    b.value(CoreOp::Neg, {x});
    prev = b.value(CoreOp::Add, {x, prev});
  }
  g.addResult(b.create(CoreOp::Print, {t, prev})->result(0));
}

enum class Shape { Realistic, Fanout };
Shape gShape = Shape::Realistic;

std::unique_ptr<ir::Module> generate(size_t n, uint64_t seed) {
  auto m = std::make_unique<ir::Module>();
  ir::Graph* g = m->add(std::make_unique<ir::Graph>("main"));
  if (gShape == Shape::Fanout) generateFanout(*g, n);
  else Generator(*g, seed).run(n);
  return m;
}

std::unique_ptr<ir::Module> cloneModule(const ir::Module& m) {
  auto c = std::make_unique<ir::Module>();
  for (auto& g : m.graphs()) c->add(g->clone());
  return c;
}

class Bench {
public:
  Bench(bool json) : json_(json) {}

  void record(const std::string& phase, size_t nodes, Timing t, const std::string& note = {}) {
    if (json_) {
      std::printf("{\"phase\": \"%s\", \"nodes\": %zu, \"seconds\": %.9f, \"cpu_seconds\": %.9f, "
                  "\"note\": \"%s\"}\n",
                  phase.c_str(), nodes, t.wall, t.cpu, note.c_str());
    } else {
      std::printf("  %-22s %9.1f ms wall %9.1f ms cpu  %10.0f nodes/s  %8.1f ns/node  %s\n",
                  phase.c_str(), t.wall * 1e3, t.cpu * 1e3, nodes / std::max(t.cpu, 1e-12),
                  t.cpu * 1e9 / nodes, note.c_str());
    }
    std::fflush(stdout);
  }

private:
  bool json_;
};

/// Bytes written before each timed run to evict the caches (--flush-mb); 0 = off.
size_t gFlushBytes = 0;

/// Evicts the graph from the caches by writing a buffer larger than them, so a
/// small graph is timed cold, like a large one necessarily is.
void flushCaches() {
  static std::vector<char> buffer;
  if (!gFlushBytes) return;
  buffer.resize(gFlushBytes);
  for (size_t i = 0; i < buffer.size(); i += 64) buffer[i] = char(buffer[i] + 1);
}

/// Median (by CPU time) of `repeat` timings of `body(state)`; `setup()` makes the
/// state outside the timed region, and the state (e.g. a module the body built) is
/// destroyed outside it too. Keeps the last state in `last`.
template <class State, class Setup, class Body>
Timing timeMedian(int repeat, Setup setup, Body body, State* last = nullptr) {
  std::vector<Timing> t;
  for (int i = 0; i < repeat; ++i) {
    State state = setup();
    flushCaches();
    auto t0 = Clock::now();
    double c0 = cpuSeconds();
    body(state);
    t.push_back({secondsSince(t0), cpuSeconds() - c0});
    if (last && i + 1 == repeat) *last = std::move(state);
  }
  std::sort(t.begin(), t.end(), [](const Timing& a, const Timing& b) { return a.cpu < b.cpu; });
  return t[t.size() / 2];
}

using ModulePtr = std::unique_ptr<ir::Module>;

ModulePtr none() { return nullptr; }

void runPass(ir::Module& m, const char* name, passes::Statistics& stats) {
  support::DiagnosticEngine diag;
  auto pass = passes::createPass(name);
  passes::PassContext ctx{diag, stats};
  if (!pass->run(m, ctx)) {
    std::fprintf(stderr, "xacc-bench-ir: pass %s failed\n%s", name, diag.renderAllText().c_str());
    std::exit(2);
  }
}

void verifyOrDie(const ir::Module& m) {
  support::DiagnosticEngine diag;
  if (!ir::verifyModule(m, diag)) {
    std::fprintf(stderr, "xacc-bench-ir: generated graph does not verify\n%s",
                 diag.renderAllText().c_str());
    std::exit(2);
  }
}

void benchSize(Bench& bench, size_t n, uint64_t seed, int repeat) {
  ModulePtr built;
  Timing tBuild = timeMedian<ModulePtr>(
      repeat, none, [&](ModulePtr& m) { m = generate(n, seed); }, &built);
  size_t nodes = built->totalNodes();
  bench.record("build", nodes, tBuild);

  Timing tVerify = timeMedian<int>(
      repeat, [] { return 0; }, [&](int&) { verifyOrDie(*built); });
  bench.record("verify", nodes, tVerify);

  std::string text;
  Timing tPrint = timeMedian<int>(
      repeat, [] { return 0; }, [&](int&) { text = ir::printModule(*built); });
  bench.record("print", nodes, tPrint, std::to_string(text.size() >> 10) + "KiB");

  struct Parsed {
    std::unique_ptr<support::SourceManager> sm;
    ir::TextLocations locs;
    ModulePtr module;
  };
  Parsed parsed;
  Timing tParse = timeMedian<Parsed>(
      repeat, [] { return Parsed{std::make_unique<support::SourceManager>(), {}, nullptr}; },
      [&](Parsed& p) {
        support::DiagnosticEngine diag(p.sm.get());
        p.module = ir::parseModule(text, "bench.gir", diag, &p.locs);
        if (!p.module) {
          std::fprintf(stderr, "xacc-bench-ir: parse failed\n%s", diag.renderAllText().c_str());
          std::exit(2);
        }
      },
      &parsed);
  if (parsed.module->totalNodes() != nodes || ir::printModule(*parsed.module) != text) {
    std::fprintf(stderr, "xacc-bench-ir: print(parse(text)) != text\n");
    std::exit(2);
  }
  parsed = {};
  bench.record("parse", nodes, tParse);

  // Each pass on its own copy of the built graph.
  for (const char* pass : {"dce", "cse", "const-fold", "canonicalize"}) {
    passes::Statistics stats;
    ModulePtr after;
    Timing t = timeMedian<ModulePtr>(
        repeat, [&] { return cloneModule(*built); },
        [&](ModulePtr& m) {
          stats.clear();
          runPass(*m, pass, stats);
        },
        &after);
    verifyOrDie(*after);
    std::string note;
    for (auto& [k, v] : stats) note += k + "=" + std::to_string(v) + " ";
    bench.record(pass, nodes, t, note);
  }

  Timing tClone = timeMedian<ModulePtr>(
      repeat, none, [&](ModulePtr& m) { m = cloneModule(*built); });
  bench.record("clone", nodes, tClone);
  Timing tDestroy = timeMedian<ModulePtr>(
      repeat, [&] { return cloneModule(*built); }, [&](ModulePtr& m) { m.reset(); });
  bench.record("destroy", nodes, tDestroy);
  built.reset();

  // The pipeline of the target, end to end on one graph.
  passes::Statistics stats;
  Timing tPipe = timeMedian<ModulePtr>(
      repeat, none,
      [&](ModulePtr& m) {
        m = generate(n, seed);
        verifyOrDie(*m);
        runPass(*m, "dce", stats);
        runPass(*m, "cse", stats);
      });
  bench.record("build+verify+dce+cse", nodes, tPipe);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes{10000, 100000, 1000000};
  uint64_t seed = 42;
  int repeat = 0;
  bool json = false;
  std::string shape = "realistic";
  CLI::App app{"xacc-bench-ir: time GIR build/verify/print/parse and passes on generated graphs"};
  app.add_option("--sizes", sizes, "graph sizes in nodes")->delimiter(',');
  app.add_option("--seed", seed, "generator seed");
  app.add_option("--repeat", repeat, "runs per phase, median reported (default: more for small graphs)");
  app.add_flag("--json", json, "one JSON object per measurement");
  size_t flushMb = 0;
  app.add_option("--flush-mb", flushMb,
                 "write this many MiB before each timed run to time it with cold caches");
  app.add_option("--shape", shape, "realistic, or fanout (one value used by every node)")
      ->check(CLI::IsMember({"realistic", "fanout"}));
  CLI11_PARSE(app, argc, argv);
  gShape = shape == "fanout" ? Shape::Fanout : Shape::Realistic;
  gFlushBytes = flushMb << 20;

  Bench bench(json);
  for (size_t n : sizes) {
    int r = repeat > 0 ? repeat : n <= 10000 ? 15 : n <= 100000 ? 5 : 3;
    if (!json) std::printf("N = %zu (median of %d)\n", n, r);
    else std::printf("{\"size\": %zu, \"repeat\": %d}\n", n, r);
    benchSize(bench, n, seed, r);
  }
  return 0;
}
