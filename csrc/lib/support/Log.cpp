// XACC_LOG parsing and channel lines; see Log.h for the grammar.
#include "xacc/support/Log.h"

#include "xacc/support/EnvNames.h"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace xacc::support {

namespace {

constexpr const char* kNames[] = {
#define LOG_CHANNEL(Name, Text) Text,
#include "xacc/support/LogChannels.def"
#undef LOG_CHANNEL
};
constexpr size_t kChannels = sizeof(kNames) / sizeof(kNames[0]);

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* logChannelName(LogChannel c) { return kNames[static_cast<size_t>(c)]; }

LogLevel logLevelIn(std::string_view spec, LogChannel c) {
  LogLevel level = LogLevel::Off;
  while (true) {
    size_t comma = spec.find(',');
    std::string_view item = trim(spec.substr(0, comma));
    if (!item.empty()) {
      LogLevel at = LogLevel::Info;
      if (item.front() == '+') {
        at = LogLevel::Debug;
        item.remove_prefix(1);
      }
      if ((item == "all" || item == logChannelName(c)) && at > level) level = at;
    }
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return level;
}

LogLevel logLevel(LogChannel c) {
  static const std::array<LogLevel, kChannels> levels = [] {
    std::array<LogLevel, kChannels> out{};
    const char* v = std::getenv(xacc::env::kLog);
    for (size_t i = 0; i < kChannels; ++i) out[i] = v ? logLevelIn(v, static_cast<LogChannel>(i)) : LogLevel::Off;
    return out;
  }();
  return levels[static_cast<size_t>(c)];
}

void logLine(LogChannel c, std::string_view line, LogLevel at) {
  if (logEnabled(c, at))
    std::fprintf(stderr, "[xacc:%s] %.*s\n", logChannelName(c), static_cast<int>(line.size()), line.data());
}

}  // namespace xacc::support
