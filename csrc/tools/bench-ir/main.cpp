// xacc-bench-ir: times the GIR core on generated graphs of N nodes (default 10k,
// 100k, 1M): build (Builder with type inference), verify, print, parse, each pass
// (dce, cse, const-fold, canonicalize) on its own copy of the built module, clone
// and destruction; then the pipeline build+verify+dce+cse in one go.
//
// Every size does the same total work (--total nodes, default the largest size):
// at N = 10k the module holds 100 graphs of 10k nodes, at 1M one graph of 1M, so
// the per-node costs compare graph size and nothing else (not a small graph that
// stays in the caches against a large one that cannot, nor timer resolution).
// --total=0 times one graph per size instead. Phases are measured in --repeat
// rounds, each round going through all sizes (in a rotating order), so load from
// other processes spreads over all sizes alike; each (size, phase) reports the
// median and the minimum over the rounds, in CPU and wall time, as a table or
// (--json) one JSON object per line for benchmarks/ir/run.py.
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
#include <map>
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

/// A module of `graphs` generated graphs of `n` nodes each (seeds seed, seed+1, ...).
std::unique_ptr<ir::Module> generate(size_t n, size_t graphs, uint64_t seed) {
  auto m = std::make_unique<ir::Module>();
  for (size_t i = 0; i < graphs; ++i) {
    ir::Graph* g = m->add(std::make_unique<ir::Graph>(i ? "g" + std::to_string(i) : "main"));
    if (gShape == Shape::Fanout) generateFanout(*g, n);
    else Generator(*g, seed + i).run(n);
  }
  return m;
}

std::unique_ptr<ir::Module> cloneModule(const ir::Module& m) {
  auto c = std::make_unique<ir::Module>();
  for (auto& g : m.graphs()) c->add(g->clone());
  return c;
}

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

/// One timed run of `body`.
template <class Body>
Timing timeOnce(Body body) {
  flushCaches();
  auto t0 = Clock::now();
  double c0 = cpuSeconds();
  body();
  return {secondsSince(t0), cpuSeconds() - c0};
}

using ModulePtr = std::unique_ptr<ir::Module>;

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

const char* const kPasses[] = {"dce", "cse", "const-fold", "canonicalize"};

/// The samples of one size: per phase, one Timing per round.
struct SizeRecord {
  size_t n = 0;
  size_t graphs = 0;
  size_t nodes = 0;
  std::vector<std::string> order;  ///< phases in first-measured order
  std::map<std::string, std::vector<Timing>> samples;
  std::map<std::string, std::string> notes;
  void add(const std::string& phase, Timing t) {
    if (!samples.count(phase)) order.push_back(phase);
    samples[phase].push_back(t);
  }
};

/// One round of every phase at one size.
void measureRound(SizeRecord& rec, uint64_t seed) {
  size_t n = rec.n, k = rec.graphs;
  ModulePtr built;
  rec.add("build", timeOnce([&] { built = generate(n, k, seed); }));
  rec.nodes = built->totalNodes();
  rec.add("verify", timeOnce([&] { verifyOrDie(*built); }));

  std::string text;
  rec.add("print", timeOnce([&] { text = ir::printModule(*built); }));
  rec.notes["print"] = std::to_string(text.size() >> 10) + "KiB";
  {
    support::SourceManager sm;
    ir::TextLocations locs;
    ModulePtr parsed;
    rec.add("parse", timeOnce([&] {
              support::DiagnosticEngine diag(&sm);
              parsed = ir::parseModule(text, "bench.gir", diag, &locs);
              if (!parsed) {
                std::fprintf(stderr, "xacc-bench-ir: parse failed\n%s", diag.renderAllText().c_str());
                std::exit(2);
              }
            }));
    if (parsed->totalNodes() != rec.nodes || ir::printModule(*parsed) != text) {
      std::fprintf(stderr, "xacc-bench-ir: print(parse(text)) != text\n");
      std::exit(2);
    }
  }
  text = {};

  // Each pass on its own copy of the built module.
  for (const char* pass : kPasses) {
    passes::Statistics stats;
    ModulePtr m = cloneModule(*built);
    rec.add(pass, timeOnce([&] { runPass(*m, pass, stats); }));
    verifyOrDie(*m);
    std::string note;
    for (auto& [key, v] : stats) note += key + "=" + std::to_string(v) + " ";
    rec.notes[pass] = note;
  }

  ModulePtr copy;
  rec.add("clone", timeOnce([&] { copy = cloneModule(*built); }));
  rec.add("destroy", timeOnce([&] { copy.reset(); }));
  built.reset();

  // The pipeline of the target, end to end.
  passes::Statistics stats;
  ModulePtr m;
  rec.add("build+verify+dce+cse", timeOnce([&] {
            m = generate(n, k, seed);
            verifyOrDie(*m);
            runPass(*m, "dce", stats);
            runPass(*m, "cse", stats);
          }));
  m.reset();
}

Timing median(std::vector<Timing> ts, double Timing::*field) {
  std::sort(ts.begin(), ts.end(), [&](const Timing& a, const Timing& b) { return a.*field < b.*field; });
  size_t h = ts.size() / 2;
  if (ts.size() % 2) return ts[h];
  return {(ts[h - 1].wall + ts[h].wall) / 2, (ts[h - 1].cpu + ts[h].cpu) / 2};
}

double minOf(const std::vector<Timing>& ts, double Timing::*field) {
  double m = ts[0].*field;
  for (const Timing& t : ts) m = std::min(m, t.*field);
  return m;
}

void report(const SizeRecord& rec, bool json) {
  if (!json)
    std::printf("N = %zu x %zu graph%s (%zu nodes; median and min of %zu rounds)\n", rec.n,
                rec.graphs, rec.graphs == 1 ? "" : "s", rec.nodes,
                rec.samples.begin()->second.size());
  for (const std::string& phase : rec.order) {
    const std::vector<Timing>& ts = rec.samples.at(phase);
    double cpuMed = median(ts, &Timing::cpu).cpu, wallMed = median(ts, &Timing::wall).wall;
    double cpuMin = minOf(ts, &Timing::cpu), wallMin = minOf(ts, &Timing::wall);
    auto it = rec.notes.find(phase);
    std::string note = it == rec.notes.end() ? "" : it->second;
    if (json) {
      std::string cpus, walls;
      for (const Timing& t : ts) {
        cpus += (cpus.empty() ? "" : ", ") + std::to_string(t.cpu);
        walls += (walls.empty() ? "" : ", ") + std::to_string(t.wall);
      }
      std::printf("{\"size\": %zu, \"graphs\": %zu, \"phase\": \"%s\", \"nodes\": %zu, "
                  "\"cpu_seconds\": %.9f, \"seconds\": %.9f, \"cpu_min\": %.9f, \"wall_min\": %.9f, "
                  "\"cpu_samples\": [%s], \"wall_samples\": [%s], \"note\": \"%s\"}\n",
                  rec.n, rec.graphs, phase.c_str(), rec.nodes, cpuMed, wallMed, cpuMin, wallMin,
                  cpus.c_str(), walls.c_str(), note.c_str());
    } else {
      std::printf("  %-22s %9.1f ms wall %9.1f ms cpu (min %9.1f)  %10.0f nodes/s  %8.1f ns/node  %s\n",
                  phase.c_str(), wallMed * 1e3, cpuMed * 1e3, cpuMin * 1e3,
                  rec.nodes / std::max(cpuMed, 1e-12), cpuMed * 1e9 / rec.nodes, note.c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes{10000, 100000, 1000000};
  uint64_t seed = 42;
  int repeat = 5;
  size_t total = 0;
  bool totalSet = false;
  bool json = false;
  std::string shape = "realistic";
  CLI::App app{"xacc-bench-ir: time GIR build/verify/print/parse and passes on generated graphs"};
  app.add_option("--sizes", sizes, "graph sizes in nodes")->delimiter(',');
  app.add_option("--seed", seed, "generator seed");
  app.add_option("--repeat", repeat, "rounds (every phase at every size once per round)")
      ->check(CLI::PositiveNumber);
  app.add_option("--total", total,
                 "nodes per size and round: a size N gets max(1, total/N) graphs (default: the "
                 "largest size; 0: one graph per size)")
      ->each([&](const std::string&) { totalSet = true; });
  app.add_flag("--json", json, "one JSON object per measurement");
  size_t flushMb = 0;
  app.add_option("--flush-mb", flushMb,
                 "write this many MiB before each timed run to time it with cold caches");
  app.add_option("--shape", shape, "realistic, or fanout (one value used by every node)")
      ->check(CLI::IsMember({"realistic", "fanout"}));
  CLI11_PARSE(app, argc, argv);
  gShape = shape == "fanout" ? Shape::Fanout : Shape::Realistic;
  gFlushBytes = flushMb << 20;
  if (sizes.empty()) return 0;
  if (!totalSet) total = *std::max_element(sizes.begin(), sizes.end());

  std::vector<SizeRecord> recs(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    recs[i].n = sizes[i];
    recs[i].graphs = total ? std::max<size_t>(1, total / sizes[i]) : 1;
  }
  for (int r = 0; r < repeat; ++r) {
    // Rotate the order of sizes from round to round.
    for (size_t j = 0; j < recs.size(); ++j) {
      SizeRecord& rec = recs[(j + size_t(r)) % recs.size()];
      if (!json) {
        std::fprintf(stderr, "-- round %d/%d: N = %zu x %zu\n", r + 1, repeat, rec.n, rec.graphs);
      }
      measureRound(rec, seed);
    }
  }
  for (const SizeRecord& rec : recs) report(rec, json);
  return 0;
}
