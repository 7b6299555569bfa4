// Module `sim` (spec 15.14): two deterministic Monte-Carlo benchmark kernels on
// a 64-bit Mersenne Twister seeded with the given seed. pi_hits counts uniform
// points of [-1, 1]^2 inside the unit circle; asian_call_price prices an
// arithmetic-average Asian call under geometric Brownian motion with S0 = K =
// 100, r = 0.05, sigma = 0.2, T = 1 (the reference's model). They are
// registered as effectful so they are never folded at compile time (see Note
// [Stdlib effects]), and as `concurrent`: they touch nothing but their own
// generator, so the parallel scheduler may run them concurrently.
#include <cmath>
#include <random>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

InferRule intsTo(Type result) {
  return [result](const Types& a, Types& r, std::string& err) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!want(intLike(a[i]), a, i, "argument " + std::to_string(i + 1), "an int", err))
        return false;
    r = {result};
    return true;
  };
}

}  // namespace

void registerSim() {
  define({.module = "sim",
          .name = "pi_hits",
          .gir = "sim::pi_hits",
          .params = 2,
          .signature = "(samples: int, seed: int): int",
          .effectful = true,
          .concurrent = true,
          .summary = "uniform points of [-1, 1]^2 (MT19937-64, seeded) inside the unit circle",
          .infer = intsTo(Type::i64()),
          .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            int64_t samples, seed;
            if (!getInt(I, n, "sim::pi_hits", a[0], samples) ||
                !getInt(I, n, "sim::pi_hits", a[1], seed))
              return false;
            if (samples < 0)
              return fail(
                  I, n, RuntimeDiag::InvalidArgument,
                  {"sim::pi_hits", "samples must not be negative, got " + std::to_string(samples)});
            std::mt19937_64 rng{uint64_t(seed)};
            std::uniform_real_distribution<double> coord(-1.0, 1.0);
            int64_t hits = 0;
            for (int64_t i = 0; i < samples; ++i) {
              double x = coord(rng), y = coord(rng);
              hits += x * x + y * y <= 1.0;
            }
            r.push_back(Datum::integer(hits));
            return true;
          }});

  define({.module = "sim",
          .name = "asian_call_price",
          .gir = "sim::asian_call_price",
          .params = 3,
          .signature = "(paths: int, steps: int, seed: int): float",
          .effectful = true,
          .concurrent = true,
          .summary = "Monte-Carlo price of an arithmetic-average Asian call (GBM, sigma = 0.2)",
          .infer = intsTo(Type::f64()),
          .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            const char* fn = "sim::asian_call_price";
            int64_t paths, steps, seed;
            if (!getInt(I, n, fn, a[0], paths) || !getInt(I, n, fn, a[1], steps) ||
                !getInt(I, n, fn, a[2], seed))
              return false;
            if (paths <= 0 || steps <= 0)
              return fail(I, n, RuntimeDiag::InvalidArgument,
                          {fn, "paths and steps must be positive (got " + std::to_string(paths) +
                                   ", " + std::to_string(steps) + ")"});
            constexpr double s0 = 100.0, strike = 100.0, rate = 0.05, sigma = 0.2, maturity = 1.0;
            double dt = maturity / double(steps);
            double drift = (rate - 0.5 * sigma * sigma) * dt;
            double vol = sigma * std::sqrt(dt);
            std::mt19937_64 rng{uint64_t(seed)};
            std::normal_distribution<double> normal(0.0, 1.0);
            double payoffSum = 0.0;
            for (int64_t p = 0; p < paths; ++p) {
              double s = s0, sum = 0.0;
              for (int64_t k = 0; k < steps; ++k) {
                s *= std::exp(drift + vol * normal(rng));
                sum += s;
              }
              double average = sum / double(steps);
              payoffSum += average > strike ? average - strike : 0.0;
            }
            r.push_back(Datum::real(std::exp(-rate * maturity) * payoffSum / double(paths)));
            return true;
          }});
}

}  // namespace xacc::camel::stdlib
