#include "bridge/engine_controller.h"

#include <QDateTime>

#include <chrono>

namespace stagewise::ui {

EngineController::EngineController(EngineServices services, QObject* parent)
    : QObject(parent), m_services(std::move(services)) {
  // 4 Hz: frequent enough for progress and state changes to feel immediate, rare enough that
  // the progress bar and ETA label cost little: at 10 Hz their repaints alone took ~15 ms of
  // UI-thread CPU per second of a local run (docs/benchmarks.md).
  m_drain.setInterval(kDrainMs);
  connect(&m_drain, &QTimer::timeout, this, &EngineController::drain);
}

EngineController::~EngineController() {
  {
    std::lock_guard lock(m_steerQueueMutex);
    m_steerQuit = true;
    m_steerQueue.clear();
  }
  m_steerCv.notify_all();
  if (m_steerThread.joinable()) m_steerThread.join();
  m_stopRequested = true;
  {
    std::lock_guard lock(m_runMutex);
    if (m_run) m_run->requestStop();
  }
  if (m_worker.joinable()) m_worker.join();
}

engine::Mode EngineController::phaseMode(int phase) const {
  return phase >= 0 && size_t(phase) < m_modes.size() ? m_modes[size_t(phase)]
                                                      : engine::Mode::Local;
}

int EngineController::phaseProcesses(int phase) const {
  return phaseMode(phase) != engine::Mode::Backprop ? m_processes : 1;
}

bool EngineController::start(const engine::ExperimentSpec& spec, RunPlan plan,
                             const ResumePoint& resume, int processes,
                             std::function<void(int64_t)> onRecorded, RunHooks hooks) {
  if (isBusy() || !m_services.createRun || processes < 1 || plan.empty()) return false;
  if (!resume.checkpoint.empty() && (!m_services.resumeRun || plan.size() != 1)) return false;
  if (processes > 1 && (!m_services.createDistributedRun || !resume.checkpoint.empty()))
    return false;
  if (m_worker.joinable()) m_worker.join();  // the last plan's worker has already returned
  m_feed.reset();
  m_stopRequested = false;
  m_pauseRequested = false;
  m_workerPhase = 0;
  m_modes = plan;
  m_processes = processes;
  m_phaseCount = int(m_modes.size());
  m_currentPhase = 0;
  m_progress = {};
  setState(State::Starting);
  m_worker = std::thread(
      [this, spec, modes = m_modes, resume, processes, onRecorded = std::move(onRecorded),
       hooks = std::move(hooks)] { work(spec, modes, resume, processes, onRecorded, hooks); });
  m_drain.start();
  return true;
}

std::unique_ptr<engine::Run> EngineController::createPhaseRun(const engine::ExperimentSpec& spec,
                                                              engine::RunObserver* observer,
                                                              int phase, const ResumePoint& resume,
                                                              int processes,
                                                              const RunHooks& hooks) {
  const bool resuming = phase == 0 && !resume.checkpoint.empty();
  if ((!hooks.evalAtSteps.empty() || !hooks.changes.empty() || !hooks.sample.prompt.empty()) &&
      m_services.createRunWithOptions && processes <= 1) {
    engine::RunOptions options;
    options.evalAtSteps = hooks.evalAtSteps;
    options.changes = hooks.changes;
    options.sampleAtEvaluations = hooks.sample;
    if (resuming) options.resumeFrom = resume.checkpoint;
    return m_services.createRunWithOptions(spec, observer, options);
  }
  if (resuming) return m_services.resumeRun(spec, observer, resume.checkpoint);
  if (spec.mode != engine::Mode::Backprop && processes > 1)
    return m_services.createDistributedRun(spec, observer, processes,
                                           [this] { return m_stopRequested.load(); });
  return m_services.createRun(spec, observer);
}

void EngineController::work(engine::ExperimentSpec spec, std::vector<engine::Mode> modes,
                            ResumePoint resume, int processes,
                            std::function<void(int64_t)> onRecorded, RunHooks hooks) {
  // The runs of one plan of several modes share a tag: one comparison in Runs.
  const std::string planTag =
      "compare-" +
      QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")).toStdString();
  for (size_t phase = 0; phase < modes.size() && !m_stopRequested; ++phase) {
    m_workerPhase = int(phase);
    engine::ExperimentSpec phaseSpec = spec;
    phaseSpec.mode = modes[phase];
    FeedObserver feed(&m_feed, int(phase));
    std::unique_ptr<engine::RunObserver> recorder;
    if (m_services.createRecorder) {
      // The store's notices come from its writer thread while the run goes on; the time is
      // counted from here, close enough to the run's own clock for the event log.
      const auto t0 = std::chrono::steady_clock::now();
      StoreNoticeSink onNotice = [this, phase, t0](const StoreNotice& notice) {
        const double t =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m_feed.event(int(phase),
                     {notice.problem ? engine::EventKind::Warning : engine::EventKind::Info, t, -1,
                      "run store: " + notice.message});
      };
      try {
        RecordRequest request;
        request.continueRunId = phase == 0 ? resume.continueRunId : std::nullopt;
        request.onNotice = std::move(onNotice);
        if (modes.size() > 1) request.tags = {planTag};
        request.onRecorded = onRecorded;
        if (phaseSpec.mode != engine::Mode::Backprop && processes > 1)
          request.stageRanks = engine::assignRanks(phaseSpec, phaseSpec.stageCount(), processes);
        recorder = m_services.createRecorder(std::move(request));
      } catch (const std::exception& e) {
        m_feed.event(int(phase), {engine::EventKind::Warning, 0, -1,
                                  std::string("this run will not be saved: ") + e.what()});
      }
    }
    FanoutObserver fanout({&feed, recorder.get(), hooks.observer});
    engine::RunSummary summary;
    try {
      // Declared after the observers, so it is destroyed (joined) before them.
      std::unique_ptr<engine::Run> run =
          createPhaseRun(phaseSpec, &fanout, int(phase), resume, processes, hooks);
      // Unpublished before the run is destroyed, however this block is left.
      struct Unpublish {
        EngineController* self;
        ~Unpublish() {
          std::lock_guard steering(self->m_steerRunMutex);  // no request is inside the run
          std::lock_guard lock(self->m_runMutex);
          self->m_run = nullptr;
        }
      } unpublish{this};
      {
        std::lock_guard lock(m_runMutex);
        m_run = run.get();
        if (m_stopRequested) run->requestStop();
      }
      if (hooks.onCreated) hooks.onCreated(*run);
      run->start();
      if (m_pauseRequested) run->pause();
      summary = run->wait();
    } catch (const std::exception& e) {
      // Stopped while it was starting (waiting for other processes to join): not a failure.
      if (m_stopRequested)
        m_feed.event(int(phase), {engine::EventKind::Stopped, 0, -1,
                                  std::string("stopped before the run started: ") + e.what()});
      else
        m_feed.startFailed(int(phase), e.what());
      break;
    }
    if (const std::string error = fanout.firstError(); !error.empty())
      m_feed.event(int(phase), {engine::EventKind::Warning, summary.wallSeconds, -1,
                                "recording the run failed: " + error});
    if (summary.status != engine::RunStatus::Completed) break;
  }
  m_feed.planDone();
}

void EngineController::pause() {
  if (m_state != State::Running && m_state != State::Starting) return;
  m_pauseRequested = true;
  {
    std::lock_guard lock(m_runMutex);
    if (m_run) m_run->pause();
  }
  setState(State::Paused);
}

void EngineController::resume() {
  if (m_state != State::Paused) return;
  m_pauseRequested = false;
  {
    std::lock_guard lock(m_runMutex);
    if (m_run) m_run->resume();
  }
  setState(State::Running);
}

void EngineController::stop() {
  if (!isBusy() || m_state == State::Stopping) return;
  m_stopRequested = true;
  {
    std::lock_guard lock(m_runMutex);
    if (m_run) {
      // A paused run must wake up to notice the stop.
      if (m_pauseRequested) m_run->resume();
      m_run->requestStop();
    }
  }
  setState(State::Stopping);
}

void EngineController::requestRepartition(const std::vector<int>& cuts) {
  QStringList parts;
  for (const int c : cuts) parts << QString::number(c);
  steer(tr("cuts [%1]").arg(parts.join(QLatin1Char(','))),
        [cuts](engine::Run& run) { return run.repartition(cuts); });
}

void EngineController::requestStageChange(int stage, const std::string& key, double value) {
  steer(tr("S%1 %2 = %3").arg(stage + 1).arg(QString::fromStdString(key)).arg(value),
        [stage, key, value](engine::Run& run) { return run.changeStage(stage, key, value); });
}

void EngineController::requestStagePause(int stage, bool paused) {
  steer((paused ? tr("pause S%1") : tr("resume S%1")).arg(stage + 1),
        [stage, paused](engine::Run& run) { return run.pauseStage(stage, paused); });
}

void EngineController::steer(QString what, std::function<engine::ChangeResult(engine::Run&)> call) {
  {
    std::lock_guard lock(m_steerQueueMutex);
    m_steerQueue.push_back({std::move(what), std::move(call)});
    if (!m_steerThread.joinable()) m_steerThread = std::thread([this] { steerLoop(); });
  }
  m_steerCv.notify_all();
}

void EngineController::steerLoop() {
  for (;;) {
    SteerRequest request;
    {
      std::unique_lock lock(m_steerQueueMutex);
      m_steerCv.wait(lock, [this] { return m_steerQuit || !m_steerQueue.empty(); });
      if (m_steerQuit) return;
      request = std::move(m_steerQueue.front());
      m_steerQueue.pop_front();
    }
    engine::ChangeResult result{false, "no run is training"};
    try {
      std::lock_guard steering(m_steerRunMutex);
      engine::Run* run = nullptr;
      {
        std::lock_guard lock(m_runMutex);
        run = m_run;
      }
      if (run) result = request.call(*run);
    } catch (const std::exception& e) {
      result = {false, e.what()};
    }
    QMetaObject::invokeMethod(
        this,
        [this, what = request.what, result] {
          Q_EMIT steerAnswered(what, result.accepted, QString::fromStdString(result.reason));
        },
        Qt::QueuedConnection);
  }
}

void EngineController::setState(State state) {
  if (state == m_state) return;
  m_state = state;
  Q_EMIT stateChanged(state);
}

void EngineController::drain() {
  FeedDrain drained = m_feed.take();
  for (const PhaseBatch& batch : drained.batches) {
    m_currentPhase = batch.phase;
    if (batch.info) {
      m_progress = {};
      m_progress.totalSteps = batch.info->totalSteps;
      if (m_state == State::Starting) setState(State::Running);
    }
    if (batch.summary) {
      // The run is gone once it has finished: its summary has the final count.
      m_progress.step = batch.summary->steps;
      m_progress.elapsedS = batch.summary->wallSeconds;
      m_progress.etaS = 0;
    }
    Q_EMIT batchArrived(batch);
  }
  {
    std::lock_guard lock(m_runMutex);
    if (m_run) {
      m_progress = m_run->progress();
      m_currentPhase = m_workerPhase;
    }
  }
  Q_EMIT progressChanged(m_progress, m_currentPhase, m_phaseCount);
  if (drained.planDone) {
    m_drain.stop();
    if (m_worker.joinable()) m_worker.join();  // it has returned: planDone is its last act
    setState(State::Idle);
    Q_EMIT planFinished();
  }
}

}  // namespace stagewise::ui
