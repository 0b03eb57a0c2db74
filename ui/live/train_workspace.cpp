#include "live/train_workspace.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "common/app_settings.h"
#include "common/format.h"
#include "designer/design_document.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/sample_panel.h"
#include "live/stage_strip.h"
#include "live/steer_events.h"
#include "live/steer_panel.h"
#include "live/study_queue.h"
#include "live/timeline_panel.h"
#include "live/trace_export.h"
#include "live/utilization_panel.h"
#include "runs/whole_set_evals.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/report/session.h"
#include "stagewise/report/suite.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::ui {

using State = EngineController::State;

// The engine says "stage 1: ..." with its 0-based index; the workbench numbers stages from 1,
// so the prefix is dropped where the banner already names the stage.
// Why the plan's local or pipeline phases of `spec` cannot run in `processes` processes
// (explicit stage ranks, checkpoints, ...), empty if they can. The modes are the Train
// workspace's, not the spec's.
static QString processesProblem(engine::ExperimentSpec spec, const RunPlan& plan, int processes) {
  for (const engine::Mode mode : plan) {
    if (mode == engine::Mode::Backprop) continue;
    spec.mode = mode;
    try {
      engine::assignRanks(spec, spec.stageCount(), processes);
    } catch (const engine::SpecError& e) {
      return QString::fromStdString(e.what());
    }
  }
  return {};
}

// The Train workspace's plans: every non-empty set of the three methods, in a fixed order (the
// first three are the ones it always had, so their places stay).
static int modesToMask(const RunPlan& modes) {
  int mask = 0;
  for (const engine::Mode m : modes) mask |= 1 << int(m);
  return mask;
}

static RunPlan maskToModes(int mask) {
  RunPlan out;
  for (const engine::Mode m : {engine::Mode::Local, engine::Mode::Pipeline, engine::Mode::Backprop})
    if (mask & (1 << int(m))) out.push_back(m);
  return out;
}

std::vector<std::pair<QString, RunPlan>> TrainWorkspace::planChoices() {
  using engine::Mode;
  return {{tr("Local (parallel stages)"), {Mode::Local}},
          {tr("Backprop (baseline)"), {Mode::Backprop}},
          {tr("Local, then backprop"), {Mode::Local, Mode::Backprop}},
          {tr("Pipelined backprop"), {Mode::Pipeline}},
          {tr("Local, then pipeline"), {Mode::Local, Mode::Pipeline}},
          {tr("Pipeline, then backprop"), {Mode::Pipeline, Mode::Backprop}},
          {tr("Local, pipeline, backprop"), {Mode::Local, Mode::Pipeline, Mode::Backprop}}};
}

RunPlan TrainWorkspace::currentPlan() const {
  return maskToModes(m_mode->currentData().toInt());
}

RunPlan TrainWorkspace::planAfterOpening(const RunPlan& current, engine::Mode fileMode) {
  const bool comparison = current.size() > 1;
  const bool includes = std::find(current.begin(), current.end(), fileMode) != current.end();
  return comparison && includes ? current : RunPlan{fileMode};
}

void TrainWorkspace::selectPlan(const RunPlan& plan) {
  const int i = m_mode->findData(modesToMask(plan));
  if (i >= 0) m_mode->setCurrentIndex(i);
}

static QString withoutStagePrefix(const std::string& message, int stage) {
  const std::string prefix = "stage " + std::to_string(stage) + ": ";
  return QString::fromStdString(message.rfind(prefix, 0) == 0 ? message.substr(prefix.size())
                                                              : message);
}

TrainWorkspace::TrainWorkspace(EngineController* controller, DesignDocument* doc, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_doc(doc) {
  m_run = new QPushButton(tr("Run ▶"), this);
  m_pause = new QPushButton(tr("Pause"), this);
  m_pause->setToolTip(tr("Pause every stage (the run keeps its place)."));
  m_stop = new QPushButton(tr("Stop ■"), this);
  m_stop->setToolTip(tr("Stop the run (Ctrl+. or Esc). It is saved as stopped."));
  m_mode = new QComboBox(this);
  // Every set of the three methods; several run one after the other on the same data and are
  // overlaid in the plots (and tagged as one comparison in Runs).
  for (const auto& [label, modes] : planChoices()) m_mode->addItem(label, modesToMask(modes));
  m_mode->setToolTip(
      tr("Local: each stage learns from its own aux head, all in parallel.\n"
         "Pipeline: the same stages trained by true backprop in micro-batches, the gradients "
         "sent back across the cuts (the paper's baseline).\n"
         "Backprop: the same layers trained end to end in one stage.\n"
         "Several: one after the other on the same data, overlaid in the plots."));
  m_processesLabel = new QLabel(tr("Processes"), this);
  m_processes = new QSpinBox(this);
  m_processes->setRange(1, 1);
  m_processesLabel->setBuddy(m_processes);
  m_wantedProcesses = AppSettings::processes();
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 1000);
  m_progress->setTextVisible(true);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_eta = new QLabel(this);
  m_eta->setMinimumWidth(180);
  m_status = new QLabel(tr("Idle"), this);
  m_measure = new QLabel(this);
  m_measure->setToolTip(
      tr("The share of the run's CPU time that probing and evaluating took so far, against its "
         "budget (Design → Evaluation and probes → Budget). Points beyond the budget are left "
         "out, but never fewer than 10 of each per run."));
  m_banner = new QLabel(this);
  m_banner->setWordWrap(true);
  m_banner->setStyleSheet(
      QStringLiteral("QLabel { background: #f8d7da; color: #842029; border: 1px solid #d03030; "
                     "border-radius: 4px; padding: 6px; }"));
  m_banner->hide();

  auto* bar = new QHBoxLayout;
  bar->addWidget(m_run);
  bar->addWidget(m_pause);
  bar->addWidget(m_stop);
  bar->addWidget(m_mode);
  bar->addWidget(m_processesLabel);
  bar->addWidget(m_processes);
  bar->addWidget(m_progress, 1);
  bar->addWidget(m_eta);
  bar->addWidget(m_measure);
  bar->addWidget(m_status);

  m_dashboard = new LiveDashboard(&m_data, this);
  connect(m_dashboard->timelinePanel(), &TimelinePanel::exportTraceRequested, this,
          &TrainWorkspace::exportTrace);
  m_log = new EventLog(this);
  // The log scrolls: its least height is its header and a line, not a scroll area's 70 px,
  // so Train fits a 1200x680 window (issue 36: such a window reopened 32 px taller).
  m_log->setMinimumHeight(m_log->fontMetrics().height() * 2 + 8);
  m_steer = new SteerPanel(this);
  connect(m_steer, &SteerPanel::cutsRequested, controller, &EngineController::requestRepartition);
  connect(m_steer, &SteerPanel::stageChangeRequested, controller,
          &EngineController::requestStageChange);
  connect(m_steer, &SteerPanel::stagePauseRequested, controller,
          &EngineController::requestStagePause);
  connect(controller, &EngineController::steerAnswered, m_steer, &SteerPanel::showAnswer);
  m_designSteers = QSettings().value(QStringLiteral("train/design_steers"), true).toBool();
  connect(doc, &DesignDocument::changed, this, &TrainWorkspace::followDesignCuts);
  connect(doc, &DesignDocument::loaded, this,
          [this] { m_designCuts = m_doc->spec().partition.cuts; });
  m_queue = new StudyQueue(
      [this](const engine::ExperimentSpec& spec, const QString& note,
             std::function<void(int64_t)> onRecorded, const ResumePoint& resume, RunHooks hooks) {
        return begin(spec, {spec.mode}, resume, note, 1, std::move(onRecorded), std::move(hooks));
      },
      this);
  m_queue->setDevices(doc->engineDescription().devices);
  m_queue->hide();
  connect(m_queue, &StudyQueue::stopRunRequested, this, &TrainWorkspace::stopRun);
  connect(m_queue, &StudyQueue::message, this, [this](const QString& text) {
    m_log->addNote(text);
    Q_EMIT message(text);
  });
  connect(m_queue, &StudyQueue::studyFinished, this, [this] {
    // issue 36: a report's queue and its last run's plots and strip stayed after it ended
    // (or was stopped); its findings open in the report, its runs are in Runs.
    if (m_queue->holdsReport()) {
      m_queue->hide();
      if (!m_controller->isBusy()) clearLiveView();
    }
    updateControls();
  });
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  // The sample (text runs only) beside the log, not above it: Train must keep fitting a
  // 1366x768 screen (a column of both grew the window past it).
  m_sample = new SamplePanel(this);
  bottom->addWidget(m_log);
  bottom->addWidget(m_sample);
  bottom->addWidget(m_queue);
  bottom->setStretchFactor(0, 1);
  bottom->setStretchFactor(1, 1);
  bottom->setStretchFactor(2, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_dashboard);
  split->addWidget(bottom);
  split->setStretchFactor(0, 5);
  split->setStretchFactor(1, 1);
  split->setSizes({700, 140});

  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(3);  // with the steering line, Train still fits a 1366x768 screen
  layout->addLayout(bar);
  layout->addWidget(m_banner);
  layout->addWidget(m_steer);
  layout->addWidget(split, 1);

  connect(m_run, &QPushButton::clicked, this, &TrainWorkspace::startRun);
  connect(m_pause, &QPushButton::clicked, this, &TrainWorkspace::togglePause);
  connect(m_stop, &QPushButton::clicked, this, &TrainWorkspace::stopRun);
  connect(m_mode, &QComboBox::currentIndexChanged, this, &TrainWorkspace::updateControls);
  connect(m_processes, &QSpinBox::valueChanged, this, [this](int value) {
    // Only the user's edits get here (the clamping to the stage count is signal-blocked).
    m_wantedProcesses = value;
    AppSettings::setProcesses(value);
    updateProcesses();
  });
  connect(controller, &EngineController::batchArrived, this, &TrainWorkspace::onBatch);
  connect(controller, &EngineController::progressChanged, this, &TrainWorkspace::onProgress);
  connect(controller, &EngineController::stateChanged, this, &TrainWorkspace::updateControls);
  connect(controller, &EngineController::stateChanged, this, &TrainWorkspace::updateSteering);
  connect(controller, &EngineController::stateChanged, this, [this](State state) {
    // The live redraw rate is low while training: show the curves up to now when pausing.
    if (state == State::Paused) m_dashboard->refreshAll();
  });
  connect(controller, &EngineController::planFinished, this, [this] {
    m_dashboard->setLive(false);
    if (!m_eta->text().isEmpty()) m_eta->setText(m_steps);  // the steps done, no ETA
    setLivePace(nullptr);
    updateControls();
    Q_EMIT runFinished();
    // The study's next run starts after this one is handled everywhere.
    if (m_queue->isRunning())
      m_queue->runEnded(m_summaries.empty()
                            ? std::nullopt
                            : std::optional<engine::RunSummary>(m_summaries.back()));
  });
  connect(doc, &DesignDocument::changed, this, &TrainWorkspace::updateControls);
  // A refusal names the spec as it was: once it is edited (the value fixed, or not), the
  // banner would describe a spec that is gone; Run says again what still blocks it.
  connect(doc, &DesignDocument::changed, this, [this] {
    if (m_bannerForSpec) m_banner->hide();
  });
  // An experiment opened (File › Open, Open Recent, a drop, Runs' "open spec"): a single-mode
  // choice follows the file's `mode`; a comparison of several modes the user chose (or the
  // session restored) is kept while it includes the file's mode (issue 36: File › Open reset
  // "Local, pipeline, backprop" to the file's one mode).
  connect(doc, &DesignDocument::loaded, this, [this] {
    if (!m_controller->isBusy()) selectPlan(planAfterOpening(currentPlan(), m_doc->spec().mode));
  });
  selectPlan({doc->spec().mode});
  updateControls();
}

void TrainWorkspace::noteRecorded(QPointer<TrainWorkspace> self, int64_t runId) {
  if (!self) return;
  QMetaObject::invokeMethod(
      self.data(),
      [self, runId] {
        if (!self) return;
        self->m_recordedRuns.push_back(runId);
        self->m_dashboard->timelinePanel()->setTraceAvailable(self->m_store != nullptr);
      },
      Qt::QueuedConnection);
}

int64_t TrainWorkspace::traceRunId() const {
  const int phase = m_dashboard->timelinePanel()->shownPhase();
  if (!m_store || phase < 0 || size_t(phase) >= m_recordedRuns.size()) return -1;
  return m_recordedRuns[size_t(phase)];
}

void TrainWorkspace::exportTrace(int phase) {
  if (!m_store || phase < 0 || size_t(phase) >= m_recordedRuns.size()) {
    Q_EMIT message(tr("This phase has no stored record to export (is a run store open?)"));
    return;
  }
  exportTraceWithDialog(this, *m_store, m_recordedRuns[size_t(phase)]);
}

void TrainWorkspace::setStore(std::shared_ptr<storage::RunStore> store) {
  m_store = store;
  m_queue->setStore(std::move(store));
}

QString TrainWorkspace::uniqueReportName(const QString& wanted) const {
  // A report stopped and started again within the minute named its studies as the first one
  // had (issue 36): the studies are "NAME: finding", so NAME gets a counter until no stored
  // study starts with it.
  std::set<std::string> taken;
  try {
    storage::RunReader reader(*m_store);
    for (const auto& st : reader.listStudies()) taken.insert(st.name);
  } catch (const std::exception&) {
    return wanted;
  }
  const auto used = [&](const QString& name) {
    const std::string prefix = name.toStdString() + ": ";
    const auto it = taken.lower_bound(prefix);
    return it != taken.end() && it->compare(0, prefix.size(), prefix) == 0;
  };
  QString name = wanted;
  for (int n = 2; used(name); ++n) name = QStringLiteral("%1 (%2)").arg(wanted).arg(n);
  return name;
}

TrainWorkspace::ReportEstimate TrainWorkspace::estimateReport(const std::string& baseSpecJson,
                                                              bool quick) const {
  ReportEstimate e;
  std::vector<report::SuiteJob> jobs;
  try {
    const EngineDescription desc = m_doc->engineDescription();
    study::ShapeCache shapes;
    report::SuiteOptions options;
    options.quick = quick;
    options.cores = desc.hardwareCores;
    const report::Suite suite = report::planSuite(baseSpecJson, options, shapes);
    jobs = report::planJobs(suite, desc.devices, shapes);
    for (const auto& st : suite.studies) e.tunedLater = e.tunedLater || st.tuned;
    e.seeds = suite.seeds;
    e.baseSteps = suite.baseSteps;
    e.learnSteps = suite.learnSteps;
    e.speedSteps = suite.speedSteps;
  } catch (const std::exception& ex) {
    e.problem = QString::fromStdString(ex.what());
    return e;
  }
  e.runs = int(jobs.size());
  // Issue 36: the dialog promised every run on a second start, though finished ones are
  // reused (free); only the others are timed.
  std::vector<bool> reused(jobs.size(), false);
  if (m_store) {
    try {
      reused = report::reusableJobs(*m_store, jobs);
    } catch (const std::exception&) {
      // the store cannot be read now: every run counts
    }
  }
  // Seconds a step from the store's finished runs of the same network and data (not only the
  // family: a 256-wide 9-stage MLP is not timed by a 512-wide one) and batch size, per mode
  // where it has them; a run of a network or batch no stored run has (memory's larger
  // settings) at the design's time per sample, and said so.
  const auto networkOf = [](const engine::ExperimentSpec& spec) {
    engine::ExperimentSpec only;
    only.model = spec.model;
    only.dataset.kind = spec.dataset.kind;
    only.dataset.size = spec.dataset.size;
    only.dataset.channels = spec.dataset.channels;
    only.dataset.context = spec.dataset.context;
    only.train.batchSize = spec.train.batchSize;
    return engine::specToJson(only, -1);
  };
  std::map<std::string, std::map<std::string, std::vector<double>>> perStep;  // network, mode
  std::vector<double> lengths;
  if (m_store && !jobs.empty()) {
    try {
      storage::RunReader reader(*m_store);
      storage::RunFilter filter;
      filter.statuses = {storage::RunStatus::Completed};
      const engine::ExperimentSpec& base = jobs.front().spec;
      for (const auto& r : reader.listRuns(filter, {}, 200)) {
        if (r.modelKind != base.model.kind) continue;
        if (!r.wallSeconds || !r.steps || *r.steps <= 0) continue;
        std::string network;
        try {
          const std::optional<storage::RunRecord> whole = reader.run(r.id);  // with its spec
          if (!whole) continue;
          network = networkOf(engine::parseSpec(whole->specJson));
        } catch (const std::exception&) {
          continue;  // a stored spec this version cannot read: not this network
        }
        perStep[network][r.mode].push_back(*r.wallSeconds / double(*r.steps));
        lengths.push_back(double(r.totalSteps));
      }
    } catch (const std::exception&) {
      // no measurement: the estimate gives runs and steps only
    }
  }
  const auto median = [](std::vector<double> v) {
    if (v.empty()) return std::nan("");
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const auto rateOf = [&](const std::string& network, const std::string& mode) {
    const auto it = perStep.find(network);
    if (it == perStep.end()) return std::nan("");
    if (const auto m = it->second.find(mode); m != it->second.end()) return median(m->second);
    std::vector<double> all;
    for (const auto& [_, v] : it->second) all.insert(all.end(), v.begin(), v.end());
    return median(all);
  };
  const std::string designNetwork = networkOf(engine::parseSpec(baseSpecJson));
  for (const auto& [network, modes] : perStep)
    if (network == designNetwork)
      for (const auto& [_, v] : modes) e.measuredRuns += int(v.size());
  const double designBatch = std::max(1, engine::parseSpec(baseSpecJson).train.batchSize);
  double seconds = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (reused[i]) {
      ++e.reused;
      continue;
    }
    const auto& job = jobs[i];
    // A length in epochs: as long as the measured runs were (their planned steps).
    int64_t steps = job.spec.train.maxSteps;
    if (steps <= 0 && !lengths.empty()) steps = int64_t(median(lengths));
    steps = std::max<int64_t>(0, steps);
    e.steps += steps;
    const std::string mode = engine::toString(job.spec.mode);
    double rate = rateOf(networkOf(job.spec), mode);
    if (!std::isfinite(rate)) {
      rate = rateOf(designNetwork, mode) * double(std::max(1, job.spec.train.batchSize)) /
             designBatch;
      ++e.proxied;
    }
    seconds += double(steps) * rate;
  }
  if (e.measuredRuns > 0 && std::isfinite(seconds)) e.seconds = seconds;
  return e;
}

QString TrainWorkspace::describeEstimate(const ReportEstimate& e, bool quick,
                                         const QDateTime& now) {
  const QString kind = quick ? tr("The quick report") : tr("The full report");
  if (!e.problem.isEmpty()) return tr("%1 cannot be planned: %2").arg(kind, e.problem);
  const int toTrain = e.runs - e.reused;
  QString text = tr("%1: %2 of %3 runs to train, %4 reused")
                     .arg(kind)
                     .arg(toTrain)
                     .arg(e.runs)
                     .arg(e.reused);
  if (e.steps > 0) text += tr(", %1 steps in all").arg(QLocale().toString(qlonglong(e.steps)));
  // Issue 36: "Quick: fewer steps" was said of a 150-step design both choices train 150 steps.
  if (e.learnSteps > 0)
    text += tr(" (learning runs %1 steps%2, throughput runs %3 steps, %4 seeds)")
                .arg(e.learnSteps)
                .arg(e.learnSteps < e.baseSteps ? tr(" of the design's %1").arg(e.baseSteps)
                                                : tr(", the design's own length"))
                .arg(e.speedSteps)
                .arg(e.seeds);
  if (toTrain == 0) {
    text += tr(": nothing to train");
  } else if (std::isfinite(e.seconds)) {
    text += tr(": about %1 at the step time of %2 finished run%3 of this model in the store, "
               "done around %4")
                .arg(formatDuration(e.seconds))
                .arg(e.measuredRuns)
                .arg(e.measuredRuns == 1 ? QString() : QStringLiteral("s"))
                .arg(now.addSecs(qint64(e.seconds))
                         .toString(now.addSecs(qint64(e.seconds)).date() == now.date()
                                       ? QStringLiteral("HH:mm")
                                       : QStringLiteral("ddd HH:mm")));
    if (e.proxied > 0)
      text += tr(" (%1 of the runs have a network or batch size no stored run has: timed by "
                 "this design's time per sample, they may take longer)")
                  .arg(e.proxied);
  } else {
    text +=
        tr(" (no finished run of this model and batch size in the store to time it by: "
           "train one first for an estimate)");
  }
  if (e.tunedLater)
    text += tr("; then the tuned comparison's runs, once the search has chosen their rates");
  return text + QLatin1Char('.');
}

QString TrainWorkspace::startReport(const std::string& baseSpecJson, bool quick,
                                    const QStringList& adaptations) {
  QString problem;
  if (m_controller->isBusy() || m_queue->isRunning())
    problem = tr("a run or a study is in progress");
  else if (!m_store)
    problem = tr("reports are kept in the run store, and none is open (File → Choose run store)");
  std::shared_ptr<report::ReportSession> session;
  const EngineDescription desc = m_doc->engineDescription();
  if (problem.isEmpty()) {
    try {
      study::ShapeCache shapes;
      report::SuiteOptions options;
      options.quick = quick;
      options.cores = desc.hardwareCores;
      report::Suite suite = report::planSuite(baseSpecJson, options, shapes);
      auto jobs = report::planJobs(suite, desc.devices, shapes);
      const QString name = uniqueReportName(
          QDateTime::currentDateTime().toString(QStringLiteral("'report' yyyy-MM-dd HH:mm")));
      session = std::make_shared<report::ReportSession>(*m_store, std::move(suite), std::move(jobs),
                                                        name.toStdString(), quick);
      session->keepAlive(m_store);
      session->addAdaptation(
          "made in the workbench: its window shares the cores with the runs, the throughput "
          "runs' included");
      for (const QString& a : adaptations) session->addAdaptation(a.toStdString());
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
  }
  if (problem.isEmpty()) {
    // As the CLI: a full report's throughput runs wait (60 s at most) for a busy machine.
    engine::QuietWait wait;
    wait.maxWaitS = quick ? 0 : 60;
    m_queue->setQuietWait(nullptr, wait);
  }
  if (problem.isEmpty())
    problem = m_queue->startReport(
        session,
        report::describeMachine(desc.hardwareCores, desc.blas, desc.torchVersion, desc.devices));
  if (!problem.isEmpty()) {
    showFailure(tr("Cannot make the report: %1").arg(problem));
    return problem;
  }
  m_queue->show();
  updateControls();
  return {};
}

bool TrainWorkspace::startStudy() {
  if (m_controller->isBusy() || m_queue->isRunning()) return false;
  const QString problem =
      m_doc->study().empty()
          ? tr("The experiment has no study: vary a setting in Design → Study.")
          : m_queue->start(engine::specToJson(m_doc->spec()), m_doc->study(), m_doc->studyName());
  if (!problem.isEmpty()) {
    showFailure(tr("Cannot run the study: %1").arg(problem));
    return false;
  }
  m_queue->show();
  updateControls();
  return true;
}

// The modes of a plan whose stages a run spreads over processes (backprop runs in this one):
// what the log and the Processes tooltip name ("local", "pipeline", "local and pipeline").
static QString spreadModes(const RunPlan& plan) {
  QStringList names;
  for (const engine::Mode m : plan)
    if (m != engine::Mode::Backprop) names << QString::fromStdString(engine::toString(m));
  names.removeDuplicates();
  return names.isEmpty() ? QObject::tr("local") : names.join(QObject::tr(" and "));
}

bool TrainWorkspace::startRun() {
  if (m_controller->isBusy() || m_queue->isRunning()) return false;
  if (!m_doc->canRun()) {
    showFailure(tr("Cannot run: %1").arg(m_doc->blockReason()), true);
    return false;
  }
  const RunPlan plan = currentPlan();
  const engine::ExperimentSpec& spec = m_doc->spec();
  const int processes = runProcesses();
  QString note =
      tr("Starting %1 (%2)").arg(QString::fromStdString(spec.name), m_mode->currentText());
  if (processes > 1) {
    if (const QString problem = processesProblem(spec, plan, processes); !problem.isEmpty()) {
      showFailure(tr("Cannot run in %1 processes: %2").arg(processes).arg(problem), true);
      return false;
    }
    note += tr(", the %1 run in %2 processes").arg(spreadModes(plan)).arg(processes);
  }
  return begin(spec, plan, {}, note, processes);
}

int TrainWorkspace::runProcesses() const {
  return processesBlockReason().isEmpty() ? m_processes->value() : 1;
}

QString TrainWorkspace::processesBlockReason() const {
  if (!m_controller->canRunProcesses())
    return tr("This engine cannot start processes (the fake engine, or a build without c10d).");
  if (currentPlan() == RunPlan{engine::Mode::Backprop})
    return tr("Backprop runs in one process: it trains the whole network as one stage.");
  if (m_doc->spec().stageCount() < 2)
    return tr("One stage: nothing to spread over processes. Add a cut first.");
  return {};
}

void TrainWorkspace::updateProcesses() {
  const int stages = std::max(1, m_doc->spec().stageCount());
  {
    const QSignalBlocker block(m_processes);
    m_processes->setMaximum(stages);
    m_processes->setValue(std::min(m_wantedProcesses, stages));
  }
  const QString reason = processesBlockReason();
  const bool idle = m_controller->state() == State::Idle;
  m_processes->setEnabled(idle && reason.isEmpty());
  m_processesLabel->setEnabled(m_processes->isEnabled());
  QString tip =
      tr("Processes the %1 run's stages are spread over.\n").arg(spreadModes(currentPlan())) +
      tr("1: every stage is a thread in this process.\n"
         "N: the stages are spread over N local processes (stagewise-cli ranks exchanging "
         "activations over c10d Gloo on loopback), with the same losses bit for bit. "
         "See docs/distributed.md.");
  if (!reason.isEmpty()) {
    tip += QStringLiteral("\n\n") + reason;
  } else {
    tip += tr("\n\nAt most %1 here: one process per stage.").arg(stages);
    const RunPlan plan = currentPlan();
    if (plan.size() > 1 &&
        std::find(plan.begin(), plan.end(), engine::Mode::Backprop) != plan.end())
      tip += tr("\nIn this plan the backprop phase runs in this process.");
    if (m_processes->value() > 1)
      if (const QString problem =
              processesProblem(m_doc->spec(), currentPlan(), m_processes->value());
          !problem.isEmpty())
        tip += tr("\n\nCannot run in %1 processes: %2").arg(m_processes->value()).arg(problem);
  }
  m_processes->setToolTip(tip);
  m_processesLabel->setToolTip(tip);
}

bool TrainWorkspace::resumeRun(const engine::ExperimentSpec& spec, const ResumePoint& resume,
                               const QString& title) {
  if (m_controller->isBusy() || !m_controller->canResume()) return false;
  // A distributed run cannot resume from a checkpoint yet: resuming runs in this process.
  return begin(spec, {spec.mode}, resume,
               tr("Resuming %1 from %2").arg(title, QString::fromStdString(resume.checkpoint)) +
                   keepPlanFor(spec.mode),
               1);
}

QString TrainWorkspace::keepPlanFor(engine::Mode mode) {
  // The run goes on in its own mode. The mode box keeps the user's set where it includes that
  // mode, as opening a file does (issue 36: a resume switched "Local, then backprop" to
  // "Local (parallel stages)"), and the log says what runs.
  const RunPlan before = currentPlan();
  selectPlan(planAfterOpening(before, mode));
  if (currentPlan() == RunPlan{mode}) return {};
  return tr(" (its mode, %1, alone: the mode box's set is for the next Run)")
      .arg(QString::fromStdString(engine::toString(mode)));
}

bool TrainWorkspace::replayRun(const engine::ExperimentSpec& spec,
                               const std::vector<engine::RunChange>& changes,
                               const QString& title) {
  if (m_controller->isBusy() || m_queue->isRunning()) return false;
  RunHooks hooks;
  hooks.changes = changes;
  return begin(
      spec, {spec.mode}, {},
      tr("Running %1 again with its %n change(s)", nullptr, int(changes.size())).arg(title) +
          keepPlanFor(spec.mode),
      1, {}, std::move(hooks));
}

bool TrainWorkspace::begin(const engine::ExperimentSpec& spec, RunPlan plan,
                           const ResumePoint& resume, const QString& note, int processes,
                           std::function<void(int64_t)> onRecorded, RunHooks hooks) {
  if (const auto sample = m_sample->request(); sample && spec.dataset.kind == "text")
    hooks.sample = *sample;
  // Each phase's record, for the Timeline's trace export (told on an engine thread).
  auto recorded = [self = QPointer<TrainWorkspace>(this),
                   then = std::move(onRecorded)](int64_t runId) {
    if (then) then(runId);
    noteRecorded(self, runId);
  };
  if (!m_controller->start(spec, plan, resume, processes, std::move(recorded), std::move(hooks)))
    return false;
  m_recordedRuns.clear();
  m_dashboard->timelinePanel()->setTraceAvailable(false);
  m_sample->clear();
  m_data.clear();
  m_earlierPart.reset();
  if (!resume.checkpoint.empty() && resume.continueRunId && m_store) try {
      m_earlierPart = {*resume.continueRunId, engine::readCheckpointInfo(resume.checkpoint).step};
    } catch (const std::exception&) {
      // The engine reports the unreadable checkpoint; Train then shows what the run sends.
    }
  m_summaries.clear();
  // The new run's partition arrives with its first batch; until then (or if the engine refuses
  // to start it) no strip of the run before (issue 36).
  m_steer->clear();
  m_banner->hide();
  m_progress->setValue(0);
  m_log->clear();
  m_log->addNote(note);
  m_dashboard->setLive(true);
  updateControls();
  Q_EMIT runStarted();
  return true;
}

void TrainWorkspace::showEarlierPart(int phase) {
  if (!m_earlierPart || !m_store) return;
  const auto [runId, step] = *m_earlierPart;
  m_earlierPart.reset();
  try {
    storage::RunReader reader(*m_store);
    std::vector<engine::MetricPoint> points;
    namespace s = engine::series;
    const std::vector<storage::EventRecord> events = reader.events(runId);
    std::vector<int64_t> ends = endSteps(events);
    std::erase_if(ends, [step](int64_t end) { return end > step; });
    struct WholeSet {
      std::string series;
      storage::SeriesPoint point;
    };
    std::vector<WholeSet> wholeSet;
    for (const auto& info : reader.listSeries(runId)) {
      // The points before the checkpoint's step; the resumed run reports the rest again. A
      // stop measures (probe, evaluation) at the step it checkpoints, which the resumed run
      // does not measure again: those series keep that point too (issue 36: the cosine panel
      // left out the probe at the stop's step 418).
      const std::string& name = info.key.name;
      const bool measured = name == s::kGradCosine || name == s::kTestLoss ||
                            name == s::kTestAccuracy || name == s::kValLoss ||
                            name == s::kValAccuracy;
      const double upTo = double(step) + (measured ? 0.5 : -0.5);
      const std::vector<storage::SeriesPoint> stored =
          reader.loadSeries(runId, info.key, storage::XAxis::Step, storage::XRange{-1e18, upTo});
      // A stop's whole-test-set evaluation is no periodic point: a marker of its own, as Runs
      // draws it, not joined into the test line (issue 36).
      std::vector<size_t> whole;
      if (info.key.stage < 0 && info.key.layer < 0 && hasWholeSetEvaluations(name))
        whole = wholeSetIndices(stored, ends, std::nullopt);
      for (size_t k = 0; k < stored.size(); ++k) {
        const auto& p = stored[k];
        if (std::binary_search(whole.begin(), whole.end(), k))
          wholeSet.push_back({name, p});
        else
          points.push_back(
              {info.key.name, info.key.stage, info.key.layer, p.step, p.timeS, p.value});
      }
    }
    m_data.addPoints(phase, points);
    for (const auto& w : wholeSet)
      for (PlotPanel* panel : {m_dashboard->accuracyPanel(), m_dashboard->lossPanel()})
        panel->markWholeSet(phase, w.series, w.point.step, w.point.timeS, w.point.value);
    // The changes made before the stop: the resumed run does not report them again.
    for (const auto& e : events)
      if (const auto steer = steerEventFrom({engine::EventKind::Info, e.timeS, e.stage, e.message});
          steer && steer->kind != SteerEvent::Kind::Refused && steer->change.step >= 0 &&
          steer->change.step <= step)
        m_data.addMarker({phase, steer->change.step, e.timeS, steer->label()});
    m_log->addNote(tr("Showing the run's first %n step(s) from the store", nullptr, int(step)));
  } catch (const std::exception& e) {
    m_log->addNote(
        tr("Could not read the run's earlier steps: %1").arg(QString::fromUtf8(e.what())), true);
  }
}

void TrainWorkspace::togglePause() {
  if (m_controller->state() == State::Paused)
    m_controller->resume();
  else
    m_controller->pause();
}

void TrainWorkspace::stopRun() {
  m_controller->stop();
}

QString TrainWorkspace::phaseName(int phase) const {
  return QString::fromStdString(engine::toString(m_controller->phaseMode(phase)));
}

void TrainWorkspace::setLivePace(const engine::RunInfo* phase) {
  // A stage running a team of intra-op threads (backprop uses one per core) stalls whenever
  // any member is descheduled, and on a machine whose cores the team fills, any work of the UI
  // thread deschedules one: each millisecond spent redrawing costs the whole team about that
  // long. While such a phase trains, the panels redraw once a second (UI thread ~12 ms CPU per
  // second of backprop instead of ~32: docs/benchmarks.md). Single-threaded stages lose only
  // the CPU time itself, so they keep the livelier pace.
  bool team = false;
  if (phase)
    for (const auto& stage : phase->stages) team |= stage.threads > 1;
  m_dashboard->setRedrawInterval(team ? LiveDashboard::kTeamRedrawMs
                                      : LiveDashboard::kLiveRedrawMs);
}

void TrainWorkspace::onBatch(const PhaseBatch& batch) {
  if (batch.info) {
    setLivePace(&*batch.info);
    m_data.beginPhase(batch.phase, *batch.info);
    m_steer->begin(*batch.info);
    updateSteering();
    m_measure->clear();
    showEarlierPart(batch.phase);
    // The engine's own "started" event says the stages, steps, BLAS and OpenMP wait: no
    // second line repeating it here.
  }
  m_data.addPoints(batch.phase, batch.points);
  m_data.addSpans(batch.phase, batch.spans);
  for (auto it = batch.points.rbegin(); it != batch.points.rend(); ++it)
    if (it->name == engine::series::kMeasureShare) {
      m_measure->setText(tr("measuring %1 %").arg(it->value * 100, 0, 'f', 1));
      break;
    }
  if (!batch.points.empty()) {
    // The strip's utilization: each stage's latest compute share.
    std::vector<double> compute;
    if (const engine::RunInfo* info = m_data.phaseInfo(batch.phase))
      for (size_t k = 0; k < info->stages.size(); ++k)
        compute.push_back(
            m_data.latest({batch.phase, engine::series::kComputeFraction, int(k), -1}));
    m_steer->setUtilization(compute);
  }
  m_sample->addEvents(batch.events);
  for (const auto& e : batch.events) {
    m_log->addEvent(phaseName(batch.phase), e);
    onSteerEvent(batch.phase, e);
    if (e.kind == engine::EventKind::Failed)
      showFailure(e.stage >= 0 ? tr("Stage %1 failed: %2")
                                     .arg(e.stage + 1)
                                     .arg(withoutStagePrefix(e.message, e.stage))
                               : tr("The run failed: %1").arg(QString::fromStdString(e.message)));
  }
  if (!batch.startError.empty()) {
    const QString text = tr("Could not start the %1 run: %2")
                             .arg(phaseName(batch.phase), QString::fromStdString(batch.startError));
    m_log->addNote(text, true);
    showFailure(text, true);
  }
  if (batch.summary) {
    const auto& s = *batch.summary;
    m_summaries.push_back(s);
    m_dashboard->utilizationPanel()->setRunSummary(batch.phase, s);
    // The summary's test numbers are the final evaluation on the whole test set, the test
    // series' last point: drawn apart from the periodic ones on eval.max_samples.
    m_dashboard->accuracyPanel()->markFinal(batch.phase, engine::series::kTestAccuracy,
                                            s.testAccuracy);
    m_dashboard->lossPanel()->markFinal(batch.phase, engine::series::kTestLoss, s.testLoss);
    QString line =
        tr("%1 run %2 after %3 steps, %4 samples/s")
            .arg(phaseName(batch.phase), QString::fromStdString(engine::toString(s.status)))
            .arg(s.steps)
            .arg(s.samplesPerSec, 0, 'f', 0);
    if (std::isfinite(s.testAccuracy))
      line += tr(", test accuracy %1").arg(s.testAccuracy, 0, 'f', 4);
    if (s.pausedSeconds >= 0.05)
      line += tr(" (training time %1; paused %2, not counted)")
                  .arg(formatDuration(s.wallSeconds), formatDuration(s.pausedSeconds));
    if (std::isfinite(s.measureShare)) {
      // One source: the summary's share and counts, in the header too. The counts are the
      // points measured during training (what the share charges); the final probe and
      // evaluation, after training, are stored as well but not charged.
      const QString share = QString::number(s.measureShare * 100, 'f', 1);
      m_measure->setText(tr("measuring %1 %").arg(share));
      QStringList points;
      if (s.probePoints > 0) points << formatCountOf(s.probePoints, tr("probe"), tr("probes"));
      points << formatCountOf(s.evalPoints, tr("evaluation"), tr("evaluations"));
      line += tr("; measuring took %1 % of it (%2 during training, then the final ones, not "
                 "charged%3)")
                  .arg(share, points.join(tr(" and ")),
                       s.thinnedPoints > 0 ? tr("; %1 left out by the %2 % budget")
                                                 .arg(s.thinnedPoints)
                                                 .arg(s.measureBudget * 100, 0, 'f', 0)
                                           : QString());
    }
    m_log->addNote(line, s.status == engine::RunStatus::Failed);
    if (s.status == engine::RunStatus::Failed)
      showFailure(s.failedStage >= 0
                      ? tr("Stage %1 failed: %2")
                            .arg(s.failedStage + 1)
                            .arg(withoutStagePrefix(s.error, s.failedStage))
                      : tr("The run failed: %1").arg(QString::fromStdString(s.error)));
    Q_EMIT message(line);
  }
}

void TrainWorkspace::onSteerEvent(int phase, const engine::RunEvent& event) {
  const std::optional<SteerEvent> steer = steerEventFrom(event);
  if (!steer) return;
  m_steer->applyEvent(*steer);
  if (steer->kind == SteerEvent::Kind::Repartition && !steer->layout.empty()) {
    // The stages from now on, each with the settings of the stage its first layer came from.
    const engine::RunInfo* info = m_data.phaseInfo(phase);
    std::vector<engine::StageInfo> stages;
    for (const auto& [first, last] : steer->layout) {
      engine::StageInfo s;
      if (info)
        for (const auto& old : info->stages)
          if (first >= old.firstLayer && first <= old.lastLayer) s = old;
      s.index = int(stages.size());
      s.firstLayer = first;
      s.lastLayer = last;
      s.params = 0;
      for (int l = first; info && l <= last && size_t(l) < info->layers.size(); ++l)
        s.params += info->layers[size_t(l)].params;
      stages.push_back(s);
    }
    m_data.setStages(phase, stages);
  }
  if (steer->kind != SteerEvent::Kind::Refused && steer->change.step >= 0)
    m_data.addMarker({phase, steer->change.step, event.timeS, steer->label()});
}

void TrainWorkspace::setDesignSteers(bool on) {
  m_designSteers = on;
  QSettings().setValue(QStringLiteral("train/design_steers"), on);
}

void TrainWorkspace::followDesignCuts() {
  // Only a cut moved in Design (not another edit) asks, and only for cuts the design resolves.
  std::vector<int> cuts;
  const auto& stages = m_doc->partition().stages;
  for (size_t k = 1; k < stages.size(); ++k) cuts.push_back(stages[k].firstLayer);
  if (cuts.empty() && stages.empty()) return;  // invalid cuts: Design says why
  const std::vector<int> before = std::exchange(m_designCuts, cuts);
  const State state = m_controller->state();
  const engine::RunInfo* info = m_data.phaseInfo(m_data.currentPhase());
  if (cuts == before || !m_designSteers || !info ||
      (state != State::Running && state != State::Paused) || !m_steer->cutsFixedReason().isEmpty())
    return;
  // The running run must be this design's network on this design's data.
  try {
    const auto running = nlohmann::json::parse(info->specJson);
    const auto designed = nlohmann::json::parse(engine::specToJson(m_doc->spec()));
    if (running.value("model", nlohmann::json()) != designed.value("model", nlohmann::json()) ||
        running.value("dataset", nlohmann::json()) != designed.value("dataset", nlohmann::json()))
      return;
  } catch (const std::exception&) {
    return;
  }
  // The edit made in Design, not Design's whole list: the cuts it removed and added are removed
  // from and added to the running run's cuts, which may have moved in the strip since.
  const std::vector<int> running = m_steer->strip()->cuts();
  std::set<int> next(running.begin(), running.end());
  std::vector<int> removed, added;
  std::set_difference(before.begin(), before.end(), cuts.begin(), cuts.end(),
                      std::back_inserter(removed));
  std::set_difference(cuts.begin(), cuts.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  for (const int c : removed)
    if (next.erase(c) == 0) {
      const QString text = tr("Design's cut after layer %1 is not a cut of the running run (%2): "
                              "move that run's cuts in Train's stage strip")
                               .arg(c)
                               .arg(cutsLabel(running));
      m_log->addNote(text);
      Q_EMIT message(text);
      return;
    }
  next.insert(added.begin(), added.end());
  const std::vector<int> asked(next.begin(), next.end());
  if (asked == running) return;
  const QString text =
      tr("Design's change of cuts %1 → %2 asked of the running run: %3 → %4 "
         "(Run › Design's cuts steer the live run)")
          .arg(cutsLabel(before), cutsLabel(cuts), cutsLabel(running), cutsLabel(asked));
  m_log->addNote(text);
  Q_EMIT message(text);
  m_controller->requestRepartition(asked);
}

void TrainWorkspace::updateSteering() {
  const State state = m_controller->state();
  const bool live = (state == State::Running || state == State::Paused) &&
                    m_data.phaseInfo(m_data.currentPhase()) != nullptr;
  m_steer->setLive(live, tr("Start a run: a running local run can be re-partitioned and its "
                            "stages' settings changed here."));
}

void TrainWorkspace::onProgress(const engine::Progress& p, int phase, int phases) {
  m_queue->runProgress(p);
  const double within = p.totalSteps > 0 ? double(p.step) / double(p.totalSteps) : 0.0;
  m_progress->setValue(int(std::lround(1000.0 * (phase + within) / std::max(1, phases))));
  m_steps = tr("%1 / %2 steps").arg(p.step).arg(p.totalSteps);
  if (phases > 1)
    m_steps = tr("%1 %2/%3 · ").arg(phaseName(phase)).arg(phase + 1).arg(phases) + m_steps;
  // Stopping or stopped, nothing is left to wait for (issue 36: "ETA 0 s" after a stop).
  const State state = m_controller->state();
  const bool ending = state == State::Stopping || state == State::Idle;
  m_eta->setText(p.etaS >= 0 && !ending ? m_steps + tr(" · ETA %1").arg(formatDuration(p.etaS))
                                        : m_steps);
}

QString TrainWorkspace::progressText() const {
  return m_eta->text();
}

void TrainWorkspace::clearLiveView() {
  m_data.clear();
  m_steer->clear();
  m_summaries.clear();
  m_recordedRuns.clear();
  m_dashboard->timelinePanel()->setTraceAvailable(false);
  m_progress->reset();  // blank, as before any run (not "0%")
  m_eta->clear();
  m_steps.clear();
  m_dashboard->refreshAll();
  updateSteering();
}

void TrainWorkspace::showFailure(const QString& text, bool forSpec) {
  m_bannerForSpec = forSpec;
  m_banner->setText(QStringLiteral("⚠ ") + text);
  m_banner->show();
}

void TrainWorkspace::updateControls() {
  const State state = m_controller->state();
  const bool idle = state == State::Idle;
  const bool studying = m_queue->isRunning();
  m_sample->setVisible(m_doc->spec().dataset.kind == "text");
  m_run->setEnabled(idle && !studying && m_doc->canRun());
  m_run->setToolTip(!m_doc->canRun() ? tr("Cannot run:\n%1").arg(m_doc->blockReason())
                    : studying       ? tr("A study is running (its queue is below)")
                    : idle           ? tr("Train the designed experiment (Ctrl+R)")
                                     : tr("A run is in progress"));
  m_pause->setEnabled(state == State::Running || state == State::Paused);
  m_pause->setText(state == State::Paused ? tr("Resume") : tr("Pause"));
  m_stop->setEnabled(!idle && state != State::Stopping);
  m_mode->setEnabled(idle && !studying);
  updateProcesses();
  static const char* const kNames[] = {"Idle", "Starting…", "Running", "Paused", "Stopping…"};
  QString status = tr(kNames[int(state)]);
  if (idle && !m_summaries.empty())  // say how the last run ended
    status = QString::fromStdString(engine::toString(m_summaries.back().status));
  m_status->setText(status);
}

}  // namespace stagewise::ui
