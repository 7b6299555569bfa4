// Note [Skinny matrix products]: a decode step of a language model multiplies
// one row (a batch of one token) by every weight matrix, and an encoder run on
// a short sequence multiplies a few rows. Those products read each weight once
// and do two flops per weight element, so their time is the time to stream the
// weight from memory. ATen's CPU GEMM streams a [768, 3072] float32 weight at
// about 16 GB/s for one row and 9-13 GB/s for eight rows on this project's
// machine, on one or two threads alike; a loop that keeps a block of output
// rows in vector registers and walks the weight once reaches 25-32 GB/s on one
// thread and 31-45 GB/s on two (benchmarks/models/skinny_gemm.py measures both
// on the same shapes).
//
// xpu0's prepared calls use them (DirectCall::skinny); the ATen executor keeps
// ATen's GEMM so that device "cpu" stays eager's to the bit. The kernels take
// y = beta * bias + alpha * (a @ b) when all of these hold,
// and otherwise the caller makes the ATen call:
//   - every tensor is a dense float32 CPU tensor with no dispatch key
//     beyond CPU, autograd's and autocast's (no subclass, no
//     functorch wrapper); no Python mode or CPU autocast is active; autograd
//     would record nothing (grad mode off, or no operand requires grad): the
//     kernels bypass the dispatcher, so nothing it would do may be skipped;
//   - a is [M, K] with 1 <= M <= kSkinnyMaxRows, K >= 1, unit column stride;
//   - b is [K, N] with a unit stride in one of its dims: unit row stride is a
//     transposed weight (x @ w.t(), nn.Linear's layout: each output is the dot
//     product of a row of a with a contiguous row of w), unit column stride is
//     a row-major weight (x @ w, GPT-2's Conv1D: each row of b scales into a
//     block of output columns);
//   - bias broadcasts to [M, N] (any strides); beta 0 ignores it, as ATen does.
// The work is split over output columns with at::parallel_for (the intra-op
// pool and its thread count), each chunk at least 2^18 multiply-adds, so that
// small products stay on the calling thread. Summation order differs from ATen's
// GEMM; results agree to float32 rounding.
//
// The kernels are AVX-512F, chosen at run time; a CPU without it keeps ATen.
#include "xacc/backend/aten/SkinnyGemm.h"
#include "xacc/support/EnvNames.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <immintrin.h>

// GCC 12's _mm512_reduce_add_ps extracts halves with an _mm256_undefined_pd()
// passthrough that -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace xacc::backend::aten {

namespace {

struct Args {
  int64_t m, n, k;
  const float* a;
  int64_t lda;  ///< row stride of a (its column stride is 1)
  const float* b;
  int64_t ldb;  ///< the non-unit stride of b
  const float* bias = nullptr;
  int64_t biasM = 0, biasN = 0;  ///< strides of bias broadcast to [M, N]
  float alpha = 1, beta = 0;
  float* y;  ///< [M, N], contiguous
};

/// y = alpha * acc + beta * bias for the (up to 16) columns from `col` whose
/// bits are set in `mask`, at once (at small depth the epilogue is a large part
/// of a product).
__attribute__((target("avx512f"))) inline void store16(const Args& g, int64_t row, int64_t col, __m512 acc,
                                                       __mmask16 mask) {
  __m512 v = _mm512_mul_ps(_mm512_set1_ps(g.alpha), acc);
  if (g.bias) {
    const float* bp = g.bias + row * g.biasM + col * g.biasN;
    __m512 bv;
    if (g.biasN == 1) {
      bv = _mm512_maskz_loadu_ps(mask, bp);
    } else if (g.biasN == 0) {
      bv = _mm512_set1_ps(*bp);
    } else {
      alignas(64) float tmp[16] = {};
      for (int c = 0; c < 16; ++c)
        if (mask >> c & 1) tmp[c] = bp[c * g.biasN];
      bv = _mm512_load_ps(tmp);
    }
    v = _mm512_add_ps(v, _mm512_mul_ps(_mm512_set1_ps(g.beta), bv));
  }
  _mm512_mask_storeu_ps(g.y + row * g.n + col, mask, v);
}

/// The sums of the lanes of a, b, c and d, in that order: one transposing
/// tree of adds instead of four reductions (which dominated at depth 32).
__attribute__((target("avx512f"))) inline __m128 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3], then [a, b, c, d] partials.
  __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
  __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
  __m512 abcd = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                              _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
  // Fold the four 128-bit lanes.
  abcd = _mm512_add_ps(abcd, _mm512_shuffle_f32x4(abcd, abcd, _MM_SHUFFLE(1, 0, 3, 2)));
  abcd = _mm512_add_ps(abcd, _mm512_shuffle_f32x4(abcd, abcd, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castps512_ps128(abcd);
}

// b transposed (its element [k][n] at b[n * ldb + k]): MB rows of a against NB
// rows of the weight, one vector accumulator per output, K walked once.
template <int MB, int NB>
__attribute__((target("avx512f"))) void dotBlock(const Args& g, int64_t m0, int64_t n0) {
  __m512 acc[MB][NB];
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  const float* w[NB];
  for (int j = 0; j < NB; ++j) w[j] = g.b + (n0 + j) * g.ldb;
  const float* x[MB];
  for (int i = 0; i < MB; ++i) x[i] = g.a + (m0 + i) * g.lda;
  int64_t k = 0;
  for (; k + 16 <= g.k; k += 16) {
    __m512 wv[NB];
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w[j] + k);
    for (int i = 0; i < MB; ++i) {
      __m512 xv = _mm512_loadu_ps(x[i] + k);
      for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_fmadd_ps(wv[j], xv, acc[i][j]);
    }
  }
  if (k < g.k) {
    __mmask16 mask = static_cast<__mmask16>((1u << (g.k - k)) - 1);
    __m512 wv[NB];
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_maskz_loadu_ps(mask, w[j] + k);
    for (int i = 0; i < MB; ++i) {
      __m512 xv = _mm512_maskz_loadu_ps(mask, x[i] + k);
      for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_fmadd_ps(wv[j], xv, acc[i][j]);
    }
  }
  for (int i = 0; i < MB; ++i) {
    if constexpr (NB == 4) {
      __m512 sums = _mm512_castps128_ps512(reduce4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
      store16(g, m0 + i, n0, sums, 0xF);
    } else {
      for (int j = 0; j < NB; ++j)
        store16(g, m0 + i, n0 + j, _mm512_set1_ps(_mm512_reduce_add_ps(acc[i][j])), 0x1);
    }
  }
}

template <int NB>
__attribute__((target("avx512f"))) void dotRows(const Args& g, int64_t n0) {
  int64_t m = 0;
  for (; m + 4 <= g.m; m += 4) dotBlock<4, NB>(g, m, n0);
  switch (g.m - m) {
    case 3: dotBlock<3, NB>(g, m, n0); break;
    case 2: dotBlock<2, NB>(g, m, n0); break;
    case 1: dotBlock<1, NB>(g, m, n0); break;
    default: break;
  }
}

/// Output columns [n0, n1) with b transposed; NB = 4 weight rows at a time.
__attribute__((target("avx512f"))) void dotColumns(const Args& g, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) dotRows<4>(g, n);
  for (; n < n1; ++n) dotRows<1>(g, n);
}

// b row-major (its element [k][n] at b[k * ldb + n]): a chunk of output
// columns accumulates in a buffer that stays in L1 while the chunk's slice of
// every row of b streams past once, four rows at a time (each row's slice is
// contiguous, so the prefetcher follows it; a tile that walked K rows of a
// few columns would touch a new page for every row of a wide b).
constexpr int64_t kAxpyChunk = 1024;  ///< most columns of a chunk: a page of each row of b
constexpr int64_t kAxpyBuffer = 8192;  ///< floats of the chunk's accumulators (32 KiB: L1)

/// Columns of a chunk for m rows: the accumulators fit the buffer.
inline int64_t axpyChunk(int64_t m) { return std::clamp<int64_t>(kAxpyBuffer / m / 16 * 16, 16, kAxpyChunk); }

template <int R>
__attribute__((target("avx512f"))) void axpyRows(const Args& g, int64_t k, int64_t c0, int64_t width, int64_t stride,
                                                 float* acc) {
  const float* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = g.b + (k + r) * g.ldb + c0;
  for (int64_t i = 0; i < g.m; ++i) {
    const float* x = g.a + i * g.lda + k;
    __m512 s[R];
    for (int r = 0; r < R; ++r) s[r] = _mm512_set1_ps(x[r]);
    float* out = acc + i * stride;
    int64_t c = 0;
    for (; c + 16 <= width; c += 16) {
      __m512 y = _mm512_load_ps(out + c);
      for (int r = 0; r < R; ++r) y = _mm512_fmadd_ps(_mm512_loadu_ps(rows[r] + c), s[r], y);
      _mm512_store_ps(out + c, y);
    }
    if (c < width) {
      __mmask16 mask = static_cast<__mmask16>((1u << (width - c)) - 1);
      __m512 y = _mm512_load_ps(out + c);
      for (int r = 0; r < R; ++r) y = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, rows[r] + c), s[r], y);
      _mm512_store_ps(out + c, y);
    }
  }
}

/// Output columns [n0, n1) with b row-major, in chunks of axpyChunk(m) columns.
__attribute__((target("avx512f"))) void axpyColumns(const Args& g, int64_t n0, int64_t n1) {
  alignas(64) float acc[std::max(kAxpyBuffer, kSkinnyMaxRows * 16)];
  const int64_t stride = axpyChunk(g.m);
  for (int64_t c0 = n0; c0 < n1; c0 += stride) {
    const int64_t width = std::min(stride, n1 - c0);
    const int64_t padded = (width + 15) / 16 * 16;
    for (int64_t i = 0; i < g.m; ++i) std::fill(acc + i * stride, acc + i * stride + padded, 0.0f);
    int64_t k = 0;
    for (; k + 4 <= g.k; k += 4) axpyRows<4>(g, k, c0, width, stride, acc);
    switch (g.k - k) {
      case 3: axpyRows<3>(g, k, c0, width, stride, acc); break;
      case 2: axpyRows<2>(g, k, c0, width, stride, acc); break;
      case 1: axpyRows<1>(g, k, c0, width, stride, acc); break;
      default: break;
    }
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t c = 0; c < width; c += 16) {
        const int64_t left = std::min<int64_t>(16, width - c);
        store16(g, i, c0 + c, _mm512_load_ps(acc + i * stride + c),
                static_cast<__mmask16>(left == 16 ? 0xFFFF : (1u << left) - 1));
      }
  }
}

bool plainCpuFloat(const at::Tensor& t) {
  static const c10::DispatchKeySet allowed = c10::DispatchKeySet({c10::DispatchKey::CPU}) | c10::autograd_dispatch_keyset |
                                             c10::DispatchKeySet({c10::DispatchKey::ADInplaceOrView, c10::DispatchKey::AutocastCPU});
  return t.defined() && t.layout() == at::kStrided && t.device().is_cpu() && t.scalar_type() == at::kFloat &&
         !t.is_conj() && !t.is_neg() && allowed.isSupersetOf(t.key_set());
}

bool recordsNothing(std::initializer_list<const at::Tensor*> ts) {
  if (c10::impl::TorchDispatchModeTLS::stack_len() > 0) return false;
  // Thread-local keys: only the ones every call has, and CPU autocast off (its key excluded).
  static const c10::DispatchKeySet usual({c10::DispatchKey::BackendSelect, c10::DispatchKey::ADInplaceOrView});
  const c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  if (!usual.isSupersetOf(tls.included_) || !tls.excluded_.has(c10::DispatchKey::AutocastCPU)) return false;
  if (!at::GradMode::is_enabled()) return true;
  for (const at::Tensor* t : ts)
    if (t->requires_grad()) return false;
  return true;
}

/// Whether the kernels beat ATen's GEMM on m rows of depth k (measured by
/// benchmarks/models/skinny_gemm.py, its --small and --kernel tables, one and
/// two threads): the dot kernel up to 4 rows at any depth, up to 32 at depth
/// >= 64 and up to 128 at depth >= 128 (below depth 64 its per-output
/// reductions cost more than ATen's GEMM once rows are many: 8 rows of depth
/// 32 against [2048, 32] take 1.4x ATen's time); the row-major kernel up to 16
/// rows (at 32 its chunks narrow to 256 columns and a wide b, an LM head,
/// streams slower than ATen).
bool skinnyShape(int64_t m, int64_t k, bool transposed) {
  if (!transposed) return m <= 16;
  return m <= 4 || (m <= 32 && k >= 64) || (m <= kSkinnyMaxRows && k >= 128);
}

/// Fills the operands' part of `g` and allocates y; false when the product is not one the kernels take.
bool bind(const at::Tensor& a, const at::Tensor& b, Args& g, bool& transposed) {
  if (!skinnyAvailable() || !plainCpuFloat(a) || !plainCpuFloat(b) || a.dim() != 2 || b.dim() != 2) return false;
  g.m = a.size(0);
  g.k = a.size(1);
  g.n = b.size(1);
  if (g.m < 1 || g.m > kSkinnyMaxRows || g.k < 1 || g.n < 1 || b.size(0) != g.k) return false;
  if (a.stride(1) != 1 && g.k > 1) return false;
  g.a = a.const_data_ptr<float>();
  g.lda = a.stride(0);
  if (b.stride(0) == 1 && (g.n == 1 || b.stride(1) >= g.k)) {
    transposed = true;
    g.ldb = b.stride(1);
  } else if (b.stride(1) == 1 && (g.k == 1 || b.stride(0) >= g.n)) {
    transposed = false;
    g.ldb = b.stride(0);
  } else {
    return false;
  }
  if (!skinnyShape(g.m, g.k, transposed)) return false;
  g.b = b.const_data_ptr<float>();
  return true;
}

at::Tensor run(Args& g, const at::Tensor& a, bool transposed) {
  at::Tensor y = at::empty({g.m, g.n}, a.options());
  g.y = y.mutable_data_ptr<float>();
  // Units of output columns, and how many make a chunk of at least 2^18
  // multiply-adds (a few microseconds: more than a fork and join of the pool).
  const int64_t unit = transposed ? 4 : 16;
  const int64_t units = (g.n + unit - 1) / unit;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / (g.m * g.k * unit));
  at::parallel_for(0, units, grain, [&](int64_t u0, int64_t u1) {
    int64_t n0 = u0 * unit, n1 = std::min(g.n, u1 * unit);
    if (transposed)
      dotColumns(g, n0, n1);
    else
      axpyColumns(g, n0, n1);
  });
  return y;
}

}  // namespace

bool skinnyAvailable() {
  // XACC_SKINNY_GEMM=0 keeps every product with ATen (for A/B runs), read once.
  static const bool yes = [] {
    const char* v = std::getenv(xacc::env::kSkinnyGemm);
    return __builtin_cpu_supports("avx512f") && !(v && std::string_view(v) == "0");
  }();
  return yes;
}

at::Tensor skinnyMm(const at::Tensor& a, const at::Tensor& b) {
  Args g{};
  bool transposed = false;
  if (!bind(a, b, g, transposed) || !recordsNothing({&a, &b})) return {};
  return run(g, a, transposed);
}

at::Tensor skinnyAddmm(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& beta,
                       const c10::Scalar& alpha) {
  Args g{};
  bool transposed = false;
  if (!bind(a, b, g, transposed) || !plainCpuFloat(bias) || !recordsNothing({&bias, &a, &b})) return {};
  // alpha 0: ATen's GEMM does not read a and b (an inf in them gives no NaN); keep its call.
  if (beta.isComplex() || alpha.isComplex() || bias.dim() > 2 || alpha.to<float>() == 0) return {};
  // bias broadcasts to [M, N] as ATen's addmm requires; anything else keeps ATen's error.
  int64_t bm = 1, bn = 1, sm = 0, sn = 0;
  if (bias.dim() == 2) {
    bm = bias.size(0);
    bn = bias.size(1);
    sm = bias.stride(0);
    sn = bias.stride(1);
  } else if (bias.dim() == 1) {
    bn = bias.size(0);
    sn = bias.stride(0);
  }
  if ((bm != 1 && bm != g.m) || (bn != 1 && bn != g.n)) return {};
  g.alpha = alpha.to<float>();
  g.beta = beta.to<float>();
  if (g.beta != 0) {
    g.bias = bias.const_data_ptr<float>();
    g.biasM = bm == 1 ? 0 : sm;
    g.biasN = bn == 1 ? 0 : sn;
  }
  return run(g, a, transposed);
}

}  // namespace xacc::backend::aten
