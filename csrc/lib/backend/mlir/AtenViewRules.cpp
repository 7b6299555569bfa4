// Lowering rules for views and shape ops (permute, transpose, squeeze, view/
// reshape, expand, slice, select, ...) into kernel IR View nodes: affine index
// maps, no data movement; see AtenLowering.cpp for how arguments bind.
#include "AtenLoweringImpl.h"

namespace xacc::backend::mlir::lowering {

namespace {

/// permute: out dim i reads input dim perm[i].
int permute(Lowerer& L, int x, const std::vector<int64_t>& perm) {
  size_t r = L.shape(x).size();
  if (perm.size() != r) throw Failure{"permute: wrong number of dims"};
  std::vector<int64_t> shape(r);
  std::vector<AffineIndex> idx(r);
  for (size_t i = 0; i < r; ++i) {
    int p = normDim(perm[i], r);
    shape[i] = L.shape(x)[p];
    idx[p] = AffineIndex{static_cast<int>(i), 1, 0};
  }
  return L.view(x, shape, idx);
}

}  // namespace

/// reshape that only adds or removes size-1 dims (anything else falls back).
int reshape(Lowerer& L, int x, std::vector<int64_t> sizes) {
  const auto& s = L.shape(x);
  int64_t n = numelOf(s), known = 1;
  int infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) infer = static_cast<int>(i);
    else known *= sizes[i];
  }
  if (infer >= 0) sizes[infer] = known ? n / known : 0;
  if (numelOf(sizes) != n) throw Failure{"reshape: size mismatch"};
  std::vector<AffineIndex> idx;
  size_t o = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    if (s[j] == 1) {
      idx.push_back(AffineIndex{-1, 1, 0});
      continue;
    }
    while (o < sizes.size() && sizes[o] == 1) ++o;
    if (o >= sizes.size() || sizes[o] != s[j]) throw Failure{"reshape that splits or merges dims"};
    idx.push_back(AffineIndex{static_cast<int>(o++), 1, 0});
  }
  return L.view(x, sizes, idx);
}

int Lowerer::reshapeUnitDims(int x, std::vector<int64_t> sizes) { return reshape(*this, x, std::move(sizes)); }

void addViewRules(RuleTable& t) {
  // Views: index maps, no data movement.
  t["aten.permute.default"] = [](Lowerer& L, const Args& a) {
    return std::vector<int>{permute(L, a.value("self"), a.ints("dims"))};
  };
  t["aten.transpose.int"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    size_t r = L.shape(x).size();
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
    if (r > 0) std::swap(perm[normDim(int64_t(a.number("dim0", 0)), r)], perm[normDim(int64_t(a.number("dim1", 0)), r)]);
    return std::vector<int>{permute(L, x, perm)};
  };
  t["aten.t.default"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    if (L.shape(x).size() < 2) return std::vector<int>{x};
    return std::vector<int>{permute(L, x, {1, 0})};
  };
  t["aten.unsqueeze.default"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    auto s = L.shape(x);
    int d = normDim(int64_t(a.number("dim", 0)), s.size() + 1);
    s.insert(s.begin() + d, 1);
    return std::vector<int>{reshape(L, x, s)};
  };
  t["aten.squeeze.dim"] = t["aten.squeeze.dims"] = t["aten.squeeze.default"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    auto s = L.shape(x);
    std::vector<int> dims = reduceDims(a, "dim", s.size());
    std::vector<int64_t> out;
    for (size_t i = 0; i < s.size(); ++i)
      if (!(s[i] == 1 && std::find(dims.begin(), dims.end(), int(i)) != dims.end())) out.push_back(s[i]);
    return std::vector<int>{reshape(L, x, out)};
  };
  t["aten.view.default"] = t["aten.reshape.default"] = t["aten._unsafe_view.default"] =
      [](Lowerer& L, const Args& a) {
        // view/_unsafe_view name the sizes `size`, reshape names them `shape`.
        return std::vector<int>{reshape(L, a.value("self"), a.ints(a.present("shape") ? "shape" : "size"))};
      };
  // expand: size-1 dims (and new leading dims) repeat.
  t["aten.expand.default"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    auto s = L.shape(x);
    std::vector<int64_t> sizes = a.ints("size");
    if (sizes.size() < s.size()) throw Failure{"expand to fewer dims"};
    size_t lead = sizes.size() - s.size();
    std::vector<AffineIndex> idx;
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t& o = sizes[lead + j];
      if (o == -1) o = s[j];
      if (s[j] == o) idx.push_back(AffineIndex{static_cast<int>(lead + j), 1, 0});
      else if (s[j] == 1) idx.push_back(AffineIndex{-1, 1, 0});
      // At probe sizes, a literal size of the graph (a static graph's
      // expand to the traced sizes) keeps the input's dim: the generic
      // kernel is only ever used where instanceOf finds it equal to the
      // region's own kernel, which this rule does not change.
      else if (tProbe) o = s[j], idx.push_back(AffineIndex{static_cast<int>(lead + j), 1, 0});
      else throw Failure{"expand: size mismatch"};
    }
    return std::vector<int>{L.view(x, sizes, idx)};
  };
  // slice(dim, start, end, step): in = start + step * out
  t["aten.slice.Tensor"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    auto s = L.shape(x);
    int d = normDim(a.integer("dim", 0), s.size());
    int64_t n = s[d], step = a.integer("step", 1);
    int64_t start = a.present("start") ? a.integer("start", 0) : 0;
    int64_t end = a.present("end") ? a.integer("end", 0) : n;
    if (step <= 0) throw Failure{"slice step must be positive"};
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, start, n);
    std::vector<AffineIndex> idx;
    for (size_t j = 0; j < s.size(); ++j) idx.push_back(AffineIndex{static_cast<int>(j), 1, 0});
    idx[d] = AffineIndex{d, step, start};
    s[d] = (end - start + step - 1) / step;
    return std::vector<int>{L.view(x, s, idx)};
  };
  // select(dim, index): that dim reads a constant.
  t["aten.select.int"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    auto s = L.shape(x);
    int d = normDim(int64_t(a.number("dim", 0)), s.size());
    int64_t i = int64_t(a.number("index", 0));
    if (i < 0) i += s[d];
    if (i < 0 || i >= s[d]) throw Failure{"select: index out of range"};
    std::vector<AffineIndex> idx;
    std::vector<int64_t> out;
    int o = 0;
    for (size_t j = 0; j < s.size(); ++j) {
      if (int(j) == d) {
        idx.push_back(AffineIndex{-1, 1, i});
      } else {
        idx.push_back(AffineIndex{o++, 1, 0});
        out.push_back(s[j]);
      }
    }
    return std::vector<int>{L.view(x, out, idx)};
  };
}

}  // namespace xacc::backend::mlir::lowering
