// Camel front-end diagnostics: the identifiers, stable codes, severities and
// message templates of CamelDiags.def, and a helper that reports one into a
// support::DiagnosticEngine with its arguments substituted. Message templates
// use `{}` placeholders filled in order; substitution never throws.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

enum class Diag : uint16_t {
#define DIAG(Name, Code, Severity, Message) Name,
#include "xacc/camel/CamelDiags.def"
  NumDiags
};

struct DiagInfo {
  const char* name;  ///< short name, e.g. "ExpectedExpression"
  const char* code;  ///< stable code, e.g. "E1101"
  support::Severity severity;
  const char* message;  ///< template with `{}` placeholders
};

const DiagInfo& diagInfo(Diag d);

/// Replaces each `{}` of `fmt` by the next argument (missing ones become empty).
std::string formatDiagMessage(std::string_view fmt, std::initializer_list<std::string_view> args);

/// Reports `d` at `loc` with the message template filled from `args`.
support::Diagnostic& report(support::DiagnosticEngine& engine, Diag d, support::SourceLoc loc,
                            std::initializer_list<std::string_view> args = {});

}  // namespace xacc::camel
