#include "live/study_queue.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>

#include <thread>

#include "common/format.h"
#include "stagewise/report/session.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::ui {

namespace {

QString stateText(StudyQueue::EntryState s) {
  using S = StudyQueue::EntryState;
  switch (s) {
    case S::Waiting:
      return QObject::tr("waiting");
    case S::Running:
      return QObject::tr("running");
    case S::Completed:
      return QObject::tr("completed");
    case S::Stopped:
      return QObject::tr("stopped");
    case S::Failed:
      return QObject::tr("failed");
    case S::Skipped:
      return QObject::tr("skipped");
    case S::Shared:
      return QObject::tr("shared");
    case S::Pruned:
      return QObject::tr("pruned");
  }
  return {};
}

}  // namespace

StudyQueue::StudyQueue(RunStarter starter, QWidget* parent)
    : QWidget(parent), m_starter(std::move(starter)) {
  m_header = new QLabel(this);
  m_header->setWordWrap(true);
  m_view = new QTreeWidget(this);
  m_view->setRootIsDecorated(false);
  m_view->setUniformRowHeights(true);
  // A run's settings end with what tells it apart (lr, seed…): elide the middle (issue 36).
  m_view->setTextElideMode(Qt::ElideMiddle);
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->setHeaderLabels({tr("#"), tr("Settings"), tr("Status"), tr("Val acc."), tr("Test acc."),
                           tr("Time"), tr("Run")});
  m_view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_view->header()->setSectionResizeMode(1, QHeaderView::Stretch);
  m_view->header()->setStretchLastSection(false);
  m_view->setToolTip(
      tr("The study's runs in order: done, running and waiting. A run whose spec equals an "
         "earlier one's (backprop ignores the cuts) shares that run. A search lists its trials "
         "as the sampler draws them; a trial that falls behind at a rung is pruned (the rung and "
         "why are in its status), and each point's tuned runs appear once its trials have "
         "ended. Val acc.: validation accuracy (what a search chooses on; a pruned trial's at "
         "its rung)."));
  m_skip = new QPushButton(tr("Skip"), this);
  m_skip->setToolTip(
      tr("Leave the selected waiting runs out (the running one: stop it and go on). Skipped "
         "runs run when the study is resumed (stagewise-cli study resume ID)."));
  m_stopStudy = new QPushButton(tr("Stop study"), this);
  m_stopStudy->setToolTip(
      tr("Stop the current run and the study. Resume it with stagewise-cli study resume ID: "
         "completed runs are kept."));
  connect(m_skip, &QPushButton::clicked, this, &StudyQueue::skipSelected);
  connect(m_stopStudy, &QPushButton::clicked, this, &StudyQueue::stopStudy);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_header, 1);
  buttons->addWidget(m_skip);
  buttons->addWidget(m_stopStudy);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(buttons);
  layout->addWidget(m_view, 1);
  updateHeader();
}

QString StudyQueue::start(const std::string& baseSpecJson, const study::StudyObject& object,
                          const std::string& name) {
  if (isRunning()) return tr("A study is already running.");
  if (!m_store)
    return tr("Studies are kept in the run store, and none is open (File → Run store).");
  study::StudyPlan plan;
  size_t points = 0;
  try {
    plan = study::planOf(object);
    if (plan.isSearch() && plan.search.trials == 0) plan.search.trials = study::kDefaultTrials;
    study::checkStudy(baseSpecJson, plan, m_devices);
    points =
        plan.isSearch() ? size_t(study::searchPointCount(plan)) : study::expandGrid(plan).size();
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what()).replace(QStringLiteral("--vary "), QString());
  }
  if (points == 0) return tr("The study has no runs.");
  try {
    m_studyId = m_store->createStudy(
        study::newStudyRecord(name, baseSpecJson, plan, object.target, points));
    m_driver = std::make_unique<study::StudyDriver>(*m_store, m_studyId, m_devices);
  } catch (const std::exception& e) {
    m_studyId = 0;
    return tr("The study could not be stored: %1").arg(QString::fromStdString(e.what()));
  }
  m_lastStudyId = m_studyId;
  m_reportEntries = false;
  m_name = name;
  m_plan = m_driver->plan();
  m_entries.clear();
  m_job.reset();
  m_watch.reset();
  m_current = -1;
  m_skipCurrent = m_stopping = false;
  m_progress = {};
  m_clock.start();
  syncEntries();
  showEntries();
  Q_EMIT message(
      (m_plan.isSearch()
           ? tr("Study %1 '%2': a search of %3%4")
                 .arg(m_studyId)
                 .arg(QString::fromStdString(name))
                 .arg(formatCountOf(qint64(points), tr("run"), tr("runs")))
                 .arg(m_plan.search.prune ? tr(" at most (trials may be pruned)") : QString())
           : tr("Study %1 '%2': %3")
                 .arg(m_studyId)
                 .arg(QString::fromStdString(name))
                 .arg(formatCountOf(qint64(points), tr("run"), tr("runs")))));
  runNext();
  return {};
}

void StudyQueue::syncEntries() {
  if (!m_driver || !m_store) return;
  std::vector<study::PointWork> work;
  try {
    storage::RunReader reader(*m_store);
    const auto record = reader.study(m_studyId);
    if (!record) return;
    work = study::pendingWork(reader, *record);
  } catch (const std::exception& e) {
    Q_EMIT message(
        tr("The study's points could not be read: %1").arg(QString::fromStdString(e.what())));
    return;
  }
  for (const auto& w : work) {
    if (Entry* e = entryFor(w.point.index)) {
      if (e->state == EntryState::Waiting) e->point = w.point;  // a tuned run's chosen values
      continue;
    }
    Entry e;
    e.point = w.point;
    m_entries.push_back(std::move(e));
  }
  std::stable_sort(m_entries.begin(), m_entries.end(),
                   [](const Entry& a, const Entry& b) { return a.point.index < b.point.index; });
}

StudyQueue::Entry* StudyQueue::entryFor(int point) {
  for (auto& e : m_entries)
    if (e.point.index == point) return &e;
  return nullptr;
}

void StudyQueue::noteRunId(QPointer<StudyQueue> self, int point, int64_t runId) {
  if (!self) return;
  QMetaObject::invokeMethod(
      self.data(),
      [self, point, runId] {
        if (!self) return;
        if (Entry* e = self->entryFor(point)) {
          e->runId = runId;
          self->showEntries();
        }
      },
      Qt::QueuedConnection);
}

QString StudyQueue::startReport(std::shared_ptr<report::ReportSession> session,
                                const report::MachineInfo& machine) {
  if (isRunning()) return tr("A study is already running.");
  std::vector<size_t> left;
  try {
    left = session->begin();
  } catch (const std::exception& e) {
    return tr("The report's studies could not be stored: %1").arg(QString::fromStdString(e.what()));
  }
  std::vector<Entry> entries;
  for (size_t job : left) {
    Entry e;
    e.job = job;
    e.label = session->jobs()[job].label;
    e.point.index = int(entries.size());
    e.resolved.spec = session->jobs()[job].spec;
    e.resolved.identity = session->jobs()[job].identity;
    entries.push_back(std::move(e));
  }
  m_report = std::move(session);
  m_machine = std::make_shared<report::MachineInfo>(machine);
  m_studyId = m_report->studyIds().empty() ? -1 : m_report->studyIds().front();
  m_lastStudyId = m_studyId;
  m_reportEntries = true;
  m_name = tr("replication report").toStdString();
  m_plan = {};
  m_entries = std::move(entries);
  m_current = -1;
  m_skipCurrent = m_stopping = false;
  m_progress = {};
  m_clock.start();
  showEntries();
  Q_EMIT message(tr("Replication report: %1 studies, %2 to train, %3 reused from the store")
                     .arg(m_report->suite().studies.size())
                     .arg(formatCountOf(qint64(m_entries.size()), tr("run"), tr("runs")))
                     .arg(m_report->reused()));
  runNext();
  return {};
}

void StudyQueue::setQuietWait(std::function<engine::MachineLoad()> read, engine::QuietWait wait) {
  if (read) m_readLoad = std::move(read);  // null: keep the reader (tests inject theirs)
  m_quietWait = wait;
}

bool StudyQueue::waitForQuiet(const Entry& entry) {
  if (!m_report->jobs()[entry.job].fresh || m_quietWait.maxWaitS <= 0) return false;
  if (!m_readLoad) m_readLoad = [] { return engine::LoadMeter().start(); };
  std::string why;
  const bool busy = engine::machineBusy(m_readLoad(), &why, m_quietWait.threshold);
  const QString read = QString::fromStdString(why);
  if (busy && !m_busySince.isValid()) {
    m_busySince.start();
    Q_EMIT message(tr("The machine is busy (%1): the throughput run waits up to %2 s")
                       .arg(read)
                       .arg(m_quietWait.maxWaitS));
  }
  if (!m_busySince.isValid()) return false;
  const double waited = m_busySince.elapsed() / 1000.0;
  if (busy && waited < m_quietWait.maxWaitS) {
    QTimer::singleShot(int(m_quietWait.pollS * 1000), this, &StudyQueue::runNext);
    return true;
  }
  Q_EMIT message(busy
                     ? tr("The machine is still busy after %1 s (%2): measuring anyway; the "
                          "run's summary records the load")
                           .arg(waited, 0, 'f', 0)
                           .arg(read)
                     : tr("The machine is quiet after %1 s (%2)").arg(waited, 0, 'f', 0).arg(read));
  m_busySince.invalidate();
  return false;
}

void StudyQueue::runNextOfReport(size_t i) {
  if (waitForQuiet(m_entries[i])) return;
  Entry& e = m_entries[i];
  engine::ExperimentSpec spec = e.resolved.spec;
  spec.name = m_report->runName(e.job);
  m_current = int(i);
  m_skipCurrent = false;
  m_progress = {};
  e.state = EntryState::Running;
  auto onRecorded = [session = m_report, job = e.job, self = QPointer<StudyQueue>(this),
                     point = e.point.index](int64_t runId) {
    try {
      session->linkRun(job, runId);  // the store is thread-safe
    } catch (const std::exception&) {
      // the run goes on; the report leaves out what it cannot find
    }
    noteRunId(self, point, runId);
  };
  showEntries();
  const QString note = tr("Replication report, run %1 of %2: %3")
                           .arg(i + 1)
                           .arg(m_entries.size())
                           .arg(QString::fromStdString(e.label));
  if (!m_starter(spec, note, onRecorded, {}, {})) {
    e.state = EntryState::Failed;
    m_report->runEnded(e.job, false, "it could not start");
    m_current = -1;
    QMetaObject::invokeMethod(this, &StudyQueue::runNext, Qt::QueuedConnection);
  }
}

void StudyQueue::runNext() {
  if (!isRunning()) return;
  if (m_report) {
    for (size_t i = 0; i < m_entries.size(); ++i)
      if (m_entries[i].state == EntryState::Waiting) return runNextOfReport(i);
    // issue 32 §5: the search has ended; the learning findings again at each method's rate.
    // (The workbench trains every trial to its end: it does not prune.)
    std::vector<size_t> tuned;
    try {
      tuned = m_report->planTuned(m_devices);
    } catch (const std::exception& e) {
      Q_EMIT message(tr("The report's tuned runs could not be planned: %1")
                         .arg(QString::fromStdString(e.what())));
    }
    if (!tuned.empty()) {
      QStringList rates;
      for (const auto& [mode, lr] : m_report->chosenRates())
        rates << QStringLiteral("%1 %2").arg(QString::fromStdString(mode)).arg(lr, 0, 'g', 3);
      Q_EMIT message(tr("Replication report: the learning-rate search chose %1 (on validation); "
                        "%2 tuned runs to train")
                         .arg(rates.isEmpty() ? tr("none") : rates.join(QStringLiteral(", ")))
                         .arg(tuned.size()));
      for (size_t job : tuned) {
        Entry e;
        e.job = job;
        e.label = m_report->jobs()[job].label;
        e.point.index = int(m_entries.size());
        e.resolved.spec = m_report->jobs()[job].spec;
        e.resolved.identity = m_report->jobs()[job].identity;
        m_entries.push_back(std::move(e));
      }
      showEntries();
      return runNext();
    }
    finish(false);
    return;
  }
  runNextOfStudy();
}

void StudyQueue::runNextOfStudy() {
  while (isRunning()) {
    syncEntries();
    std::optional<study::StudyDriver::Job> job;
    try {
      job = m_driver->next(
          [this](const std::string& text) { Q_EMIT message(QString::fromStdString(text)); },
          [this](int point, int64_t runId) {
            if (Entry* e = entryFor(point)) {
              e->state = EntryState::Shared;
              e->runId = runId;
            }
          });
    } catch (const std::exception& ex) {
      Q_EMIT message(tr("The study cannot go on: %1").arg(QString::fromStdString(ex.what())));
      finish(true);
      return;
    }
    if (!job) break;
    syncEntries();
    Entry* e = entryFor(job->work.point.index);
    if (!e) {  // not listed by pendingWork (cannot happen: the driver hands out its points)
      m_entries.push_back({});
      e = &m_entries.back();
      e->point = job->work.point;
    }
    e->state = EntryState::Running;
    e->point = job->work.point;
    e->resolved.spec = job->spec;
    m_current = int(e - m_entries.data());
    m_skipCurrent = false;
    m_progress = {};
    m_watch = m_driver->watch(*job);
    m_job = std::move(job);
    RunHooks hooks;
    hooks.evalAtSteps = m_job->options.evalAtSteps;
    hooks.observer = m_watch.get();
    if (m_watch)
      // Stopped from the run's reporting thread the moment the pruner decides, as the CLI does.
      hooks.onCreated = [watch = m_watch.get()](engine::Run& run) {
        watch->setOnPrune([&run] { run.requestStop(); });
      };
    ResumePoint resume;
    if (m_job->continueRunId) {
      resume.checkpoint = m_job->options.resumeFrom;
      resume.continueRunId = m_job->continueRunId;
    }
    // Linked from the engine's thread as soon as the record exists (the store is
    // thread-safe), so a study killed mid-run still knows its run; the queue hears it after.
    m_recordedId = std::make_shared<std::atomic<int64_t>>(0);
    auto onRecorded = [driver = m_driver.get(), job = *m_job, recorded = m_recordedId,
                       self = QPointer<StudyQueue>(this)](int64_t runId) {
      recorded->store(runId);
      try {
        driver->link(job, runId);
      } catch (const std::exception&) {
        // the run goes on regardless; `study resume` finds it by its name
      }
      noteRunId(self, job.work.point.index, runId);
    };
    const QString note = tr("Study %1, run %2 of %3: %4")
                             .arg(m_studyId)
                             .arg(m_job->position)
                             .arg(m_job->total)
                             .arg(QString::fromStdString(m_job->description));
    showEntries();
    if (!m_starter(m_job->spec, note, onRecorded, resume, hooks)) {
      entryFor(m_job->work.point.index)->state = EntryState::Failed;
      m_driver->ended(*m_job, std::nullopt, engine::RunStatus::Failed, nullptr);
      m_current = -1;
      m_job.reset();
      m_watch.reset();
      Q_EMIT message(tr("Run %1 of the study could not start").arg(e->point.index + 1));
      continue;
    }
    return;
  }
  finish(false);
}

void StudyQueue::runEnded(const std::optional<engine::RunSummary>& summary) {
  if (!isRunning() || m_current < 0) return;
  Entry& e = m_entries[size_t(m_current)];
  if (!summary) {
    e.state = EntryState::Failed;
  } else {
    e.testAccuracy = summary->testAccuracy;
    e.wallSeconds = summary->wallSeconds;
    e.steps = summary->steps;
    e.state = summary->status == engine::RunStatus::Completed ? EntryState::Completed
              : summary->status == engine::RunStatus::Failed  ? EntryState::Failed
                                                              : EntryState::Stopped;
    e.valAccuracy = summary->valAccuracy;
    if (m_skipCurrent && e.state == EntryState::Stopped) e.state = EntryState::Skipped;
  }
  if (m_job && m_driver) {
    const int64_t recorded = m_recordedId ? m_recordedId->load() : 0;
    const std::optional<int64_t> runId = recorded
                                             ? std::optional<int64_t>(recorded)
                                             : (e.runId ? std::optional(e.runId) : std::nullopt);
    const auto status = summary ? summary->status : engine::RunStatus::Failed;
    // Stopping the study is not pruning, whatever the watch says (as the CLI on Ctrl+C).
    const study::PruneWatch* watch = m_stopping || m_skipCurrent ? nullptr : m_watch.get();
    try {
      m_driver->ended(*m_job, runId, status, watch);
    } catch (const std::exception& ex) {
      Q_EMIT message(
          tr("The trial's end could not be stored: %1").arg(QString::fromStdString(ex.what())));
    }
    if (watch && watch->shouldStop() &&
        (status == engine::RunStatus::Stopped || status == engine::RunStatus::Completed)) {
      e.state = EntryState::Pruned;
      e.prunedAt = watch->prunedAt();
      e.pruneReason = watch->reason();
      const auto& rungs = m_job->options.evalAtSteps;
      e.rung = int(std::find(rungs.begin(), rungs.end(), e.prunedAt) - rungs.begin()) + 1;
    }
    if (runId) e.runId = *runId;
    m_job.reset();
    m_watch.reset();
  }
  if (m_report)
    m_report->runEnded(e.job, e.state == EntryState::Completed,
                       summary ? summary->error : std::string("it could not start"));
  m_current = -1;
  m_progress = {};
  showEntries();
  if (m_stopping) {
    finish(true);
    return;
  }
  // After the Train workspace has handled the end of this run.
  QMetaObject::invokeMethod(this, &StudyQueue::runNext, Qt::QueuedConnection);
}

void StudyQueue::runProgress(const engine::Progress& p) {
  if (!isRunning()) return;
  m_progress = p;
  updateHeader();
}

void StudyQueue::skipSelected() {
  if (!isRunning()) return;
  for (QTreeWidgetItem* item : m_view->selectedItems()) {
    const int i = m_view->indexOfTopLevelItem(item);
    if (i < 0 || size_t(i) >= m_entries.size()) continue;
    if (m_entries[size_t(i)].state == EntryState::Waiting) {
      m_entries[size_t(i)].state = EntryState::Skipped;
      if (m_driver && !m_report) m_driver->skip(m_entries[size_t(i)].point.index);
    } else if (i == m_current) {
      m_skipCurrent = true;
      Q_EMIT stopRunRequested();
    }
  }
  showEntries();
}

void StudyQueue::stopStudy() {
  if (!isRunning()) return;
  m_stopping = true;
  if (m_current >= 0)
    Q_EMIT stopRunRequested();
  else
    finish(true);
  updateHeader();
}

void StudyQueue::finishReport(bool stopped) {
  auto session = std::move(m_report);
  auto machine = std::move(m_machine);
  const int64_t id = m_studyId;
  m_studyId = 0;
  m_stopping = false;
  m_busySince.invalidate();
  updateHeader();
  // issue 36 §2.1: the queue is free again: Run, the mode box, Processes, Run study and the
  // report's own action follow (they were left greyed, "A study is running").
  Q_EMIT studyFinished(id);
  try {
    session->finish(stopped);
  } catch (const std::exception& e) {
    Q_EMIT message(
        tr("The report's studies could not be closed: %1").arg(QString::fromStdString(e.what())));
  }
  if (stopped) {
    Q_EMIT message(tr("Replication report stopped; start it again: the completed runs are reused"));
    return;
  }
  Q_EMIT message(tr("Replication report: judging the findings…"));
  const double seconds = double(m_clock.elapsed()) / 1000.0;
  // Reading the runs back and drawing the plots takes a moment: not on the UI thread.
  std::thread([session, machine, seconds, self = QPointer<StudyQueue>(this)] {
    std::shared_ptr<const report::ReportDoc> doc;
    QString error;
    try {
      doc = std::make_shared<const report::ReportDoc>(session->build(*machine, seconds));
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, doc, error] {
          if (!self) return;
          // The log does not end at "judging the findings…".
          Q_EMIT self->message(
              doc ? tr("Replication report: the findings are judged; the report is open")
                  : tr("Replication report: the findings could not be judged: %1").arg(error));
          Q_EMIT self->reportReady(doc, error);
        },
        Qt::QueuedConnection);
  }).detach();
}

void StudyQueue::finish(bool stopped) {
  if (!isRunning()) return;
  if (m_report) return finishReport(stopped);
  bool complete = true;
  for (const auto& e : m_entries)
    complete &= e.state == EntryState::Completed || e.state == EntryState::Shared ||
                e.state == EntryState::Failed || e.state == EntryState::Pruned;
  // Left-out or stopped runs: the study stays resumable (stopped), as the CLI leaves it.
  const auto status =
      stopped || !complete ? storage::StudyStatus::Stopped : storage::StudyStatus::Completed;
  try {
    m_store->finishStudy(m_studyId, status);
  } catch (const std::exception& e) {
    Q_EMIT message(
        tr("The study's end could not be stored: %1").arg(QString::fromStdString(e.what())));
  }
  const int64_t id = m_studyId;
  m_studyId = 0;
  m_stopping = false;
  updateHeader();
  Q_EMIT message(
      status == storage::StudyStatus::Completed
          ? tr("Study %1 completed").arg(id)
          : tr("Study %1 stopped; continue it with: stagewise-cli study resume %1").arg(id));
  Q_EMIT studyFinished(id);
}

void StudyQueue::showEntries() {
  const QLocale locale;
  if (m_view->topLevelItemCount() != int(m_entries.size())) {
    m_view->clear();
    for (const auto& e : m_entries) {
      auto* item = new QTreeWidgetItem(m_view);
      item->setText(0, QString::number(e.point.index + 1));
      item->setText(1, QString::fromStdString(
                           e.label.empty() ? study::describePoint(m_plan, e.point) : e.label));
      item->setToolTip(1, item->text(1));
    }
  }
  for (int i = 0; i < int(m_entries.size()); ++i) {
    const Entry& e = m_entries[size_t(i)];
    QTreeWidgetItem* item = m_view->topLevelItem(i);
    item->setText(0, QString::number(e.point.index + 1));
    if (e.label.empty() && e.state == EntryState::Waiting)  // a tuned run's values may change
      item->setText(1, QString::fromStdString(study::describePoint(m_plan, e.point)));
    item->setText(2, statusText(e));
    item->setToolTip(
        2, e.state == EntryState::Pruned ? QString::fromStdString(e.pruneReason) : QString());
    const bool ended = e.state == EntryState::Completed || e.state == EntryState::Stopped ||
                       e.state == EntryState::Failed || e.state == EntryState::Skipped ||
                       e.state == EntryState::Pruned;
    item->setText(3, ended && std::isfinite(e.valAccuracy) ? locale.toString(e.valAccuracy, 'f', 4)
                                                           : QString());
    item->setText(4, ended && e.state != EntryState::Pruned && std::isfinite(e.testAccuracy) &&
                             e.wallSeconds > 0
                         ? locale.toString(e.testAccuracy, 'f', 4)
                         : QString());
    item->setText(5, ended && e.wallSeconds > 0 ? formatDuration(e.wallSeconds) : QString());
    item->setText(6, e.runId ? QString::number(e.runId) : QString());
    QFont font = item->font(0);
    font.setBold(e.state == EntryState::Running);
    font.setItalic(e.state == EntryState::Pruned);
    for (int c = 0; c < 7; ++c) {
      item->setFont(c, font);
      // Pruned trials drawn faint, as in the study views.
      item->setForeground(c, e.state == EntryState::Pruned
                                 ? m_view->palette().brush(QPalette::Disabled, QPalette::Text)
                                 : m_view->palette().brush(QPalette::Text));
    }
  }
  updateHeader();
}

double StudyQueue::etaSeconds(const std::vector<Entry>& entries, int current,
                              const engine::Progress& progress) {
  double seconds = 0;
  int64_t steps = 0;
  std::vector<int64_t> lengths;  // of the runs measured, for a length in epochs
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (int(i) == current || e.wallSeconds <= 0 || e.steps <= 0) continue;
    seconds += e.wallSeconds;
    steps += e.steps;
    if (e.state == EntryState::Completed) lengths.push_back(e.steps);
  }
  const bool running = current >= 0 && size_t(current) < entries.size();
  if (running && progress.step > 0 && progress.elapsedS > 0) {
    seconds += progress.elapsedS;
    steps += progress.step;
  }
  if (running && progress.totalSteps > 0) lengths.push_back(progress.totalSteps);
  if (steps <= 0 || seconds <= 0) return -1;
  const double perStep = seconds / double(steps);
  double eta = 0;
  if (running) {
    const double byRate = double(std::max<int64_t>(0, progress.totalSteps - progress.step)) *
                          perStep;
    eta = progress.etaS >= 0 ? progress.etaS : byRate;  // the run's own, when it has one
  }
  std::sort(lengths.begin(), lengths.end());
  const int64_t typical = lengths.empty() ? 0 : lengths[lengths.size() / 2];
  for (const Entry& e : entries) {
    if (e.state != EntryState::Waiting) continue;
    const int64_t planned = e.resolved.spec.train.maxSteps;
    eta += double(planned > 0 ? planned : typical) * perStep;
  }
  return eta;
}

QString StudyQueue::statusText(const Entry& e) {
  if (e.state == EntryState::Pruned)
    return e.rung > 0 ? tr("pruned at rung %1 (%2 steps)").arg(e.rung).arg(e.prunedAt)
                      : tr("pruned at %1 steps").arg(e.prunedAt);
  return stateText(e.state);
}

void StudyQueue::updateHeader() {
  m_skip->setEnabled(isRunning());
  m_stopStudy->setEnabled(isRunning() && !m_stopping);
  if (m_entries.empty()) {
    m_header->setText(tr("No study yet: design one in Design → Study."));
    return;
  }
  int done = 0, left = 0;
  for (const auto& e : m_entries) {
    done += e.state != EntryState::Waiting && e.state != EntryState::Running;
    left += e.state == EntryState::Waiting || e.state == EntryState::Running;
  }
  QString text = m_reportEntries
                     ? tr("Replication report: %1 of %2 done")
                           .arg(done)
                           .arg(formatCountOf(qint64(m_entries.size()), tr("run"), tr("runs")))
                     : tr("Study %1 '%2': %3 of %4 done")
                           .arg(m_lastStudyId)
                           .arg(QString::fromStdString(m_name))
                           .arg(done)
                           .arg(std::max<size_t>(
                               m_entries.size(),
                               m_driver && !m_reportEntries ? size_t(m_driver->totalCount()) : 0));
  if (isRunning()) {
    const double eta = etaSeconds(m_entries, m_current, m_progress);
    if (eta >= 0 && left > 0) text += tr(" · ETA %1").arg(formatDuration(eta));
    if (m_stopping) text += tr(" · stopping");
  }
  m_header->setText(text);
}

}  // namespace stagewise::ui
