#include "live/study_queue.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <cmath>
#include <map>

#include <thread>

#include "common/format.h"
#include "stagewise/report/session.h"
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
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->setHeaderLabels(
      {tr("#"), tr("Settings"), tr("Status"), tr("Test acc."), tr("Time"), tr("Run")});
  m_view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_view->header()->setSectionResizeMode(1, QHeaderView::Stretch);
  m_view->header()->setStretchLastSection(false);
  m_view->setToolTip(
      tr("The study's runs in order: done, running and waiting. A run whose spec equals an "
         "earlier one's (backprop ignores the cuts) shares that run."));
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
  std::vector<Entry> entries;
  study::StudyPlan plan;
  try {
    plan = study::planOf(object);
    study::ShapeCache shapes;
    for (const auto& p : study::expandGrid(plan)) {
      Entry e;
      e.point = p;
      e.resolved = study::resolvePoint(baseSpecJson, plan, p, m_devices, shapes);
      entries.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what()).replace(QStringLiteral("--vary "), QString());
  }
  if (entries.empty()) return tr("The study has no runs.");
  try {
    m_studyId = m_store->createStudy(
        study::newStudyRecord(name, baseSpecJson, plan, object.target, entries.size()));
  } catch (const std::exception& e) {
    return tr("The study could not be stored: %1").arg(QString::fromStdString(e.what()));
  }
  m_lastStudyId = m_studyId;
  m_reportEntries = false;
  m_name = name;
  m_plan = std::move(plan);
  m_entries = std::move(entries);
  m_current = -1;
  m_skipCurrent = m_stopping = false;
  m_currentFraction = 0;
  m_clock.start();
  showEntries();
  Q_EMIT message(tr("Study %1 '%2': %3 runs")
                     .arg(m_studyId)
                     .arg(QString::fromStdString(name))
                     .arg(m_entries.size()));
  runNext();
  return {};
}

void StudyQueue::noteRunId(QPointer<StudyQueue> self, size_t index, int64_t runId) {
  if (!self) return;
  QMetaObject::invokeMethod(
      self.data(),
      [self, index, runId] {
        if (self && index < self->m_entries.size()) {
          self->m_entries[index].runId = runId;
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
  m_currentFraction = 0;
  m_clock.start();
  showEntries();
  Q_EMIT message(tr("Replication report: %1 studies, %2 runs to train, %3 reused from the store")
                     .arg(m_report->suite().studies.size())
                     .arg(m_entries.size())
                     .arg(m_report->reused()));
  runNext();
  return {};
}

void StudyQueue::runNextOfReport(size_t i) {
  Entry& e = m_entries[i];
  engine::ExperimentSpec spec = e.resolved.spec;
  spec.name = m_report->runName(e.job);
  m_current = int(i);
  m_skipCurrent = false;
  m_currentFraction = 0;
  e.state = EntryState::Running;
  auto onRecorded = [session = m_report, job = e.job, self = QPointer<StudyQueue>(this),
                     index = i](int64_t runId) {
    try {
      session->linkRun(job, runId);  // the store is thread-safe
    } catch (const std::exception&) {
      // the run goes on; the report leaves out what it cannot find
    }
    noteRunId(self, index, runId);
  };
  showEntries();
  const QString note = tr("Replication report, run %1 of %2: %3")
                           .arg(i + 1)
                           .arg(m_entries.size())
                           .arg(QString::fromStdString(e.label));
  if (!m_starter(spec, note, onRecorded)) {
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
  // Completed runs by identity: a point whose resolved spec equals one shares its run.
  std::map<std::string, int64_t> completed;
  for (const auto& e : m_entries)
    if (e.state == EntryState::Completed && e.runId) completed[e.resolved.identity] = e.runId;
  for (size_t i = 0; i < m_entries.size(); ++i) {
    Entry& e = m_entries[i];
    if (e.state != EntryState::Waiting) continue;
    storage::StudyRunRecord link;
    link.point = e.point.index;
    link.seed = e.point.seed;
    link.valuesJson = study::pointValuesJson(e.point);
    if (auto shared = completed.find(e.resolved.identity); shared != completed.end()) {
      link.runId = shared->second;
      try {
        m_store->linkStudyRun(m_studyId, link);
      } catch (const std::exception& ex) {
        Q_EMIT message(
            tr("The study's link could not be stored: %1").arg(QString::fromStdString(ex.what())));
      }
      e.state = EntryState::Shared;
      e.runId = shared->second;
      continue;
    }
    engine::ExperimentSpec spec = e.resolved.spec;
    study::nameStudyRun(spec, m_name, m_studyId, m_plan, e.point);
    m_current = int(i);
    m_skipCurrent = false;
    m_currentFraction = 0;
    e.state = EntryState::Running;
    // Linked from the engine's thread as soon as the record exists (the store is
    // thread-safe), so a study killed mid-run still knows its run; the queue hears it after.
    const int64_t studyId = m_studyId;
    auto onRecorded = [store = m_store, studyId, link, self = QPointer<StudyQueue>(this),
                       index = i](int64_t runId) mutable {
      link.runId = runId;
      try {
        store->linkStudyRun(studyId, link);
      } catch (const std::exception&) {
        // said by the queue below: the run goes on regardless
      }
      noteRunId(self, index, runId);
    };
    const QString note = tr("Study %1, run %2 of %3: %4")
                             .arg(m_studyId)
                             .arg(e.point.index + 1)
                             .arg(m_entries.size())
                             .arg(QString::fromStdString(study::describePoint(m_plan, e.point)));
    showEntries();
    if (!m_starter(spec, note, onRecorded)) {
      e.state = EntryState::Failed;
      m_current = -1;
      Q_EMIT message(tr("Run %1 of the study could not start").arg(e.point.index + 1));
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
    e.state = summary->status == engine::RunStatus::Completed ? EntryState::Completed
              : summary->status == engine::RunStatus::Failed  ? EntryState::Failed
                                                              : EntryState::Stopped;
    if (m_skipCurrent && e.state == EntryState::Stopped) e.state = EntryState::Skipped;
  }
  if (m_report)
    m_report->runEnded(e.job, e.state == EntryState::Completed,
                       summary ? summary->error : std::string("it could not start"));
  m_current = -1;
  m_currentFraction = 0;
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
  m_currentFraction = p.totalSteps > 0 ? double(p.step) / double(p.totalSteps) : 0;
  updateHeader();
}

void StudyQueue::skipSelected() {
  if (!isRunning()) return;
  for (QTreeWidgetItem* item : m_view->selectedItems()) {
    const int i = m_view->indexOfTopLevelItem(item);
    if (i < 0 || size_t(i) >= m_entries.size()) continue;
    if (m_entries[size_t(i)].state == EntryState::Waiting) {
      m_entries[size_t(i)].state = EntryState::Skipped;
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
  m_studyId = 0;
  m_stopping = false;
  updateHeader();
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
          if (self) Q_EMIT self->reportReady(doc, error);
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
                e.state == EntryState::Failed;
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
    item->setText(2, stateText(e.state));
    const bool ended = e.state == EntryState::Completed || e.state == EntryState::Stopped ||
                       e.state == EntryState::Failed || e.state == EntryState::Skipped;
    item->setText(3, ended && std::isfinite(e.testAccuracy) && e.wallSeconds > 0
                         ? locale.toString(e.testAccuracy, 'f', 4)
                         : QString());
    item->setText(4, ended && e.wallSeconds > 0 ? formatDuration(e.wallSeconds) : QString());
    item->setText(5, e.runId ? QString::number(e.runId) : QString());
    QFont font = item->font(0);
    font.setBold(e.state == EntryState::Running);
    for (int c = 0; c < 6; ++c) item->setFont(c, font);
  }
  updateHeader();
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
                     ? tr("Replication report: %1 of %2 runs done").arg(done).arg(m_entries.size())
                     : tr("Study %1 '%2': %3 of %4 done")
                           .arg(m_lastStudyId)
                           .arg(QString::fromStdString(m_name))
                           .arg(done)
                           .arg(m_entries.size());
  if (isRunning()) {
    // The runs so far (the current one by its progress) predict the rest.
    int ran = 0;
    for (const auto& e : m_entries)
      ran += e.state == EntryState::Completed || e.state == EntryState::Stopped ||
             e.state == EntryState::Failed;
    const double units = ran + m_currentFraction;
    if (units > 0.02 && left > 0) {
      const double perRun = double(m_clock.elapsed()) / 1000.0 / units;
      text += tr(" · ETA %1").arg(formatDuration(perRun * (left - m_currentFraction)));
    }
    if (m_stopping) text += tr(" · stopping");
  }
  m_header->setText(text);
}

}  // namespace stagewise::ui
