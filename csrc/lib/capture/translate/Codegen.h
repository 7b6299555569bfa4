// Bytecode generation for graph breaks (CPython 3.11, 3.12 and 3.13: the
// differences are Note [Codegen versions] in CodegenImpl.h).
//
// Two kinds of code objects are made here:
//  * the *break function* of a frame: same argument slots as the frame; it
//    calls the prefix graph (a GraphFunction constant that reads its inputs
//    from the arguments), rebuilds the live locals and the value stack from
//    graph outputs, sources and constants, runs the unsupported instruction(s)
//    copied verbatim from the original code, then returns the resume
//    function with the locals and the stack, `(resume, locals..., stack...)`,
//    to the hook, which calls it (Note [Resume trampoline] in EvalFrameImpl.inc);
//  * the *resume function* for an offset of an original code object: its
//    arguments are all the original locals followed by the stack values; a
//    prologue pushes them back (NULLs where 3.11's call protocol had them),
//    deletes locals that were unbound, and jumps into an unchanged copy of the
//    original bytecode from the break on (Note [Resume code] in
//    CodegenResume.cpp). Jumps in 3.11/3.12 bytecode are relative, so the copy runs
//    as is; exception-table and line-table entries are cut and moved, and
//    closure-variable opargs shifted by the number of added locals.
// Resume functions re-enter the frame hook like any function; break functions
// are marked skip by the caller. Both carry the original's name, qualified
// name, file and lines, so tracebacks and frame introspection see the user's
// function; resumeOrigin() tells them apart.
#pragma once

#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "Translator.h"

namespace xacc::capture::translate {

/// What emission asks of the Python side.
class BreakHost {
public:
  virtual ~BreakHost() = default;
  /// Finishes the prefix graph with `outputs` and returns the callable that
  /// runs it from the frame's arguments, None when nothing was recorded, or
  /// null with an error.
  virtual PyRef finishGraph(const std::vector<int>& outputs) = 0;
  /// Entry constant `i` (borrowed).
  virtual PyObject* constAt(int i) = 0;
};

/// For a break function that runs a loop (Note [Loop bodies]), the byte
/// offset of its CALL of the loop body; else -1 (Note [Loop driver frames] in
/// EvalFrameImpl.inc).
int loopDriverCall(PyCodeObject* code);
/// A resume code object's original code and prologue length (bytes), or
/// null when `code` is not a resume function.
PyCodeObject* resumeOrigin(PyCodeObject* code, int* prologue);
/// The line of the original code where resume code `code` continues (0 when
/// unknown, or `code` is no resume code): how logs and explain name it.
int resumeLine(PyCodeObject* code);
/// Whether `code` is a loop body function made at a break inside a loop
/// (Note [Loop bodies] in Codegen.cpp).
bool isLoopBody(PyCodeObject* code);
/// Whether loop body `code` is one the hook runs as plain Python, never
/// captured (Note [Loops left to Python] in CodegenLoops.cpp).
bool loopBodyRunsAsPython(PyCodeObject* code);
/// The decoding of resume code `code`, copied from its original's cached one
/// past the prologue (Bytecode::derive), else decoded.
std::unique_ptr<Bytecode> decodeResume(PyCodeObject* code, std::string& error);
/// Records `code` as a resume function of `orig` (a resume code object read
/// back from an AOT artifact); no-op when it is one already.
void registerResume(PyCodeObject* code, PyCodeObject* orig, int prologue);

/// Emits the break function for the top frame stopped before `ins`. On
/// success returns the new function; else null with `fallback` set (the
/// frame cannot be split: it runs in Python), or with fallback.code "LOOP":
/// the break lies inside a loop that can be split at its header, the
/// instruction at fallback.offset (translate again, stopping there).
PyRef emitBreak(Translator& t, Frame& top, const Instr& ins, PyObject* func, BreakHost& host,
                Failure& fallback);

}  // namespace xacc::capture::translate
