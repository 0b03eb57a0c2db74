// The measured bubble of scripted steps, the pass times the plan takes from them, and the plan a
// process's stages post (metrics/bubble_meter.h).
#include <QtTest>

#include <cmath>

#include "metrics/bubble_meter.h"

using namespace stagewise::engine;

namespace {

bool near(double a, double b) {
  return std::abs(a - b) < 1e-12;
}

StepSpan pass(int stage, SpanKind kind, int micro, double start, double end) {
  StepSpan s;
  s.stage = stage;
  s.kind = kind;
  s.micro = micro;
  s.startS = start;
  s.endS = end;
  return s;
}

}  // namespace

class TestBubbleMeter : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Step 1: F0 [0,1] F1 [1,2] B0 [3,5] B1 [5,7]: 6 of 7 s busy, bubble 1/7; the update [8,9]
  // (no micro-batch) is not part of the schedule. Step 2: F0 [10,11] F1 [13,14] B0 [14,16]
  // B1 [16,18]: 6 of 8 s, bubble 1/4. Mean 11/56; F 1 s, B 2 s per pass.
  void measuresEachStepAndKeepsThePassTimes() {
    BubbleMeter m;
    QVERIFY(std::isnan(m.measured()));
    m.addStep({pass(1, SpanKind::Forward, 0, 0, 1), pass(1, SpanKind::Forward, 1, 1, 2),
               pass(1, SpanKind::Backward, 0, 3, 5), pass(1, SpanKind::Backward, 1, 5, 7),
               pass(1, SpanKind::Backward, -1, 8, 9)});
    QVERIFY(near(m.measured(), 1.0 / 7));
    m.addStep({pass(1, SpanKind::Forward, 0, 10, 11), pass(1, SpanKind::Wait, 1, 11, 13),
               pass(1, SpanKind::Forward, 1, 13, 14), pass(1, SpanKind::Backward, 0, 14, 16),
               pass(1, SpanKind::Backward, 1, 16, 18)});
    QVERIFY(near(m.measured(), (1.0 / 7 + 1.0 / 4) / 2));
    QVERIFY(near(m.recentMeasured(), m.measured()));
    QCOMPARE(m.microBatches(), 2);
    const auto times = m.passTimes();
    QCOMPARE(int(times.size()), 1);
    QCOMPARE(times.at(1).f, 1.0);
    QCOMPARE(times.at(1).b, 2.0);
    QCOMPARE(times.at(1).w, 0.0);
    // The recent mean forgets: kRecent idle-free steps later it reads 0, the run's mean not.
    for (size_t i = 0; i < BubbleMeter::kRecent; ++i)
      m.addStep({pass(1, SpanKind::Forward, 0, 0, 1), pass(1, SpanKind::Backward, 0, 1, 2)});
    QCOMPARE(m.recentMeasured(), 0.0);
    QVERIFY(m.measured() > 0);
  }

  // interleaved: a worker's two chunks run on two threads taking turns. Chunk 0 computes
  // [0,1] and [2,3], chunk 2 [1,2] and [3,4]: each alone idles half its window, the worker
  // never. The chunks' meters read the worker's bubble; their pass times stay their own.
  void aChunkReadsItsWorkersBubble() {
    auto worker = std::make_shared<WorkerBubble>();
    BubbleMeter chunk0, chunk2;
    chunk0.measureAsWorker(worker);
    chunk2.measureAsWorker(worker);
    const std::vector<StepSpan> a = {pass(0, SpanKind::Forward, 0, 0, 1),
                                     pass(0, SpanKind::Forward, 1, 2, 3)};
    const std::vector<StepSpan> b = {pass(2, SpanKind::Forward, 0, 1, 2),
                                     pass(2, SpanKind::Backward, 0, 3, 4)};
    QVERIFY(near(schedule::measuredBubble(a), 1.0 / 3));  // what a chunk alone would read
    chunk0.addStep(a);
    chunk2.addStep(b);
    QVERIFY(std::isnan(chunk0.measured()));  // nothing from the worker yet
    std::vector<StepSpan> both = a;
    both.insert(both.end(), b.begin(), b.end());
    worker->add(schedule::measuredBubble(both));
    QCOMPARE(chunk0.measured(), 0.0);
    QCOMPARE(chunk2.measured(), 0.0);
    QCOMPARE(chunk2.recentMeasured(), 0.0);
    worker->add(0.5);
    QVERIFY(near(chunk0.measured(), 0.25));
    QCOMPARE(chunk0.passTimes().count(0), size_t(1));
    QCOMPARE(chunk0.passTimes().count(2), size_t(0));
  }

  // Two stages, GPipe, m = 2, stage 1 twice as slow (F 2, B 2): stage 0 idles 6 of its 10 s,
  // stage 1 never (test_pipeline_plan's lopsided pipeline). No plan until both have posted.
  void plansFromThePostedTimes() {
    BubbleBoard board("gpipe", 1, 2);
    board.post(0, {1, 1, 0, 0}, 2);
    QVERIFY(std::isnan(board.planned()[0]));
    board.post(1, {2, 2, 0, 0}, 2);
    const auto planned = board.planned();
    QVERIFY(near(planned[0], 0.6));
    QVERIFY(near(planned[1], 0.0));
  }

  // Interleaved: stages 0 and 2 run on worker 0, so they share its plan.
  void interleavedStagesShareTheirWorkersPlan() {
    BubbleBoard board("interleaved", 2, 4);
    for (int k = 0; k < 4; ++k) board.post(k, {1, 1, 0, 0}, 4);
    const auto planned = board.planned();
    QCOMPARE(planned[0], planned[2]);
    QCOMPARE(planned[1], planned[3]);
    QVERIFY(planned[0] > 0);
  }

  // Local: the slowest stage sets the pace; a stage at a quarter of its step idles 3/4.
  void localPlanIsTheSlowestStagesPace() {
    BubbleBoard board("", 1, 2);
    board.postStepSeconds(0, 1.0);
    board.postStepSeconds(1, 4.0);
    const auto planned = board.planned();
    QCOMPARE(planned[0], 0.75);
    QCOMPARE(planned[1], 0.0);
  }

  // Across processes each rank's board holds its own stages; rank 0 posts the others' entries
  // into its own (dist/c10d_topology.cpp) and then plans as one board holding them all.
  void anotherBoardsEntriesPlanAsItsOwn() {
    BubbleBoard one("1f1b", 1, 3), rank0("1f1b", 1, 3), rank1("1f1b", 1, 3);
    const schedule::PassTimes t0{1, 2, 0, 0.5}, t1{3, 1, 0, 0}, t2{2, 2, 0, 0};
    one.post(0, t0, 4);
    one.post(1, t1, 4);
    one.post(2, t2, 4);
    rank0.post(0, t0, 4);
    rank1.post(1, t1, 4);
    rank1.post(2, t2, 4);
    QVERIFY(std::isnan(rank0.planned()[0]));
    const auto entries = rank1.entries();
    QCOMPARE(int(entries.size()), 2);
    QCOMPARE(entries[0].stage, 1);
    QCOMPARE(entries[1].times.f, 2.0);
    QCOMPARE(entries[1].micro, 4);
    for (const auto& e : entries) rank0.post(e);
    const auto planned = rank0.planned();
    QCOMPARE(planned, one.planned());
    QVERIFY(planned[0] > 0 && planned[0] < 1);
    // Local: the step seconds travel the same way.
    BubbleBoard local0("", 1, 2), local1("", 1, 2);
    local0.postStepSeconds(0, 1.0);
    local1.postStepSeconds(1, 4.0);
    for (const auto& e : local1.entries()) local0.post(e);
    QCOMPARE(local0.planned()[0], 0.75);
  }
};

QTEST_GUILESS_MAIN(TestBubbleMeter)
#include "test_bubble_meter.moc"
