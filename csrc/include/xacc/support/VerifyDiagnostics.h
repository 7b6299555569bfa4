// Expectation comments for --verify-diagnostics (xacc-opt and `camel check`),
// with the conventions of mlir-opt: a comment
// `// expected-error[@+N|@-N|@N] {{text}}` (or `expected-warning`) states that a
// diagnostic of that severity whose "[CODE] message" contains `text` is
// reported on the given line (the comment's own line, N lines below or above
// it, or line N); every reported diagnostic of a checked severity must be
// expected. Several expectations may share a line. Files split at `// -----`
// lines keep their line numbers in every chunk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xacc/support/Diagnostic.h"

namespace xacc::support {

/// One `expected-...` comment.
struct ExpectedDiagnostic {
  Severity severity;
  uint32_t line;     ///< the line the diagnostic must be reported on
  std::string text;  ///< must occur in "[CODE] message"
};

/// The expectation comments of `text`, in order. Malformed comments (no
/// `{{...}}`, a line offset of more than six digits) are not expectations.
std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(const std::string& text);

/// Which severities a check covers. Notes are never checked.
struct VerifyDiagnosticsOptions {
  bool warnings = true;  ///< false: warnings and expected-warning comments are ignored
};

/// Compares `diags` with the expectations written in `text`. Returns the
/// problems as rendered lines ("file:line:col: error: unexpected error: [E..] msg",
/// "file:line: error: expected error \"text\" was not produced"), empty when
/// all expectations hold.
std::string verifyDiagnostics(const std::string& fileName, const std::string& text,
                              const std::vector<Diagnostic>& diags,
                              VerifyDiagnosticsOptions options = {});

/// Splits `text` at `// -----` lines; each chunk is padded with newlines so
/// that its lines keep their numbers in the whole file.
std::vector<std::string> splitInputFile(const std::string& text);

}  // namespace xacc::support
