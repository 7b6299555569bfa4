// The core's diagnostic codes by name: see CoreDiags.def.
#pragma once

namespace xacc::support {

enum class CoreDiag {
#define DIAG(Name, Code, Summary) Name,
#include "xacc/support/CoreDiags.def"
#undef DIAG
};

/// The stable code of `d`, e.g. "E0101".
constexpr const char* coreCode(CoreDiag d) {
  switch (d) {
#define DIAG(Name, Code, Summary) \
  case CoreDiag::Name:            \
    return Code;
#include "xacc/support/CoreDiags.def"
#undef DIAG
  }
  return "";
}

}  // namespace xacc::support
