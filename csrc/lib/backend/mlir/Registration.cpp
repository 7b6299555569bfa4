// Dialect, interface and pass registration for the kernels (see Registration.h).
// Only what the pipeline in Jit.cpp uses: no registerAllDialects, which would
// pull every dialect into the context and every header into this file.
#include "Registration.h"

#include <mutex>

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace xacc::backend::mlir {

void registerKernelDialects(::mlir::DialectRegistry& r) {
  namespace m = ::mlir;
  r.insert<m::affine::AffineDialect, m::arith::ArithDialect, m::bufferization::BufferizationDialect,
           m::cf::ControlFlowDialect, m::func::FuncDialect, m::index::IndexDialect, m::LLVM::LLVMDialect,
           m::linalg::LinalgDialect, m::math::MathDialect, m::memref::MemRefDialect, m::scf::SCFDialect,
           m::tensor::TensorDialect, m::ub::UBDialect>();
  m::arith::registerBufferizableOpInterfaceExternalModels(r);
  m::arith::registerBufferDeallocationOpInterfaceExternalModels(r);
  m::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(r);
  m::cf::registerBufferizableOpInterfaceExternalModels(r);
  m::cf::registerBufferDeallocationOpInterfaceExternalModels(r);
  m::linalg::registerBufferizableOpInterfaceExternalModels(r);
  m::memref::registerAllocationOpInterfaceExternalModels(r);
  m::scf::registerBufferizableOpInterfaceExternalModels(r);
  m::scf::registerBufferDeallocationOpInterfaceExternalModels(r);
  m::tensor::registerBufferizableOpInterfaceExternalModels(r);
}

void registerKernelPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::mlir::registerTransformsPasses();
    ::mlir::registerConversionPasses();
    ::mlir::registerLinalgPasses();
    ::mlir::bufferization::registerBufferizationPasses();
    ::mlir::bufferization::registerBufferizationPipelines();
    ::mlir::memref::registerMemRefPasses();
    ::mlir::arith::registerArithPasses();
    ::mlir::math::registerMathPasses();
  });
}

}  // namespace xacc::backend::mlir
