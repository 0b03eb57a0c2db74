// The plan of a pipeline step (pipeline_plan.h): the textbook bubbles where their assumptions
// hold (every stage as fast as the others, no transfer time), a lopsided pipeline worked out by
// hand, and the measured bubble of scripted spans.
#include <QtTest>

#include <cmath>
#include <stdexcept>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/pipeline_plan.h"

using namespace stagewise::engine;
using namespace stagewise::engine::schedule;

namespace {

bool near(double a, double b) {
  return std::abs(a - b) < 1e-12;
}

StepSpan span(SpanKind kind, double start, double end) {
  StepSpan s;
  s.kind = kind;
  s.startS = start;
  s.endS = end;
  return s;
}

}  // namespace

class TestPipelinePlan : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // GPipe and 1F1B with every stage's F and BW alike (any F, any BW; W = 0: one BW pass): the
  // step idles (p - 1) / (m + p - 1), and so does stage 0 between its first and last pass; the
  // last stage never waits.
  void gpipeAndOneFOneBPlanTheTextbookBubble() {
    for (const std::string s : {"gpipe", "1f1b"})
      for (const double bw : {1.0, 2.0, 0.5})
        for (int p = 2; p <= 5; ++p)
          for (int m = 1; m <= 8; ++m) {
            const Plan plan = planStep(s, m, 1, std::vector<PassTimes>(p, {1.0, bw, 0, 0}));
            const double expected = double(p - 1) / (m + p - 1);
            const QByteArray where = QByteArray::fromStdString(s) + " p" + QByteArray::number(p) +
                                     " m" + QByteArray::number(m);
            QVERIFY2(near(plan.stepBubble, expected), where);
            QVERIFY2(near(plan.workerBubble.front(), expected), where);
            QVERIFY2(near(plan.workerBubble.back(), 0), where);
            QVERIFY2(near(plan.stepSeconds, (m + p - 1) * (1 + bw)), where);
          }
  }

  // Interleaved with v chunks per worker, every chunk's F and BW alike, m a multiple of the
  // workers p: idle / busy = (p - 1) / (v m), i.e. a step bubble of (p - 1) / (v m + p - 1).
  void interleavedDividesTheBubbleByTheChunks() {
    for (const double bw : {1.0, 2.0})
      for (int p = 2; p <= 4; ++p)
        for (int v = 2; v <= 3; ++v)
          for (int m : {p, 2 * p, 3 * p}) {
            const Plan plan =
                planStep("interleaved", m, v, std::vector<PassTimes>(p * v, {1.0, bw, 0, 0}));
            const double busy = (1 + bw) * v * m;
            const double idle = plan.stepSeconds - busy;
            QVERIFY(near(idle / busy, double(p - 1) / (v * m)));
            QVERIFY(near(plan.stepBubble, double(p - 1) / (v * m + p - 1)));
          }
    // One chunk per worker is 1F1B's bubble, for comparison: twice the v = 2 figure's idle.
    const Plan one = planStep("1f1b", 4, 1, std::vector<PassTimes>(2, {1.0, 1.0, 0, 0}));
    const Plan two = planStep("interleaved", 4, 2, std::vector<PassTimes>(4, {0.5, 0.5, 0, 0}));
    QVERIFY(near(one.stepSeconds - 8, 2 * (two.stepSeconds - 8)));
  }

  // zb-h1 with every stage alike, m >= p and W no longer than F or B: (p - 1)(F + B - W) idle
  // per worker, where 1F1B (B and W as one pass) idles (p - 1)(F + B + W).
  void zeroBubbleH1PlansItsSmallerBubble() {
    for (const PassTimes t : {PassTimes{1, 1, 1, 0}, PassTimes{1, 2, 1, 0}, PassTimes{2, 1, 1, 0},
                              PassTimes{1, 1, 0.5, 0}})
      for (int p = 2; p <= 5; ++p)
        for (int m : {p, p + 1, 2 * p, 3 * p}) {
          const Plan zb = planStep("zb-h1", m, 1, std::vector<PassTimes>(p, t));
          const Plan ofob = planStep("1f1b", m, 1, std::vector<PassTimes>(p, t));
          const double busy = m * (t.f + t.b + t.w);
          QVERIFY(near(zb.stepSeconds - busy, (p - 1) * (t.f + t.b - t.w)));
          QVERIFY(near(ofob.stepSeconds - busy, (p - 1) * (t.f + t.b + t.w)));
        }
  }

  // Two stages, the second twice as slow, GPipe, m = 2, worked out by hand:
  // stage 0: F0 [0,1] F1 [1,2] ... BW0 [7,8] BW1 [9,10]; stage 1: F0 [1,3] F1 [3,5] BW0 [5,7]
  // BW1 [7,9]. Stage 0 is busy 4 of its 10 s, stage 1 8 of its 8; the step 12 of 2 x 10.
  void aLopsidedPipelineByHand() {
    const Plan plan = planStep("gpipe", 2, 1, {{1, 1, 0, 0}, {2, 2, 0, 0}});
    QCOMPARE(plan.workers[0].back().start, 9.0);
    QCOMPARE(plan.workers[1].front().start, 1.0);
    QCOMPARE(plan.stepSeconds, 10.0);
    QVERIFY(near(plan.workerBubble[0], 0.6));
    QVERIFY(near(plan.workerBubble[1], 0.0));
    QVERIFY(near(plan.stepBubble, 0.4));
    // Recompute lengthens each backward by its forward again: stage 1's BW's take 4 s.
    const Plan again = planStep("gpipe", 2, 1, {{1, 1, 0, 1}, {2, 2, 0, 2}});
    QCOMPARE(again.stepSeconds, 15.0);  // stage 1: BW0 [5,9], BW1 [9,13]; stage 0: BW1 [13,15]
  }

  // 1F1B holds p - k micro-batches at stage k, GPipe all m, zb-h1 p (until W) at every stage.
  void heldMicroBatchesFollowTheOrders() {
    QCOMPARE(heldMicroBatches(workerOrders("1f1b", 4, 8), 4), (std::vector<int>{4, 3, 2, 1}));
    QCOMPARE(heldMicroBatches(workerOrders("gpipe", 3, 5), 3), (std::vector<int>{5, 5, 5}));
    QCOMPARE(heldMicroBatches(workerOrders("zb-h1", 3, 6), 3), (std::vector<int>{3, 3, 3}));
  }

  // Every schedule for 4 like stages (F 1, B 1, W 1) and m = 4: gpipe and 1f1b idle 3 / 7,
  // interleaved (2 workers of 2 chunks) (P-1)/(v m + P-1) = 1/9, zb-h1 (p-1)(F+B-W) = 3 of
  // 12 + 3. Activations: one micro-batch 100 bytes, its input 10; 1f1b's stage 0 holds 4.
  void compareSchedulesPlansEach() {
    const std::vector<PassTimes> t(4, {1, 1, 1, 0});
    const std::vector<int64_t> act(4, 100), in(4, 10);
    const auto e = compareSchedules(t, 4, act, in, false);
    QCOMPARE(int(e.size()), 4);
    QCOMPARE(QString::fromStdString(e[0].schedule), QStringLiteral("gpipe"));
    QVERIFY(near(e[0].bubble, 3.0 / 7));
    QCOMPARE(e[0].peakActivationBytes, (std::vector<int64_t>{400, 400, 400, 400}));
    QVERIFY(near(e[1].bubble, 3.0 / 7));
    QCOMPARE(e[1].peakActivationBytes, (std::vector<int64_t>{400, 300, 200, 100}));
    QCOMPARE(e[2].chunks, 2);
    QVERIFY(e[2].refused.empty());
    QVERIFY(near(e[2].bubble, 1.0 / 9));
    QVERIFY(near(e[3].bubble, 3.0 / 15));
    // Recompute keeps the inputs and one micro-batch's activations.
    const auto r = compareSchedules(t, 4, act, in, true);
    QCOMPARE(r[1].peakActivationBytes, (std::vector<int64_t>{140, 130, 120, 110}));
    // Three stages do not split into workers of 2 chunks.
    const auto odd = compareSchedules(std::vector<PassTimes>(3, {1, 1, 1, 0}), 4, act, in, false);
    QVERIFY(QString::fromStdString(odd[2].refused).startsWith("pipeline.chunks"));
  }

  // What the engine's pipeline step holds (its peak_activation_bytes; test_cli compares a real
  // run): zb-h1's B keeps the layers' output gradients until its W, and stage k keeps up to k
  // W's back, so at m = p = 4 stage k holds 4 micro-batches' activations and k + 1 micro-batches'
  // gradients at its peak (stage 0 none: its W is the whole backward). Activations 100 bytes,
  // gradients 10, inputs 1.
  void peakHeldBytesCountsZeroBubbleGradients() {
    const std::vector<int64_t> act(4, 100), in(4, 1), grad{0, 10, 10, 10};
    QCOMPARE(peakHeldBytes(workerOrders("zb-h1", 4, 4), 4, act, in, grad, false),
             (std::vector<int64_t>{400, 420, 430, 440}));
    // Without kept gradients: held micro-batches x activations, as heldMicroBatches says.
    QCOMPARE(peakHeldBytes(workerOrders("zb-h1", 4, 4), 4, act, in, {}, false),
             (std::vector<int64_t>{400, 400, 400, 400}));
    // BW keeps no gradients: 1f1b is unchanged by them.
    QCOMPARE(peakHeldBytes(workerOrders("1f1b", 4, 4), 4, act, in, grad, false),
             (std::vector<int64_t>{400, 300, 200, 100}));
    // Recompute under zb-h1: the recomputed activations stay until W, with the gradients.
    QCOMPARE(peakHeldBytes(workerOrders("zb-h1", 2, 2), 2, act, in, grad, true)[1],
             int64_t{2 * 1 + 2 * (100 + 10)});
    const auto e =
        compareSchedules(std::vector<PassTimes>(4, {1, 1, 1, 0}), 4, act, in, false, grad);
    QCOMPARE(e[3].peakActivationBytes, (std::vector<int64_t>{400, 420, 430, 440}));
  }

  // The bytes per sample the plan takes from the model: a stage's layers' activations (no aux
  // head: pipelined backprop runs none), the last stage's logits once more; the gradients of its
  // layers' outputs but the one sent downstream (stage 0: none).
  void heldBytesFollowTheLayers() {
    ModelPlan plan;
    for (int i = 0; i < 4; ++i) {
      LayerInfo l;
      l.index = i;
      l.outShape = {i == 3 ? 10 : 8 * (i + 1)};
      l.activationBytes = 4 * l.outShape[0];
      plan.layers.push_back(l);
    }
    PartitionPlan partition;
    for (int k = 0; k < 3; ++k) {
      StagePlan s;
      s.index = k;
      s.firstLayer = k == 0 ? 0 : k + 1;
      s.lastLayer = k == 0 ? 1 : k + 1;
      s.isLast = k == 2;
      s.activationBytes = 999;  // the partition's figure, aux head included: not used
      partition.stages.push_back(s);
    }
    // Stage 0: layers 0, 1 (8 and 16 floats); 1: layer 2 (24); 2: layer 3, the logits (10).
    QCOMPARE(heldActivationBytes(partition, plan), (std::vector<int64_t>{96, 96, 80}));
    QCOMPARE(heldGradientBytes(partition, plan), (std::vector<int64_t>{0, 0, 40}));
  }

  // Interleaved is planned with the spec's chunks; with none (1), 2 as an example, said so.
  void compareSchedulesTakesTheChunks() {
    const std::vector<PassTimes> t(4, {1, 1, 1, 0});
    const std::vector<int64_t> act(4, 100), in(4, 10);
    const auto four = compareSchedules(t, 4, act, in, false, {}, 4);
    QCOMPARE(four[2].chunks, 4);
    QVERIFY(!four[2].exampleChunks && four[2].refused.empty());
    const auto none = compareSchedules(t, 4, act, in, false, {}, 1);
    QCOMPARE(none[2].chunks, 2);
    QVERIFY(none[2].exampleChunks);
    const auto three = compareSchedules(t, 4, act, in, false, {}, 3);
    QCOMPARE(three[2].chunks, 3);
    QVERIFY2(QString::fromStdString(three[2].refused).startsWith("pipeline.chunks"),
             three[2].refused.c_str());
  }

  void refusesWhatCannotRun() {
    // Stage 0 waits for its backward before its forward: the backward can never come.
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        simulate({{{0, Op::BW, 0}, {0, Op::F, 0}}, {{1, Op::F, 0}, {1, Op::BW, 0}}},
                 std::vector<PassTimes>(2, {1, 1, 0, 0})));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        simulate(workerOrders("gpipe", 3, 2), std::vector<PassTimes>(2, {1, 1, 0, 0})));
  }

  // Measured: between the first compute span's start (0) and the last's end (6), the compute
  // spans cover F [0,1], B [2,4] (its recompute [2,2.5] inside it) and W [5,6]: 4 of 6 s. The
  // wait [1,2] is idle; the wait after the last compute span is outside the window.
  void measuredBubbleOfScriptedSpans() {
    const std::vector<StepSpan> spans{
        span(SpanKind::Wait, 6, 7),     span(SpanKind::Weight, 5, 6),
        span(SpanKind::Forward, 0, 1),  span(SpanKind::Wait, 1, 2),
        span(SpanKind::Backward, 2, 4), span(SpanKind::Recompute, 2, 2.5)};
    QVERIFY(near(measuredBubble(spans), 1.0 / 3));
    QVERIFY(std::isnan(measuredBubble({span(SpanKind::Wait, 0, 1)})));
    QCOMPARE(measuredBubble({span(SpanKind::Forward, 0, 1), span(SpanKind::Backward, 1, 2)}), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestPipelinePlan)
#include "test_pipeline_plan.moc"
