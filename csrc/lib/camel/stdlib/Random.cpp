// Module `random` (spec 15.4): one 64-bit Mersenne Twister per process behind a
// mutex (a parallel scheduler may call it from several threads), seeded from
// std::random_device until `seed` is called. Every function but `seed` is
// nondeterministic and therefore effectful (Note [Stdlib effects]). Floats are
// the top 53 bits of one draw; normals use Box-Muller; integer ranges are
// unbiased. `shuffle` and `sample` return new arrays.
#include <cmath>
#include <mutex>
#include <numeric>
#include <random>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

class Generator {
public:
  void seed(uint64_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    rng_.seed(s);
    seeded_ = true;
  }
  /// Uniform in [0, 1).
  double uniform() { return double(draw() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, span) for span > 0, or any 64-bit value for span == 0 (2^64).
  uint64_t below(uint64_t span) {
    std::lock_guard<std::mutex> lock(mu_);
    ensureSeeded();
    if (span == 0) return rng_();
    return std::uniform_int_distribution<uint64_t>(0, span - 1)(rng_);
  }

private:
  uint64_t draw() {
    std::lock_guard<std::mutex> lock(mu_);
    ensureSeeded();
    return rng_();
  }
  void ensureSeeded() {
    if (seeded_) return;
    std::random_device rd;
    rng_.seed((uint64_t(rd()) << 32) ^ rd());
    seeded_ = true;
  }
  std::mutex mu_;
  std::mt19937_64 rng_;
  bool seeded_ = false;
};

Generator& generator() {
  static Generator g;
  return g;
}


/// Fisher-Yates over the first `k` positions of `items`.
void partialShuffle(std::vector<Datum>& items, size_t k) {
  for (size_t i = 0; i < k && i + 1 < items.size(); ++i) {
    size_t j = i + size_t(generator().below(uint64_t(items.size() - i)));
    std::swap(items[i], items[j]);
  }
}

}  // namespace

void registerRandom() {
  Def seed = effectDef("random", "seed", 1, "(s: int): void", "reseeds the process-wide generator");
  seed.deterministic = true;
  seed.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(intLike(a[0]), a, 0, "the seed", "an int", err)) return false;
    r = {Type::null()};
    return true;
  };
  seed.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    int64_t s;
    if (!getInt(I, n, "random::seed", a[0], s)) return false;
    generator().seed(uint64_t(s));
    r.push_back(Datum());
    return true;
  };
  define(std::move(seed));

  Def rand = effectDef("random", "rand", 0, "(): float", "uniform float in [0, 1)");
  rand.infer = [](const Types&, Types& r, std::string&) {
    r = {Type::f64()};
    return true;
  };
  rand.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    r.push_back(Datum::real(generator().uniform()));
    return true;
  };
  define(std::move(rand));

  Def randn = effectDef("random", "randn", 0, "(): float", "standard normal float");
  randn.infer = [](const Types&, Types& r, std::string&) {
    r = {Type::f64()};
    return true;
  };
  randn.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    double u1 = 1.0 - generator().uniform();  // (0, 1]: log is finite
    double u2 = generator().uniform();
    r.push_back(Datum::real(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2)));
    return true;
  };
  define(std::move(randn));

  Def randint = effectDef("random", "randint", 2, "(lo: int, hi: int): int",
                          "uniform int in [lo, hi] (bounds swapped if lo > hi)");
  randint.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(intLike(a[0]), a, 0, "lo", "an int", err) ||
        !want(intLike(a[1]), a, 1, "hi", "an int", err))
      return false;
    r = {Type::i64()};
    return true;
  };
  randint.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    int64_t lo, hi;
    if (!getInt(I, n, "random::randint", a[0], lo) || !getInt(I, n, "random::randint", a[1], hi))
      return false;
    if (lo > hi) std::swap(lo, hi);
    uint64_t span = uint64_t(hi) - uint64_t(lo) + 1;  // 0 means all 2^64 values
    r.push_back(Datum::integer(int64_t(uint64_t(lo) + generator().below(span))));
    return true;
  };
  define(std::move(randint));

  Def choice = effectDef("random", "choice", 1, "(xs: T[]): T", "a random element (error on an empty array)");
  choice.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(listLike(a[0]), a, 0, "the array", "an array", err)) return false;
    r = {elemOf(a[0])};
    return true;
  };
  choice.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    ir::ListObject* xs;
    if (!getArray(I, n, "random::choice", a[0], xs)) return false;
    if (xs->size() == 0) return fail(I, n, RuntimeDiag::EmptyArray, {"random::choice"});
    r.push_back(xs->get(size_t(generator().below(xs->size()))));
    return true;
  };
  define(std::move(choice));

  Def sample = effectDef("random", "sample", 2, "(xs: T[], n: int): T[]",
                         "n elements at distinct positions, without replacement");
  sample.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(listLike(a[0]), a, 0, "the array", "an array", err) ||
        !want(intLike(a[1]), a, 1, "the count", "an int", err))
      return false;
    r = {a[0].isAny() ? Type::list(Type::any()) : a[0]};
    return true;
  };
  sample.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    ir::ListObject* xs;
    int64_t k;
    if (!getArray(I, n, "random::sample", a[0], xs) || !getInt(I, n, "random::sample", a[1], k))
      return false;
    if (k < 0 || uint64_t(k) > xs->size())
      return fail(I, n, RuntimeDiag::InvalidArgument,
                  {"random::sample", "cannot take " + std::to_string(k) + " of " +
                                         std::to_string(xs->size()) + " elements"});
    std::vector<Datum> items = xs->snapshot();
    partialShuffle(items, size_t(k));
    items.resize(size_t(k));
    r.push_back(Datum::list(std::move(items)));
    return true;
  };
  define(std::move(sample));

  Def shuffle = effectDef("random", "shuffle", 1, "(xs: T[]): T[]", "a shuffled copy");
  shuffle.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(listLike(a[0]), a, 0, "the array", "an array", err)) return false;
    r = {a[0].isAny() ? Type::list(Type::any()) : a[0]};
    return true;
  };
  shuffle.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    ir::ListObject* xs;
    if (!getArray(I, n, "random::shuffle", a[0], xs)) return false;
    std::vector<Datum> items = xs->snapshot();
    partialShuffle(items, items.size());
    r.push_back(Datum::list(std::move(items)));
    return true;
  };
  define(std::move(shuffle));
}

}  // namespace xacc::camel::stdlib
