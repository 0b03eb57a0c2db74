// The study queue's ETA on hand-made queues (walkthrough of issue 36: the queue said "ETA 2.99 s"
// while its running 960-step run alone said 11.5 s, as it averaged the time per run over runs of
// 150 and 960 steps): this machine's seconds a step times the steps left, never less than the
// running run's own ETA.
#include <QtTest>

#include "live/study_queue.h"

using namespace stagewise;
using namespace stagewise::ui;
using Entry = StudyQueue::Entry;
using State = StudyQueue::EntryState;

namespace {

Entry ended(int64_t steps, double seconds, State state = State::Completed) {
  Entry e;
  e.state = state;
  e.steps = steps;
  e.wallSeconds = seconds;
  e.resolved.spec.train.maxSteps = steps;
  return e;
}

Entry waiting(int64_t maxSteps) {
  Entry e;
  e.resolved.spec.train.maxSteps = maxSteps;
  return e;
}

Entry running(int64_t maxSteps) {
  Entry e = waiting(maxSteps);
  e.state = State::Running;
  return e;
}

engine::Progress at(int64_t step, int64_t total, double elapsedS, double etaS) {
  engine::Progress p;
  p.step = step;
  p.totalSteps = total;
  p.elapsedS = elapsedS;
  p.etaS = etaS;
  return p;
}

}  // namespace

class TestStudyQueueEta : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void neverLessThanTheRunningRunsOwnEta() {
    // Three quick 150-step runs done, then a 960-step run of a slower kind 100 steps in: its
    // own ETA (11.5 s) is what is left at the least.
    const std::vector<Entry> queue = {ended(150, 1.0), ended(150, 1.0), ended(150, 1.0),
                                      running(960)};
    const double eta = StudyQueue::etaSeconds(queue, 3, at(100, 960, 1.34, 11.5));
    QVERIFY2(eta >= 11.5, qPrintable(QString::number(eta)));
    QCOMPARE(eta, 11.5);  // nothing waits after it
  }

  void measuredStepTimeTimesTheStepsLeft() {
    // 0.02 s a step measured; a 960-step and a 150-step run wait: 1110 steps.
    const std::vector<Entry> queue = {ended(150, 3.0), ended(150, 3.0), waiting(960), waiting(150)};
    QCOMPARE(StudyQueue::etaSeconds(queue, -1, {}), 1110 * 0.02);
    // The running run's own ETA, then the waiting runs at the measured rate (its steps so far
    // count in the rate: 300 + 200 steps in 6 + 4 s).
    const std::vector<Entry> withRun = {ended(150, 3.0), ended(150, 3.0), running(960),
                                        waiting(960), waiting(150)};
    const double eta = StudyQueue::etaSeconds(withRun, 2, at(200, 960, 4.0, 15.0));
    QVERIFY2(std::abs(eta - (15.0 + 1110 * 0.02)) < 1e-9, qPrintable(QString::number(eta)));
    // Without its own ETA yet: its steps left at the measured rate.
    const double noOwn = StudyQueue::etaSeconds(withRun, 2, at(200, 960, 4.0, -1));
    QVERIFY2(std::abs(noOwn - (760 + 1110) * 0.02) < 1e-9, qPrintable(QString::number(noOwn)));
  }

  void longerRunsWaitingMakeItLonger() {
    // The same runs done, a longer run waiting: more time, in proportion to its steps (a time
    // per run would say the same for both).
    const std::vector<Entry> shortNext = {ended(150, 3.0), waiting(150)};
    const std::vector<Entry> longNext = {ended(150, 3.0), waiting(960)};
    const double a = StudyQueue::etaSeconds(shortNext, -1, {});
    const double b = StudyQueue::etaSeconds(longNext, -1, {});
    QVERIFY2(std::abs(b / a - 960.0 / 150.0) < 1e-9, qPrintable(QString::number(b / a)));
  }

  void skippedAndReusedRunsCostNothingLengthInEpochsAsMeasured() {
    // A skipped run that never trained adds no time and no steps; a waiting run of a length in
    // epochs (max_steps 0) is as long as the runs measured.
    const std::vector<Entry> queue = {ended(200, 4.0), ended(0, 0, State::Skipped), waiting(0)};
    QCOMPARE(StudyQueue::etaSeconds(queue, -1, {}), 200 * 0.02);
  }

  void nothingMeasuredNoEta() {
    QCOMPARE(StudyQueue::etaSeconds({waiting(150), waiting(960)}, -1, {}), -1.0);
    QCOMPARE(StudyQueue::etaSeconds({running(150)}, 0, at(0, 150, 0, -1)), -1.0);
  }
};

QTEST_MAIN(TestStudyQueueEta)
#include "test_study_queue_eta.moc"
