// The state the region builders share (Note [Captured control flow]):
// ctrl.if arms (TranslateControl.cpp) and ctrl.loop bodies
// (TranslateLoops.cpp) save and restore the translator's state around each
// region they trace. Private to those files.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "Translator.h"

namespace xacc::capture::translate {

inline constexpr int kMaxBranchDepth = 8;

/// Counts a region (a ctrl.if arm or a loop body) being traced for as long as
/// it lives: branchDepth_ limits nesting and refuses effects inside arms.
struct RegionDepth {
  explicit RegionDepth(int& d) : d_(d) { ++d_; }
  ~RegionDepth() { --d_; }
  RegionDepth(const RegionDepth&) = delete;
  RegionDepth& operator=(const RegionDepth&) = delete;

 private:
  int& d_;
};

/// The first instruction of a `while` loop's bottom, or 0 (Note [While
/// shapes] in TranslateLoops.cpp).
size_t whileBottom(const Bytecode* bc, size_t fallIp, size_t exitIp);

/// Appends the ints of a host list of value ids to `out`.
void appendIds(PyObject* list, std::vector<int>& out);

struct Translator::Snapshot {
  std::vector<VarRef> slots, stack;
  size_t ip = 0;
  bool grad = true;
  std::vector<std::pair<VarRef, Var>> heap;  ///< contents of every reachable tracker
  std::vector<std::pair<std::shared_ptr<GenFrame>, GenFrame::State>> gens;  ///< suspended generators
  PyRef binds;                               ///< the recorder's bindings (host.save_binds)
};

struct Translator::ArmEnd {
  bool returned = false;
  size_t ip = 0;
  VarRef result;
};

/// One ctrl.if being merged: the values each arm yields, and what to bind
/// to the results.
struct Translator::MergeCtx {
  PyObject* binds1 = nullptr;  ///< bindings at the end of the first arm
  PyObject* binds2 = nullptr;  ///< ... and of the second (current)
  std::vector<int> ids1, ids2;
  /// Per result: the tracker whose meta gets a fresh twin bound to it, or
  /// the meta rebound in place (an in-place op in an arm).
  std::vector<VarRef> fresh;
  std::vector<PyRef> rebind;
  std::string why;
};

}  // namespace xacc::capture::translate
