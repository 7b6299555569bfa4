// The "cpu" backend: the ATen executor (backend/aten/AtenExecutable) behind the
// capture backend interface. See Backends.h and Note [Backend interface].
#ifdef XACC_CAPTURE_AVAILABLE

#include "Backends.h"

#include "xacc/backend/aten/AtenExecutable.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/capture/Backend.h"
#include "xacc/ir/Graph.h"

namespace xacc::python {

namespace {

namespace cap = xacc::capture;
namespace aten = xacc::backend::aten;

class AtenBackendExecutable : public cap::BackendExecutable {
public:
  explicit AtenBackendExecutable(std::unique_ptr<aten::AtenExecutable> exe) : exe_(std::move(exe)) {}
  bool run(std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs,
           std::string& error) const override {
    if (exe_->run(inputs, outputs, error)) return true;
    noteAtenFailure();
    return false;
  }

private:
  std::unique_ptr<aten::AtenExecutable> exe_;
};

}  // namespace

void noteAtenFailure() {
  std::string error;
  std::exception_ptr e = aten::takeOpError(error);
  if (e) cap::noteRunFailure(std::move(e), std::move(error));
}

void registerAtenBackend() {
  cap::Backend b;
  b.target = "cpu";
  b.name = "aten";
  b.description = "the ATen executor: each op one boxed call through the c10 dispatcher";
  b.prepare = [](const ir::Graph& g, const std::string&, const cap::BackendOptions&,
                 std::string& error) -> std::unique_ptr<cap::BackendExecutable> {
    std::unique_ptr<aten::AtenExecutable> exe = aten::AtenExecutable::create(g, error);
    if (!exe) return nullptr;
    return std::make_unique<AtenBackendExecutable>(std::move(exe));
  };
  cap::registerBackend(std::move(b));
}

}  // namespace xacc::python

#endif  // XACC_CAPTURE_AVAILABLE
