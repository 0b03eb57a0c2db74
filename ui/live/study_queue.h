#pragma once
// A study run from the workbench: its runs one at a time, as `stagewise-cli study run` runs
// them, through the same study::StudyDriver (the same resolved specs, names, sharing of
// identical runs, store links; a search's trials as the sampler draws them, pruned at their
// rungs, then each point's tuned runs), shown as a queue in Train: done, running and waiting
// runs with their settings, status (a pruned trial with the rung that stopped it) and accuracy. The
// Train workspace's Stop stops the current run and the study goes on; Skip leaves a waiting run
// out (or stops the running one and goes on); Stop study stops the run and the study. A study
// left unfinished (stopped, skipped, the window closed) continues with
// `stagewise-cli study resume ID`.

#include <QElapsedTimer>
#include <QPointer>
#include <QWidget>
#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

#include "bridge/engine_controller.h"
#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/metrics.h"
#include "stagewise/engine/run.h"
#include "stagewise/study/driver.h"
#include "stagewise/study/points.h"

namespace stagewise::report {
class ReportSession;
struct ReportDoc;
struct MachineInfo;
}  // namespace stagewise::report

class QLabel;
class QPushButton;
class QTreeWidget;

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::ui {

class StudyQueue : public QWidget {
  Q_OBJECT
 public:
  /// Starts one run of the study (its spec, a note for the log, where its record id goes, the
  /// checkpoint it continues from, and a search's rung evaluations and pruning watch); false
  /// when it cannot start.
  using RunStarter = std::function<bool(const engine::ExperimentSpec& spec, const QString& note,
                                        std::function<void(int64_t)> onRecorded,
                                        const ResumePoint& resume, RunHooks hooks)>;

  StudyQueue(RunStarter starter, QWidget* parent = nullptr);

  void setStore(std::shared_ptr<storage::RunStore> store) { m_store = std::move(store); }
  void setDevices(std::vector<std::string> devices) { m_devices = std::move(devices); }

  /// Checks the study as `study run` does (every grid point resolved; a search's points at its
  /// bounds, with a validation split when it chooses), records it in the store and starts its
  /// first run. Returns empty, or why it cannot start
  /// (nothing is stored then).
  QString start(const std::string& baseSpecJson, const study::StudyObject& study,
                const std::string& name);
  /// Runs a replication report's suite (its studies, one run at a time; stored runs of the same
  /// spec and seed are reused) and, when every run has ended, judges the findings off the UI
  /// thread and emits reportReady. Returns empty, or why it cannot start.
  QString startReport(std::shared_ptr<report::ReportSession> session,
                      const report::MachineInfo& machine);
  /// A run of the study is going on, or about to start.
  bool isRunning() const { return m_studyId != 0; }
  int64_t studyId() const { return m_lastStudyId; }
  /// The queue holds a replication report's runs (running or ended), not a study's.
  bool holdsReport() const { return m_reportEntries; }

  enum class EntryState { Waiting, Running, Completed, Stopped, Failed, Skipped, Shared, Pruned };
  struct Entry {
    std::string label;  ///< what the queue shows (a report's run: "finding: settings")
    size_t job = 0;     ///< a report's run: its job in the session
    study::GridPoint point;
    study::ResolvedPoint resolved;
    EntryState state = EntryState::Waiting;
    int64_t runId = 0;
    double testAccuracy = 0;
    double valAccuracy = std::nan("");
    double wallSeconds = 0;
    int64_t steps = 0;  ///< ended: the steps it trained
    /// Pruned: the rung that stopped it (1-based, of the search's rungs), its steps, and why.
    int rung = 0;
    int64_t prunedAt = 0;
    std::string pruneReason;
  };
  const std::vector<Entry>& entries() const { return m_entries; }
  QTreeWidget* view() const { return m_view; }
  QPushButton* skipButton() const { return m_skip; }
  QPushButton* stopStudyButton() const { return m_stopStudy; }
  QLabel* headerLabel() const { return m_header; }

  /// Where a report's throughput runs read the machine's load before they start, and how long
  /// they wait while it is busy (issue 36 §1.8; the default reads /proc, waits up to 60 s; a
  /// null `read` keeps the reader set before).
  void setQuietWait(std::function<engine::MachineLoad()> read, engine::QuietWait wait);

  /// The current run ended with `summary` (or could not start: none); the next one starts.
  void runEnded(const std::optional<engine::RunSummary>& summary);
  /// The queue's status text of an entry ("pruned at rung 2 (300 steps)").
  static QString statusText(const Entry& entry);
  /// Progress of the current run, for the study's ETA.
  void runProgress(const engine::Progress& progress);
  /// The queue's ETA in seconds (issue 36: the time per run, averaged over runs of 150 and 960
  /// steps, said 2.99 s while the running run alone had 11.5 s left): this machine's seconds a
  /// step, measured on the runs of `entries` ended so far and the running one (`current`, at
  /// `progress`), times the steps left, the running run's and each waiting run's planned steps
  /// (a length in epochs: as long as the runs measured). Never less than the running run's own
  /// ETA. -1 while nothing is measured.
  static double etaSeconds(const std::vector<Entry>& entries, int current,
                           const engine::Progress& progress);

 public Q_SLOTS:
  /// Leaves the selected waiting runs out; a selected running run is stopped and left out.
  void skipSelected();
  /// Stops the current run and the study (kept as stopped, to be resumed).
  void stopStudy();

 Q_SIGNALS:
  /// Asks the Train workspace to stop the current run.
  void stopRunRequested();
  /// The study finished (completed, or stopped): Runs may show it.
  void studyFinished(int64_t studyId);
  /// A report's runs ended and its findings are judged (or could not be: `error`).
  void reportReady(std::shared_ptr<const stagewise::report::ReportDoc> doc, const QString& error);
  void message(const QString& text);

 private:
  void runNext();
  void runNextOfReport(size_t entry);
  /// From an engine thread: the run of entry `index` has its record; shown on the UI thread.
  static void noteRunId(QPointer<StudyQueue> self, int point, int64_t runId);
  /// Adds the points the driver knows now (a search's next trials, its tuned runs) as waiting.
  void syncEntries();
  Entry* entryFor(int point);
  void runNextOfStudy();
  void finish(bool stopped);
  void finishReport(bool stopped);
  void showEntries();
  void updateHeader();

  /// Whether a report's fresh (throughput) entry must wait for a busy machine; says so.
  bool waitForQuiet(const Entry& entry);
  std::function<engine::MachineLoad()> m_readLoad;
  engine::QuietWait m_quietWait;
  QElapsedTimer m_busySince;  ///< valid while a throughput run waits for the machine

  RunStarter m_starter;
  std::shared_ptr<report::ReportSession> m_report;  ///< set while a report's suite runs
  std::shared_ptr<report::MachineInfo> m_machine;
  bool m_reportEntries = false;  ///< the entries are a report's runs
  std::shared_ptr<storage::RunStore> m_store;
  std::vector<std::string> m_devices = {"cpu"};
  int64_t m_studyId = 0;
  int64_t m_lastStudyId = 0;
  std::string m_name;
  study::StudyPlan m_plan;
  std::unique_ptr<study::StudyDriver> m_driver;
  std::optional<study::StudyDriver::Job> m_job;
  std::unique_ptr<study::PruneWatch> m_watch;
  std::shared_ptr<std::atomic<int64_t>> m_recordedId;
  std::vector<Entry> m_entries;
  int m_current = -1;
  bool m_skipCurrent = false;
  bool m_stopping = false;
  QElapsedTimer m_clock;
  engine::Progress m_progress;  ///< the running run's
  QLabel* m_header;
  QTreeWidget* m_view;
  QPushButton* m_skip;
  QPushButton* m_stopStudy;
};

}  // namespace stagewise::ui
