// Graph-break codes by name: see GraphBreaks.def. `GB::Name` is the typed name of
// a row; gbCode() gives its stable "GBnnn" spelling (what Failure::code, the
// Python host and explain() carry). Header-only: the translator, the bindings
// and tools read the table without linking anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xacc::capture {

/// One row of GraphBreaks.def.
enum class GB : uint8_t {
#define GRAPH_BREAK(Name, Code, Reason, Hint) Name,
#include "xacc/capture/GraphBreaks.def"
#undef GRAPH_BREAK
};

struct GraphBreakRow {
  GB id;
  const char* name;
  const char* code;
  const char* reason;
  const char* hint;
};

/// The table, in row order (kGraphBreaks[i].id == GB(i)).
inline constexpr GraphBreakRow kGraphBreaks[] = {
#define GRAPH_BREAK(Name, Code, Reason, Hint) {GB::Name, #Name, Code, Reason, Hint},
#include "xacc/capture/GraphBreaks.def"
#undef GRAPH_BREAK
};

constexpr const GraphBreakRow& graphBreak(GB g) { return kGraphBreaks[static_cast<size_t>(g)]; }

/// The stable code of `g`, e.g. "GB003".
constexpr const char* gbCode(GB g) { return graphBreak(g).code; }

/// The row whose code is `code`, if any.
constexpr std::optional<GB> gbFromCode(std::string_view code) {
  for (const GraphBreakRow& r : kGraphBreaks)
    if (code == r.code) return r.id;
  return std::nullopt;
}

/// A break code reported by the Python host (a GraphBreak's), or `fallback`
/// when the host gave none. A code outside the table is a host bug: Internal.
constexpr GB hostBreak(std::string_view code, GB fallback) {
  if (code.empty()) return fallback;
  return gbFromCode(code).value_or(GB::Internal);
}

}  // namespace xacc::capture
