// The PEP 523 frame hook (CPython 3.11): installation, the thread-local capture
// state and the per-code cache. The implementation (EvalFrame311.cpp) is the
// only file in xacc that touches CPython internals.
//
// Note [Capture state]: each thread is Off (frames run untouched), RunOnly
// (cached entries run, nothing new is compiled) or Compile (a cache miss calls
// the compile callback). The hook switches the thread to Off while the
// callback runs, so the translator's own Python code and meta-tensor calls are
// never captured, and restores the previous state afterwards. A compiled graph
// runs Off as well (CompiledGraph::run, callRunner): Python that its ops call
// (a custom op's kernel, Note [Custom operators as nodes]) runs as in eager.
#pragma once

#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "xacc/capture/CacheEntry.h"

namespace xacc::capture {

enum class CaptureState : int { Off = 0, RunOnly = 1, Compile = 2 };

/// Installs the hook for this interpreter (idempotent).
void installHook();
/// Restores the previous evaluator (idempotent).
void uninstallHook();
bool hookInstalled();

/// The calling thread's state; returns the previous one.
CaptureState setState(CaptureState s);
CaptureState state();

/// The compile callback: `cb(func, args_tuple, failures)`, where `failures` is
/// a list of "guard that failed" strings, one per existing entry. It installs
/// entries with addEntry()/markSkip() itself. When it returns an exception
/// instance the frame raises it instead of running (fullgraph=True); any
/// other return value is ignored and exceptions it raises are swallowed
/// (the frame then runs normally).
void setCallback(PyObject* cb);  ///< borrowed; retained

/// Prepends `entry` to `code`'s cache (MRU first).
void addEntry(PyCodeObject* code, std::shared_ptr<CacheEntry> entry);
/// Frames of `code` always run untouched.
void markSkip(PyCodeObject* code);
/// Frames of `code` only run existing entries (recompile limit reached).
void markRunOnly(PyCodeObject* code);
/// Drops every entry and flag of `code` / of every code object.
void clearCode(PyCodeObject* code);
void clearAll();
std::vector<std::shared_ptr<CacheEntry>> entries(PyCodeObject* code);
/// Whether `code` is marked skip (1), run-only (2), or neither (0).
int codeAction(PyCodeObject* code);

/// The globals, builtins and closure (a tuple of cells, or null) of the Python
/// frame running on this thread, borrowed; false when none runs. A
/// GraphFunction reads its sources' roots from its caller's frame with it
/// (Note [Generated code holds no globals] in translate/CodegenImpl.h).
bool runningFrameScope(PyObject*& globals, PyObject*& builtins, PyObject*& closure);

void setRecompileLimit(int n);
int recompileLimit();

struct HookStats {
  uint64_t frames = 0, hits = 0, misses = 0, compiles = 0, fallbacks = 0;
};
HookStats hookStats();
void resetHookStats();

}  // namespace xacc::capture
