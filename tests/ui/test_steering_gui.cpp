// Steering a run from the Train workspace on the fake engine (issue 35): dragging a cut in the
// stage strip asks the engine to re-partition and every plot marks the change with an event
// line; refused requests show their reason and the run goes on; live stage settings and the
// per-stage pause; a replayed history makes the same changes at the same steps.

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "live/utilization_panel.h"
#include "common/fake_services.h"
#include "designer/design_document.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/stage_strip.h"
#include "live/steer_panel.h"
#include "live/timeline_panel.h"
#include "live/train_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;
using State = EngineController::State;

namespace {

engine::ExperimentSpec spec(int64_t steps) {
  engine::ExperimentSpec s;
  s.name = "steer-test";
  s.dataset.kind = "synthetic";
  s.model.hidden = {32, 32, 32};  // fc1 fc2 fc3 classifier
  s.partition.cuts = {1, 2};      // S1 [fc1] S2 [fc2] S3 [fc3 classifier]
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
  StageStrip* strip() const { return workspace.steerPanel()->strip(); }
  /// Drags the handle at layer boundary `from` to boundary `to` with the mouse.
  void dragCut(int from, int to) {
    const int y = strip()->height() / 2;
    QTest::mousePress(strip(), Qt::LeftButton, {}, QPoint(strip()->boundaryX(from), y));
    QTest::mouseRelease(strip(), Qt::LeftButton, {}, QPoint(strip()->boundaryX(to), y));
  }
  bool logHas(const QString& text) const {
    for (const QString& m : workspace.eventLog()->messages())
      if (m.contains(text)) return true;
    return false;
  }
};

}  // namespace

class TestSteeringGui : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void draggingACutRepartitionsAndMarksEveryPlot() {
    Fixture f(100000, 0.002);
    QVERIFY(!f.strip()->isDraggable());  // nothing runs yet
    QVERIFY(f.workspace.startRun());
    LiveDashboard* d = f.workspace.dashboard();
    QTRY_VERIFY_WITH_TIMEOUT(d->lossPanel()->receivedPoints(0) > 20, 5000);
    QVERIFY(f.strip()->isDraggable());
    QCOMPARE(f.strip()->cuts(), std::vector<int>({1, 2}));
    QCOMPARE(f.strip()->layerCount(), 4);

    // The cut between S2 and S3 moves from fc3 to the classifier: S2 holds fc2 and fc3.
    QSignalSpy asked(f.workspace.steerPanel(), &SteerPanel::cutsRequested);
    f.dragCut(2, 3);
    QCOMPARE(asked.count(), 1);
    QCOMPARE(asked[0][0].value<std::vector<int>>(), std::vector<int>({1, 3}));
    QTRY_COMPARE_WITH_TIMEOUT(f.strip()->cuts(), std::vector<int>({1, 3}), 5000);
    QVERIFY(f.strip()->stageText(1).contains(QStringLiteral("2 layers")));

    // Every live plot draws the event line, with the change as its label, at its step.
    for (PlotPanel* panel : d->linePanels()) {
      panel->refresh(true);
      QCOMPARE(panel->markerCount(), 1);
      QCOMPARE(panel->markerLabel(0), QStringLiteral("cuts [1,2] → [1,3]"));
    }
    const double at = d->lossPanel()->markerX(0);
    QVERIFY2(at > 20, qPrintable(QString::number(at)));
    QVERIFY(f.logHas(QStringLiteral("repartition at step %1: partition.cuts=[1,3] (was [1,2]); "
                                    "pause")
                         .arg(int64_t(at))));
    QVERIFY(f.workspace.steerPanel()->noteText().contains(QStringLiteral("paused")));
    // The timeline (the last 2 s, by time) shows the change while it is in its window.
    const auto timelineMarkers = [d] {
      d->timelinePanel()->refresh(true);
      return d->timelinePanel()->markerCount();
    };
    QTRY_COMPARE_WITH_TIMEOUT(timelineMarkers(), 1, 1000);

    // Dropping a cut off the right end joins S2 and S3: two stages, the run goes on.
    f.dragCut(3, 4);
    QTRY_COMPARE_WITH_TIMEOUT(f.strip()->cuts(), std::vector<int>({1}), 5000);
    QCOMPARE(f.strip()->stageCount(), 2);
    d->lossPanel()->refresh(true);
    QCOMPARE(d->lossPanel()->markerCount(), 2);
    QCOMPARE(d->lossPanel()->markerLabel(1), QStringLiteral("cuts [1,3] → [1]"));
    QVERIFY(d->lossPanel()->markerX(1) > at);
    // The strip keeps the partition history: which cuts held from which step.
    QCOMPARE(f.strip()->history().size(), 3);
    QCOMPARE(f.strip()->history()[0], QStringLiteral("from step 0: cuts [1,2]"));
    QCOMPARE(f.strip()->history()[1], QStringLiteral("from step %1: cuts [1,3]").arg(int64_t(at)));
    QCOMPARE(f.strip()->history()[2],
             QStringLiteral("from step %1: cuts [1]").arg(int64_t(d->lossPanel()->markerX(1))));
    QCOMPARE(f.controller.state(), State::Running);
    f.workspace.stopRun();
    QTRY_VERIFY_WITH_TIMEOUT(!f.controller.isBusy(), 5000);
    QVERIFY(!f.strip()->isDraggable());
  }

  // A cut moved on the Design canvas while a local run of this design trains moves in the
  // running run too (Run › Design's cuts steer the live run); another edit, the option off, or
  // another network does not ask.
  void aCutMovedInDesignSteersTheLiveRun() {
    QStandardPaths::setTestModeEnabled(true);
    Fixture f(100000, 0.002);
    f.workspace.setDesignSteers(true);
    QVERIFY(f.workspace.startRun());
    LiveDashboard* d = f.workspace.dashboard();
    QTRY_VERIFY_WITH_TIMEOUT(d->lossPanel()->receivedPoints(0) > 5, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(f.strip()->isDraggable(), 5000);
    QSignalSpy answered(&f.controller, &EngineController::steerAnswered);
    auto next = f.doc.spec();
    next.train.lr = 0.0005;  // not a cut: nothing is asked
    f.doc.edit(next, QStringLiteral("lr"));
    QTest::qWait(300);
    QCOMPARE(answered.count(), 0);
    next.partition.cuts = {1, 3};
    f.doc.edit(next, QStringLiteral("Move cut"));
    QTRY_COMPARE_WITH_TIMEOUT(f.strip()->cuts(), std::vector<int>({1, 3}), 5000);
    QCOMPARE(answered.count(), 1);
    QVERIFY(f.logHas(QStringLiteral("Design's change of cuts [1,2] → [1,3] asked of the running "
                                    "run: [1,2] → [1,3]")));
    // The run's cuts move in the strip meanwhile: Design's next edit applies as an edit (the cut
    // it moves), not as Design's whole list. Design [1,3] → [1,2] moves 3 to 2; the run has
    // [2,3], so 3 goes and 2 stays: [2].
    f.dragCut(1, 2);
    QTRY_COMPARE_WITH_TIMEOUT(f.strip()->cuts(), std::vector<int>({2, 3}), 5000);
    QCOMPARE(answered.count(), 2);
    next.partition.cuts = {1, 2};
    f.doc.edit(next, QStringLiteral("Move cut"));
    QTRY_COMPARE_WITH_TIMEOUT(f.strip()->cuts(), std::vector<int>({2}), 5000);
    QCOMPARE(answered.count(), 3);
    // Removing a cut the run does not have asks nothing, and says so.
    next.partition.cuts = {2};
    f.doc.edit(next, QStringLiteral("Join"));
    QTest::qWait(300);
    QCOMPARE(answered.count(), 3);
    QVERIFY(f.logHas(QStringLiteral("Design's cut after layer 1 is not a cut of the running run")));
    // Off: the design's cut stays the design's.
    f.workspace.setDesignSteers(false);
    next.partition.cuts = {3};
    f.doc.edit(next, QStringLiteral("Move cut"));
    QTest::qWait(300);
    QCOMPARE(answered.count(), 3);
    QCOMPARE(f.strip()->cuts(), std::vector<int>({2}));
    // Another network: the running run is not this design's.
    f.workspace.setDesignSteers(true);
    next.model.hidden = {32, 32, 32, 32};
    next.partition.cuts = {1};
    f.doc.edit(next, QStringLiteral("Model"));
    QTest::qWait(300);
    QCOMPARE(answered.count(), 3);
    QCOMPARE(f.strip()->cuts(), std::vector<int>({2}));
    f.workspace.stopRun();
    QTRY_VERIFY_WITH_TIMEOUT(!f.controller.isBusy(), 5000);
  }

  void refusedRequestsShowTheirReasonAndTheRunGoesOn() {
    Fixture f(100000, 0.002);
    f.workspace.selectPlan({engine::Mode::Pipeline});
    QVERIFY(f.workspace.startRun());
    LiveDashboard* d = f.workspace.dashboard();
    QTRY_VERIFY_WITH_TIMEOUT(d->lossPanel()->receivedPoints(0) > 5, 5000);
    QSignalSpy answered(&f.controller, &EngineController::steerAnswered);
    // A pipeline run's cuts do not invite a drag: the strip says why.
    SteerPanel* steer = f.workspace.steerPanel();
    QVERIFY(!f.strip()->isDraggable());
    QVERIFY2(steer->cutsFixedReason().contains(QStringLiteral("pipeline run's cuts cannot move")),
             qPrintable(steer->cutsFixedReason()));
    QCOMPARE(f.strip()->toolTip(), steer->cutsFixedReason());
    QVERIFY(steer->applyButton()->isEnabled());  // its stages' settings can still change
    // A request that reaches the engine anyway (a script, the palette) is refused with its reason.
    f.controller.requestRepartition({1, 3});
    QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 1, 5000);
    QCOMPARE(answered[0][1].toBool(), false);
    const QString note = steer->noteText();
    QVERIFY2(note.contains(QStringLiteral("refused")) &&
                 note.contains(QStringLiteral("pipeline mode cannot re-partition")),
             qPrintable(note));
    // However narrow the line, the whole reason is there: elided on the line, whole in its tooltip.
    QCOMPARE(steer->noteLabel()->toolTip(), note);
    steer->noteLabel()->resize(60, steer->noteLabel()->height());
    QVERIFY(steer->noteLabel()->text().endsWith(QChar(0x2026)));
    // The engine's warning is in the log, the cuts did not move, no event line.
    QTRY_VERIFY_WITH_TIMEOUT(f.logHas(QStringLiteral("repartition to [1,3] refused")), 5000);
    QCOMPARE(f.strip()->cuts(), std::vector<int>({1, 2}));
    d->lossPanel()->refresh(true);
    QCOMPARE(d->lossPanel()->markerCount(), 0);
    const int before = d->lossPanel()->receivedPoints(0);
    QTRY_VERIFY_WITH_TIMEOUT(d->lossPanel()->receivedPoints(0) > before + 10, 5000);
    QCOMPARE(f.controller.state(), State::Running);

    // Invalid cuts (beyond the last layer) get the spec check's reason.
    f.controller.requestRepartition({1, 9});
    QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 2, 5000);
    QCOMPARE(answered[1][1].toBool(), false);
    QVERIFY(!answered[1][2].toString().isEmpty());
    f.workspace.stopRun();
    QTRY_VERIFY_WITH_TIMEOUT(!f.controller.isBusy(), 5000);

    // With no run the request is answered, not lost.
    f.controller.requestRepartition({2});
    QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 3, 5000);
    QCOMPARE(answered[2][2].toString(), QStringLiteral("no run is training"));
  }

  void stageSettingsAndPauseWhileTraining() {
    Fixture f(100000, 0.002);
    QVERIFY(f.workspace.startRun());
    SteerPanel* steer = f.workspace.steerPanel();
    LiveDashboard* d = f.workspace.dashboard();
    QTRY_VERIFY_WITH_TIMEOUT(d->lossPanel()->receivedPoints(0) > 5, 5000);
    QVERIFY(steer->threadsSpin()->toolTip().contains(QStringLiteral("last bits")));
    steer->stageCombo()->setCurrentIndex(1);
    QCOMPARE(steer->delaySpin()->value(), 0);
    steer->delaySpin()->setValue(20);
    steer->lrScaleSpin()->setValue(0.5);
    QTest::mouseClick(steer->applyButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(f.logHas(QStringLiteral(": stages.1.delay_ms=20")), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(f.logHas(QStringLiteral(": stages.1.lr_scale=0.5")), 5000);
    d->lossPanel()->refresh(true);
    QCOMPARE(d->lossPanel()->markerCount(), 2);
    QCOMPARE(d->lossPanel()->markerLabel(0), QStringLiteral("S2 delay_ms = 20"));
    // Another stage shown and back: the row shows what S2 now has.
    steer->stageCombo()->setCurrentIndex(0);
    QCOMPARE(steer->delaySpin()->value(), 0);
    steer->stageCombo()->setCurrentIndex(1);
    QCOMPARE(steer->delaySpin()->value(), 20);
    QCOMPARE(steer->lrScaleSpin()->value(), 0.5);

    QTest::mouseClick(steer->pauseStageButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(f.logHas(QStringLiteral("S2 paused at step")), 5000);
    QTRY_VERIFY(steer->pauseStageButton()->isChecked());
    QTest::mouseClick(steer->pauseStageButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(f.logHas(QStringLiteral("S2 resumed at step")), 5000);
    QTRY_VERIFY(!steer->pauseStageButton()->isChecked());
    // Holding a stage and letting it go are event lines too, at the stage's step.
    d->lossPanel()->refresh(true);
    QCOMPARE(d->lossPanel()->markerCount(), 4);
    QCOMPARE(d->lossPanel()->markerLabel(2), QStringLiteral("S2 paused"));
    QCOMPARE(d->lossPanel()->markerLabel(3), QStringLiteral("S2 resumed"));
    f.workspace.stopRun();
    QTRY_VERIFY_WITH_TIMEOUT(!f.controller.isBusy(), 5000);
  }

  // While a stage is held, it (and the stages held up by it) finish no step, so no share is
  // measured for them: their bars turn grey ("no step finished") once the run's clock is more
  // than a second past their last step, instead of freezing at the last measured split.
  void aStageWithNoRecentStepHasNoMeasuredSplit() {
    LiveData data;
    engine::RunInfo info;
    info.mode = engine::Mode::Local;
    info.stages.resize(2);
    data.beginPhase(0, info);
    namespace s = engine::series;
    data.addPoints(0, {{s::kComputeFraction, 0, -1, 10, 1.0, 0.9},
                       {s::kWaitFraction, 0, -1, 10, 1.0, 0.1},
                       {s::kComputeFraction, 1, -1, 40, 2.9, 0.6},
                       {s::kWaitFraction, 1, -1, 40, 2.9, 0.4},
                       {s::kSamplesPerSec, -1, -1, 40, 3.0, 1000}});
    UtilizationPanel panel(&data);
    panel.show();
    panel.refresh(true);
    QCOMPARE(panel.barValue(3, 0), 1.0);  // S1: its last step 2 s ago
    QCOMPARE(panel.barValue(0, 0), 0.0);
    QCOMPARE(panel.barValue(3, 1), 0.0);  // S2: stepping
    QVERIFY(std::abs(panel.barValue(0, 1) - 0.6) < 1e-6);
    // S1 steps again: its measured split is back.
    data.addPoints(0, {{s::kComputeFraction, 0, -1, 11, 3.1, 0.8}});
    panel.refresh(true);
    QCOMPARE(panel.barValue(3, 0), 0.0);
    QVERIFY(std::abs(panel.barValue(0, 0) - 0.8) < 1e-6);
  }

  // Each stage's bubble, planned and measured, shows as markers on its bar: the latest values,
  // none where the engine sent none (backprop mode, or before every stage posted its times).
  void theBubbleShowsPlannedAndMeasured() {
    LiveData data;
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(2);
    data.beginPhase(0, info);
    data.addPoints(0, {{"bubble_planned", 0, -1, 10, 1.0, 0.4},
                       {"bubble_measured", 0, -1, 10, 1.0, 0.5},
                       {"bubble_measured", 1, -1, 10, 1.0, 0.1},
                       {"bubble_planned", 0, -1, 20, 2.0, 0.3}});
    UtilizationPanel panel(&data);
    panel.show();
    panel.refresh(true);
    QVERIFY(std::abs(panel.bubbleValue(0, 0) - 0.3) < 1e-6);  // the latest (stored as float)
    QVERIFY(std::abs(panel.bubbleValue(1, 0) - 0.5) < 1e-6);
    QVERIFY(std::isnan(panel.bubbleValue(0, 1)));
    QVERIFY(std::abs(panel.bubbleValue(1, 1) - 0.1) < 1e-6);
    QVERIFY(panel.title().contains(QStringLiteral("last 20 steps")));
    // The run ended: the markers show the summary's whole-run means, not the last live values.
    engine::RunSummary summary;
    summary.stages.resize(2);
    summary.stages[0].bubblePlanned = 0.25;
    summary.stages[0].bubbleMeasured = 0.44;
    summary.stages[1].bubbleMeasured = 0.12;
    panel.setRunSummary(0, summary);
    QCOMPARE(panel.bubbleValue(0, 0), 0.25);
    QCOMPARE(panel.bubbleValue(1, 0), 0.44);
    QVERIFY(std::isnan(panel.bubbleValue(0, 1)));
    QCOMPARE(panel.bubbleValue(1, 1), 0.12);
    QVERIFY(panel.title().contains(QStringLiteral("whole run")));
    // A new run clears them.
    data.clear();
    QVERIFY(panel.title().contains(QStringLiteral("last 20 steps")));
  }

  void replayMakesTheSameChangesAtTheSameSteps() {
    Fixture f(120, 0.001);
    engine::RunChange cut;
    cut.step = 40;
    cut.key = "partition.cuts";
    cut.value = "[2]";
    engine::RunChange lr;
    lr.step = 60;
    lr.key = "stages.0.lr_scale";
    lr.value = "0.5";
    QSignalSpy finished(&f.workspace, &TrainWorkspace::runFinished);
    QVERIFY(f.workspace.replayRun(spec(120), {cut, lr}, QStringLiteral("run 7")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QVERIFY(f.logHas(QStringLiteral("again with its 2 change(s)")));
    PlotPanel* loss = f.workspace.dashboard()->lossPanel();
    loss->refresh(true);
    QCOMPARE(loss->markerCount(), 2);
    QCOMPARE(loss->markerX(0), 40.0);
    QCOMPARE(loss->markerLabel(0), QStringLiteral("cuts [1,2] → [2]"));
    QCOMPARE(loss->markerX(1), 60.0);
    QCOMPARE(loss->markerLabel(1), QStringLiteral("S1 lr_scale = 0.5"));
    QCOMPARE(f.strip()->cuts(), std::vector<int>({2}));
    QCOMPARE(f.workspace.summaries().back().stages.size(), size_t(2));
  }
};

QTEST_MAIN(TestSteeringGui)
#include "test_steering_gui.moc"
