// The LibTorch run (TorchRun, torch_run.h): builds the stages, starts the loader, stage and
// analysis threads, watches them from a supervisor thread and reports through the Reporter. This
// file holds its lifecycle and threads; the rest is in run_setup, run_steering and run_measure.

#include "dist/c10d_topology.h"
#include "model/torch_model.h"
#include "probe/sample.h"
#include "runtime/error_text.h"
#include "runtime/stage_worker.h"
#include "runtime/thread_setup.h"
#include "runtime/torch_run.h"
#include "stagewise/engine/checkpoint.h"

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

TorchRun::TorchRun(const ExperimentSpec& spec, RunObserver* observer, const RunOptions& options)
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

TorchRun::~TorchRun() {
  m_ctx.stopAll();
  if (m_supervisor.joinable()) m_supervisor.join();
  m_ctx.channels.clear();  // their receiving threads end before the process group goes
  m_ctx.gradChannels.clear();
  if (m_topology) m_topology->shutdown();
  m_ctx.abortTransfers = nullptr;
  m_ctx.onFailure = nullptr;
}

void TorchRun::start() {
  std::lock_guard lock(m_mutex);
  if (m_supervisor.joinable()) return;
  m_ctx.control.setState(RunState::Running);
  m_supervisor = std::thread([this] { supervise(); });
}

void TorchRun::pause() {
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

void TorchRun::resume() {
  std::lock_guard lock(m_clockMutex);
  if (!m_clockStarted && m_pauseEarly) {
    m_pauseEarly = false;
    return;
  }
  if (m_ctx.control.state() != RunState::Paused) return;
  m_ctx.control.resume();
  m_reporter.event({EventKind::Resumed, m_ctx.now(), -1, "resumed"});
}

void TorchRun::requestStop() {
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

RunSummary TorchRun::wait() {
  std::unique_lock lock(m_mutex);
  m_done.wait(lock, [&] { return m_finished; });
  return m_summary;
}

bool TorchRun::waitFor(std::chrono::milliseconds timeout) {
  std::unique_lock lock(m_mutex);
  return m_done.wait_for(lock, timeout, [&] { return m_finished; });
}

SampleResult TorchRun::sample(const SampleRequest& request) {
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

std::vector<RunChange> TorchRun::changes() const {
  std::lock_guard lock(m_appliedMutex);
  return m_applied;
}

Progress TorchRun::progress() const {
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

double TorchRun::samplesPerSec(double now) const {
  const double warm = m_ctx.warmupEndS.load();
  const double last = m_ctx.lastStepEndS.load();
  // Once the last stage is done, count up to its final step, not up to when we look.
  if (m_pipelineDone.load() && last > 0) now = last;
  // A resumed run counts what was measured before its checkpoint (docs/metrics.md, "What
  // continues across a resume"): during its own warm-up the figure stays the checkpoint's.
  const auto priorSamples = static_cast<double>(m_ctx.priorMeasuredSamples);
  const double priorS = m_ctx.priorMeasuredS;
  if (warm < 0 || now <= warm) return priorS > 0 ? priorSamples / priorS : 0;
  return (priorSamples + static_cast<double>(m_ctx.samplesAfterWarmup.load())) /
         (priorS + now - warm);
}

void TorchRun::supervise() {
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
  if (!m_resumedFrom.empty() && m_resumedPartly)
    m_reporter.event({EventKind::Warning, 0.0, -1,
                      "the checkpoint predates the whole-run counters: samples/s and the stages' "
                      "steps, times and bubbles cover the resumed part only (from step " +
                          std::to_string(m_ctx.startStep) + ")"});
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

bool TorchRun::segmentAligned(int64_t step) const {
  std::lock_guard lock(m_ctx.failureMutex);
  if (!m_ctx.error.empty()) return false;
  for (size_t k = 1; k <= m_stages.size(); ++k)
    if (m_ctx.produced[k].load() != step) return false;
  return true;
}

int64_t TorchRun::trainSegment(double& lastCpu, double& lastT) {
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
