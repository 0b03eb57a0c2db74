#pragma once
// The Train workspace: run, pause, resume and stop the designed experiment (local, backprop, or
// both one after the other; a local run in one process or spread over several), its progress
// and ETA, the live dashboard and the event log. A failed stage is named in a banner.

#include <QDateTime>
#include <QPointer>
#include <QWidget>
#include <cmath>
#include <memory>
#include <optional>

#include "bridge/engine_controller.h"
#include "live/live_data.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::ui {

class DesignDocument;
class EventLog;
class LiveDashboard;
class SamplePanel;
class SteerPanel;
class StudyQueue;

class TrainWorkspace : public QWidget {
  Q_OBJECT
 public:
  TrainWorkspace(EngineController* controller, DesignDocument* doc, QWidget* parent = nullptr);

  LiveData* data() { return &m_data; }
  LiveDashboard* dashboard() const { return m_dashboard; }
  /// The header's progress: "120 / 300 steps · ETA 4 s" (no ETA once stopping or finished).
  QString progressText() const;
  EventLog* eventLog() const { return m_log; }
  /// The stage strip and live stage settings (steering the running run).
  SteerPanel* steerPanel() const { return m_steer; }
  QPushButton* runButton() const { return m_run; }
  QPushButton* pauseButton() const { return m_pause; }
  QPushButton* stopButton() const { return m_stop; }
  QComboBox* modeCombo() const { return m_mode; }
  /// The modes the Run button runs, one after the other.
  RunPlan currentPlan() const;
  void selectPlan(const RunPlan& plan);
  /// The plan to show once an experiment whose `mode` is `fileMode` is opened: `current` when it
  /// compares several modes, the file's among them; else the file's mode alone.
  static RunPlan planAfterOpening(const RunPlan& current, engine::Mode fileMode);
  /// Every plan the mode box offers, with its label.
  static std::vector<std::pair<QString, RunPlan>> planChoices();
  /// How many local processes a local run's stages are spread over (1: threads in this one).
  QSpinBox* processesSpin() const { return m_processes; }
  /// The processes the next local run would use: the spin box's value where it applies, else 1.
  int runProcesses() const;
  QProgressBar* progressBar() const { return m_progress; }
  QLabel* failureBanner() const { return m_banner; }
  /// "measuring x %": the live share, then the summary's (the log's) once the run ends.
  QLabel* measureLabel() const { return m_measure; }
  /// The study queue (shown once a study has been run).
  StudyQueue* studyQueue() const { return m_queue; }
  /// Where studies are recorded (none: a study cannot run).
  void setStore(std::shared_ptr<storage::RunStore> store);
  /// What a report of `baseSpecJson` would queue (issue 36: the dialog promised "about 10
  /// minutes" where 131 runs took 2 h 17 min): its runs and steps as planned, and the time
  /// they take at the step time measured on this store's finished runs of the same model and
  /// batch size (per mode where it has them). `seconds` is NaN when nothing was measured.
  struct ReportEstimate {
    int runs = 0;    ///< every run the plan needs
    int reused = 0;  ///< of them, those the store has (the report reuses them: no time)
    int64_t steps = 0;  ///< of the runs to train
    double seconds = std::nan("");
    int measuredRuns = 0;     ///< stored runs the step time comes from
    int proxied = 0;  ///< runs to train of a network or batch no stored run has: timed by the
                      ///< design's step time, scaled by their size (they may take longer)
    bool tunedLater = false;  ///< tuned studies add runs once the search has chosen
    int seeds = 0;            ///< seeds per group of the accuracy findings
    int64_t baseSteps = 0;    ///< the design's own length
    int64_t learnSteps = 0;   ///< a learning run's steps in this report
    int64_t speedSteps = 0;   ///< a throughput run's steps
    QString problem;          ///< the suite cannot be planned: why
  };
  ReportEstimate estimateReport(const std::string& baseSpecJson, bool quick) const;
  /// The estimate in words, with the time it would end ("done around 16:40").
  static QString describeEstimate(const ReportEstimate& estimate, bool quick, const QDateTime& now);
  /// `wanted`, or "wanted (2)", ... when the store holds studies of a report of that name.
  QString uniqueReportName(const QString& wanted) const;
  /// Runs the replication report's suite for `baseSpecJson` in the study queue (quick: fewer
  /// steps, 2 seeds); the queue's reportReady says when its findings are judged. Returns
  /// empty, or why it cannot start (shown in the banner too).
  QString startReport(const std::string& baseSpecJson, bool quick,
                      const QStringList& adaptations = {});
  /// Whether a cut moved in Design moves in the running run too (the Run menu's "Design's cuts
  /// steer the live run"; on by default, persisted). It applies while a local run of the same
  /// model and data as the design trains.
  void setDesignSteers(bool on);
  bool designSteers() const { return m_designSteers; }
  /// The stored record of the phase the Timeline shows (what its "Export trace (Perfetto)…"
  /// writes), or -1 when it has none (no store, nothing run yet). File › Export reads it.
  int64_t traceRunId() const;
  /// Summaries of the phases of the last plan, in order.
  const std::vector<engine::RunSummary>& summaries() const { return m_summaries; }

 public Q_SLOTS:
  /// Starts the designed experiment if it is valid and nothing is running.
  bool startRun();
  /// Continues a run from a checkpoint with the checkpoint's own spec and mode (recorded into
  /// the stored run `resume.continueRunId` when given). False if busy or the engine cannot.
  bool resumeRun(const engine::ExperimentSpec& spec, const ResumePoint& resume,
                 const QString& title);
  /// Trains `spec` again with a stored run's changes at the same steps (Runs → Run again, as
  /// `stagewise-cli train --replay`). False if busy.
  bool replayRun(const engine::ExperimentSpec& spec, const std::vector<engine::RunChange>& changes,
                 const QString& title);
  /// Queues the designed study (Design → Study) and starts its first run. False (with the
  /// reason in the banner) when it cannot.
  bool startStudy();
  void togglePause();
  void stopRun();
  void updateControls();

 Q_SIGNALS:
  void runStarted();
  void runFinished();
  void message(const QString& text);

 private:
  /// Before a resume or a replay of a run in `mode`: the mode box as planAfterOpening() leaves
  /// it; the note for the log where it keeps a set that is not what runs (else empty).
  QString keepPlanFor(engine::Mode mode);
  bool begin(const engine::ExperimentSpec& spec, RunPlan plan, const ResumePoint& resume,
             const QString& note, int processes, std::function<void(int64_t)> onRecorded = {},
             RunHooks hooks = {});
  void onBatch(const PhaseBatch& batch);
  void setLivePace(const engine::RunInfo* phase);
  void onProgress(const engine::Progress& progress, int phase, int phases);
  /// `forSpec`: the run was refused for the spec as it is; the banner goes with the next edit.
  void showFailure(const QString& text, bool forSpec = false);
  /// Train as before any run: no plots, strip, progress or last status (a report ended: what
  /// it ran is in its report and in Runs).
  void clearLiveView();
  /// A steering event of the engine: the strip, the plots' event lines, the live partition.
  void onSteerEvent(int phase, const engine::RunEvent& event);
  void updateSteering();
  /// Design's cuts changed: asks the running run for them when it is this design's (see
  /// setDesignSteers).
  void followDesignCuts();
  /// Why a local run cannot be spread over processes here, empty if it can.
  QString processesBlockReason() const;
  void updateProcesses();
  QString phaseName(int phase) const;

  EngineController* m_controller;
  DesignDocument* m_doc;
  LiveData m_data;
  LiveDashboard* m_dashboard;
  EventLog* m_log;
  SteerPanel* m_steer;
  bool m_designSteers = true;
  std::vector<int> m_designCuts;  ///< Design's cuts when last seen (a change is a cut moved)
  SamplePanel* m_sample;  ///< language models: the text at each evaluation
  QPushButton* m_run;
  QPushButton* m_pause;
  QPushButton* m_stop;
  QComboBox* m_mode;
  QLabel* m_processesLabel;
  QSpinBox* m_processes;
  int m_wantedProcesses = 1;  // what the user chose (saved); shown clamped to the stage count
  QProgressBar* m_progress;
  QLabel* m_eta;
  QString m_steps;    ///< the header's steps done, without the ETA
  QLabel* m_measure;  ///< the live measurement share
  QLabel* m_status;
  QLabel* m_banner;
  bool m_bannerForSpec = false;
  StudyQueue* m_queue;
  std::shared_ptr<storage::RunStore> m_store;
  /// A resumed run's stored record and the checkpoint's step: its points before that step are
  /// shown with the first batch, so Train shows the whole run, not only the resumed part.
  std::optional<std::pair<int64_t, int64_t>> m_earlierPart;
  void showEarlierPart(int phase);
  std::vector<engine::RunSummary> m_summaries;
  /// The store record of each phase of the plan running (or last run), in phase order, as the
  /// recorder creates them: the Timeline's trace export writes the phase shown.
  std::vector<int64_t> m_recordedRuns;
  static void noteRecorded(QPointer<TrainWorkspace> self, int64_t runId);
  void exportTrace(int phase);
};

}  // namespace stagewise::ui
