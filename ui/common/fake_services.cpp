#include "common/fake_services.h"

#include <thread>

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
  return services;
}

}  // namespace stagewise::ui
