// The snapshot coordinator: a probe or evaluation that every stage offered is measured, even
// when the run ends before the analysis thread has taken it; one that is lost is counted.
#include <torch/torch.h>
#include <QtTest>

#include "runtime/snapshot.h"

using namespace stagewise::engine;

namespace {
std::vector<torch::Tensor> params(float v) {
  return {torch::full({3}, v)};
}
}  // namespace

class TestSnapshots : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void completeSnapshotsSurviveANormalClose() {
    // Two stages, probe every 100 steps of 400, nothing taken yet when the stages end.
    SnapshotCoordinator c(2, /*probeInterval=*/100, /*evalInterval=*/200, /*totalSteps=*/400);
    for (int64_t step : {99, 199, 299}) {
      QVERIFY(c.wanted(step));
      // The last stage to offer finishes the step last: its time is the snapshot's.
      c.offer(1, step, params(3), {}, step + 0.5);
      c.offer(0, step, params(1), params(2), step + 0.25);
    }
    c.close(/*drop=*/false);
    std::vector<int64_t> got;
    while (auto s = c.next()) {
      got.push_back(s->step);
      QCOMPARE(s->timeS, s->step + 0.5);
      QCOMPARE(s->body.size(), size_t{2});
      QCOMPARE(s->eval, s->step == 199);
    }
    QCOMPARE(got, (std::vector<int64_t>{99, 199, 299}));
    QCOMPARE(c.discarded(), int64_t{0});
    QCOMPARE(c.dropped(), int64_t{0});
  }

  void aStopDiscardsAndCounts() {
    SnapshotCoordinator c(2, 100, 0, 400);
    c.offer(0, 99, params(1), params(2));
    c.offer(1, 99, params(3), {});
    c.offer(0, 199, params(1), params(2));  // stage 1 never gets there
    c.close(/*drop=*/true);
    QVERIFY(!c.next().has_value());
    QCOMPARE(c.discarded(), int64_t{2});
  }

  void anIncompleteSnapshotAtTheEndIsCounted() {
    SnapshotCoordinator c(2, 100, 0, 400);
    c.offer(0, 299, params(1), params(2));
    c.close(/*drop=*/false);
    QVERIFY(!c.next().has_value());
    QCOMPARE(c.discarded(), int64_t{1});
  }

  void skipsWhenBehindAreCounted() {
    SnapshotCoordinator c(1, 1, 0, 100);
    for (int64_t step = 0; step < 6; ++step) c.offer(0, step, params(1), {});
    QCOMPARE(c.dropped(), int64_t{3});  // three wait, the rest are skipped and counted
    c.close(false);
    int n = 0;
    while (c.next()) ++n;
    QCOMPARE(n, 3);
  }
};

QTEST_GUILESS_MAIN(TestSnapshots)
#include "test_snapshots.moc"
