// The `aten` executor: the ATen backend's `aten.*` op family and Camel's
// `tensor` module, loaded by `camel` when a program imports `tensor` (or with
// `camel run --executors aten`). It is the only part of `camel` that links libtorch.
#include "TensorModule.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/camel/Executor.h"

XACC_CAMEL_EXECUTOR(aten) {
  if (!xacc::backend::aten::isAtenAvailable()) {
    ctx->fail("libtorch's operator registry is empty");
    return false;
  }
  xacc::backend::aten::registerAtenOps();
  xacc::exec::aten::registerTensorModule();
  ctx->provideModule("tensor");
  return true;
}
