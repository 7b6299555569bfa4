// The Camel diagnostic table (generated from CamelDiags.def) and the reporting
// helper. See CamelDiag.h.
#include "xacc/camel/CamelDiag.h"

namespace xacc::camel {

namespace {
using support::Severity;
constexpr DiagInfo kDiags[] = {
#define DIAG(Name, Code, Sev, Message) {#Name, Code, Severity::Sev, Message},
#include "xacc/camel/CamelDiags.def"
};
static_assert(sizeof(kDiags) / sizeof(kDiags[0]) == size_t(Diag::NumDiags));
}  // namespace

const DiagInfo& diagInfo(Diag d) { return kDiags[size_t(d)]; }

std::string formatDiagMessage(std::string_view fmt, std::initializer_list<std::string_view> args) {
  std::string out;
  out.reserve(fmt.size() + 32);
  auto arg = args.begin();
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      if (arg != args.end()) out += *arg++;
      ++i;
    } else {
      out += fmt[i];
    }
  }
  return out;
}

support::Diagnostic& report(support::DiagnosticEngine& engine, Diag d, support::SourceLoc loc,
                            std::initializer_list<std::string_view> args) {
  const DiagInfo& info = diagInfo(d);
  return engine.report(info.severity, info.code, loc, formatDiagMessage(info.message, args));
}

}  // namespace xacc::camel
