// The span timeline's view (issue 36 §3): zoom from 2 ms to the whole run, scroll back, pause
// while spans keep arriving, follow the live end again; keys and the wheel drive the same view.

#include <qcustomplot.h>
#include <QAction>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include "common/app_settings.h"
#include "live/live_data.h"
#include "live/timeline_panel.h"
#include "live/timeline_plan.h"
#include "live/trace_export.h"
#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestTimelinePanel : public QObject {
  Q_OBJECT

  static engine::RunInfo threeStages() {
    engine::RunInfo info;
    info.mode = engine::Mode::Local;
    info.stages.resize(3);
    return info;
  }

  // Each stage computes 8 ms of every 10 ms, from `from` to `to` seconds.
  static void feed(LiveData& data, double from, double to) {
    std::vector<engine::StepSpan> spans;
    int64_t step = int64_t(std::lround(from * 100));
    for (double t = from; t < to - 1e-9; t += 0.01, ++step)
      for (int k = 0; k < 3; ++k) spans.push_back({k, step, t, t + 0.008});
    data.addSpans(0, spans);
  }

  struct Fixture {
    LiveData data;
    TimelinePanel panel{&data};
    Fixture() {
      data.beginPhase(0, threeStages());
      panel.resize(600, 300);
      panel.show();
      feed(data, 0, 10);
      panel.refresh(true);
    }
  };

 private Q_SLOTS:
  void followsTheLiveEndOverTheWindow() {
    Fixture f;
    QVERIFY(f.panel.isFollowing());
    QCOMPARE(f.panel.windowSeconds(), 2.0);
    QVERIFY(std::abs(f.panel.viewEnd() - 10.0) < 0.02);
    QVERIFY(std::abs(f.panel.viewBegin() - 8.0) < 0.02);
    // About 200 steps of each stage in 2 s.
    QVERIFY(f.panel.drawnSpans(0) >= 199 && f.panel.drawnSpans(0) <= 202);
    feed(f.data, 10, 11);
    f.panel.refresh();
    QVERIFY(std::abs(f.panel.viewEnd() - 11.0) < 0.02);
  }

  void zoomsWithKeysAndWheelWithinItsLimits() {
    Fixture f;
    QTest::keyClick(&f.panel, Qt::Key_Plus);
    QVERIFY(f.panel.windowSeconds() < 2.0);
    QVERIFY(f.panel.isFollowing());  // zooming keeps the live end
    QVERIFY(std::abs(f.panel.viewEnd() - 10.0) < 0.02);
    QVERIFY(f.panel.drawnSpans(0) < 150);
    for (int i = 0; i < 80; ++i) QTest::keyClick(&f.panel, Qt::Key_Plus);
    QCOMPARE(f.panel.windowSeconds(), TimelinePanel::kMinWindow);
    QVERIFY(TimelinePanel::kMinWindow <= 0.002);  // one step's passes readable (issue 37)
    for (int i = 0; i < 80; ++i) QTest::keyClick(&f.panel, Qt::Key_Minus);
    QCOMPARE(f.panel.windowSeconds(), TimelinePanel::kMaxWindow);
    QCOMPARE(f.panel.drawnSpans(0), 1000);  // the whole run of 10 s
    f.panel.setWindowSeconds(2.0);

    // A wheel notch towards the user zooms out.
    QCustomPlot* plot = f.panel.plot();
    const QPointF at = plot->axisRect()->center();
    QWheelEvent wheel(at, plot->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(plot, &wheel);
    QVERIFY2(f.panel.windowSeconds() > 2.4, qPrintable(QString::number(f.panel.windowSeconds())));
  }

  void pausedViewFollowsTheRunSwitchedTo() {
    // Issue 36: paused on one run of a plan (at 8-10 s), then another run chosen: the view
    // stayed at 8-10 s of a run that only ran 3 s, and was empty.
    Fixture f;
    f.panel.pauseButton()->click();
    QVERIFY(!f.panel.isFollowing());
    f.data.beginPhase(1, threeStages());
    std::vector<engine::StepSpan> spans;
    for (int i = 0; i < 300; ++i)
      for (int k = 0; k < 3; ++k) spans.push_back({k, i, i * 0.01, i * 0.01 + 0.008});
    f.data.addSpans(1, spans);
    f.panel.setPhase(1);
    QVERIFY2(f.panel.drawnSpans(0) > 100, qPrintable(QString::number(f.panel.drawnSpans(0))));
    QVERIFY(f.panel.viewEnd() <= 3.0 + 1e-6);
  }

  void keepsTheRowOfAStageJoinedAway() {
    // Issue 36: a run of 4 stages re-partitioned into 3; scrolled back to when it had 4, the
    // rows were the current partition's S1-S3 and the spans of S4 were not drawn.
    LiveData data;
    TimelinePanel panel{&data};
    engine::RunInfo info = threeStages();
    info.stages.resize(4);
    data.beginPhase(0, info);
    panel.resize(600, 300);
    panel.show();
    std::vector<engine::StepSpan> spans;
    for (int i = 0; i < 500; ++i)  // 0-5 s on 4 stages
      for (int k = 0; k < 4; ++k) spans.push_back({k, i, i * 0.01, i * 0.01 + 0.008});
    data.addSpans(0, spans);
    info.stages.resize(3);
    data.setStages(0, info.stages);
    spans.clear();
    for (int i = 500; i < 1000; ++i)  // 5-10 s on 3
      for (int k = 0; k < 3; ++k) spans.push_back({k, i, i * 0.01, i * 0.01 + 0.008});
    data.addSpans(0, spans);
    panel.refresh(true);
    QCOMPARE(panel.plot()->yAxis->range().upper, 3.6);  // following: the 3 stages now
    QCOMPARE(panel.drawnSpans(3), 0);
    for (int i = 0; i < 8; ++i) QTest::keyClick(&panel, Qt::Key_Left);  // back to 4-6 s or so
    QVERIFY2(panel.viewBegin() < 5.0, qPrintable(QString::number(panel.viewBegin())));
    QCOMPARE(panel.plot()->yAxis->range().upper, 4.6);
    QVERIFY2(panel.drawnSpans(3) > 0, "the spans of S4 are not drawn");
    QVERIFY(panel.drawnSpans(0) > panel.drawnSpans(3));
  }

  void scrollsBackAndPausesWhileSpansArrive() {
    Fixture f;
    QSignalSpy following(&f.panel, &TimelinePanel::followingChanged);
    QTest::keyClick(&f.panel, Qt::Key_Left);
    QVERIFY(!f.panel.isFollowing());
    QVERIFY(f.panel.pauseButton()->isChecked());
    QCOMPARE(following.count(), 1);
    const double end = f.panel.viewEnd();
    QVERIFY(std::abs(end - 9.5) < 0.02);
    // New spans do not move a paused view; the scroll bar grows to reach them.
    feed(f.data, 10, 12);
    f.panel.refresh();
    QCOMPARE(f.panel.viewEnd(), end);
    QVERIFY(f.panel.scrollBar()->maximum() >= 9900);
    // The scroll bar moves the view back to the run's start.
    f.panel.scrollBar()->setValue(f.panel.scrollBar()->minimum());
    QVERIFY(f.panel.viewBegin() < 0.02);
    QVERIFY(f.panel.drawnSpans(1) >= 199 && f.panel.drawnSpans(1) <= 202);
    // Follow returns to the live end.
    f.panel.followButton()->click();
    QVERIFY(f.panel.isFollowing());
    QVERIFY(!f.panel.pauseButton()->isChecked());
    QVERIFY(std::abs(f.panel.viewEnd() - 12.0) < 0.02);
    // Space pauses where the view is, and resumes.
    QTest::keyClick(&f.panel, Qt::Key_Space);
    QVERIFY(!f.panel.isFollowing());
    feed(f.data, 12, 13);
    f.panel.refresh();
    QVERIFY(std::abs(f.panel.viewEnd() - 12.0) < 0.02);
    QTest::keyClick(&f.panel, Qt::Key_End);
    QVERIFY(std::abs(f.panel.viewEnd() - 13.0) < 0.02);
  }

  void everySpanKindIsSafeAndWaitsAreGaps() {
    LiveData data;
    TimelinePanel panel{&data};
    engine::RunInfo info = threeStages();
    info.mode = engine::Mode::Pipeline;
    data.beginPhase(0, info);
    panel.resize(600, 300);
    panel.show();
    std::vector<engine::StepSpan> spans;
    for (int kind = 0; kind <= int(engine::SpanKind::Aux); ++kind)
      spans.push_back({1, 0, 0.1 * kind, 0.1 * kind + 0.05, engine::SpanKind(kind), 0});
    data.addSpans(0, spans);
    panel.refresh(true);
    // Six kinds of compute drawn, one each; waiting and blocked are the gaps between them.
    QCOMPARE(panel.drawnSpans(1), 6);
    QCOMPARE(panel.drawnSpans(1, engine::SpanKind::Weight), 1);
    QCOMPARE(panel.drawnSpans(1, engine::SpanKind::Aux), 1);
    QCOMPARE(panel.drawnSpans(1, engine::SpanKind::Wait), 0);
    QCOMPARE(panel.drawnSpans(1, engine::SpanKind::Blocked), 0);
    QCOMPARE(panel.drawnSpans(1, engine::SpanKind(99)), 0);  // out of range: none, no crash
  }

  void exportTraceAsksForThePhaseShown() {
    Fixture f;
    QAction* action = f.panel.exportTraceAction();
    QVERIFY(action);
    QVERIFY(!action->isEnabled());  // no stored record yet
    f.panel.setTraceAvailable(true);
    QVERIFY(action->isEnabled());
    QSignalSpy asked(&f.panel, &TimelinePanel::exportTraceRequested);
    action->trigger();
    QCOMPARE(asked.count(), 1);
    QCOMPARE(asked.at(0).at(0).toInt(), 0);
  }

  void traceExportWritesTheStoredRun() {
    QTemporaryDir dir;
    storage::RunStore store(dir.filePath("runs.db").toStdString());
    storage::RunWriter& w = store.writer();
    storage::NewRun run;
    run.name = "traced";
    run.mode = "local";
    run.specJson = "{}";
    const int64_t id = w.createRun(run);
    w.appendSpans(id, {{0, 0, 0.5, 0.75, "step", -1}});
    w.finishRun(id, {});
    w.flush();
    const QString path = dir.filePath("t.json");
    QCOMPARE(exportTrace(store, id, path), QString());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll());
    int complete = 0;
    for (const QJsonValue& e : doc.object()["traceEvents"].toArray())
      complete += e.toObject()["ph"].toString() == QStringLiteral("X");
    QCOMPARE(complete, 1);
    QVERIFY(exportTrace(store, id + 1, path).contains(QStringLiteral("no run")));
  }

  // The export dialog proposes the last export folder, at first the documents folder (or
  // home): never the working directory the app was started in.
  void theTraceDialogProposesTheLastExportFolder() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().remove(QStringLiteral("files/exportDir"));
    const QString first = QFileInfo(defaultTracePath(7)).absolutePath();
    QCOMPARE(QFileInfo(defaultTracePath(7)).fileName(), QStringLiteral("run-7.trace.json"));
    QVERIFY2(first != QDir::currentPath(), qPrintable(first));
    QVERIFY(first == QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) ||
            first == QDir::homePath());
    QTemporaryDir dir;
    AppSettings::setLastExportDir(dir.path());
    QCOMPARE(QFileInfo(defaultTracePath(7)).absolutePath(),
             QFileInfo(dir.path()).absoluteFilePath());
    QSettings().remove(QStringLiteral("files/exportDir"));
  }

  void draggingScrollsBack() {
    Fixture f;
    QCustomPlot* plot = f.panel.plot();
    plot->replot();
    const QPoint from = plot->axisRect()->center();
    QTest::mousePress(plot, Qt::LeftButton, Qt::NoModifier, from);
    QTest::mouseMove(plot, from + QPoint(100, 0));
    QTest::mouseRelease(plot, Qt::LeftButton, Qt::NoModifier, from + QPoint(100, 0));
    QVERIFY(!f.panel.isFollowing());
    QVERIFY2(f.panel.viewEnd() < 9.9, qPrintable(QString::number(f.panel.viewEnd())));
    QCOMPARE(f.panel.windowSeconds(), 2.0);
  }

  // Under a pipeline run's spans, the schedule's plan from their mean pass times, started at
  // each step's first forward. GPipe, m = 2, stage 0: F 1 s, B 1 s; stage 1: F 2 s, B 1 s; the
  // step at 10 s: stage 1's F0 [11,13] F1 [13,15] BW0 [15,16] BW1 [16,17], stage 0's F0 [10,11]
  // F1 [11,12] BW0 [16,17] BW1 [17,18], whatever the measured spans' own gaps.
  void pipelineRunsShowThePlanUnderTheSpans() {
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(2);
    engine::ExperimentSpec spec;
    spec.mode = engine::Mode::Pipeline;
    spec.pipeline.schedule = "gpipe";
    info.specJson = engine::specToJson(spec);
    using K = engine::SpanKind;
    const std::vector<engine::StepSpan> spans{
        {0, 0, 10, 11, K::Forward, 0},      {0, 0, 11, 12, K::Forward, 1},
        {1, 0, 11, 13, K::Forward, 0},      {1, 0, 13.5, 15.5, K::Forward, 1},
        {1, 0, 15.5, 16.5, K::Backward, 0}, {1, 0, 16.5, 17.5, K::Backward, 1},
        {0, 0, 16.5, 17.5, K::Backward, 0}, {0, 0, 17.5, 18.5, K::Backward, 1},
        {0, 0, 18.5, 19, K::Backward, -1}};  // the update: not planned
    LiveData data;
    data.beginPhase(0, info);
    data.addSpans(0, spans);
    const auto plan = planUnderSpans(
        info, [&](int k) -> const std::deque<engine::StepSpan>& { return data.spans(0, k); }, 0,
        30);
    QCOMPARE(int(plan.size()), 8);
    auto find = [&](int stage, int nth) {
      int seen = 0;
      for (const auto& p : plan)
        if (p.stage == stage && seen++ == nth) return p;
      return PlannedSegment{};
    };
    QCOMPARE(find(1, 0).start, 11.0);
    QCOMPARE(find(1, 0).end, 13.0);
    QCOMPARE(find(1, 3).end, 17.0);
    QCOMPARE(find(0, 3).start, 17.0);
    QCOMPARE(find(0, 3).end, 18.0);
    QVERIFY(find(0, 3).op == engine::schedule::Op::BW);
    TimelinePanel panel(&data);
    panel.resize(600, 300);
    panel.show();
    panel.setWindowSeconds(20);
    panel.refresh(true);
    QCOMPARE(panel.plannedSpans(0), 4);
    QCOMPARE(panel.plannedSpans(1), 4);
    // zb-h1's weight passes are spans of their own kind, counted apart (SpanKind goes to Aux).
    data.addSpans(0, {{0, 1, 19, 19.5, K::Weight, 0}});
    panel.refresh(true);
    QCOMPARE(panel.drawnSpans(0, K::Weight), 1);
    // Local runs have no schedule to plan.
    Fixture local;
    QCOMPARE(local.panel.plannedSpans(0), 0);
  }

  void aPlansNextRunIsFollowedFromAPause() {
    // Issue 36: paused during the local run of "Local, pipeline, backprop", the backprop run
    // that came next was drawn in the local run's window (-1.8 to 0.1 s, spans at the edge).
    Fixture f;
    QTest::keyClick(&f.panel, Qt::Key_Space);
    QVERIFY(!f.panel.isFollowing());
    f.data.beginPhase(1, threeStages());
    std::vector<engine::StepSpan> spans;
    for (int i = 0; i < 500; ++i)
      for (int k = 0; k < 3; ++k) spans.push_back({k, i, i * 0.01, i * 0.01 + 0.008});
    f.data.addSpans(1, spans);
    f.panel.refresh();
    QVERIFY(f.panel.isFollowing());
    QCOMPARE(f.panel.shownPhase(), 1);
    QVERIFY(std::abs(f.panel.viewEnd() - 5.0) < 0.02);
    QVERIFY(f.panel.drawnSpans(0) >= 199);
  }

  void aPausedWindowKeepsItsSpansWhileOldOnesAreDropped() {
    // Issue 36: LiveData keeps the last kMaxSpans of a stage; a paused window emptied as a long
    // run went on. The panel keeps its own copy while not following.
    Fixture f;
    QTest::keyClick(&f.panel, Qt::Key_Space);  // paused at 8-10 s
    const int shown = f.panel.drawnSpans(2);
    QVERIFY(shown >= 199);
    feed(f.data, 10, 50);  // 4000 more spans a stage: the live ones now begin at 10 s
    QVERIFY(f.data.spans(0, 2).front().startS >= 9.99);
    QVERIFY(f.data.droppedUntil(0) > 9.9);
    f.panel.refresh();
    f.panel.refresh(true);  // a redraw (a resize, the theme) draws what is kept
    QVERIFY(!f.panel.isFollowing());
    QCOMPARE(f.panel.drawnSpans(2), shown);
    QVERIFY(f.panel.keptNote().isEmpty());
    // The copy reaches back to the run's start and forward to the newest span.
    f.panel.scrollBar()->setValue(f.panel.scrollBar()->minimum());
    QVERIFY(f.panel.viewBegin() < 0.02);
    QVERIFY(f.panel.drawnSpans(0) >= 199);
    QVERIFY(f.panel.scrollBar()->maximum() >= 47900);
    // Following, the live spans: a window reaching before them says what is not kept.
    f.panel.followButton()->click();
    QVERIFY(f.panel.keptNote().isEmpty());
    f.panel.setWindowSeconds(60);
    QVERIFY(f.panel.viewBegin() < 10);
    QVERIFY2(f.panel.keptNote().contains(QStringLiteral("10.0 s")), qPrintable(f.panel.keptNote()));
  }

  void darkThemeButtonsAndSpansAreVisible() {
    // Issue 36: on the dark theme the pause and follow icons were dark glyphs on dark, and
    // backward passes (a darkened stage colour) barely showed.
    Fixture f;
    QPalette dark = f.panel.palette();
    dark.setColor(QPalette::Window, QColor(0x20, 0x22, 0x26));
    dark.setColor(QPalette::Base, QColor(0x1a, 0x1b, 0x1e));
    dark.setColor(QPalette::Button, QColor(0x2b, 0x2d, 0x31));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    f.panel.setPalette(dark);
    const int background = dark.color(QPalette::Window).lightness();
    for (QToolButton* button : {f.panel.pauseButton(), f.panel.followButton()}) {
      const QImage image = button->icon().pixmap(QSize(24, 24)).toImage();
      int brightest = 0;
      for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
          const QColor c = image.pixelColor(x, y);
          if (c.alpha() > 128) brightest = std::max(brightest, c.lightness());
        }
      QVERIFY2(brightest - background > 100, qPrintable(QString::number(brightest)));
    }
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(9);
    f.data.beginPhase(1, info);
    f.panel.refresh(true);
    QCOMPARE(f.panel.plot()->graphCount(), 18);
    for (int g = 0; g < 18; ++g) {
      const int lightness = f.panel.plot()->graph(g)->pen().color().lightness();
      QVERIFY2(lightness - background > 60,
               qPrintable(QStringLiteral("graph %1: %2").arg(g).arg(lightness)));
    }
  }

  void theTitleNeverPrintsOverTheButtons() {
    // Issue 36: "Timeline (forward light, backward dark)" ran over the Follow button.
    LiveData data;
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(9);
    data.beginPhase(0, info);
    TimelinePanel panel(&data);
    panel.resize(340, 200);
    panel.show();
    panel.refresh(true);
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* heading = qobject_cast<QCPTextElement*>(panel.plot()->plotLayout()->element(0, 0));
    QVERIFY(heading);
    QVERIFY(heading->text().startsWith(QStringLiteral("Timeline")));
    const int textWidth = QFontMetrics(heading->font()).horizontalAdvance(heading->text());
    panel.plot()->replot();
    const QRect room = heading->rect();  // the text is centred in it
    const int left =
        panel.plot()->mapTo(&panel, QPoint(room.left() + (room.width() - textWidth) / 2, 0)).x();
    QWidget* corner = panel.followButton()->parentWidget();
    const int cornerRight = corner->mapTo(&panel, QPoint(corner->width(), 0)).x();
    QVERIFY2(left > cornerRight, qPrintable(QStringLiteral("%1 <= %2").arg(left).arg(cornerRight)));
    // Where it fits beside the buttons but not centred over the plot, the whole title.
    panel.resize(450, 200);
    panel.plot()->replot();
    QCOMPARE(heading->text(), QStringLiteral("Timeline (fwd light, bwd dark)"));
    QVERIFY(panel.plot()->mapTo(&panel, heading->rect().topLeft()).x() > cornerRight);
    QVERIFY(heading->margins().left() > 0);  // centred in the room right of the buttons
    // Wide enough, the whole title centred over the plot.
    panel.resize(900, 200);
    panel.plot()->replot();
    QCOMPARE(heading->margins().left(), 0);
    QCOMPARE(heading->text(), QStringLiteral("Timeline (fwd light, bwd dark)"));
  }

  void thePlanLineLiesClearOfTheBars() {
    // Issue 36: nine rows a few pixels high hid the faint plan line under the bars.
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(2);
    engine::ExperimentSpec spec;
    spec.mode = engine::Mode::Pipeline;
    spec.pipeline.schedule = "gpipe";
    info.specJson = engine::specToJson(spec);
    using K = engine::SpanKind;
    LiveData data;
    data.beginPhase(0, info);
    data.addSpans(0, {{0, 0, 10, 11, K::Forward, 0},
                      {0, 0, 11, 12, K::Forward, 1},
                      {1, 0, 11, 13, K::Forward, 0},
                      {1, 0, 13.5, 15.5, K::Forward, 1},
                      {1, 0, 15.5, 16.5, K::Backward, 0},
                      {1, 0, 16.5, 17.5, K::Backward, 1},
                      {0, 0, 16.5, 17.5, K::Backward, 0},
                      {0, 0, 17.5, 18.5, K::Backward, 1}});
    TimelinePanel panel(&data);
    panel.show();
    panel.setWindowSeconds(20);
    for (int height : {400, 160}) {
      panel.resize(600, height);
      panel.plot()->replot();
      panel.refresh(true);
      QCOMPARE(panel.plannedSpans(1), 4);
      QCPAxis* y = panel.plot()->yAxis;
      int curves = 0;
      for (int i = 0; i < panel.plot()->plottableCount(); ++i) {
        auto* curve = qobject_cast<QCPCurve*>(panel.plot()->plottable(i));
        if (!curve || curve->data()->isEmpty()) continue;
        ++curves;
        const double planY = curve->data()->begin()->value;
        const double row = std::ceil(planY);  // the row of the bar above it
        const double gap = std::abs(y->coordToPixel(planY) - y->coordToPixel(row));
        const double bar = panel.plot()->graph(0)->pen().widthF();
        QVERIFY2(gap - curve->pen().widthF() / 2 >= bar / 2,
                 qPrintable(QStringLiteral("%1 px: gap %2, plan %3, bar %4")
                                .arg(height)
                                .arg(gap)
                                .arg(curve->pen().widthF())
                                .arg(bar)));
        QVERIFY(curve->pen().color().alpha() >= 150);
      }
      QCOMPARE(curves, 2);
    }
  }
};

QTEST_MAIN(TestTimelinePanel)
#include "test_timeline_panel.moc"
