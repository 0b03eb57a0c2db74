// The span timeline's view (issue 36 §3): zoom from 0.1 s to the whole run, scroll back, pause
// while spans keep arriving, follow the live end again; keys and the wheel drive the same view.

#include <qcustomplot.h>
#include <QAction>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include "live/live_data.h"
#include "live/timeline_panel.h"
#include "live/trace_export.h"
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
    for (int i = 0; i < 30; ++i) QTest::keyClick(&f.panel, Qt::Key_Plus);
    QCOMPARE(f.panel.windowSeconds(), TimelinePanel::kMinWindow);
    for (int i = 0; i < 30; ++i) QTest::keyClick(&f.panel, Qt::Key_Minus);
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
};

QTEST_MAIN(TestTimelinePanel)
#include "test_timeline_panel.moc"
