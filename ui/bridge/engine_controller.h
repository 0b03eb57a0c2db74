#pragma once
// The one object that runs the engine for the GUI. Runs are created, started and waited for on
// a worker thread; observer callbacks land in a RunFeed under a short lock, and a 4 Hz timer
// on the UI thread drains it and emits one batch per phase. Pause, resume and stop return at
// once; steering requests (re-partition, stage settings) go to a thread of their own, since the
// engine may hold them while it rebuilds the stages. Nothing here ever blocks the UI thread on
// the engine.

#include <QObject>
#include <QTimer>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bridge/run_feed.h"
#include "common/services.h"
#include "stagewise/engine/run.h"

namespace stagewise::ui {

/// Which modes to run, one after the other on the same data (local, pipeline, backprop: any
/// non-empty set, in that order).
using RunPlan = std::vector<engine::Mode>;

/// Where a run continues from: a checkpoint folder and the stored run it belongs to.
struct ResumePoint {
  std::string checkpoint;                ///< empty: a fresh run
  std::optional<int64_t> continueRunId;  ///< the store record to continue, if known
};

/// What a study adds to one run: evaluations after these step counts (a search's rungs), an
/// extra observer (the pruning watch; it must outlive the plan), and a call with the run as soon
/// as it exists (on the worker thread), so the observer can stop it from the run's own thread.
struct RunHooks {
  std::vector<int64_t> evalAtSteps;
  engine::RunObserver* observer = nullptr;
  std::function<void(engine::Run&)> onCreated;
  /// Changes made at given steps (a replayed history, Runs → Run again); as RunOptions::changes.
  std::vector<engine::RunChange> changes;
  /// Text generated at every evaluation (Train's Sample panel); as RunOptions::sampleAtEvaluations.
  engine::SampleRequest sample;
};

class EngineController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Starting, Running, Paused, Stopping };
  Q_ENUM(State)

  explicit EngineController(EngineServices services, QObject* parent = nullptr);
  ~EngineController() override;

  /// Starts the plan on the worker thread; false if a run is still going. With a checkpoint in
  /// `resume` the plan must be one mode (the checkpoint's), and the services must resume.
  /// `processes` > 1 spreads the local and pipeline phases' stages over that many local processes
  /// (the services must run distributed; not with a checkpoint).
  /// `onRecorded` is told each phase's store record id as soon as it exists (on an engine
  /// thread). `hooks` apply to every phase.
  bool start(const engine::ExperimentSpec& spec, RunPlan plan, const ResumePoint& resume = {},
             int processes = 1, std::function<void(int64_t)> onRecorded = {}, RunHooks hooks = {});
  /// Whether the engine can continue runs from checkpoints.
  bool canResume() const { return bool(m_services.resumeRun); }
  /// Whether the engine can spread a local run over several processes.
  bool canRunProcesses() const { return bool(m_services.createDistributedRun); }
  void pause();
  void resume();
  void stop();

  State state() const { return m_state; }
  bool isBusy() const { return m_state != State::Idle; }
  /// Progress of the current phase (updated by the drain timer).
  const engine::Progress& progress() const { return m_progress; }
  int currentPhase() const { return m_currentPhase; }
  int phaseCount() const { return m_phaseCount; }
  /// Mode of phase `phase` of the current plan.
  engine::Mode phaseMode(int phase) const;
  /// Processes phase `phase` of the current plan runs in (1 but for a distributed local phase).
  int phaseProcesses(int phase) const;

  // Steering the running phase (docs/user-guide.md, "Steering a run"). Each returns at once; the
  // engine's answer comes as steerAnswered (a refusal also as the engine's warning event, an
  // applied change as its event once it has taken effect).
  void requestRepartition(const std::vector<int>& cuts);
  void requestStageChange(int stage, const std::string& key, double value);
  void requestStagePause(int stage, bool paused);

  /// How often the feed is drained (default kDrainMs).
  void setDrainInterval(int ms) { m_drain.setInterval(ms); }
  int drainInterval() const { return m_drain.interval(); }
  static constexpr int kDrainMs = 250;
  const EngineServices& services() const { return m_services; }

 Q_SIGNALS:
  void stateChanged(stagewise::ui::EngineController::State state);
  /// Everything that arrived for one phase since the last drain, in order.
  void batchArrived(const stagewise::ui::PhaseBatch& batch);
  void progressChanged(const stagewise::engine::Progress& progress, int phase, int phases);
  /// The whole plan is over (completed, stopped, failed or could not start).
  void planFinished();
  /// The engine's answer to a steering request: `what` names the request ("cuts [2]",
  /// "S2 delay_ms = 20", "pause S2"); `reason` says why it was refused.
  void steerAnswered(const QString& what, bool accepted, const QString& reason);

 private:
  void drain();
  void setState(State state);
  std::unique_ptr<engine::Run> createPhaseRun(const engine::ExperimentSpec& spec,
                                              engine::RunObserver* observer, int phase,
                                              const ResumePoint& resume, int processes,
                                              const RunHooks& hooks);
  void work(engine::ExperimentSpec spec, std::vector<engine::Mode> modes, ResumePoint resume,
            int processes, std::function<void(int64_t)> onRecorded, RunHooks hooks);

  void steer(QString what, std::function<engine::ChangeResult(engine::Run&)> call);
  void steerLoop();

  EngineServices m_services;
  RunFeed m_feed;
  QTimer m_drain;
  std::thread m_worker;
  std::mutex m_runMutex;  // guards m_run: the worker sets it, the UI thread calls into it
  engine::Run* m_run = nullptr;
  std::atomic<bool> m_stopRequested{false};
  std::atomic<bool> m_pauseRequested{false};
  std::atomic<int> m_workerPhase{0};
  std::vector<engine::Mode> m_modes;
  State m_state = State::Idle;
  engine::Progress m_progress;
  int m_currentPhase = 0;
  int m_phaseCount = 0;
  int m_processes = 1;
  // Steering: requests queue for m_steerThread, which calls into the run holding m_steerRunMutex
  // (the worker takes it before the run is destroyed), so a request held by a rebuild never
  // holds m_runMutex, which the UI thread's drain takes.
  struct SteerRequest {
    QString what;
    std::function<engine::ChangeResult(engine::Run&)> call;
  };
  std::thread m_steerThread;
  std::mutex m_steerQueueMutex;
  std::condition_variable m_steerCv;
  std::deque<SteerRequest> m_steerQueue;
  bool m_steerQuit = false;
  std::mutex m_steerRunMutex;
};

}  // namespace stagewise::ui
