// A deterministic stand-in engine: the same Run / RunObserver contract as the LibTorch engine,
// with scripted numbers, so storage and UI tests run in milliseconds without LibTorch.

#include "stagewise/engine/fake_engine.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "metrics/reporter.h"
#include "runtime/run_change.h"
#include "runtime/run_control.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {
namespace {

using Clock = std::chrono::steady_clock;

class FakeRun final : public Run {
 public:
  FakeRun(const ExperimentSpec& spec, RunObserver* observer, const FakeScript& script)
      : m_spec(spec), m_script(script), m_reporter(observer, std::chrono::milliseconds(50)) {
    InputShape shape;
    try {
      shape = probeInputShape(spec.dataset);
    } catch (const std::exception&) {
      shape.dims = {1, 28, 28};  // the fake runs even where the dataset is not installed
      shape.numClasses = 10;
    }
    m_plan = planModel(spec.model, shape);
    auto problems = validateSpec(spec, static_cast<int>(m_plan.layers.size()), {"cpu"});
    if (!problems.empty()) throw SpecError(problems.front().field, problems.front().message);
    m_partition = makePartition(spec, m_plan);
    m_cuts = resolveCuts(spec, m_plan);
    m_stages = spec.mode == Mode::Backprop ? 1 : static_cast<int>(m_partition.stages.size());
    m_scheduled = script.changes;
  }

  /// A live re-partition asked for: the new stages from this step on, with the engine's event.
  void applyPendingCuts(int64_t step, RunSummary& summary) {
    std::lock_guard lock(m_changeMutex);
    if (!m_pendingCuts) return;
    const std::vector<int> before = std::exchange(m_cuts, *m_pendingCuts);
    m_pendingCuts.reset();
    ExperimentSpec next = m_spec;
    next.partition.cuts = m_cuts;
    next.partition.balance = "manual";
    m_partition = makePartition(next, m_plan);
    m_stages = static_cast<int>(m_partition.stages.size());
    summary.stages.resize(static_cast<size_t>(m_stages));
    std::vector<std::pair<int, int>> layers;
    for (const auto& st : m_partition.stages) layers.emplace_back(st.firstLayer, st.lastLayer);
    const std::string layout = stageLayoutText(layers);
    m_reporter.event({EventKind::Info, elapsed(), -1,
                      "repartition at step " + std::to_string(step) +
                          ": partition.cuts=" + cutsText(m_cuts) + " (was " + cutsText(before) +
                          "); pause 0.000000 s (fake engine); " + std::to_string(m_stages) +
                          " stage(s): " + layout});
    m_changes.push_back({step, "partition.cuts", cutsText(m_cuts), 0.0});
  }

  /// Stage settings asked for live or scheduled at `step`: applied before the step, with the
  /// engine's event (the fake's numbers do not depend on them).
  void applyStageChanges(int64_t step) {
    std::vector<RunChange> due;
    {
      std::lock_guard lock(m_changeMutex);
      for (auto it = m_scheduled.begin(); it != m_scheduled.end();)
        if (it->step == step && it->key == "partition.cuts") {
          if (!m_pendingCuts) m_pendingCuts = cutsFromText(it->value);
          it = m_scheduled.erase(it);
        } else if (it->step == step) {
          due.push_back(*it);
          it = m_scheduled.erase(it);
        } else {
          ++it;
        }
      for (RunChange& c : m_pendingStage) due.push_back(c);
      m_pendingStage.clear();
    }
    for (const RunChange& c : due) {
      int stage = 0;
      std::string setting;
      if (!splitStageKey(c.key, stage, setting)) continue;
      if (stage >= m_stages) {
        m_reporter.event({EventKind::Warning, elapsed(), -1,
                          changeEventMessage(step, c.key, c.value) + " refused: the run has " +
                              std::to_string(m_stages) + " stage(s) at that step"});
        continue;
      }
      std::string message = changeEventMessage(step, c.key, c.value);
      if (setting == "threads")
        message += "; another thread count may change the last bits of later losses";
      m_reporter.event({EventKind::Info, elapsed(), stage, message});
      std::lock_guard lock(m_changeMutex);
      m_changes.push_back({step, c.key, c.value, 0.0});
    }
  }

  ~FakeRun() override {
    m_control.requestStop();
    if (m_thread.joinable()) m_thread.join();
  }

  void start() override {
    if (m_thread.joinable()) return;
    m_control.setState(RunState::Running);
    m_start = Clock::now();
    m_thread = std::thread([this] { body(); });
  }
  void pause() override {
    if (m_control.state() != RunState::Running) return;  // not before the start or after the end
    m_control.pause();
    m_reporter.event({EventKind::Paused, elapsed(), -1, "paused"});
  }
  void resume() override {
    m_control.resume();
    m_reporter.event({EventKind::Resumed, elapsed(), -1, "resumed"});
  }
  void requestStop() override { m_control.requestStop(); }
  RunSummary wait() override {
    std::unique_lock lock(m_mutex);
    m_doneCv.wait(lock, [&] { return m_finished; });
    return m_summary;
  }
  bool waitFor(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(m_mutex);
    return m_doneCv.wait_for(lock, timeout, [&] { return m_finished; });
  }
  RunState state() const override { return m_control.state(); }

  /// As the engine: local mode only, valid cuts; applies at the next step with the same event.
  ChangeResult repartition(const std::vector<int>& cuts) override {
    auto refuse = [&](const std::string& why) {
      m_reporter.event({EventKind::Warning, elapsed(), -1,
                        "repartition to " + cutsText(cuts) + " refused: " + why});
      return ChangeResult{false, why};
    };
    if (m_spec.mode != Mode::Local)
      return refuse(toString(m_spec.mode) + " mode cannot re-partition while it trains");
    if (m_control.state() == RunState::Finished) return refuse("the run has finished");
    const auto problems = validateCuts(cuts, static_cast<int>(m_plan.layers.size()));
    if (!problems.empty()) return refuse(problems.front().message);
    std::lock_guard lock(m_changeMutex);
    if (m_pendingCuts) return refuse("another re-partition is under way; wait for its event");
    if (cuts == m_cuts) return refuse("the run is already cut at " + cutsText(cuts));
    m_pendingCuts = cuts;
    return {true, {}};
  }
  ChangeResult changeStage(int stage, const std::string& key, double value) override {
    auto refuse = [&](const std::string& why) {
      m_reporter.event(
          {EventKind::Warning, elapsed(), stage,
           "change of stages." + std::to_string(stage) + "." + key + " refused: " + why});
      return ChangeResult{false, why};
    };
    if (m_control.state() == RunState::Finished) return refuse("the run has finished");
    std::string text;
    try {
      text = stageValueText(key, value);
    } catch (const std::invalid_argument& e) {
      return refuse(e.what());
    }
    std::lock_guard lock(m_changeMutex);
    if (stage < 0 || stage >= m_stages)
      return refuse("the run has " + std::to_string(m_stages) +
                    " stage(s) now: stages.0 to stages." + std::to_string(m_stages - 1));
    m_pendingStage.push_back({-1, "stages." + std::to_string(stage) + "." + key, text, 0.0});
    return {true, {}};
  }
  /// Reports the pause as the engine does; the fake's stages do not really wait.
  ChangeResult pauseStage(int stage, bool paused) override {
    if (m_control.state() == RunState::Finished) {
      m_reporter.event({EventKind::Warning, elapsed(), stage,
                        std::string(paused ? "pausing " : "resuming ") + stageLabel(stage) +
                            " refused: the run has finished"});
      return {false, "the run has finished"};
    }
    std::lock_guard lock(m_changeMutex);
    if (stage < 0 || stage >= m_stages) return {false, "no such stage"};
    m_reporter.event(
        {EventKind::Info, elapsed(), stage, stagePauseMessage(stage, paused, m_step.load())});
    return {true, {}};
  }
  std::vector<RunChange> changes() const override {
    std::lock_guard lock(m_changeMutex);
    return m_changes;
  }
  Progress progress() const override {
    Progress p;
    p.step = m_step.load();
    p.totalSteps = m_script.steps;
    p.elapsedS = elapsed();
    p.pausedS = std::chrono::duration<double>(m_control.pausedFor()).count();
    if (p.step > 0) {
      p.samplesPerSec = p.step * m_spec.train.batchSize / std::max(1e-9, p.elapsedS);
      p.etaS = (p.totalSteps - p.step) * p.elapsedS / p.step;
    }
    return p;
  }

 private:
  /// Training time: paused time does not count, as in the real engine.
  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - m_start - m_control.pausedFor()).count();
  }

  RunInfo info() const {
    RunInfo info;
    info.name = m_spec.name;
    info.specJson = specToJson(m_spec);
    info.mode = m_spec.mode;
    info.layers = m_plan.layers;
    info.totalSteps = m_script.steps;
    info.batchSize = m_spec.train.batchSize;
    info.blas = "fake";
    info.torchVersion = "none (fake engine)";
    for (int k = 0; k < m_stages; ++k) {
      const auto& s = m_partition.stages[static_cast<size_t>(k)];
      StageInfo si;
      si.index = k;
      si.firstLayer = m_spec.mode == Mode::Backprop ? 0 : s.firstLayer;
      si.lastLayer =
          m_spec.mode == Mode::Backprop ? static_cast<int>(m_plan.layers.size()) - 1 : s.lastLayer;
      si.device = s.settings.device;
      si.auxHead = (s.isLast || m_spec.mode == Mode::Backprop) ? "classifier" : s.settings.auxHead;
      si.threads = s.settings.threads;
      si.params = m_spec.mode == Mode::Backprop ? m_plan.totalParams() : s.params;
      si.auxParams = s.auxParams;
      info.stages.push_back(si);
    }
    return info;
  }

  void body() {
    m_reporter.start(info());
    m_reporter.event({EventKind::Started, 0, -1,
                      toString(m_spec.mode) + " run started: " + std::to_string(m_stages) +
                          " stage(s), " + std::to_string(m_script.steps) +
                          " steps, BLAS fake (fake engine)"});
    // The spec's seed changes the numbers a little, as it would a real run's (seed 1: the
    // script's own), so a study's seeds give a spread.
    const uint64_t runSeed = m_spec.train.seed - 1;
    std::mt19937_64 rng(m_script.seed + runSeed * 0x9E3779B97F4A7C15ull);
    // The learning rate too (1e-3, the default: none), so a study's settings differ.
    const double seedOffset =
        0.004 * static_cast<double>(runSeed % 5) +
        (m_spec.train.lr > 0 ? std::clamp(0.01 * std::log10(m_spec.train.lr / 1e-3), -0.05, 0.05)
                             : 0.0);
    std::normal_distribution<double> noise(0.0, 0.02);
    RunSummary summary;
    summary.mode = m_spec.mode;
    summary.blas = "fake";
    summary.loadStart = m_script.loadStart;
    summary.loadEnd = m_script.loadEnd;
    summary.stages.resize(static_cast<size_t>(m_stages));
    std::vector<MetricPoint> batch;
    int64_t step = 0;
    for (; step < m_script.steps; ++step) {
      if (!m_control.waitIfPaused()) break;
      applyStageChanges(step);
      applyPendingCuts(step, summary);
      if (step == m_script.failAtStep) {
        summary.status = RunStatus::Failed;
        summary.failedStage = m_script.failStage;
        summary.error = "stage " + std::to_string(m_script.failStage) +
                        ": injected failure at step " + std::to_string(step) + " (fake engine)";
        m_reporter.event({EventKind::Failed, elapsed(), m_script.failStage, summary.error});
        break;
      }
      const auto stepTime = std::chrono::microseconds(std::llround(m_script.stepSeconds * 1e6));
      if (stepTime.count() > 0 && !m_control.sleepFor(stepTime)) break;
      const double t = elapsed();
      for (int k = 0; k < m_stages; ++k) {
        const double depth = 1.0 + 0.15 * k;
        const double loss =
            2.3 * std::exp(-static_cast<double>(step) / (60.0 * depth)) + 0.25 + noise(rng);
        const double acc = std::clamp(1.0 - loss / 2.6, 0.0, 1.0);
        batch.push_back({series::kLoss, k, -1, step, t, loss});
        batch.push_back({series::kAccuracy, k, -1, step, t, acc});
        batch.push_back({series::kQueueDepth, k, -1, step, t, static_cast<double>((step + k) % 3)});
        batch.push_back({series::kStaleness, k, -1, step, t,
                         k == 0 ? 0.0 : static_cast<double>(1 + (step % 2))});
        auto& ss = summary.stages[static_cast<size_t>(k)];
        ss.finalLoss = loss;
        ss.finalAccuracy = acc;
        ss.steps = step + 1;
        m_reporter.addSpan({k, step, t - m_script.stepSeconds * 0.8, t});
        if (step % 10 == 0) {
          const double compute = 0.85 - 0.05 * k;
          batch.push_back({series::kComputeFraction, k, -1, step, t, compute});
          batch.push_back({series::kWaitFraction, k, -1, step, t, (1 - compute) * 0.7});
          batch.push_back({series::kBlockedFraction, k, -1, step, t, (1 - compute) * 0.3});
          batch.push_back(
              {series::kStepsPerSec, k, -1, step, t, 1.0 / std::max(1e-6, m_script.stepSeconds)});
        }
        if (m_spec.mode == Mode::Local && m_spec.probe.interval > 0 &&
            step % m_spec.probe.interval == 0) {
          const bool last = k + 1 == m_stages;
          const double cosine = last ? 1.0 : 0.3 + 0.5 * std::exp(-step / 400.0) + 0.05 * k;
          batch.push_back({series::kGradCosine, k, -1, step, t, cosine});
          ss.gradCosine = cosine;
        }
      }
      batch.push_back({series::kSamplesPerSec, -1, -1, step, t,
                       m_spec.train.batchSize / std::max(1e-6, m_script.stepSeconds)});
      batch.push_back({series::kProgress, -1, -1, step, t, (step + 1.0) / m_script.steps});
      const bool forced = std::find(m_script.evalAtSteps.begin(), m_script.evalAtSteps.end(),
                                    step + 1) != m_script.evalAtSteps.end();
      if ((m_spec.eval.interval > 0 && step > 0 && step % m_spec.eval.interval == 0) || forced) {
        summary.testAccuracy =
            std::clamp(0.9 - 0.8 * std::exp(-step / 80.0) + seedOffset, 0.0, 1.0);
        summary.testLoss = 2.3 * std::exp(-step / 80.0) + 0.3;
        batch.push_back({series::kTestAccuracy, -1, -1, step, t, summary.testAccuracy});
        batch.push_back({series::kTestLoss, -1, -1, step, t, summary.testLoss});
        if (!m_script.samplePrompt.empty())
          m_reporter.event({EventKind::Info, t, -1,
                            sampleEventMessage(step, m_script.samplePrompt + " and so on, at " +
                                                         std::to_string(step))});
        if (m_spec.dataset.validation > 0) {
          // Held-out training samples: a little above the test curve, by the same settings.
          summary.valAccuracy = std::clamp(
              0.91 - 0.8 * std::exp(-step / 80.0) + seedOffset + 0.02 * m_spec.dataset.validation,
              0.0, 1.0);
          summary.valLoss = 2.3 * std::exp(-step / 80.0) + 0.28;
          batch.push_back({series::kValAccuracy, -1, -1, step, t, summary.valAccuracy});
          batch.push_back({series::kValLoss, -1, -1, step, t, summary.valLoss});
        }
      }
      m_reporter.add(batch);
      m_step.store(step + 1);
    }
    summary.steps = m_step.load();
    summary.samples = summary.steps * m_spec.train.batchSize;
    summary.wallSeconds = elapsed();
    summary.pausedSeconds = std::chrono::duration<double>(m_control.pausedFor()).count();
    summary.samplesPerSec = summary.samples / std::max(1e-9, summary.wallSeconds);
    for (int k = 0; k < m_stages; ++k) {
      auto& ss = summary.stages[static_cast<size_t>(k)];
      ss.index = k;
      ss.device = m_partition.stages[static_cast<size_t>(k)].settings.device;
      ss.firstLayer = m_partition.stages[static_cast<size_t>(k)].firstLayer;
      ss.lastLayer = m_partition.stages[static_cast<size_t>(k)].lastLayer;
      {
        const auto& st = m_partition.stages[static_cast<size_t>(k)];
        const bool whole = m_spec.mode == Mode::Backprop;
        ss.params = whole ? m_plan.totalParams() : st.params;
        ss.auxParams = whole || st.isLast ? 0 : st.auxParams;
        ss.auxHead = whole || st.isLast ? "classifier" : st.settings.auxHead;
        if (whole) ss.firstLayer = 0, ss.lastLayer = static_cast<int>(m_plan.layers.size()) - 1;
      }
      ss.computeFraction = 0.85 - 0.05 * k;
      ss.waitFraction = (1 - ss.computeFraction) * 0.7;
      ss.blockedFraction = (1 - ss.computeFraction) * 0.3;
    }
    {  // the same count as the engine's, for the stages the fake pretends to train
      for (double f : trainFlopsPerSample(methodStages(m_spec, m_plan, m_partition), m_plan,
                                          m_spec.mode == Mode::Local ? m_spec.local.overlap : 0))
        summary.trainFlops += static_cast<double>(summary.steps) * m_spec.train.batchSize * f;
    }
    if (summary.status != RunStatus::Failed) {
      summary.status = m_control.stopRequested() ? RunStatus::Stopped : RunStatus::Completed;
      m_reporter.event(
          {summary.status == RunStatus::Stopped ? EventKind::Stopped : EventKind::Completed,
           elapsed(), -1, toString(summary.status)});
    }
    m_reporter.finish(summary);
    m_control.setState(RunState::Finished);
    {
      std::lock_guard lock(m_mutex);
      m_summary = summary;
      m_finished = true;
    }
    m_doneCv.notify_all();
  }

  ExperimentSpec m_spec;
  FakeScript m_script;
  ModelPlan m_plan;
  PartitionPlan m_partition;
  int m_stages = 1;
  mutable std::mutex m_changeMutex;  ///< the cuts and the requests
  std::vector<int> m_cuts;
  std::optional<std::vector<int>> m_pendingCuts;
  std::vector<RunChange> m_pendingStage;  ///< live stage settings for the next step
  std::vector<RunChange> m_scheduled;     ///< the script's changes not made yet
  std::vector<RunChange> m_changes;
  Reporter m_reporter;
  RunControl m_control;
  Clock::time_point m_start = Clock::now();
  std::atomic<int64_t> m_step{0};
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::condition_variable m_doneCv;
  bool m_finished = false;
  RunSummary m_summary;
};

}  // namespace

std::unique_ptr<Run> createFakeRun(const ExperimentSpec& spec, RunObserver* observer,
                                   const FakeScript& script) {
  return std::make_unique<FakeRun>(spec, observer, script);
}

}  // namespace stagewise::engine
