// XACC_LOG for C++: the one parser of the channel list and the line writer.
// The grammar is Python's (xacc/_src/config.py parse_log_spec, docs/logging.md):
// a comma list of channel names (LogChannels.def), `all` for every channel, a
// `+` prefix for debug level (`+name`, `+all`); whitespace around an item is
// ignored, unknown names are ignored here (Python rejects them when xacc is
// imported), and a channel named twice gets the more verbose level. C++ reads
// $XACC_LOG once per process.
#pragma once

#include <cstdint>
#include <string_view>

namespace xacc::support {

enum class LogChannel : uint8_t {
#define LOG_CHANNEL(Name, Text) Name,
#include "xacc/support/LogChannels.def"
#undef LOG_CHANNEL
};

enum class LogLevel : uint8_t { Off, Info, Debug };

/// The name users write for `c`, e.g. "mlir".
const char* logChannelName(LogChannel c);

/// The level of `c` under the XACC_LOG value `spec`.
LogLevel logLevelIn(std::string_view spec, LogChannel c);

/// The level of `c` under $XACC_LOG (read once per process).
LogLevel logLevel(LogChannel c);

/// Whether `c` reports at level `at` under $XACC_LOG.
inline bool logEnabled(LogChannel c, LogLevel at = LogLevel::Info) { return logLevel(c) >= at; }

/// Writes `[xacc:<name>] <line>` to stderr when `c` reports at level `at`.
void logLine(LogChannel c, std::string_view line, LogLevel at = LogLevel::Info);

}  // namespace xacc::support
