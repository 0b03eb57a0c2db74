// The Processes control of the Train workspace, on the fake engine: a local run goes to the
// distributed run factory with the chosen count, "both" runs only its local phase there,
// backprop and one-stage designs disable the control with the reason, the count is clamped to
// the stage count and kept in the settings, and Stop while the processes join is not a failure.

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "bridge/engine_controller.h"
#include "common/app_settings.h"
#include "common/fake_services.h"
#include "designer/design_document.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/train_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;
using State = EngineController::State;

namespace {

engine::ExperimentSpec spec(std::vector<int> cuts, int64_t steps = 200) {
  engine::ExperimentSpec s;
  s.name = "processes-test";
  s.dataset.kind = "synthetic";
  s.model.hidden = {32, 32, 32};
  s.partition.cuts = std::move(cuts);
  s.train.maxSteps = steps;
  s.eval.interval = 50;
  return s;
}

/// What the distributed factory was asked for.
struct Calls {
  std::mutex mutex;
  std::vector<int> processes;
  std::vector<engine::Mode> modes;
  void add(int n, engine::Mode mode) {
    std::lock_guard lock(mutex);
    processes.push_back(n);
    modes.push_back(mode);
  }
  std::vector<int> counts() {
    std::lock_guard lock(mutex);
    return processes;
  }
};

/// Fake services whose distributed factory records its calls and runs the fake engine.
EngineServices servicesWithProcesses(std::shared_ptr<Calls> calls) {
  EngineServices services = fakeEngineServices({200, 0.002});
  RunFactory plain = services.createRun;
  services.createDistributedRun = [calls, plain](const engine::ExperimentSpec& s,
                                                 engine::RunObserver* observer, int processes,
                                                 const std::function<bool()>&) {
    calls->add(processes, s.mode);
    return plain(s, observer);
  };
  return services;
}

struct Fixture {
  EngineServices services;
  DesignDocument doc;
  EngineController controller;
  TrainWorkspace workspace;
  explicit Fixture(EngineServices s, const engine::ExperimentSpec& design)
      : services(std::move(s)),
        doc(services.engine),
        controller(services),
        workspace(&controller, &doc) {
    doc.load(design);
    workspace.resize(1300, 850);
    workspace.show();
  }
  bool runToEnd() {
    QSignalSpy finished(&workspace, &TrainWorkspace::runFinished);
    if (!workspace.startRun()) return false;
    return finished.wait(15000) || finished.count() == 1;
  }
};

}  // namespace

class TestTrainProcesses : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { QSettings().remove(QStringLiteral("train/processes")); }

  void localRunGoesToTheFactoryWithTheCount() {
    auto calls = std::make_shared<Calls>();
    Fixture f(servicesWithProcesses(calls), spec({1, 2}));  // 3 stages
    QSpinBox* processes = f.workspace.processesSpin();
    QVERIFY(processes->isVisible());
    QVERIFY(processes->isEnabled());
    QCOMPARE(processes->value(), 1);
    QCOMPARE(processes->maximum(), 3);
    QVERIFY(processes->toolTip().contains(QStringLiteral("c10d Gloo")));
    QVERIFY(processes->toolTip().contains(QStringLiteral("bit for bit")));
    processes->setValue(7);  // more than the stages: clamped
    QCOMPARE(processes->value(), 3);
    processes->setValue(2);
    QCOMPARE(AppSettings::processes(), 2);

    QVERIFY(f.runToEnd());
    QCOMPARE(calls->counts(), std::vector<int>{2});
    QVERIFY(calls->modes[0] == engine::Mode::Local);
    PlotPanel* loss = f.workspace.dashboard()->lossPanel();
    QCOMPARE(loss->graphCount(), 4);  // a graph per stage and the test loss
    for (int g = 0; g < 3; ++g) QCOMPARE(loss->receivedPoints(g), 200);
    QVERIFY(f.workspace.eventLog()->messages().first().contains(
        QStringLiteral("the local run in 2 processes")));
    QVERIFY(processes->toolTip().contains(QStringLiteral("the local run's stages")));
    QVERIFY(f.workspace.summaries().at(0).status == engine::RunStatus::Completed);

    // One process: the ordinary in-process run, the factory is not asked.
    processes->setValue(1);
    QVERIFY(f.runToEnd());
    QCOMPARE(calls->counts(), std::vector<int>{2});
  }

  void theRecorderHearsEachStagesRank() {
    // A run over processes records each stage's rank (the trace's process tracks); the
    // backprop phase of "both" runs in this process and gets none.
    auto calls = std::make_shared<Calls>();
    EngineServices services = servicesWithProcesses(calls);
    auto ranks = std::make_shared<std::vector<std::vector<int>>>();
    services.createRecorder =
        [ranks](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      ranks->push_back(request.stageRanks);
      return nullptr;
    };
    Fixture f(services, spec({1, 2}, 60));  // 3 stages
    f.workspace.processesSpin()->setValue(2);
    f.workspace.modeCombo()->setCurrentIndex(2);
    QVERIFY(f.runToEnd());
    QTRY_COMPARE_WITH_TIMEOUT(ranks->size(), size_t(2), 15000);
    QCOMPARE(ranks->at(0), (std::vector<int>{0, 0, 1}));  // engine::assignRanks' default spread
    QVERIFY(ranks->at(1).empty());
  }

  void bothRunsOnlyItsLocalPhaseInProcesses() {
    auto calls = std::make_shared<Calls>();
    Fixture f(servicesWithProcesses(calls), spec({1, 2}, 120));
    f.workspace.processesSpin()->setValue(3);
    f.workspace.modeCombo()->setCurrentIndex(2);
    QVERIFY(f.workspace.processesSpin()->isEnabled());
    QVERIFY(f.workspace.processesSpin()->toolTip().contains(
        QStringLiteral("the backprop phase runs in this process")));
    QVERIFY(f.runToEnd());
    QCOMPARE(calls->counts(), std::vector<int>{3});
    QCOMPARE(f.workspace.summaries().size(), size_t(2));
    QVERIFY(f.workspace.summaries()[1].mode == engine::Mode::Backprop);
    QVERIFY(f.workspace.summaries()[1].status == engine::RunStatus::Completed);
  }

  /// Pipelined backprop spreads its stages over the processes as local mode does.
  void pipelineRunsInProcessesToo() {
    auto calls = std::make_shared<Calls>();
    Fixture f(servicesWithProcesses(calls), spec({1, 2}, 120));
    f.workspace.processesSpin()->setValue(3);
    f.workspace.selectPlan({engine::Mode::Local, engine::Mode::Pipeline});
    QCOMPARE(f.workspace.modeCombo()->currentText(), QStringLiteral("Local, then pipeline"));
    QVERIFY(f.workspace.processesSpin()->isEnabled());
    // The log and the tooltip name the run's modes, not "the local run" for a pipeline one.
    QVERIFY2(f.workspace.processesSpin()->toolTip().contains(
                 QStringLiteral("the local and pipeline run's stages")),
             qPrintable(f.workspace.processesSpin()->toolTip()));
    QVERIFY(f.runToEnd());
    QVERIFY2(f.workspace.eventLog()->messages().first().contains(
                 QStringLiteral("the local and pipeline run in 3 processes")),
             qPrintable(f.workspace.eventLog()->messages().first()));
    QCOMPARE(calls->counts(), (std::vector<int>{3, 3}));
    QCOMPARE(f.workspace.summaries().size(), size_t(2));
    QVERIFY(f.workspace.summaries()[1].mode == engine::Mode::Pipeline);
    // every plan the box offers is a distinct non-empty set of the three modes
    std::set<std::vector<engine::Mode>> plans;
    for (const auto& [label, plan] : TrainWorkspace::planChoices()) {
      QVERIFY(!plan.empty());
      plans.insert(plan);
    }
    QCOMPARE(plans.size(), size_t(7));
  }

  void backpropAndOneStageDisableIt() {
    auto calls = std::make_shared<Calls>();
    Fixture f(servicesWithProcesses(calls), spec({1, 2}));
    QSpinBox* processes = f.workspace.processesSpin();
    processes->setValue(2);
    f.workspace.modeCombo()->setCurrentIndex(1);  // backprop
    QVERIFY(!processes->isEnabled());
    QVERIFY2(processes->toolTip().contains(QStringLiteral("Backprop runs in one process")),
             qPrintable(processes->toolTip()));
    QCOMPARE(f.workspace.runProcesses(), 1);
    QVERIFY(f.runToEnd());
    QVERIFY(calls->counts().empty());
    QVERIFY(f.workspace.summaries().at(0).status == engine::RunStatus::Completed);

    f.workspace.modeCombo()->setCurrentIndex(0);
    QVERIFY(processes->isEnabled());
    f.doc.load(spec({}));  // one stage
    QVERIFY(!processes->isEnabled());
    QCOMPARE(processes->maximum(), 1);
    QVERIFY(processes->toolTip().contains(QStringLiteral("One stage")));
    QCOMPARE(f.workspace.runProcesses(), 1);
    // The choice is kept, only shown clamped: back to 3 stages, back to 2 processes.
    QCOMPARE(AppSettings::processes(), 2);
    f.doc.load(spec({1, 2}));
    QVERIFY(processes->isEnabled());
    QCOMPARE(processes->value(), 2);
  }

  void theChoiceIsRemembered() {
    auto calls = std::make_shared<Calls>();
    {
      Fixture f(servicesWithProcesses(calls), spec({1, 2}));
      f.workspace.processesSpin()->setValue(3);
    }
    Fixture again(servicesWithProcesses(calls), spec({1, 2}));
    QCOMPARE(again.workspace.processesSpin()->value(), 3);
    QCOMPARE(again.workspace.runProcesses(), 3);
    Fixture fewer(servicesWithProcesses(calls), spec({2}));  // 2 stages
    QCOMPARE(fewer.workspace.processesSpin()->value(), 2);
  }

  void withoutTheServiceItIsDisabled() {
    Fixture f(fakeEngineServices({200, 0.002}), spec({1, 2}));
    QVERIFY(!f.workspace.processesSpin()->isEnabled());
    QVERIFY(
        f.workspace.processesSpin()->toolTip().contains(QStringLiteral("cannot start processes")));
    QVERIFY(!f.controller.start(spec({1, 2}), RunPlan{engine::Mode::Local}, {}, 2));
    QVERIFY(f.runToEnd());  // the ordinary run still works
  }

  void aSpecThatCannotSpreadIsRefusedWithTheReason() {
    auto calls = std::make_shared<Calls>();
    auto s = spec({1, 2});
    s.checkpoint.interval = 50;
    Fixture f(servicesWithProcesses(calls), s);
    f.workspace.processesSpin()->setValue(2);
    QVERIFY(f.workspace.processesSpin()->toolTip().contains(QStringLiteral("checkpoints")));
    QVERIFY(!f.workspace.startRun());
    QVERIFY(f.workspace.failureBanner()->isVisible());
    QVERIFY2(
        f.workspace.failureBanner()->text().contains(QStringLiteral("Cannot run in 2 processes")),
        qPrintable(f.workspace.failureBanner()->text()));
    QVERIFY(calls->counts().empty());
    QCOMPARE(f.controller.state(), State::Idle);
    // The refusal was for the spec as it was: fixing it takes the banner down.
    auto fixed = f.doc.spec();
    fixed.checkpoint.interval = 0;
    f.doc.edit(fixed, QStringLiteral("checkpoint interval"));
    QVERIFY(!f.workspace.failureBanner()->isVisible());
  }

  void stopWhileTheProcessesJoinIsNotAFailure() {
    // A factory that waits for processes that never join, as the real one does, until Stop.
    EngineServices services = fakeEngineServices({200, 0.002});
    auto waited = std::make_shared<std::atomic<bool>>(false);
    services.createDistributedRun =
        [waited](const engine::ExperimentSpec&, engine::RunObserver*, int,
                 const std::function<bool()>& stopRequested) -> std::unique_ptr<engine::Run> {
      const auto t0 = std::chrono::steady_clock::now();
      while (!stopRequested()) {
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20))
          throw std::runtime_error("rank(s) 1 did not join within 20 s");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      *waited = true;
      throw std::runtime_error("stopped while waiting for the other processes to join");
    };
    Fixture f(services, spec({1, 2}));
    f.workspace.processesSpin()->setValue(2);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.startRun());
    QTest::qWait(300);
    QCOMPARE(f.controller.state(), State::Starting);  // the UI thread is not blocked meanwhile
    QVERIFY(f.workspace.stopButton()->isEnabled());
    QElapsedTimer t;
    t.start();
    f.workspace.stopRun();
    QVERIFY(finished.wait(5000));
    QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
    QVERIFY(waited->load());
    QCOMPARE(f.controller.state(), State::Idle);
    QVERIFY(!f.workspace.failureBanner()->isVisible());
    QVERIFY(f.workspace.eventLog()
                ->messages()
                .join(QLatin1Char('\n'))
                .contains(QStringLiteral("stopped before the run started")));
  }
};

QTEST_MAIN(TestTrainProcesses)
#include "test_train_processes.moc"
