// The LibTorch run: builds the stages, starts the loader, stage and analysis threads, watches
// them from a supervisor thread and reports through the Reporter.

#include <sys/resource.h>

#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "data/tensor_data.h"
#include "dist/c10d_topology.h"
#include "model/layer_plan.h"
#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "probe/probe.h"
#include "probe/sample.h"
#include "runtime/checkpoint_io.h"
#include "runtime/error_text.h"
#include "runtime/measure_budget.h"
#include "runtime/memory_meter.h"
#include "runtime/method.h"
#include "runtime/run_change.h"
#include "runtime/run_context.h"
#include "runtime/run_summary.h"
#include "runtime/snapshot.h"
#include "runtime/stage_worker.h"
#include "runtime/thread_setup.h"
#include "runtime/topology.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/memory_need.h"
#include "stagewise/engine/observer_fanout.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::engine {

std::vector<torch::Tensor> StageModules::bodyParams() const {
  return parametersOf(layers);
}
std::vector<torch::Tensor> StageModules::auxParams() const {
  return aux ? aux->parameters() : std::vector<torch::Tensor>{};
}
std::vector<torch::Tensor> StageModules::bodyState() const {
  return stateOf(layers);
}
std::vector<torch::Tensor> StageModules::auxState() const {
  return aux ? stateOf({aux}) : std::vector<torch::Tensor>{};
}
void StageModules::setTraining(bool on) {
  for (auto& l : layers) l->train(on);
  if (aux) aux->train(on);
}

void RunContext::fail(int stage, const std::string& message) {
  {
    std::lock_guard lock(failureMutex);
    if (!error.empty()) return;  // the first failure is the cause; the rest are its echoes
    error = message;
    failedStage = stage;
  }
  reporter.event({EventKind::Failed, now(), stage, message});
  if (onFailure) onFailure(stage, message);
  stopAll();
}

void RunContext::stopAll() {
  control.requestStop();
  std::lock_guard lock(channelMutex);
  for (auto& c : channels) c->close(/*drop=*/true);
  for (auto& c : gradChannels) c->close(/*drop=*/true);
  if (normBarrier) normBarrier->close();
  if (snapshots) snapshots->close(/*drop=*/true);
  if (abortTransfers) abortTransfers();
}

namespace {

/// Runs a scope with a fixed intra-op thread count on the calling thread, then restores it. The
/// dataset's normalisation reduces over the whole set, and a parallel reduction's result depends
/// on how many threads split it: without this, a run built on a thread that had inherited another
/// count (LibTorch's per-thread lazy init copies the last count any thread set) trained on
/// slightly different data than a fresh process.
class FixedIntraOpThreads {
 public:
  explicit FixedIntraOpThreads(int n) : m_saved(at::get_num_threads()) { at::set_num_threads(n); }
  ~FixedIntraOpThreads() { at::set_num_threads(m_saved); }
  FixedIntraOpThreads(const FixedIntraOpThreads&) = delete;
  FixedIntraOpThreads& operator=(const FixedIntraOpThreads&) = delete;

 private:
  int m_saved;
};

class TorchRun final : public Run {
 public:
  /// The modules an analysis thread measures with: copies of the stages' modules, laid out as
  /// the partition was when the thread started. A re-partition gives the next thread a new set,
  /// while the last one finishes its queue on its own (docs/architecture.md, "Live re-partition").
  struct ShadowSet {
    std::vector<StageModules> stages;
    std::vector<bool> isLast;
    std::vector<int> firstLayer;  ///< each stage's first layer, for the per-layer points
  };

  TorchRun(const ExperimentSpec& spec, RunObserver* observer, const RunOptions& options)
      : m_spec(spec), m_reporter(&m_fanout), m_ctx(m_spec, m_reporter) {
    m_fanout.add(observer);
    FixedIntraOpThreads deterministicBuild(1);  // the data and model are the same on any thread
    m_info = engineInfo();
    for (int64_t n : options.evalAtSteps)
      if (n >= 1) m_forcedEvals.insert(n - 1);  // an evaluation after step s is at s + 1 steps
    m_sampleAtEvals = options.sampleAtEvaluations;
    // Validate what needs no data first, so a typo does not wait for a dataset load.
    // Loading notes (an image folder's decoding progress and ETA) go straight to the observers:
    // the Reporter's thread starts later, and until then this is the only thread calling them.
    m_data = loadTensorData(spec.dataset, spec.train.seed, [this](const std::string& m, bool w) {
      m_fanout.onEvent({w ? EventKind::Warning : EventKind::Info, 0.0, -1, m});
    });
    m_plan = planModel(spec.model, m_data.shape);
    auto problems = validateSpec(spec, static_cast<int>(m_plan.layers.size()), m_info.devices);
    if (!problems.empty()) throw SpecError(problems.front().field, problems.front().message);
    problems = validatePartition(spec, m_plan);
    if (!problems.empty()) throw SpecError(problems.front().field, problems.front().message);
    m_partition = makePartition(spec, m_plan);
    m_cuts = resolveCuts(spec, m_plan);
    m_currentSpec = m_spec;
    m_distributed = options.dist.enabled();
    m_method = makeMethod(m_spec);
    checkMemory();
    buildStages();
    checkBatchNormRows();
    if (memory::install()) {  // each stage's memory, counted by the allocator
      m_memory.first = memory::acquire(static_cast<int>(m_stages.size()));
      m_memory.count = static_cast<int>(m_stages.size());
      if (m_memory.first >= 0)
        for (size_t k = 0; k < m_stages.size(); ++k)
          m_stages[k]->memorySlot = m_memory.first + static_cast<int>(k);
    }
    for (const auto& stage : m_stages)  // CUDA stages: the caching allocator's window opens here
      memory::startDeviceWindow(stage->plan.settings.device);
    if (options.dist.enabled())
      m_topology = std::make_unique<dist::C10dTopology>(options, m_plan, m_ctx, m_fanout, m_stages);
    else
      m_topology = std::make_unique<InProcessTopology>();
    if (!options.resumeFrom.empty()) resumeFrom(options.resumeFrom);
    scheduleChanges(options.changes);
    m_ctx.onSettingChange = [this](int k, int64_t step, const std::string& setting, double value) {
      recordSetting(k, step, setting, value);
    };
    if (spec.checkpoint.enabled()) {
      m_checkpointDir =
          spec.checkpoint.dir.empty() ? defaultCheckpointDir(spec.name) : spec.checkpoint.dir;
      m_ctx.checkpointInterval = spec.checkpoint.interval;
      m_ctx.checkpoint = [this](int64_t step) { saveAt(step); };
    }
  }

  /// A model too large for the memory this process may use is refused before LibTorch tries
  /// to allocate it (docs/reliability.md). STAGEWISE_MEMORY_CHECK=0 skips the check.
  void checkMemory() const {
    if (const char* v = std::getenv("STAGEWISE_MEMORY_CHECK"); v && std::string(v) == "0") return;
    // Host memory only: a stage on a GPU keeps its weights and activations there.
    for (const auto& st : m_partition.stages)
      if (st.settings.device != "cpu") return;
    const std::string problem =
        memoryProblem(estimateMemoryNeed(m_spec, m_plan), availableMemory(), m_spec.model.kind);
    if (!problem.empty()) throw std::runtime_error(problem);
  }

  ~TorchRun() override {
    m_ctx.stopAll();
    if (m_supervisor.joinable()) m_supervisor.join();
    m_ctx.channels.clear();  // their receiving threads end before the process group goes
    m_ctx.gradChannels.clear();
    if (m_topology) m_topology->shutdown();
    m_ctx.abortTransfers = nullptr;
    m_ctx.onFailure = nullptr;
  }

  void start() override {
    std::lock_guard lock(m_mutex);
    if (m_supervisor.joinable()) return;
    m_ctx.control.setState(RunState::Running);
    m_supervisor = std::thread([this] { supervise(); });
  }
  void pause() override {
    std::lock_guard lock(m_clockMutex);
    if (m_ctx.control.state() != RunState::Running) return;
    // Before the run's clock starts (the supervisor is still starting, or other processes
    // join) nothing trains: the pause takes effect when the clock starts, so the time before
    // it is not counted as paused time that would then be taken off the clock.
    if (!m_clockStarted) {
      m_pauseEarly = true;
      return;
    }
    m_ctx.control.pause();
    m_reporter.event({EventKind::Paused, m_ctx.now(), -1, "paused"});
  }
  void resume() override {
    std::lock_guard lock(m_clockMutex);
    if (!m_clockStarted && m_pauseEarly) {
      m_pauseEarly = false;
      return;
    }
    if (m_ctx.control.state() != RunState::Paused) return;
    m_ctx.control.resume();
    m_reporter.event({EventKind::Resumed, m_ctx.now(), -1, "resumed"});
  }
  void requestStop() override {
    if (m_topology) m_topology->requestStop();
    if (m_ctx.control.stopRequested()) return;
    const bool again = m_ctx.userStop.exchange(true);
    if (again) {  // a second stop while draining: stop now
      m_reporter.event({EventKind::StopRequested, m_ctx.now(), -1,
                        "stop requested again: stopping without a checkpoint"});
      m_drainFailed = true;
      m_ctx.stopAll();
      return;
    }
    if (m_spec.checkpoint.enabled() && m_spec.checkpoint.atStop &&
        m_ctx.control.state() != RunState::Created) {
      // Finish what is queued so every stage ends at the same step, then checkpoint there.
      m_reporter.event({EventKind::StopRequested, m_ctx.now(), -1,
                        "stop requested: draining the pipeline for a checkpoint"});
      m_drainSince.store(m_ctx.now());
      m_ctx.drain.store(true);
      m_ctx.control.resume();
      return;
    }
    m_reporter.event({EventKind::StopRequested, m_ctx.now(), -1, "stop requested"});
    m_ctx.stopAll();
  }
  RunSummary wait() override {
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_finished; });
    return m_summary;
  }
  bool waitFor(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(m_mutex);
    return m_done.wait_for(lock, timeout, [&] { return m_finished; });
  }
  RunState state() const override { return m_ctx.control.state(); }
  ChangeResult repartition(const std::vector<int>& cuts) override {
    auto refuse = [&](const std::string& why) {
      m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                        "repartition to " + cutsText(cuts) + " refused: " + why});
      return ChangeResult{false, why};
    };
    std::lock_guard lock(m_changeMutex);  // the partition is not rebuilt meanwhile
    if (const std::string why = cannotRepartition(); !why.empty()) return refuse(why);
    if (const std::string why = ended(); !why.empty()) return refuse(why);
    const auto problems = validateCuts(cuts, static_cast<int>(m_plan.layers.size()));
    if (!problems.empty()) return refuse(problems.front().message);
    if (m_liveCuts)
      return refuse("another re-partition (to " + cutsText(*m_liveCuts) +
                    ") is under way; wait for its event");
    for (const auto& st : m_stages)
      if (st->held.load())
        return refuse(stageLabel(st->plan.index) +
                      " is paused and could not drain; resume it first");
    if (cuts == m_cuts) return refuse("the run is already cut at " + cutsText(cuts));
    m_liveCuts = cuts;
    m_ctx.stopAt.store(0);  // the loader stops before the next step it would send
    return {true, {}};
  }

  ChangeResult changeStage(int stage, const std::string& key, double value) override {
    auto refuse = [&](const std::string& why) {
      m_reporter.event(
          {EventKind::Warning, m_ctx.now(), stage,
           "change of stages." + std::to_string(stage) + "." + key + " refused: " + why});
      return ChangeResult{false, why};
    };
    if (m_distributed)
      return refuse("a run spread over several processes cannot change its stages yet");
    if (const std::string why = ended(); !why.empty()) return refuse(why);
    try {
      stageValueText(key, value);
    } catch (const std::invalid_argument& e) {
      return refuse(e.what());
    }
    std::lock_guard lock(m_changeMutex);
    if (stage < 0 || stage >= static_cast<int>(m_stages.size()))
      return refuse("the run has " + std::to_string(m_stages.size()) +
                    " stage(s) now: stages.0 to stages." + std::to_string(m_stages.size() - 1));
    StageRuntime& st = *m_stages[static_cast<size_t>(stage)];
    std::lock_guard stageLock(st.changeMutex);
    st.pendingChanges.push_back({-1, key, value});
    return {true, {}};
  }

  ChangeResult pauseStage(int stage, bool paused) override {
    auto refuse = [&](const std::string& why) {
      m_reporter.event({EventKind::Warning, m_ctx.now(), stage,
                        std::string(paused ? "pausing " : "resuming ") + stageLabel(stage) +
                            " refused: " + why});
      return ChangeResult{false, why};
    };
    if (m_distributed)
      return refuse("a run spread over several processes cannot pause one stage yet");
    if (const std::string why = ended(); !why.empty()) return refuse(why);
    std::lock_guard lock(m_changeMutex);
    if (stage < 0 || stage >= static_cast<int>(m_stages.size()))
      return refuse("the run has " + std::to_string(m_stages.size()) + " stage(s) now");
    if (paused && (m_liveCuts || m_ctx.drain.load()))
      return refuse("the pipeline is draining; pause the stage once it has gone on");
    StageRuntime& st = *m_stages[static_cast<size_t>(stage)];
    const int64_t done = m_ctx.produced[static_cast<size_t>(stage) + 1].load();
    if (paused && done >= m_ctx.totalSteps)
      return refuse(stageLabel(stage) + " has finished its " + std::to_string(done) + " steps");
    if (st.held.exchange(paused) != paused)
      m_reporter.event(
          {EventKind::Info, m_ctx.now(), stage, stagePauseMessage(stage, paused, done)});
    return {true, {}};
  }

  SampleResult sample(const SampleRequest& request) override {
    if (!m_data.shape.sequence)
      return {false, {}, "only a language model (model.kind gpt) generates text"};
    if (state() != RunState::Finished || m_distributed)
      return {false, {}, "the run must have finished, in one process"};
    try {
      loadShadowFromLive();
      return {
          true,
          validUtf8(generateBytes(m_shadow->stages, request.prompt, request.length,
                                  request.temperature, m_spec.train.seed, m_spec.dataset.context)),
          {}};
    } catch (const std::exception& e) {
      return {false, {}, errorText(e)};
    }
  }

  std::vector<RunChange> changes() const override {
    std::lock_guard lock(m_appliedMutex);
    return m_applied;
  }

  Progress progress() const override {
    Progress p;
    p.step = m_ctx.lastStageSteps.load();
    p.totalSteps = m_ctx.totalSteps;
    p.elapsedS = m_ctx.now();
    p.pausedS = std::chrono::duration<double>(m_ctx.control.pausedFor()).count();
    p.samplesPerSec =
        m_topology->ownsLast() ? samplesPerSec(p.elapsedS) : m_topology->remoteSamplesPerSec();
    if (p.step > 0) {
      const double perStep =
          p.samplesPerSec > 0 ? m_ctx.batchSize / p.samplesPerSec : p.elapsedS / p.step;
      p.etaS = static_cast<double>(p.totalSteps - p.step) * perStep;
    }
    return p;
  }

 private:
  /// Why this run cannot move its cuts at all (empty: it can).
  std::string cannotRepartition() const {
    if (m_spec.mode != Mode::Local)
      return toString(m_spec.mode) +
             " mode cannot re-partition while it trains: only local mode's stages are "
             "independent enough to move layers between them";
    if (m_spec.local.overlap > 0)
      return "local.overlap is " + std::to_string(m_spec.local.overlap) +
             ": the gradients in flight between the stages would cross the new cuts; set it to "
             "0 to re-partition";
    if (m_distributed) return "a run spread over several processes cannot re-partition yet";
    for (const auto& st : m_partition.stages)
      if (st.settings.device != m_partition.stages.front().settings.device)
        return "the stages run on different devices; moving layers between devices is not "
               "supported yet";
    return {};
  }
  /// Why the run takes no more changes (empty: it does).
  std::string ended() const {
    if (m_ctx.control.state() == RunState::Finished) return "the run has finished";
    if (m_ctx.control.stopRequested() || m_ctx.userStop.load() || m_ctx.drain.load())
      return "the run is stopping";
    return {};
  }

  /// options.changes: checked now (re-partitions need a run that can make them, and valid cuts),
  /// kept in step order; those before a resumed run's start happened before its checkpoint.
  void scheduleChanges(const std::vector<RunChange>& changes) {
    for (const RunChange& c : changes) {
      if (c.step < 0) throw SpecError("change", "a scheduled change needs a step of 0 or more");
      if (m_distributed)
        throw SpecError("change", "a run spread over several processes cannot take changes yet");
      int stage = 0;
      std::string setting;
      if (c.key == "partition.cuts") {
        if (const std::string why = cannotRepartition(); !why.empty())
          throw SpecError("change",
                          "partition.cuts at step " + std::to_string(c.step) + ": " + why);
        std::vector<int> cuts;
        try {
          cuts = cutsFromText(c.value);
        } catch (const std::invalid_argument& e) {
          throw SpecError("change", e.what());
        }
        const auto problems = validateCuts(cuts, static_cast<int>(m_plan.layers.size()));
        if (!problems.empty())
          throw SpecError("change", "partition.cuts=" + c.value + " at step " +
                                        std::to_string(c.step) + ": " + problems.front().message);
      } else if (splitStageKey(c.key, stage, setting)) {
        try {
          stageValueText(setting, std::stod(c.value));
        } catch (const std::exception& e) {
          throw SpecError("change", c.key + "=" + c.value + ": " + e.what());
        }
      } else {
        throw SpecError("change", "unknown key '" + c.key +
                                      "'; use partition.cuts, stages.N.delay_ms, "
                                      "stages.N.lr_scale or stages.N.threads");
      }
      if (c.step < m_ctx.startStep) continue;
      m_scheduled.push_back(c);
    }
    std::stable_sort(m_scheduled.begin(), m_scheduled.end(),
                     [](const RunChange& a, const RunChange& b) { return a.step < b.step; });
  }

  /// A stage applied a setting before its step `step`: the event and the history.
  void recordSetting(int k, int64_t step, const std::string& setting, double value) {
    const std::string key = "stages." + std::to_string(k) + "." + setting;
    const std::string text = stageValueText(setting, value);
    std::string message = changeEventMessage(step, key, text);
    if (setting == "threads")
      message += "; another thread count may change the last bits of later losses";
    m_reporter.event({EventKind::Info, m_ctx.now(), k, message});
    std::lock_guard lock(m_appliedMutex);
    m_applied.push_back({step, key, text, 0.0});
  }

  /// Between two segments (no loader or stage thread runs, every stage has finished `step`
  /// steps): applies what is due at `step` (stage settings first, then a re-partition), hands
  /// the next segment's setting changes to the stages and tells the loader where to stop.
  /// `drainFromS`: when the loader stopped for a re-partition (-1: the run's start).
  void beginSegment(int64_t step, double drainFromS) {
    std::lock_guard lock(m_changeMutex);
    // Setting changes the stages still hold: scheduled ones go back to the schedule (a stage
    // index names the partition at the change's step), live ones to the stage of that index.
    // They were handed out before any re-partition at their step, so they go back in front.
    std::vector<std::pair<int, StageRuntime::SettingChange>> live;
    std::vector<RunChange> reclaimed;
    for (const auto& st : m_stages) {
      std::lock_guard stageLock(st->changeMutex);
      for (const auto& c : st->pendingChanges)
        if (c.step < 0)
          live.emplace_back(st->plan.index, c);
        else
          reclaimed.push_back({c.step, "stages." + std::to_string(st->plan.index) + "." + c.setting,
                               stageValueText(c.setting, c.value), 0.0});
      st->pendingChanges.clear();
    }
    m_scheduled.insert(m_scheduled.begin(), reclaimed.begin(), reclaimed.end());
    std::stable_sort(m_scheduled.begin(), m_scheduled.end(),
                     [](const RunChange& a, const RunChange& b) { return a.step < b.step; });
    // Due now, in the order given (a replayed history applies in the order it was made).
    while (!m_scheduled.empty() && m_scheduled.front().step <= step) {
      const RunChange c = m_scheduled.front();
      m_scheduled.erase(m_scheduled.begin());
      int k = 0;
      std::string setting;
      if (c.key == "partition.cuts")
        moveCuts(cutsFromText(c.value), step, drainFromS);
      else if (splitStageKey(c.key, k, setting))
        applyNow(k, step, setting, std::stod(c.value));
    }
    if (m_liveCuts) moveCuts(*std::exchange(m_liveCuts, std::nullopt), step, drainFromS);
    for (auto& [k, c] : live) {
      if (k < static_cast<int>(m_stages.size())) {
        m_stages[static_cast<size_t>(k)]->pendingChanges.push_back(c);
      } else {
        m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                          "change of stages." + std::to_string(k) + "." + c.setting +
                              " dropped: the run has " + std::to_string(m_stages.size()) +
                              " stage(s) since step " + std::to_string(step)});
      }
    }
    // This segment's setting changes: those before the next re-partition (one at its step, but
    // given before it, applies at the end of the step before, in the stages it names now).
    int64_t nextCut = INT64_MAX;
    for (const auto& c : m_scheduled)
      if (c.key == "partition.cuts") {
        nextCut = c.step;
        break;
      }
    for (auto it = m_scheduled.begin(); it != m_scheduled.end() && it->key != "partition.cuts";) {
      int k = 0;
      std::string setting;
      if (splitStageKey(it->key, k, setting)) {
        if (k < static_cast<int>(m_stages.size())) {
          std::lock_guard stageLock(m_stages[static_cast<size_t>(k)]->changeMutex);
          m_stages[static_cast<size_t>(k)]->pendingChanges.push_back(
              {it->step, setting, std::stod(it->value)});
        } else {
          m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                            "change at step " + std::to_string(it->step) + ": " + it->key + "=" +
                                it->value + " refused: the run has " +
                                std::to_string(m_stages.size()) + " stage(s) then"});
        }
        it = m_scheduled.erase(it);
      } else {
        ++it;
      }
    }
    m_ctx.segmentStart = step;
    m_ctx.stoppedAt.store(-1);
    m_ctx.stopAt.store(nextCut);
  }

  /// A setting applied between segments (no stage thread runs).
  void applyNow(int k, int64_t step, const std::string& setting, double value) {
    if (k >= static_cast<int>(m_stages.size())) {
      m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                        "change at step " + std::to_string(step) + ": stages." + std::to_string(k) +
                            "." + setting + " refused: the run has " +
                            std::to_string(m_stages.size()) + " stage(s) then"});
      return;
    }
    StageRuntime& st = *m_stages[static_cast<size_t>(k)];
    if (setting == "delay_ms") st.plan.settings.delayMs = static_cast<int>(value);
    if (setting == "threads") st.plan.settings.threads = static_cast<int>(value);
    if (setting == "lr_scale") {
      st.plan.settings.lrScale = value;
      for (auto& g : st.optimizer->param_groups()) g.options().set_lr(m_spec.train.lr * value);
    }
    recordSetting(k, step, setting, value);
  }

  /// The seed of a fresh aux head at the boundary before layer `cut`: the boundary's layer, not
  /// the stage's index, so the same history gives the same head whatever the stages were.
  uint64_t auxSeedAtCut(int cut) const {
    return m_spec.train.seed * 0x9E3779B97F4A7C15ull ^
           (static_cast<uint64_t>(cut) + 1) * 0xD1B54A32D192ED03ull ^ 0xC075ull;
  }

  /// The spec the run trains now: the current cuts, and each stage's settings as overrides.
  ExperimentSpec currentSpec() const {
    ExperimentSpec s = m_currentSpec;
    if (m_spec.mode != Mode::Local && m_spec.mode != Mode::Pipeline) return s;
    if (s.stages.size() < m_stages.size()) s.stages.resize(m_stages.size());
    for (size_t k = 0; k < m_stages.size(); ++k) {
      const StageSettings& st = m_stages[k]->plan.settings;
      auto& o = s.stages[k];
      if (o.threads || st.threads != s.stageSettings(static_cast<int>(k)).threads)
        o.threads = st.threads;
      if (o.lrScale || st.lrScale != s.stageSettings(static_cast<int>(k)).lrScale)
        o.lrScale = st.lrScale;
      if (o.delayMs || st.delayMs != s.stageSettings(static_cast<int>(k)).delayMs)
        o.delayMs = st.delayMs;
    }
    return s;
  }

  /// Moves the cuts to `cuts` at `step`, every stage idle (beginSegment), and reports it.
  void moveCuts(const std::vector<int>& cuts, int64_t step, double drainFromS) {
    const double t0 = m_ctx.now();
    const std::vector<int> before = m_cuts;
    std::vector<int> fresh, kept;
    rebuild(cuts, step, nullptr, fresh, kept);
    const double t1 = m_ctx.now();
    const double pause = t1 - (drainFromS >= 0 ? drainFromS : t0);
    auto list = [](const std::vector<int>& v) {
      return v.empty() ? std::string("none") : cutsText(v);
    };
    char timing[128];
    std::snprintf(timing, sizeof timing, "; pause %.6f s (drain %.6f s, rebuild %.6f s)", pause,
                  t0 - (drainFromS >= 0 ? drainFromS : t0), t1 - t0);
    std::vector<std::pair<int, int>> layers;
    for (const auto& st : m_stages) layers.emplace_back(st->plan.firstLayer, st->plan.lastLayer);
    const std::string layout = stageLayoutText(layers);
    m_reporter.event({EventKind::Info, t1, -1,
                      "repartition at step " + std::to_string(step) +
                          ": partition.cuts=" + cutsText(cuts) + " (was " + cutsText(before) + ")" +
                          timing + "; " + std::to_string(m_stages.size()) + " stage(s): " + layout +
                          "; new aux heads at cuts " + list(fresh) + ", kept at cuts " +
                          list(kept)});
    std::lock_guard lock(m_appliedMutex);
    m_applied.push_back({step, "partition.cuts", cutsText(cuts), pause});
  }

  /// A new snapshot coordinator for `stages` stages. The old one, closed, stays alive while the
  /// analysis thread that reads it finishes (m_retired).
  void renewSnapshots(int stages) {
    if (m_snapshots) {
      m_droppedBefore += m_snapshots->dropped();
      m_discardedBefore += m_snapshots->discarded();
      m_retiredSnapshots.push_back(std::move(m_snapshots));
    }
    const bool measured = m_ctx.snapshots != nullptr;
    m_snapshots = std::make_unique<SnapshotCoordinator>(stages, *m_budget);
    if (measured) m_ctx.snapshots = m_snapshots.get();
  }

  /// Regroups the layers into the stages of `cuts`: the same modules (weights) and their
  /// optimizer state (Adam's moments and step counts) move to the stage that now holds them;
  /// a boundary that existed keeps its aux head (and its state), a new one gets a fresh head
  /// seeded by auxSeedAtCut. Settings: those of the stage each new stage's first layer came
  /// from, or `settingsFrom`'s (resuming a checkpoint). Channels, the progress counters and the
  /// snapshot coordinator are rebuilt for the new stage count; meters and byte counters stay
  /// with their stage index. No stage thread, loader or analysis thread may run.
  void rebuild(const std::vector<int>& cuts, int64_t step, const ExperimentSpec* settingsFrom,
               std::vector<int>& freshHeads, std::vector<int>& keptHeads) {
    FixedIntraOpThreads deterministicBuild(1);
    const int layers = static_cast<int>(m_plan.layers.size());
    std::vector<StageRuntime*> owner(static_cast<size_t>(layers), nullptr);
    for (size_t k = 0; k < m_stages.size(); ++k)
      for (int i = m_stages[k]->plan.firstLayer; i <= m_stages[k]->plan.lastLayer; ++i)
        owner[static_cast<size_t>(i)] = m_stages[k].get();
    // The analysis thread of the last segment may still measure on the old shadow set: the new
    // stages get a set of their own (its values are loaded from each snapshot before use).
    auto shadowLayers = buildLayers(m_spec.model, m_plan, m_spec.train.seed);
    auto shadowSet = std::make_shared<ShadowSet>();
    ExperimentSpec next = m_currentSpec;
    next.partition.cuts = cuts;
    next.partition.balance = "manual";
    next.partition.numStages = 0;
    next.stages.clear();
    for (size_t j = 0; j <= cuts.size(); ++j) {
      const int first = j == 0 ? 0 : cuts[j - 1];
      const StageSettings st = settingsFrom ? settingsFrom->stageSettings(static_cast<int>(j))
                                            : owner[static_cast<size_t>(first)]->plan.settings;
      StageOverride o;
      o.device = st.device, o.auxHead = st.auxHead, o.auxHidden = st.auxHidden;
      o.threads = st.threads, o.lrScale = st.lrScale, o.delayMs = st.delayMs;
      if (!st.cores.empty()) o.cores = st.cores;
      if (st.rank >= 0) o.rank = st.rank;
      next.stages.push_back(o);
    }
    const PartitionPlan partition = makePartition(next, m_plan);
    const std::vector<StagePlan> plans =
        m_method->stages(partition.stages, m_plan, m_info.hardwareCores);
    // Every optimizer's per-parameter state, by parameter (LibTorch keys it by the tensor).
    std::map<std::string, std::unique_ptr<torch::optim::OptimizerParamState>> states;
    for (auto& st : m_stages)
      for (auto& [key, state] : st->optimizer->state()) states[key] = std::move(state);
    std::vector<std::unique_ptr<StageRuntime>> stages;
    for (const StagePlan& p : plans) {
      auto s = std::make_unique<StageRuntime>();
      s->plan = p;
      s->isLast = p.isLast;
      s->device = torch::Device(p.settings.device);
      StageModules shadow;
      for (int i = p.firstLayer; i <= p.lastLayer; ++i) {
        StageRuntime* from = owner[static_cast<size_t>(i)];
        const size_t at = static_cast<size_t>(i - from->plan.firstLayer);
        s->layerInfo.push_back(m_plan.layers[static_cast<size_t>(i)]);
        s->modules.layers.push_back(from->modules.layers[at]);
        shadow.layers.push_back(shadowLayers[static_cast<size_t>(i)]);
      }
      if (m_method->auxHead(p)) {
        const int cut = p.lastLayer + 1;
        StageRuntime* had = owner[static_cast<size_t>(p.lastLayer)];
        if (had->plan.lastLayer == p.lastLayer && had->modules.aux) {
          s->modules.aux = had->modules.aux;
          s->plan.settings.auxHead = had->plan.settings.auxHead;
          s->plan.settings.auxHidden = had->plan.settings.auxHidden;
          s->plan.auxParams = had->plan.auxParams;
          s->plan.auxFlops = had->plan.auxFlops;
          keptHeads.push_back(cut);
        } else {
          const auto& outShape = m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape;
          s->modules.aux = buildAuxHead(p.settings, outShape, m_data.shape.numClasses,
                                        auxSeedAtCut(cut), m_spec.model.init);
          s->modules.aux->to(s->device);
          freshHeads.push_back(cut);
        }
        shadow.aux =
            buildAuxHead(s->plan.settings, m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape,
                         m_data.shape.numClasses, auxSeedAtCut(cut), m_spec.model.init);
      }
      auto params = s->modules.bodyParams();
      auto aux = s->modules.auxParams();
      params.insert(params.end(), aux.begin(), aux.end());
      s->optimizer = makeOptimizer(m_spec.train, p.settings.lrScale, params);
      for (const auto& param : params) {
        auto found = states.find(c10::guts::to_string(param.unsafeGetTensorImpl()));
        if (found != states.end()) s->optimizer->state()[found->first] = std::move(found->second);
      }
      const size_t k = static_cast<size_t>(p.index);
      if (k < m_stages.size()) {  // what was measured stays with the stage index
        s->meter = std::move(m_stages[k]->meter);
        s->bytesSent = m_stages[k]->bytesSent;
        s->gradBytesSent = m_stages[k]->gradBytesSent;
        s->backpropBytes = m_stages[k]->backpropBytes;
        s->peakActivationBytes = m_stages[k]->peakActivationBytes;
      }
      s->memorySlot = m_memory.first >= 0 && static_cast<int>(k) < m_memory.count
                          ? m_memory.first + static_cast<int>(k)
                          : -1;
      shadowSet->stages.push_back(std::move(shadow));
      shadowSet->isLast.push_back(p.isLast);
      shadowSet->firstLayer.push_back(p.firstLayer);
      stages.push_back(std::move(s));
    }
    const size_t k = stages.size();
    {
      std::lock_guard lock(m_ctx.channelMutex);
      m_ctx.channels.clear();
      for (size_t i = 0; i < k; ++i)
        m_ctx.channels.push_back(
            std::make_unique<QueueChannel>(static_cast<size_t>(m_spec.train.queueCapacity)));
    }
    m_ctx.bubbles = makeBubbleBoard(m_spec, static_cast<int>(k));  // a new cut plans anew
    m_ctx.produced = std::make_unique<std::atomic<int64_t>[]>(k + 1);
    for (size_t i = 0; i <= k; ++i) m_ctx.produced[i].store(step);
    renewSnapshots(static_cast<int>(k));
    m_stages = std::move(stages);
    m_shadow = std::move(shadowSet);
    m_partition = partition;
    m_cuts = cuts;
    m_currentSpec = next;
    m_rebuilt = true;
  }

  double samplesPerSec(double now) const {
    const double warm = m_ctx.warmupEndS.load();
    const double last = m_ctx.lastStepEndS.load();
    // Once the last stage is done, count up to its final step, not up to when we look.
    if (m_pipelineDone.load() && last > 0) now = last;
    if (warm < 0 || now <= warm) return 0;
    return static_cast<double>(m_ctx.samplesAfterWarmup.load()) / (now - warm);
  }

  void buildStages() {
    const uint64_t seed = m_spec.train.seed;
    auto layers = buildLayers(m_spec.model, m_plan, seed);
    auto shadowLayers = buildLayers(m_spec.model, m_plan, seed);
    const std::vector<StagePlan> plans =
        m_method->stages(m_partition.stages, m_plan, m_info.hardwareCores);
    for (const auto& p : plans) {
      auto s = std::make_unique<StageRuntime>();
      s->plan = p;
      s->isLast = p.isLast;
      s->device = torch::Device(p.settings.device);
      StageModules shadow;
      for (int i = p.firstLayer; i <= p.lastLayer; ++i) {
        s->layerInfo.push_back(m_plan.layers[static_cast<size_t>(i)]);
        s->modules.layers.push_back(layers[static_cast<size_t>(i)]);
        shadow.layers.push_back(shadowLayers[static_cast<size_t>(i)]);
      }
      if (m_method->auxHead(p)) {
        const auto& outShape = m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape;
        const uint64_t auxSeed = seed + 7919ull * static_cast<uint64_t>(p.index + 1);
        s->modules.aux =
            buildAuxHead(p.settings, outShape, m_data.shape.numClasses, auxSeed, m_spec.model.init);
        shadow.aux =
            buildAuxHead(p.settings, outShape, m_data.shape.numClasses, auxSeed, m_spec.model.init);
      }
      for (auto& l : s->modules.layers) l->to(s->device);
      if (s->modules.aux) s->modules.aux->to(s->device);
      auto params = s->modules.bodyParams();
      auto aux = s->modules.auxParams();
      params.insert(params.end(), aux.begin(), aux.end());
      s->optimizer = makeOptimizer(m_spec.train, p.settings.lrScale, params);
      m_shadow->stages.push_back(std::move(shadow));
      m_shadow->isLast.push_back(p.isLast);
      m_shadow->firstLayer.push_back(p.firstLayer);
      m_stages.push_back(std::move(s));
    }
    m_ctx.totalSteps = totalStepsFor(m_spec, m_data.trainCount());
    m_ctx.batchSize = m_spec.train.batchSize;
    const size_t k = m_stages.size();
    for (size_t i = 0; i < k; ++i)
      m_ctx.channels.push_back(std::make_unique<QueueChannel>(activationCapacity(m_spec, i)));
    if (m_method->sendsGradients()) {
      // Every gradient of a step may wait at once (GPipe sends them all before the stage above
      // takes one: at most one per micro-batch); with overlap, the D steps' worth in flight.
      for (size_t i = 0; i + 1 < k; ++i)
        m_ctx.gradChannels.push_back(std::make_unique<QueueChannel>(gradientCapacity(m_spec)));
      if (m_spec.train.clipNorm > 0)
        m_ctx.normBarrier = std::make_unique<SumBarrier>(static_cast<int>(k));
    }
    m_ctx.bubbles = makeBubbleBoard(m_spec, static_cast<int>(k));
    m_ctx.produced = std::make_unique<std::atomic<int64_t>[]>(k + 1);
    for (size_t i = 0; i <= k; ++i) m_ctx.produced[i].store(0);
    m_ctx.startStep = 0;
    const bool probe = m_method->probes() && m_spec.probe.interval >= 0;
    m_budget = std::make_unique<MeasureBudget>(
        m_spec.measure.budget, m_ctx.totalSteps, probe ? m_spec.probe.interval : 0,
        m_spec.eval.interval, MeasureSpec::kMinPoints, m_forcedEvals);
    m_snapshots = std::make_unique<SnapshotCoordinator>(static_cast<int>(k), *m_budget);
    if (probe || m_spec.eval.interval > 0 || !m_forcedEvals.empty())
      m_ctx.snapshots = m_snapshots.get();
    // a fixed, seeded probe batch from the training set
    std::mt19937_64 rng(seed ^ 0x9B0BEull);
    const int64_t n = m_data.trainCount();
    std::vector<int64_t> idx(static_cast<size_t>(std::min<int64_t>(m_spec.probe.batchSize, n)));
    for (auto& i : idx) i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    if (m_data.trainText.defined()) {  // windows of their own seed
      std::tie(m_probeX, m_probeY) = textWindows(m_data, m_spec.dataset.context, seed ^ 0x9B0BEull,
                                                 0, static_cast<int64_t>(idx.size()));
    } else {
      auto index =
          torch::from_blob(idx.data(), {static_cast<int64_t>(idx.size())}, torch::kInt64).clone();
      m_probeX = m_data.trainX.index_select(0, index);
      m_probeY = m_data.trainY.index_select(0, index);
    }
    // Periodic evaluations on the first eval.max_samples; the final one on the whole set.
    m_testX = m_data.testX;
    m_testY = m_data.testY;
    if (m_spec.eval.maxSamples > 0 && m_spec.eval.maxSamples < m_testX.size(0)) {
      m_testX = m_testX.slice(0, 0, m_spec.eval.maxSamples);
      m_testY = m_testY.slice(0, 0, m_spec.eval.maxSamples);
    }
    // The validation set likewise: its first eval.max_samples periodically, all at the end.
    m_valX = m_data.valX;
    m_valY = m_data.valY;
    if (m_valX.defined() && m_spec.eval.maxSamples > 0 && m_spec.eval.maxSamples < m_valX.size(0)) {
      m_valX = m_valX.slice(0, 0, m_spec.eval.maxSamples);
      m_valY = m_valY.slice(0, 0, m_spec.eval.maxSamples);
    }
  }

  /// model.norm batchnorm: LibTorch cannot train batch norm on one row, so a batch (or a
  /// pipeline micro-batch) of one row is refused before the run starts, naming what to change.
  /// validateSpec checks the full batches; the last batch of an epoch needs the dataset's size.
  void checkBatchNormRows() const {
    const bool layersNorm =
        m_spec.model.kind == "layers" && detail::containsLayer(m_spec.model.layers, "batchnorm1d");
    if (!layersNorm && (m_spec.model.kind != "mlp" || m_spec.model.norm != "batchnorm")) return;
    const int64_t n = m_data.trainCount(), batch = m_spec.train.batchSize;
    const int64_t perEpoch = (n + batch - 1) / batch, rest = n % batch;
    if (rest == 0 || m_ctx.totalSteps < perEpoch) return;  // no short batch is ever trained
    const int64_t micro = m_spec.mode != Mode::Pipeline ? 1
                          : m_spec.pipeline.microBatches > 0
                              ? m_spec.pipeline.microBatches
                              : static_cast<int64_t>(m_stages.size());
    if (rest < 2 * micro)
      throw SpecError("train.batch_size",
                      std::string(layersNorm ? "batchnorm1d" : "batch norm (model.norm)") +
                          " needs 2 rows or more per " +
                          std::string(micro > 1 ? "micro-batch" : "batch") + ", but the last " +
                          "batch of an epoch holds " + std::to_string(rest) + " of the " +
                          std::to_string(n) + " training samples; choose another batch size");
  }

  RunInfo runInfo() const {
    RunInfo info;
    info.name = m_spec.name;
    info.specJson = specToJson(m_spec);
    info.mode = m_spec.mode;
    info.layers = m_plan.layers;
    info.totalSteps = m_ctx.totalSteps;
    info.batchSize = m_spec.train.batchSize;
    info.blas = m_info.blas;
    info.torchVersion = m_info.torchVersion;
    for (const auto& s : m_stages) {
      StageInfo si;
      si.index = s->plan.index;
      si.firstLayer = s->plan.firstLayer;
      si.lastLayer = s->plan.lastLayer;
      si.device = s->plan.settings.device;
      si.auxHead = s->isLast                    ? "classifier"
                   : m_method->auxHead(s->plan) ? s->plan.settings.auxHead
                                                : "none";
      si.threads = s->plan.settings.threads;
      si.params = s->plan.params;
      si.auxParams = s->plan.auxParams;
      info.stages.push_back(si);
    }
    return info;
  }

  static void loadShadowFrom(ShadowSet& shadow, const Snapshot& snap) {
    for (size_t i = 0; i < shadow.stages.size(); ++i)
      loadParams(shadow.stages[i], snap.body[i], snap.aux[i]);
  }

  void loadShadowFromLive() {
    for (size_t i = 0; i < m_shadow->stages.size(); ++i) {
      std::vector<torch::Tensor> body, aux;
      for (auto& p : m_stages[i]->modules.bodyState()) body.push_back(p.detach().to(torch::kCPU));
      for (auto& p : m_stages[i]->modules.auxState()) aux.push_back(p.detach().to(torch::kCPU));
      loadParams(m_shadow->stages[i], body, aux);
    }
  }

  /// `t`: when the last stage finished `step` (the points' time, not when they were measured).
  /// The final measurement (`summary` given) evaluates on the whole test set (and validation
  /// set, when dataset.validation holds one out). Returns the CPU
  /// seconds the probe and the evaluation took on this thread.
  std::pair<double, double> measure(ShadowSet& shadow, int64_t step, double t, bool probe,
                                    bool eval, RunSummary* summary) {
    std::vector<MetricPoint> points;
    double evalS = 0, probeS = 0;
    if (eval) {
      const double c0 = threadCpuSeconds();
      EvalResult r = summary ? evaluate(shadow.stages, m_data.testX, m_data.testY)
                             : evaluate(shadow.stages, m_testX, m_testY);
      points.push_back({series::kTestAccuracy, -1, -1, step, t, r.accuracy});
      points.push_back({series::kTestLoss, -1, -1, step, t, r.loss});
      if (summary) {
        summary->testAccuracy = r.accuracy;
        summary->testLoss = r.loss;
        if (m_data.shape.sequence) {  // nats per byte token: perplexity, bits per byte
          summary->testPerplexity = std::exp(r.loss);
          summary->testBitsPerByte = r.loss / std::numbers::ln2;
        }
      }
      if (m_valX.defined()) {
        const EvalResult v = summary ? evaluate(shadow.stages, m_data.valX, m_data.valY)
                                     : evaluate(shadow.stages, m_valX, m_valY);
        points.push_back({series::kValAccuracy, -1, -1, step, t, v.accuracy});
        points.push_back({series::kValLoss, -1, -1, step, t, v.loss});
        if (summary) summary->valAccuracy = v.accuracy, summary->valLoss = v.loss;
      }
      if (m_data.shape.sequence && !m_sampleAtEvals.prompt.empty()) {  // the Sample panel's
        const SampleRequest& q = m_sampleAtEvals;
        const std::string text =
            generateBytes(shadow.stages, q.prompt, q.length, q.temperature,
                          m_spec.train.seed + static_cast<uint64_t>(step), m_spec.dataset.context);
        m_reporter.event(
            {EventKind::Info, t, -1, sampleEventMessage(step, validUtf8(q.prompt + text))});
      }
      evalS = threadCpuSeconds() - c0;
    }
    const double p0 = threadCpuSeconds();
    if (probe) {
      ProbeResult r = gradientCosine(shadow.stages, shadow.isLast, m_probeX, m_probeY,
                                     m_spec.mode == Mode::Local ? m_spec.local.overlap : 0);
      for (size_t k = 0; k < r.stage.size(); ++k) {
        points.push_back({series::kGradCosine, static_cast<int>(k), -1, step, t, r.stage[k]});
        for (size_t l = 0; l < r.layer[k].size(); ++l)
          points.push_back({series::kGradCosine, static_cast<int>(k),
                            shadow.firstLayer[k] + static_cast<int>(l), step, t, r.layer[k][l]});
        if (summary) summary->stages[k].gradCosine = r.stage[k];
      }
      probeS = threadCpuSeconds() - p0;
    }
    m_reporter.add(points);
    return {probeS, evalS};
  }

  /// The analysis thread of one segment: measures the snapshots of `snapshots` on `shadow`
  /// (both laid out as the segment's partition) until the coordinator is closed and empty.
  void analyse(ShadowSet& shadow, SnapshotCoordinator& snapshots) {
    try {
      nameThread("sw-analysis");
      setupComputeThread(1, {});
      // The lowest priority (on Linux nice applies to the calling thread): measuring takes the
      // cores' idle time first and, while the stages compete, a small share (docs/metrics.md,
      // "The measurement budget": measured against normal priority and SCHED_IDLE).
      setpriority(PRIO_PROCESS, 0, 19);
      while (auto snap = snapshots.next()) {
        const double c0 = threadCpuSeconds();
        loadShadowFrom(shadow, *snap);
        const double loadS = threadCpuSeconds() - c0;
        auto [probeS, evalS] =
            measure(shadow, snap->step, snap->timeS >= 0 ? snap->timeS : m_ctx.now(), snap->probe,
                    snap->eval, nullptr);
        // Loading the copies is part of what the point cost, whichever kind it was for.
        (snap->eval ? evalS : probeS) += loadS;
        m_budget->charge(snap->step, probeS, evalS);
      }
    } catch (const std::exception& e) {
      m_ctx.fail(-1, std::string("probe/evaluation: ") + errorText(e));
    }
  }

  void resumeFrom(const std::string& path) {
    if (m_spec.mode == Mode::Local && m_spec.local.overlap > 0)
      throw SpecError(
          "local.overlap",
          "a run with overlapping local updates cannot resume from a checkpoint yet: the "
          "gradients in flight between the stages are not saved; set it to 0 to resume");
    // A checkpoint taken after a re-partition holds its cuts: rebuild them before loading.
    if (m_spec.mode == Mode::Local && !m_distributed) {
      const CheckpointInfo info = readCheckpointInfo(path);
      std::vector<int> cuts;
      try {
        cuts = resolveCuts(info.spec, m_plan);
      } catch (const SpecError&) {
        cuts = m_cuts;  // another model: loadCheckpoint says what does not fit
      }
      if (cuts != m_cuts && cannotRepartition().empty()) {
        std::vector<int> fresh, kept;
        rebuild(cuts, 0, &info.spec, fresh, kept);
      }
    }
    const int64_t step = loadCheckpoint(path, m_stages);
    if (step >= m_ctx.totalSteps)
      throw SpecError("train.max_steps", "the checkpoint is at step " + std::to_string(step) +
                                             " of " + std::to_string(m_ctx.totalSteps) +
                                             ": nothing left to train; raise it");
    m_ctx.startStep = step;
    m_ctx.clockOffsetS = readCheckpointInfo(path).elapsedS;
    for (size_t i = 0; i <= m_stages.size(); ++i) m_ctx.produced[i].store(step);
    m_ctx.lastStageSteps.store(step);
    m_resumedFrom = path;
  }

  void saveAt(int64_t step) {
    try {
      const std::string path =
          saveCheckpoint(m_checkpointDir, step, m_ctx.totalSteps,
                         specToJson(changed() ? currentSpec() : m_spec), m_stages,
                         /*injectFailure=*/m_spec.debug.failCheckpoint == step, m_ctx.now());
      m_reporter.event({EventKind::Checkpoint, m_ctx.now(), -1, path});
      m_lastCheckpoint = step;
    } catch (const std::exception& e) {
      // A full disk must not cost the run: say so and train on.
      m_reporter.event(
          {EventKind::Warning, m_ctx.now(), -1,
           std::string("checkpoint at step ") + std::to_string(step) + " failed: " + e.what()});
    }
  }

  void supervise() {
    nameThread("sw-run");
    m_topology->start();
    m_reporter.start(runInfo());
    m_reporter.event({EventKind::Started, 0.0, -1,
                      toString(m_spec.mode) + " run started: " + std::to_string(m_stages.size()) +
                          " stage(s), " + std::to_string(m_ctx.totalSteps) + " steps, BLAS " +
                          m_info.blas + ", OpenMP workers " + m_info.openmpWait + ", malloc " +
                          m_info.malloc + modelFileText()});
    if (!m_resumedFrom.empty())
      m_reporter.event(
          {EventKind::Info, 0.0, -1,
           "resumed from " + m_resumedFrom + " at step " + std::to_string(m_ctx.startStep)});
    // Before the clock starts: the start's steal share is read over a short window.
    m_loadStart = m_loadMeter.start();
    {
      std::lock_guard lock(m_clockMutex);
      m_ctx.start = RunContext::Clock::now();
      m_clockStarted = true;
      if (std::exchange(m_pauseEarly, false)) {
        m_ctx.control.pause();
        m_reporter.event({EventKind::Paused, 0.0, -1, "paused"});
      }
    }
    const double cpu0 = processCpuSeconds();
    m_budget->setCpuOrigin(cpu0);
    // One analysis thread per segment, on the segment's own shadow set and coordinator; a
    // finished segment's thread measures what it has queued while the next segment trains.
    std::thread analysis;
    std::vector<std::thread> retiring;
    auto startAnalysis = [&] {
      if (m_ctx.snapshots && rank() == 0)
        analysis = std::thread([this, shadow = m_shadow, snapshots = m_snapshots.get()] {
          analyse(*shadow, *snapshots);
        });
    };
    // The run trains in segments: one, unless a re-partition ends it at a step boundary
    // (docs/architecture.md, "Live re-partition"); then the next starts there.
    beginSegment(m_ctx.startStep, -1);
    startAnalysis();
    double lastCpu = cpu0, lastT = 0;
    while (true) {
      const int64_t stoppedAt = trainSegment(lastCpu, lastT);
      if (stoppedAt < 0 || m_ctx.control.stopRequested() || m_ctx.drain.load() ||
          !segmentAligned(stoppedAt))
        break;
      // Every stage stands at `stoppedAt`: the stages are rebuilt and training goes on, while
      // this segment's analysis thread measures what it has queued on its own shadow set.
      m_snapshots->close(/*drop=*/false);
      if (analysis.joinable()) retiring.push_back(std::move(analysis));
      SnapshotCoordinator* const before = m_snapshots.get();
      try {
        beginSegment(stoppedAt, m_ctx.stoppedAtS.load());
      } catch (const std::exception& e) {
        m_ctx.fail(-1, std::string("re-partition: ") + errorText(e));
        break;
      }
      if (m_snapshots.get() == before) renewSnapshots(static_cast<int>(m_stages.size()));
      if (m_ctx.control.stopRequested()) break;
      startAnalysis();
    }
    if (rank() == 0) m_topology->collect();
    m_pipelineDone = true;
    m_snapshots->close(/*drop=*/false);  // the analysis thread still measures what is queued
    if (analysis.joinable()) analysis.join();
    for (auto& th : retiring) th.join();
    finish(cpu0);
  }

  bool segmentAligned(int64_t step) const {
    std::lock_guard lock(m_ctx.failureMutex);
    if (!m_ctx.error.empty()) return false;
    for (size_t k = 1; k <= m_stages.size(); ++k)
      if (m_ctx.produced[k].load() != step) return false;
    return true;
  }

  /// One segment: the loader and stage threads from m_ctx.segmentStart until the loader stops
  /// (the end, a stop or a re-partition), reporting the run-level series meanwhile. Returns the
  /// step the loader stopped at for a re-partition, or -1.
  int64_t trainSegment(double& lastCpu, double& lastT) {
    std::vector<std::thread> threads;
    std::atomic<size_t> exited{0};
    if (owns(0))
      threads.emplace_back([this, &exited] {
        runLoader(m_ctx, m_data);
        ++exited;
      });
    for (size_t k = 0; k < m_stages.size(); ++k)
      if (owns(k))
        threads.emplace_back([this, st = m_stages[k].get(), &exited] {
          runStage(m_ctx, *st, *m_method);
          ++exited;
        });
    // Report run-level metrics until the last stage is done.
    const int cores = m_info.hardwareCores;
    while (true) {
      // Look often so the end of training is noticed at once; report every 250 ms.
      const double nextReport = lastT + 0.25;
      while (m_ctx.now() < nextReport && exited.load() < threads.size()) {
        m_ctx.control.sleepFor(std::chrono::milliseconds(10));
        const double since = m_drainSince.load();
        if (since >= 0 && m_ctx.now() - since > kDrainTimeoutS && !m_ctx.control.stopRequested()) {
          m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                            "the pipeline did not drain in time; stopping without a checkpoint"});
          m_drainFailed = true;
          m_ctx.stopAll();
        }
      }
      const double t = m_ctx.now();
      const double cpu = processCpuSeconds();
      const int64_t steps = m_ctx.lastStageSteps.load();
      // Run-level series come from the rank that runs the last stage; CPU use is rank 0's process.
      std::vector<MetricPoint> points;
      if (ownsLast()) {
        // Throughput is measured from the end of the warm-up (the first 20 steps): before it
        // there is no figure, not a figure of 0.
        if (const double sps = samplesPerSec(t); sps > 0)
          points.push_back({series::kSamplesPerSec, -1, -1, steps, t, sps});
        points.push_back({series::kProgress, -1, -1, steps, t,
                          m_ctx.totalSteps > 0 ? double(steps) / m_ctx.totalSteps : 0});
      }
      if (rank() == 0) {
        points.push_back({series::kCpuUtilization, -1, -1, steps, t,
                          (cpu - lastCpu) / std::max(1e-3, (t - lastT) * cores)});
        if (m_ctx.snapshots)
          points.push_back(
              {series::kMeasureShare, -1, -1, steps, t, m_budget->share(m_budget->trainingCpuS())});
      }
      m_reporter.add(points);
      lastCpu = cpu, lastT = t;
      if (exited.load() == threads.size()) break;
    }
    for (auto& th : threads) th.join();
    return m_ctx.stoppedAt.load();
  }

  /// The measurement budget's account in the summary, and a warning when its kept points alone
  /// cost more than the budget (which knobs make them cheaper).
  void summariseMeasuring(RunSummary& s) {
    if (!m_ctx.snapshots || rank() != 0) return;
    const auto c = m_budget->counts();
    s.measureBudget = m_spec.measure.budget;
    s.measureShare = m_budget->share(m_budget->trainingCpuS());
    s.probePoints = c.probes;
    s.evalPoints = c.evals;
    s.thinnedPoints = c.thinnedProbes + c.thinnedEvals;
    s.skippedPoints = snapshotsDropped();
    // The series ends on the summary's share (measuring what was queued at the end is charged
    // after the last live point): the live header, the log and the store say one number.
    m_reporter.add(
        MetricPoint{series::kMeasureShare, -1, -1, s.steps, m_ctx.now(), s.measureShare});
    const double budget = m_spec.measure.budget;
    if (budget > 0 && s.measureShare > budget * 1.25)
      m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                        "measuring took " + percent(s.measureShare) + " of training, over its " +
                            percent(budget) + " budget: the " +
                            std::to_string(MeasureSpec::kMinPoints) +
                            " probes and evaluations kept per run cost more here; lower "
                            "probe.batch_size or eval.max_samples"});
  }
  static std::string percent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", share * 100);
    return buf;
  }

  /// Which file a torchscript run trained, whatever its name: its path and SHA-256.
  std::string modelFileText() const {
    if (m_spec.model.kind != "torchscript") return "";
    return ", model file " + m_spec.model.path + " sha256 " + torchScriptSha256(m_spec.model.path);
  }

  /// A torchscript run keeps its trained weights, for `runs export-model`: a checkpoint at its
  /// last step (in checkpoint.dir, else the default folder), unless one is there already. In
  /// one process only: the stages' weights must all be here.
  void saveFinalWeights(int64_t step) {
    if (m_distributed || step <= 0 || step == m_lastCheckpoint) return;
    for (size_t k = 1; k <= m_stages.size(); ++k)
      if (m_ctx.produced[k].load() != step) return;  // stopped mid-step: no consistent state
    if (m_checkpointDir.empty()) m_checkpointDir = defaultCheckpointDir(m_spec.name);
    saveAt(step);
  }

  int64_t snapshotsDropped() const { return m_droppedBefore + m_snapshots->dropped(); }
  int64_t snapshotsDiscarded() const { return m_discardedBefore + m_snapshots->discarded(); }
  bool changed() const {
    std::lock_guard lock(m_appliedMutex);
    return !m_applied.empty() || m_rebuilt;
  }

  int rank() const { return m_topology->rank(); }
  bool owns(size_t stage) const { return m_topology->owns(stage); }
  bool ownsLast() const { return m_topology->ownsLast(); }

  void finish(double cpu0) {
    const SummaryBuilder builder(m_ctx, m_stages, *m_topology, m_info.hardwareCores, m_info.blas);
    RunSummary s =
        builder.build(processCpuSeconds() - cpu0, samplesPerSec(m_ctx.now()), m_ctx.userStop);
    if (m_spec.mode == Mode::Local && m_spec.local.overlap > 0)
      s.overlapLayers = m_spec.local.overlap, s.overlapDelay = m_spec.train.queueCapacity + 1;
    summariseMeasuring(s);
    s.loadStart = m_loadStart;
    s.loadEnd = m_loadMeter.end();
    {
      std::vector<StagePlan> plans;
      for (const auto& st : m_stages) plans.push_back(st->plan);
      const auto perSample =
          trainFlopsPerSample(plans, m_plan, m_spec.mode == Mode::Local ? m_spec.local.overlap : 0);
      for (const auto& ss : s.stages)
        if (ss.index >= 0 && static_cast<size_t>(ss.index) < perSample.size())
          s.trainFlops += static_cast<double>(ss.steps) * m_spec.train.batchSize *
                          perSample[static_cast<size_t>(ss.index)];
    }
    const bool drained = m_ctx.drain.load() && !m_drainFailed;
    if (s.error.empty()) {
      if (drained && s.steps < m_ctx.totalSteps) {
        bool aligned = true;
        for (size_t k = 1; k <= m_stages.size(); ++k)
          aligned = aligned && m_ctx.produced[k].load() == s.steps;
        if (aligned) saveAt(s.steps);
      }
      if (m_spec.model.kind == "torchscript") saveFinalWeights(s.steps);
      if (rank() == 0) try {
          setupComputeThread(m_info.hardwareCores, {});
          loadShadowFromLive();
          const bool probe = m_method->probes() && m_spec.probe.interval >= 0;
          measure(*m_shadow, s.steps, s.wallSeconds, probe, true, &s);
        } catch (const std::exception& e) {
          m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                            std::string("final evaluation failed: ") + errorText(e)});
        }
      m_reporter.event(
          {s.status == RunStatus::Completed ? EventKind::Completed : EventKind::Stopped,
           m_ctx.now(), -1, toString(s.status) + " after " + std::to_string(s.steps) + " steps"});
    }
    if (m_liveCuts)
      m_reporter.event(
          {EventKind::Warning, m_ctx.now(), -1,
           "repartition to " + cutsText(*m_liveCuts) + " not made: the run ended first"});
    for (const RunChange& c : m_scheduled)
      m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                        "change at step " + std::to_string(c.step) + ": " + c.key + "=" + c.value +
                            " not made: the run ended at step " + std::to_string(s.steps)});
    if (snapshotsDropped() > 0)
      m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                        std::to_string(snapshotsDropped()) +
                            " probe/evaluation points skipped: the analysis thread fell behind"});
    if (snapshotsDiscarded() > 0)
      m_reporter.event(
          {EventKind::Warning, m_ctx.now(), -1,
           std::to_string(snapshotsDiscarded()) +
               " probe/evaluation points not measured: the run stopped before they were"});
    m_reporter.finish(s);
    m_topology->conclude(s);
    m_ctx.control.setState(RunState::Finished);
    {
      std::lock_guard lock(m_mutex);
      m_summary = s;
      m_finished = true;
    }
    m_done.notify_all();
  }

  /// The allocator slots of this run's stages: declared first, so released last, after every
  /// tensor of the run is freed.
  struct MemorySlots {
    int first = -1, count = 0;
    ~MemorySlots() { memory::release(first, count); }
  } m_memory;
  ExperimentSpec m_spec;
  ObserverFanout m_fanout;
  std::unique_ptr<Method> m_method;      ///< what differs between local, backprop and pipeline
  std::unique_ptr<Topology> m_topology;  ///< where the stages run: here, or over c10d
  Reporter m_reporter;
  RunContext m_ctx;
  EngineInfo m_info;
  TensorData m_data;
  ModelPlan m_plan;
  PartitionPlan m_partition;
  std::vector<std::unique_ptr<StageRuntime>> m_stages;
  std::shared_ptr<ShadowSet> m_shadow = std::make_shared<ShadowSet>();
  std::unique_ptr<MeasureBudget> m_budget;  ///< before the coordinator, which refers to it
  std::unique_ptr<SnapshotCoordinator> m_snapshots;
  LoadMeter m_loadMeter;  ///< the machine's load at the start and end (summary load_start/end)
  MachineLoad m_loadStart;
  static constexpr double kDrainTimeoutS = 5.0;
  std::string m_checkpointDir;
  std::string m_resumedFrom;
  int64_t m_lastCheckpoint = -1;  ///< the step of the last checkpoint saved
  bool m_distributed = false;     ///< stages in several processes
  std::atomic<double> m_drainSince{-1.0};
  std::atomic<bool> m_drainFailed{false};
  std::atomic<bool> m_pipelineDone{false};
  std::mutex m_clockMutex;      ///< pause / resume against the clock's start
  bool m_clockStarted = false;  ///< m_ctx.start is set (under m_clockMutex)
  bool m_pauseEarly = false;    ///< a pause asked for before it (under m_clockMutex)
  torch::Tensor m_probeX, m_probeY, m_testX, m_testY, m_valX, m_valY;
  std::set<int64_t> m_forcedEvals;  ///< RunOptions::evalAtSteps, as steps (N - 1)
  SampleRequest m_sampleAtEvals;    ///< RunOptions::sampleAtEvaluations
  std::thread m_supervisor;
  mutable std::mutex m_mutex;
  std::condition_variable m_done;
  bool m_finished = false;
  RunSummary m_summary;

  // Steering (docs/architecture.md, "Live re-partition").
  std::vector<int> m_cuts;       ///< the cuts the stages have now
  ExperimentSpec m_currentSpec;  ///< m_spec with the current cuts and stage settings
  bool m_rebuilt = false;        ///< the stages were re-partitioned (checkpoints say how)
  std::mutex m_changeMutex;      ///< the requests below, and m_stages against a rebuild
  std::optional<std::vector<int>> m_liveCuts;  ///< a live re-partition asked for
  std::vector<RunChange> m_scheduled;          ///< RunOptions::changes not made yet, by step
  mutable std::mutex m_appliedMutex;
  std::vector<RunChange> m_applied;                    ///< under m_appliedMutex
  int64_t m_droppedBefore = 0, m_discardedBefore = 0;  ///< earlier segments' coordinators
  /// Earlier segments' coordinators, closed; alive while their analysis threads finish.
  std::vector<std::unique_ptr<SnapshotCoordinator>> m_retiredSnapshots;
};

}  // namespace

std::unique_ptr<Run> createRun(const ExperimentSpec& spec, RunObserver* observer,
                               const RunOptions& options) {
  try {
    return std::make_unique<TorchRun>(spec, observer, options);
  } catch (const SpecError&) {
    throw;
  } catch (const DatasetError&) {
    throw;
  } catch (const c10::Error& e) {
    // Building the stages ran out of memory (or LibTorch refused): one line, no backtrace.
    throw std::runtime_error(errorText(e));
  } catch (const std::bad_alloc& e) {
    throw std::runtime_error(errorText(e));
  }
}

}  // namespace stagewise::engine
