// Note [Test fault injection]: XACC_TEST_FAULT_OP=<op name> (declared with the
// other environment variables in xacc/_src/config.py) makes every node of that
// op return its first result plus one, on the ATen executor and in MLIR kernels
// alike. It exists only so that tests can check that `xacc.debug.compare` names
// the first divergent node. Read when a graph is prepared or a kernel lowered,
// never on the per-call path.
#pragma once

#include <cstdlib>
#include <string>
#include "xacc/support/EnvNames.h"

namespace xacc::support {

/// The op name XACC_TEST_FAULT_OP asks to corrupt, or "" when unset.
inline std::string testFaultOp() {
  const char* v = std::getenv(xacc::env::kTestFaultOp);
  return v ? std::string(v) : std::string();
}

}  // namespace xacc::support
