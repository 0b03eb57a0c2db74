// The span timeline's view (issue 36 §3): zoom from 0.1 s to the whole run, scroll back, pause
// while spans keep arriving, follow the live end again; keys and the wheel drive the same view.

#include <qcustomplot.h>
#include <QScrollBar>
#include <QToolButton>
#include <QtTest>

#include "live/live_data.h"
#include "live/timeline_panel.h"

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
