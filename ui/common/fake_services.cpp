#include "common/fake_services.h"

#include <chrono>
#include <cmath>
#include <thread>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"

namespace stagewise::ui {

static int64_t stepsFor(const engine::ExperimentSpec& spec, int64_t fallback) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  int64_t samples = spec.dataset.limitTrain;
  if (samples <= 0 && spec.dataset.kind == "synthetic") samples = spec.dataset.syntheticTrain;
  if (samples <= 0 && spec.dataset.kind == "fashion-mnist") samples = 60000;
  if (samples <= 0 && spec.dataset.kind == "cifar10") samples = 50000;
  if (samples <= 0) return fallback;
  const int64_t batch = std::max(1, spec.train.batchSize);
  return std::max<int64_t>(1, spec.train.epochs * ((samples + batch - 1) / batch));
}

EngineServices fakeEngineServices(const engine::FakeScript& script) {
  EngineServices services;
  services.engine.torchVersion = "none (fake engine)";
  services.engine.blas = "none";
  services.engine.devices = {"cpu"};
  services.engine.hardwareCores = int(std::max(1u, std::thread::hardware_concurrency()));
  services.engine.fake = true;
  services.createRun = [script](const engine::ExperimentSpec& spec, engine::RunObserver* observer) {
    engine::FakeScript s = script;
    s.steps = stepsFor(spec, script.steps);
    s.seed = spec.train.seed;
    if (spec.debug.failAtStep >= 0) {
      s.failAtStep = spec.debug.failAtStep;
      s.failStage = spec.debug.stage;
    }
    return engine::createFakeRun(spec, observer, s);
  };
  // "Measured" layer times, made up but deterministic: FLOPs, except that the last two layers
  // (small matrices that use the cores poorly) take three times what their FLOPs say, so the
  // measured balance differs from the FLOPs one. Delivered with progress like the real one.
  services.profileLayers = [](const engine::ExperimentSpec& spec,
                              const std::function<bool(int, int)>& progress) {
    engine::InputShape shape;
    try {
      shape = engine::probeInputShape(spec.dataset);
    } catch (const std::exception&) {
      shape.dims = {1, 28, 28};
      shape.numClasses = 10;
    }
    const auto plan = engine::planModel(spec.model, shape);
    const auto flops = engine::flopCosts(plan);
    std::vector<double> seconds;
    const int n = int(flops.size());
    for (int i = 0; i < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (progress && !progress(i + 1, n)) throw std::runtime_error("profiling cancelled");
      seconds.push_back(flops[size_t(i)] * 1e-9 * (i >= n - 2 ? 3.0 : 1.0));
    }
    return seconds;
  };
  return services;
}

}  // namespace stagewise::ui
