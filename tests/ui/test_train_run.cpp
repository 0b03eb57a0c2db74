// A short fake run driven from the Train workspace: plots receive points in batches, pause,
// resume and stop work, a failing stage is named, and "both" runs backprop after local.

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>
#include <cmath>
#include <thread>

#include "bridge/engine_controller.h"
#include "common/fake_services.h"
#include "designer/design_document.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/stage_strip.h"
#include "live/steer_panel.h"
#include "live/study_queue.h"
#include "live/timeline_panel.h"
#include "live/train_workspace.h"
#include "live/utilization_panel.h"
#include "stagewise/storage/run_store.h"

using namespace stagewise;
using namespace stagewise::ui;
using State = EngineController::State;

class TestTrainRun : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec spec(int64_t steps) {
    engine::ExperimentSpec s;
    s.name = "train-test";
    s.dataset.kind = "synthetic";
    s.model.hidden = {32, 32, 32};
    s.partition.cuts = {1, 2};  // 3 stages
    s.train.maxSteps = steps;
    s.eval.interval = 50;
    s.probe.interval = 20;
    return s;
  }

  struct Fixture {
    engine::FakeScript script;
    EngineServices services;
    DesignDocument doc;
    EngineController controller;
    TrainWorkspace workspace;
    explicit Fixture(int64_t steps, double stepSeconds = 0.002)
        : script{steps, stepSeconds},
          services(fakeEngineServices(script)),
          doc(services.engine),
          controller(services),
          workspace(&controller, &doc) {
      doc.load(spec(steps));
      workspace.resize(1300, 850);
      workspace.show();
    }
  };

 private Q_SLOTS:
  void shortRunFillsThePlotsInBatches() {
    Fixture f(300);
    QSignalSpy batches(&f.controller, &EngineController::batchArrived);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.runButton()->isEnabled());
    QTest::mouseClick(f.workspace.runButton(), Qt::LeftButton);
    QVERIFY(f.controller.isBusy());
    QVERIFY(!f.workspace.runButton()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    QCOMPARE(f.controller.state(), State::Idle);

    LiveDashboard* d = f.workspace.dashboard();
    PlotPanel* loss = d->lossPanel();
    // One graph per stage plus the test loss, each with every step received.
    QCOMPARE(loss->graphCount(), 4);
    for (int g = 0; g < 3; ++g) {
      QCOMPARE(loss->receivedPoints(g), 300);
      QVERIFY(loss->shownPoints(g) > 10);
    }
    QCOMPARE(loss->legendText(0), QStringLiteral("S1"));
    QVERIFY(d->accuracyPanel()->graphCount() >= 4);
    QCOMPARE(d->cosinePanel()->graphCount(), 3);
    QVERIFY(d->cosinePanel()->receivedPoints(0) >= 10);
    QCOMPARE(d->throughputPanel()->graphCount(), 1);
    QCOMPARE(d->queuePanel()->graphCount(), 6);
    QVERIFY(d->utilizationPanel()->barValue(0, 0) > 0.5);
    QVERIFY(d->timelinePanel()->drawnSpans(2) > 0);
    // Points arrived in batches, far fewer than steps.
    QVERIFY2(batches.count() < 150, qPrintable(QString::number(batches.count())));
    QCOMPARE(f.workspace.progressBar()->value(), 1000);
    QCOMPARE(f.workspace.summaries().size(), size_t(1));
    QVERIFY(f.workspace.summaries()[0].status == engine::RunStatus::Completed);
    QVERIFY(f.workspace.runButton()->isEnabled());
    // Once the run ended, the bubble markers are the summary's whole-run means, and say so.
    UtilizationPanel* u = d->utilizationPanel();
    const auto& stages = f.workspace.summaries()[0].stages;
    QCOMPARE(stages.size(), size_t(3));
    for (int k = 0; k < 3; ++k) {
      QVERIFY(std::isfinite(stages[size_t(k)].bubbleMeasured));
      QCOMPARE(u->bubbleValue(0, k), stages[size_t(k)].bubblePlanned);
      QCOMPARE(u->bubbleValue(1, k), stages[size_t(k)].bubbleMeasured);
    }
    QVERIFY2(u->title().contains(QStringLiteral("whole run")), qPrintable(u->title()));
  }

  void cosinePerLayerOnDemand() {
    // 3 stages over fc1 | fc2 | fc3 + classifier: 4 layers, each with its own cosine curve.
    Fixture f(100000, 0.001);
    LiveDashboard* d = f.workspace.dashboard();
    PlotPanel* cosine = d->cosinePanel();
    QComboBox* scope = d->cosineScopeCombo();
    QVERIFY(!scope->toolTip().isEmpty());
    QVERIFY(scope->isVisible());
    QCOMPARE(scope->currentIndex(), 0);
    QVERIFY(f.workspace.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(cosine->graphCount() == 3 && cosine->receivedPoints(0) >= 3, 5000);
    for (int g = 0; g < cosine->graphCount(); ++g)
      QVERIFY2(cosine->legendText(g).startsWith(QLatin1Char('S')) &&
                   !cosine->legendText(g).contains(QLatin1Char(' ')),
               qPrintable(cosine->legendText(g)));

    // Switched while the run is live: one graph per layer, named after its stage and layer,
    // built from the points received so far and still receiving new ones.
    scope->setCurrentIndex(1);
    QCOMPARE(cosine->graphCount(), 4);
    QStringList legends;
    for (int g = 0; g < 4; ++g) legends << cosine->legendText(g);
    QCOMPARE(legends, QStringList({QStringLiteral("S1 fc1"), QStringLiteral("S2 fc2"),
                                   QStringLiteral("S3 fc3"), QStringLiteral("S3 classifier")}));
    const int before = cosine->receivedPoints(2);
    QVERIFY(before >= 3);
    QTRY_VERIFY_WITH_TIMEOUT(cosine->receivedPoints(2) > before, 5000);
    d->refreshAll(true);
    for (int g = 0; g < 4; ++g) QVERIFY2(cosine->shownPoints(g) >= 3, qPrintable(legends[g]));

    f.controller.stop();
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Idle, 3000);
    scope->setCurrentIndex(0);
    QCOMPARE(cosine->graphCount(), 3);
    QCOMPARE(cosine->legendText(2), QStringLiteral("S3"));
  }

  void pauseResumeAndStop() {
    Fixture f(100000, 0.001);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Running, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(f.workspace.dashboard()->lossPanel()->receivedPoints(0) > 20, 5000);
    QTest::mouseClick(f.workspace.pauseButton(), Qt::LeftButton);
    QCOMPARE(f.controller.state(), State::Paused);
    QCOMPARE(f.workspace.pauseButton()->text(), QStringLiteral("Resume"));
    QTest::qWait(2 * EngineController::kDrainMs);  // let in-flight points drain
    const int paused = f.workspace.dashboard()->lossPanel()->receivedPoints(0);
    QTest::qWait(300);
    QCOMPARE(f.workspace.dashboard()->lossPanel()->receivedPoints(0), paused);
    QTest::mouseClick(f.workspace.pauseButton(), Qt::LeftButton);
    QCOMPARE(f.controller.state(), State::Running);
    QTRY_VERIFY_WITH_TIMEOUT(f.workspace.dashboard()->lossPanel()->receivedPoints(0) > paused,
                             5000);

    QTRY_VERIFY_WITH_TIMEOUT(f.workspace.progressText().contains(QStringLiteral("ETA")), 5000);

    QElapsedTimer timer;
    timer.start();
    QTest::mouseClick(f.workspace.stopButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 3000);
    QVERIFY(timer.elapsed() < 2000);
    // Stopped: the steps done, no "ETA 0 s" (issue 36).
    QTest::qWait(100);
    QVERIFY2(f.workspace.progressText().contains(QStringLiteral(" steps")) &&
                 !f.workspace.progressText().contains(QStringLiteral("ETA")),
             qPrintable(f.workspace.progressText()));
    QCOMPARE(f.workspace.summaries().size(), size_t(1));
    QVERIFY(f.workspace.summaries()[0].status == engine::RunStatus::Stopped);
    QVERIFY(f.workspace.summaries()[0].steps < 100000);
    QVERIFY(f.workspace.eventLog()
                ->messages()
                .join(QLatin1Char('\n'))
                .contains(QStringLiteral("stopped")));
  }

  void failingStageIsNamed() {
    Fixture f(400);
    auto s = f.doc.spec();
    s.debug.failAtStep = 60;
    s.debug.stage = 1;
    f.doc.load(s);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QVERIFY(f.workspace.failureBanner()->isVisible());
    QVERIFY2(f.workspace.failureBanner()->text().contains(QStringLiteral("Stage 2")),
             qPrintable(f.workspace.failureBanner()->text()));
    QVERIFY(f.workspace.summaries().back().status == engine::RunStatus::Failed);
    QCOMPARE(f.workspace.summaries().back().failedStage, 1);
    // The engine's 0-based "stage 1:" prefix is not repeated under the 1-based name.
    QVERIFY(!f.workspace.failureBanner()->text().contains(QStringLiteral("stage 1:")));
  }

  void bothRunsBackpropAfterLocal() {
    Fixture f(120);
    f.workspace.modeCombo()->setCurrentIndex(2);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    QCOMPARE(f.workspace.summaries().size(), size_t(2));
    QVERIFY(f.workspace.summaries()[0].mode == engine::Mode::Local);
    QVERIFY(f.workspace.summaries()[1].mode == engine::Mode::Backprop);
    PlotPanel* loss = f.workspace.dashboard()->lossPanel();
    QStringList legends;
    for (int g = 0; g < loss->graphCount(); ++g) legends << loss->legendText(g);
    QVERIFY2(legends.contains(QStringLiteral("backprop")),
             qPrintable(legends.join(QLatin1Char(','))));
    QVERIFY(legends.contains(QStringLiteral("S3")));
    // Both phases stay viewable: the utilization and timeline panels show backprop's one
    // "model" stage after the plan, and the local phase's three stages when chosen.
    LiveDashboard* d = f.workspace.dashboard();
    QComboBox* view = d->phaseViewCombo();
    QVERIFY(view->isVisibleTo(&f.workspace));
    QCOMPARE(view->count(), 2);
    QCOMPARE(view->currentIndex(), 1);
    d->refreshAll(true);
    QCOMPARE(d->timelinePanel()->drawnSpans(1), 0);  // backprop: one row
    view->setCurrentIndex(0);
    Q_EMIT view->activated(0);
    QCOMPARE(d->utilizationPanel()->phase(), 0);
    QVERIFY(d->timelinePanel()->drawnSpans(2) > 0);  // the local phase's third stage
    QVERIFY(!std::isnan(d->utilizationPanel()->barValue(0, 2)));
  }

  void bothPhasesAreRecordedAsOneComparison() {
    // The recorder of each phase is asked for the same tag: Runs lists them as one comparison.
    Fixture f(60);
    auto tags = std::make_shared<std::vector<std::vector<std::string>>>();
    auto services = f.services;
    services.createRecorder =
        [tags](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      tags->push_back(request.tags);
      return nullptr;
    };
    EngineController controller(services);
    TrainWorkspace ws(&controller, &f.doc);
    ws.modeCombo()->setCurrentIndex(2);
    QSignalSpy finished(&ws, &TrainWorkspace::runFinished);
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    QCOMPARE(tags->size(), size_t(2));
    QCOMPARE(tags->at(0).size(), size_t(1));
    QCOMPARE(tags->at(0), tags->at(1));
    QVERIFY(QString::fromStdString(tags->at(0).front()).startsWith(QStringLiteral("compare-")));
    // A single mode gets no such tag.
    ws.modeCombo()->setCurrentIndex(0);
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 15000);
    QCOMPARE(tags->size(), size_t(3));
    QVERIFY(tags->back().empty());
  }

  void timelineOffersTheTraceOnceRecorded() {
    // The Timeline's "Export trace" stays off until the phase's record exists in a store.
    Fixture f(40);
    auto services = f.services;
    services.createRecorder = [](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      if (request.onRecorded) request.onRecorded(7);  // as the recorder does, off the UI thread
      return nullptr;
    };
    EngineController controller(services);
    TrainWorkspace ws(&controller, &f.doc);
    QTemporaryDir dir;
    ws.setStore(std::make_shared<storage::RunStore>(dir.filePath("runs.db").toStdString()));
    QAction* action = ws.dashboard()->timelinePanel()->exportTraceAction();
    QVERIFY(!action->isEnabled());
    QSignalSpy finished(&ws, &TrainWorkspace::runFinished);
    QVERIFY(ws.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(action->isEnabled(), 15000);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    // Without a store nothing can be written: the entry stays off.
    TrainWorkspace unstored(&controller, &f.doc);
    QVERIFY(!unstored.dashboard()->timelinePanel()->exportTraceAction()->isEnabled());
  }

  void eventLogSpeaksToPeople() {
    Fixture f(100000, 0.001);
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(f.workspace.dashboard()->lossPanel()->receivedPoints(0) > 20, 5000);
    f.workspace.stopRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
    const QStringList kinds = f.workspace.eventLog()->kinds();
    QVERIFY2(kinds.contains(QStringLiteral("stop requested")) ||
                 kinds.contains(QStringLiteral("stopped")),
             qPrintable(kinds.join(QLatin1Char(','))));
    for (const QString& k : kinds) QVERIFY2(!k.contains(QLatin1Char('_')), qPrintable(k));
    // The start is said once, by the engine: no second line repeating it.
    int starts = 0;
    for (const QString& m : f.workspace.eventLog()->messages())
      starts += m.contains(QStringLiteral("stage(s)")) ? 1 : 0;
    QCOMPARE(starts, 1);
    // A long line wraps in the message column instead of being cut at the edge.
    EventLog* log = f.workspace.eventLog();
    QString words;
    for (int i = 0; i < 60; ++i) words += QStringLiteral("word%1 ").arg(i);
    log->addNote(words);
    QTreeWidgetItem* last = log->topLevelItem(log->topLevelItemCount() - 1);
    QTRY_VERIFY2(log->visualItemRect(last).height() > 2 * log->fontMetrics().height(),
                 qPrintable(QString::number(log->visualItemRect(last).height())));
  }

  void teamsOfThreadsGetAQuieterLiveView() {
    // Single-threaded stages: the usual pace.
    Fixture f(100000, 0.001);
    QVERIFY(f.workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Running, 5000);
    QCOMPARE(f.workspace.dashboard()->redrawInterval(), LiveDashboard::kLiveRedrawMs);
    f.controller.stop();
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Idle, 3000);

    // A stage with two intra-op threads (as backprop runs one per core): redraws are rarer
    // while it trains, and back to the usual pace once it is over.
    auto spec = f.doc.spec();
    spec.stageDefaults.threads = 2;
    f.doc.load(spec);
    const int before = f.workspace.dashboard()->redrawCount();
    QVERIFY(f.workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Running, 5000);
    QCOMPARE(f.workspace.dashboard()->redrawInterval(), LiveDashboard::kTeamRedrawMs);
    const int running = f.workspace.dashboard()->redrawCount();
    QTest::qWait(2100);
    QVERIFY2(f.workspace.dashboard()->redrawCount() - running <= 3,
             qPrintable(QString::number(f.workspace.dashboard()->redrawCount() - running)));
    QVERIFY(f.workspace.dashboard()->lossPanel()->receivedPoints(0) > 100);  // data still flows
    f.controller.stop();
    QTRY_COMPARE_WITH_TIMEOUT(f.controller.state(), State::Idle, 3000);
    QVERIFY(f.workspace.dashboard()->redrawCount() > before);
    QCOMPARE(f.workspace.dashboard()->redrawInterval(), LiveDashboard::kLiveRedrawMs);
  }

  void storeNoticesReachTheEventLog() {
    // The recorder's store notices come from the store's writer thread while the run goes on.
    Fixture f(100000, 0.001);
    auto services = f.services;
    auto sink = std::make_shared<StoreNoticeSink>();
    services.createRecorder =
        [sink](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      *sink = std::move(request.onNotice);
      return nullptr;
    };
    EngineController controller(services);
    TrainWorkspace ws(&controller, &f.doc);
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(controller.state(), State::Running, 5000);
    QVERIFY(*sink);
    std::thread writer([&] {
      (*sink)({true, "cannot write runs.db: the disk is full; 120 points held, retrying"});
      (*sink)({false, "runs.db can be written again; the 120 points held were written"});
    });
    writer.join();
    auto rowOf = [&](const QString& text) {
      for (int i = 0; i < ws.eventLog()->topLevelItemCount(); ++i)
        if (ws.eventLog()->topLevelItem(i)->text(4).contains(text)) return i;
      return -1;
    };
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(QStringLiteral("can be written again")) >= 0, 3000);
    const int full = rowOf(QStringLiteral("run store: cannot write runs.db: the disk is full"));
    QVERIFY(full >= 0);
    QCOMPARE(ws.eventLog()->topLevelItem(full)->text(3), QStringLiteral("warning"));
    QCOMPARE(ws.eventLog()->topLevelItem(rowOf(QStringLiteral("can be written again")))->text(3),
             QStringLiteral("info"));
    controller.stop();
    QTRY_COMPARE_WITH_TIMEOUT(controller.state(), State::Idle, 3000);
  }

  void startFailureIsReportedNotThrown() {
    Fixture f(100);
    auto services = f.services;
    services.createRun = [](const engine::ExperimentSpec&,
                            engine::RunObserver*) -> std::unique_ptr<engine::Run> {
      throw std::runtime_error("dataset unreadable");
    };
    EngineController controller(services);
    TrainWorkspace ws(&controller, &f.doc);
    QSignalSpy finished(&ws, &TrainWorkspace::runFinished);
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 5000);
    QVERIFY(ws.failureBanner()->text().contains(QStringLiteral("dataset unreadable")));
    QCOMPARE(controller.state(), State::Idle);
  }

  void refusedStartShowsNoStripOfTheRunBefore() {
    // Issue 36: a run completed, then the engine refused the next start; Train still showed the
    // completed run's stage chips beside the refusal.
    Fixture f(60);
    auto services = f.services;
    auto refuse = std::make_shared<bool>(false);
    services.createRun = [refuse, make = f.services.createRun](
                             const engine::ExperimentSpec& spec,
                             engine::RunObserver* observer) -> std::unique_ptr<engine::Run> {
      if (*refuse) throw std::runtime_error("dataset unreadable");
      return make(spec, observer);
    };
    EngineController controller(services);
    TrainWorkspace ws(&controller, &f.doc);
    ws.show();
    QSignalSpy finished(&ws, &TrainWorkspace::runFinished);
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QCOMPARE(ws.steerPanel()->strip()->stageCount(), 3);
    *refuse = true;
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 5000);
    QVERIFY(ws.failureBanner()->text().contains(QStringLiteral("dataset unreadable")));
    QCOMPARE(ws.steerPanel()->strip()->stageCount(), 0);
    QCOMPARE(ws.steerPanel()->stageCombo()->count(), 0);
    // The next run that starts shows its own stages again.
    *refuse = false;
    QVERIFY(ws.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 10000);
    QCOMPARE(ws.steerPanel()->strip()->stageCount(), 3);
  }

  void studyQueueSettingsKeepTheirEnd() {
    // A study's settings end with what tells its runs apart (lr, seed): the middle elides.
    StudyQueue queue([](auto&&...) { return false; });
    QCOMPARE(queue.view()->textElideMode(), Qt::ElideMiddle);
  }
};

QTEST_MAIN(TestTrainRun)
#include "test_train_run.moc"
