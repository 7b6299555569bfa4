// support/Log.h: the one XACC_LOG parser of the C++ side. Its grammar is the
// Python one (xacc/_src/config.py parse_log_spec): `+name` turns a channel on at
// debug level, which includes info level, so every C++ writer of that channel
// reports (two hand-written parsers once disagreed on `+mlir`).
#include "xacc/support/Log.h"

#include <gtest/gtest.h>

#include <string>

using xacc::support::LogChannel;
using xacc::support::logChannelName;
using xacc::support::LogLevel;
using xacc::support::logLevelIn;

TEST(LogChannels, NamesComeFromTheTable) {
  EXPECT_STREQ(logChannelName(LogChannel::Capture), "capture");
  EXPECT_STREQ(logChannelName(LogChannel::Mlir), "mlir");
  EXPECT_STREQ(logChannelName(LogChannel::Cache), "cache");
}

TEST(LogChannels, PlainNameIsInfo) {
  EXPECT_EQ(logLevelIn("mlir", LogChannel::Mlir), LogLevel::Info);
  EXPECT_EQ(logLevelIn("capture,mlir", LogChannel::Mlir), LogLevel::Info);
  EXPECT_EQ(logLevelIn("capture,mlir", LogChannel::Cache), LogLevel::Off);
  EXPECT_EQ(logLevelIn("", LogChannel::Mlir), LogLevel::Off);
}

TEST(LogChannels, PlusIsDebugAndIncludesInfo) {
  EXPECT_EQ(logLevelIn("+mlir", LogChannel::Mlir), LogLevel::Debug);
  EXPECT_GE(logLevelIn("+mlir", LogChannel::Mlir), LogLevel::Info);
  EXPECT_EQ(logLevelIn("+cache", LogChannel::Cache), LogLevel::Debug);
  EXPECT_EQ(logLevelIn("+mlir", LogChannel::Cache), LogLevel::Off);
}

TEST(LogChannels, AllAndPlusAll) {
  EXPECT_EQ(logLevelIn("all", LogChannel::Cache), LogLevel::Info);
  EXPECT_EQ(logLevelIn("+all", LogChannel::Mlir), LogLevel::Debug);
  EXPECT_EQ(logLevelIn("+all", LogChannel::Cache), LogLevel::Debug);
}

TEST(LogChannels, MostVerboseMentionWins) {
  EXPECT_EQ(logLevelIn("+mlir,mlir", LogChannel::Mlir), LogLevel::Debug);
  EXPECT_EQ(logLevelIn("mlir,+all", LogChannel::Mlir), LogLevel::Debug);
  EXPECT_EQ(logLevelIn("all,+mlir", LogChannel::Cache), LogLevel::Info);
}

TEST(LogChannels, WhitespaceAroundItemsAndEmptyItems) {
  EXPECT_EQ(logLevelIn(" capture , +mlir ", LogChannel::Mlir), LogLevel::Debug);
  EXPECT_EQ(logLevelIn(",,cache,", LogChannel::Cache), LogLevel::Info);
  // Only commas separate items, as in Python: "capture mlir" is one (unknown) name.
  EXPECT_EQ(logLevelIn("capture mlir", LogChannel::Mlir), LogLevel::Off);
}

TEST(LogChannels, NamesMatchWhole) {
  EXPECT_EQ(logLevelIn("mlirx,xmlir,ml", LogChannel::Mlir), LogLevel::Off);
  EXPECT_EQ(logLevelIn("++mlir", LogChannel::Mlir), LogLevel::Off);
  EXPECT_EQ(logLevelIn("MLIR", LogChannel::Mlir), LogLevel::Off);
}
