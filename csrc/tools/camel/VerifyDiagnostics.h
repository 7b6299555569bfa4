// Support for `camel check --verify-diagnostics` and `--split-input-file`,
// with the conventions of xacc-opt (and mlir-opt): comments
// `// expected-error[@+N|@-N|@N] {{text}}` (and `expected-warning`) state that
// a diagnostic of that severity whose "[CODE] message" contains `text` is
// reported on the given line; every reported error or warning must be
// expected. Chunks separated by `// -----` lines keep their line numbers.
#pragma once

#include <string>
#include <vector>

#include "xacc/support/Diagnostic.h"

namespace xacc::camel::tool {

/// Splits `text` at `// -----` lines; each chunk is padded with newlines so
/// that its lines keep their numbers in the whole file.
std::vector<std::string> splitInputFile(const std::string& text);

/// Compares the diagnostics with the expectations written in `text`. Returns
/// the problems as rendered lines ("file:line: error: ..."), empty when all
/// expectations hold.
std::string verifyDiagnostics(const std::string& fileName, const std::string& text,
                              const std::vector<support::Diagnostic>& diags);

}  // namespace xacc::camel::tool
