#include "common/fake_services.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"

namespace stagewise::ui {

namespace {

// The fake engine reports the gradient cosine per stage only; the real one also reports it per
// layer (layer >= 0, the model's layer index). So that the per-layer view can be shown and
// tested without LibTorch, the fake services add scripted per-layer points next to each
// per-stage one: the stage's value, a little lower for each layer further below its aux head.
class PerLayerCosines : public engine::RunObserver {
 public:
  explicit PerLayerCosines(engine::RunObserver* next) : m_next(next) {}
  void onStart(const engine::RunInfo& info) override {
    m_stages.clear();
    for (const auto& s : info.stages) m_stages.push_back({s.firstLayer, s.lastLayer});
    if (m_next) m_next->onStart(info);
  }
  void onMetrics(const std::vector<engine::MetricPoint>& points) override {
    std::vector<engine::MetricPoint> out;
    out.reserve(points.size());
    for (const auto& p : points) {
      out.push_back(p);
      if (p.name != engine::series::kGradCosine || p.layer >= 0 || p.stage < 0 ||
          size_t(p.stage) >= m_stages.size())
        continue;
      const auto [first, last] = m_stages[size_t(p.stage)];
      for (int layer = first; layer <= last; ++layer) {
        engine::MetricPoint q = p;
        q.layer = layer;
        q.value = std::clamp(p.value - 0.07 * (last - layer) + 0.01 * (layer % 3), -1.0, 1.0);
        out.push_back(q);
      }
    }
    if (m_next) m_next->onMetrics(out);
  }
  void onSpans(const std::vector<engine::StepSpan>& s) override {
    if (m_next) m_next->onSpans(s);
  }
  void onEvent(const engine::RunEvent& e) override {
    if (m_next) m_next->onEvent(e);
  }
  void onFinish(const engine::RunSummary& s) override {
    // The fake engine measures no bubble; the real one's summary has each stage's run-mean
    // bubble. Scripted ones, so that the window's end-of-run figures can be tested.
    engine::RunSummary out = s;
    if (out.mode != engine::Mode::Backprop)
      for (size_t k = 0; k < out.stages.size(); ++k) {
        auto& stage = out.stages[k];
        if (std::isnan(stage.bubblePlanned)) stage.bubblePlanned = 0.2 + 0.05 * double(k);
        if (std::isnan(stage.bubbleMeasured)) stage.bubbleMeasured = 0.3 + 0.05 * double(k);
      }
    if (m_next) m_next->onFinish(out);
  }

 private:
  engine::RunObserver* m_next;
  std::vector<std::pair<int, int>> m_stages;  // first and last layer of each stage
};

// A run that owns the observer standing between it and the caller's observer.
class ObservedRun : public engine::Run {
 public:
  ObservedRun(std::unique_ptr<PerLayerCosines> observer, std::unique_ptr<engine::Run> run)
      : m_observer(std::move(observer)), m_run(std::move(run)) {}
  void start() override { m_run->start(); }
  void pause() override { m_run->pause(); }
  void resume() override { m_run->resume(); }
  void requestStop() override { m_run->requestStop(); }
  engine::RunSummary wait() override { return m_run->wait(); }
  bool waitFor(std::chrono::milliseconds timeout) override { return m_run->waitFor(timeout); }
  engine::RunState state() const override { return m_run->state(); }
  engine::Progress progress() const override { return m_run->progress(); }
  engine::ChangeResult repartition(const std::vector<int>& cuts) override {
    return m_run->repartition(cuts);
  }
  engine::ChangeResult changeStage(int stage, const std::string& key, double value) override {
    return m_run->changeStage(stage, key, value);
  }
  engine::ChangeResult pauseStage(int stage, bool paused) override {
    return m_run->pauseStage(stage, paused);
  }
  std::vector<engine::RunChange> changes() const override { return m_run->changes(); }

 private:
  std::unique_ptr<PerLayerCosines> m_observer;  // declared first: outlives the run it watches
  std::unique_ptr<engine::Run> m_run;
};

}  // namespace

static int64_t stepsFor(const engine::ExperimentSpec& spec, int64_t fallback) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  int64_t samples = spec.dataset.limitTrain;
  if (samples <= 0 && spec.dataset.kind == "synthetic") samples = spec.dataset.syntheticTrain;
  if (samples <= 0 && spec.dataset.kind == "fashion-mnist") samples = 60000;
  if (samples <= 0 && spec.dataset.kind == "cifar10") samples = 50000;
  if (samples <= 0) return fallback;
  if (spec.dataset.validation > 0 && spec.dataset.validation <= 0.5)  // held out, as the engine
    samples -= engine::validationCount(samples, spec.dataset.validation);
  const int64_t batch = std::max(1, spec.train.batchSize);
  return std::max<int64_t>(1, spec.train.epochs * ((samples + batch - 1) / batch));
}

static std::unique_ptr<engine::Run> fakeRun(const engine::FakeScript& script,
                                            const engine::ExperimentSpec& spec,
                                            engine::RunObserver* observer,
                                            std::vector<int64_t> evalAtSteps,
                                            std::vector<engine::RunChange> changes = {},
                                            std::string samplePrompt = {}) {
  engine::FakeScript s = script;
  s.steps = stepsFor(spec, script.steps);
  s.seed = spec.train.seed;
  s.evalAtSteps = std::move(evalAtSteps);
  s.changes = std::move(changes);
  s.samplePrompt = std::move(samplePrompt);
  if (spec.debug.failAtStep >= 0) {
    s.failAtStep = spec.debug.failAtStep;
    s.failStage = spec.debug.stage;
  }
  auto perLayer = std::make_unique<PerLayerCosines>(observer);
  auto run = engine::createFakeRun(spec, perLayer.get(), s);
  return std::make_unique<ObservedRun>(std::move(perLayer), std::move(run));
}

EngineServices fakeEngineServices(const engine::FakeScript& script) {
  EngineServices services;
  services.engine.torchVersion = "none (fake engine)";
  services.engine.blas = "none";
  services.engine.openmpWait = "none";
  services.engine.devices = {"cpu"};
  services.engine.hardwareCores = int(std::max(1u, std::thread::hardware_concurrency()));
  services.engine.fake = true;
  services.createRun = [script](const engine::ExperimentSpec& spec, engine::RunObserver* observer) {
    return fakeRun(script, spec, observer, {});
  };
  // The fake evaluates at forced steps too (a search's rungs) and makes scheduled changes (a
  // replayed history); it has no checkpoints to resume.
  services.createRunWithOptions = [script](const engine::ExperimentSpec& spec,
                                           engine::RunObserver* observer,
                                           const engine::RunOptions& options) {
    if (!options.resumeFrom.empty())
      throw std::runtime_error("the fake engine cannot continue from a checkpoint");
    return fakeRun(script, spec, observer, options.evalAtSteps, options.changes,
                   options.sampleAtEvaluations.prompt);
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
  // A made-up method profile with fixed, round numbers (milliseconds per batch), so a test can
  // check the panel against engine::estimateMethods: each stage 2 ms of local step, 0.5 ms per
  // micro-batch (a third forward), 0.2 ms of update; backprop 6 ms; no handoff or contention.
  services.profileMethods = [](const engine::ExperimentSpec& spec,
                               const std::function<bool(int, int)>& progress) {
    const int stages = spec.stageCount();
    engine::MethodProfile p;
    p.batchSize = spec.train.batchSize;
    p.microBatches = spec.pipeline.microBatches > 0 ? spec.pipeline.microBatches : stages;
    for (int k = 0; k < stages; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (progress && !progress(k + 1, stages)) throw std::runtime_error("profiling cancelled");
      p.localStep.push_back(2e-3);
      p.pipelineMicro.push_back(0.5e-3);
      p.pipelineForward.push_back(0.5e-3 / 3);
      p.pipelineUpdate.push_back(0.2e-3);
    }
    p.backpropStep = 6e-3;
    return p;
  };
  return services;
}

}  // namespace stagewise::ui
