// The training methods on the real engine: pipelined backprop computes backprop's gradients (GPipe
// and 1F1B, MLP and ViT), sends measured bytes both ways, flushes, holds fewer activations under
// 1F1B; the learning-rate schedule, warm-up and clipping do what they say, and clip alike in
// backprop and pipeline modes.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include "data/tensor_data.h"
#include "idx_fixture.h"
#include "methods_fixture.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "runtime/memory_meter.h"
#include "runtime/method.h"
#include "runtime/stage_worker.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/pipeline_schedule.h"

using namespace stagewise::engine;
using namespace methods_fixture;

class TestMethods : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    g_dir = new QTemporaryDir;
    fixture::writeSet(g_dir->path(), 256, 8, 8, /*gz=*/false, 3);
  }
  void cleanupTestCase() { delete g_dir; }

  void pipelineGradientsAreBackprops_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("micro");
    QTest::newRow("mlp gpipe") << "mlp"
                               << "gpipe" << 0;
    QTest::newRow("mlp 1f1b") << "mlp"
                              << "1f1b" << 4;
    QTest::newRow("mlp uneven micro-batches") << "mlp"
                                              << "gpipe" << 5;
    QTest::newRow("vit gpipe") << "vit"
                               << "gpipe" << 0;
    QTest::newRow("vit 1f1b") << "vit"
                              << "1f1b" << 4;
  }
  void pipelineGradientsAreBackprops() {
    QFETCH(QString, kind);
    QFETCH(QString, schedule);
    QFETCH(int, micro);
    QTemporaryDir dir;
    const ExperimentSpec spec =
        family(kind.toStdString(), {"pipeline.schedule=" + schedule.toStdString(),
                                    "pipeline.micro_batches=" + std::to_string(micro)});
    const auto bp = stepZeroGradients(spec, Mode::Backprop, dir.filePath("bp").toStdString());
    const auto pl = stepZeroGradients(spec, Mode::Pipeline, dir.filePath("pl").toStdString());
    QCOMPARE(pl.size(), bp.size());
    for (size_t i = 0; i < bp.size(); ++i) {
      const double norm = bp[i].norm().item<double>();
      QVERIFY2(norm > 0, ("parameter " + std::to_string(i) + " has no gradient").c_str());
      const double rel = (pl[i] - bp[i]).norm().item<double>() / norm;
      QVERIFY2(rel <= 1e-5,
               ("parameter tensor " + std::to_string(i) + ": |dg|/|g| = " + std::to_string(rel))
                   .c_str());
    }
  }

  void schedulesGiveBackpropsGradients_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<bool>("recompute");
    QTest::addColumn<int>("micro");
    for (const char* kind : {"mlp", "vit"})
      for (const char* schedule : {"gpipe", "1f1b", "zb-h1"})
        for (bool recompute : {false, true})
          for (int micro : {1, 4})
            QTest::addRow("%s %s%s M=%d", kind, schedule, recompute ? " recompute" : "", micro)
                << kind << schedule << recompute << micro;
    // interleaved: four stages on two workers of two chunks each
    for (const char* kind : {"mlp4", "vit4"})
      for (bool recompute : {false, true})
        for (int micro : {1, 4})
          QTest::addRow("%s interleaved%s M=%d", kind, recompute ? " recompute" : "", micro)
              << kind << "interleaved" << recompute << micro;
  }
  /// Every schedule, with and without recomputation, computes backprop's step-0 gradients: bit
  /// for bit with one micro-batch (the same operations on the same rows), to float rounding with
  /// four (the gradient is summed over micro-batches).
  void schedulesGiveBackpropsGradients() {
    QFETCH(QString, kind);
    QFETCH(QString, schedule);
    QFETCH(bool, recompute);
    QFETCH(int, micro);
    QTemporaryDir dir;
    const ExperimentSpec spec =
        family(kind.toStdString(),
               {"pipeline.schedule=" + schedule.toStdString(),
                "pipeline.micro_batches=" + std::to_string(micro),
                std::string("pipeline.recompute=") + (recompute ? "true" : "false"),
                schedule == "interleaved" ? "pipeline.chunks=2" : "pipeline.chunks=1"});
    const auto bp = stepZeroGradients(spec, Mode::Backprop, dir.filePath("bp").toStdString());
    const auto pl = stepZeroGradients(spec, Mode::Pipeline, dir.filePath("pl").toStdString());
    QCOMPARE(pl.size(), bp.size());
    for (size_t i = 0; i < bp.size(); ++i) {
      const double norm = bp[i].norm().item<double>();
      QVERIFY2(norm > 0, ("parameter " + std::to_string(i) + " has no gradient").c_str());
      const std::string what = "parameter tensor " + std::to_string(i) + ": |dg|/|g| = " +
                               std::to_string((pl[i] - bp[i]).norm().item<double>() / norm);
      if (micro == 1)
        QVERIFY2(torch::equal(pl[i], bp[i]), what.c_str());
      else
        QVERIFY2((pl[i] - bp[i]).norm().item<double>() / norm <= 1e-5, what.c_str());
    }
  }

  void recomputeIsExact_data() {
    QTest::addColumn<QString>("schedule");
    QTest::newRow("gpipe") << "gpipe";
    QTest::newRow("1f1b") << "1f1b";
    QTest::newRow("zb-h1") << "zb-h1";
  }
  /// Recomputation changes nothing but memory and time: with dropout and batch norm the weights
  /// and the batch-norm statistics after a step are the ones without it, bit for bit (the
  /// recomputed forward draws the first pass's dropout masks and leaves the statistics alone).
  void recomputeIsExact() {
    QFETCH(QString, schedule);
    QTemporaryDir dir;
    const std::vector<std::string> sets{"mode=pipeline", "pipeline.micro_batches=4",
                                        "pipeline.schedule=" + schedule.toStdString()};
    auto with = sets;
    with.push_back("pipeline.recompute=true");
    const auto plain = stateAfterOneStep(family("drop", sets), dir.filePath("a").toStdString());
    const auto again = stateAfterOneStep(family("drop", with), dir.filePath("b").toStdString());
    QCOMPARE(again.size(), plain.size());
    QVERIFY(plain.size() > 8);  // weights, biases and batch norm's running statistics
    for (size_t i = 0; i < plain.size(); ++i)
      QVERIFY2(torch::equal(again[i], plain[i]), ("state tensor " + std::to_string(i)).c_str());
  }

  /// Recomputation keeps each micro-batch's input instead of its activations: stage 0 (16 input
  /// features, one layer of 32) holds 8 inputs and one micro-batch's output under GPipe, 3 inputs
  /// and one output under 1F1B; stage 1 (32 in, one layer of 32) gains nothing: its input is as
  /// large as its output, and the recomputed micro-batch's output comes on top. Each backward is
  /// preceded by its recompute span.
  void recomputeHoldsOnlyInputs() {
    const int64_t in = 2 * 16 * 4, out = 2 * 32 * 4;  // 16 / 8 rows x features x 4 bytes
    for (const std::string schedule : {"gpipe", "1f1b"}) {
      RecordingObserver plainObs, obs;
      const std::vector<std::string> sets{"mode=pipeline", "pipeline.micro_batches=8",
                                          "train.max_steps=4", "pipeline.schedule=" + schedule};
      auto with = sets;
      with.push_back("pipeline.recompute=true");
      const RunSummary plain = train(family("mlp", sets), plainObs);
      const RunSummary s = train(family("mlp", with), obs);
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      const int64_t held0 = schedule == "gpipe" ? 8 : 3, held1 = schedule == "gpipe" ? 8 : 2;
      QCOMPARE(plain.stages[0].peakActivationBytes, held0 * out);
      QCOMPARE(s.stages[0].peakActivationBytes, held0 * in + out);
      QCOMPARE(plain.stages[1].peakActivationBytes, held1 * out);
      QCOMPARE(s.stages[1].peakActivationBytes, held1 * out + out);
      int recomputes = 0;
      for (const StepSpan& x : obs.spanList) recomputes += x.kind == SpanKind::Recompute;
      QCOMPARE(recomputes, 3 * 4 * 8);  // stages x steps x micro-batches
      QCOMPARE(s.steps, int64_t{4});
    }
  }

  void spansFollowTheWorkerOrder_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<bool>("recompute");
    for (const char* schedule : {"gpipe", "1f1b", "zb-h1"})
      for (bool recompute : {false, true})
        QTest::addRow("%s%s", schedule, recompute ? " recompute" : "") << schedule << recompute;
  }
  /// Each stage runs its passes in schedule::workerOrders' order: its spans, step by step, are
  /// that order's F, B (or BW) and W, each B or BW after its recompute span, then the update.
  void spansFollowTheWorkerOrder() {
    QFETCH(QString, schedule);
    QFETCH(bool, recompute);
    constexpr int kSteps = 3, kMicro = 4, kStages = 3;
    RecordingObserver obs;
    const RunSummary s =
        train(family("mlp", {"mode=pipeline", "train.max_steps=3", "pipeline.micro_batches=4",
                             "pipeline.schedule=" + schedule.toStdString(),
                             std::string("pipeline.recompute=") + (recompute ? "true" : "false")}),
              obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const auto orders = schedule::workerOrders(schedule.toStdString(), kStages, kMicro);
    for (int k = 0; k < kStages; ++k)
      for (int64_t t = 0; t < kSteps; ++t) {
        std::vector<StepSpan> mine;
        for (const StepSpan& x : obs.spanList)
          if (x.stage == k && x.step == t && !isWait(x)) mine.push_back(x);
        std::stable_sort(mine.begin(), mine.end(),
                         [](const StepSpan& a, const StepSpan& b) { return a.startS < b.startS; });
        QVERIFY(!mine.empty());
        QCOMPARE(mine.back().micro, -1);  // the update, last
        mine.pop_back();
        std::vector<std::pair<SpanKind, int>> got;
        for (const StepSpan& x : mine) got.push_back({x.kind, x.micro});
        const auto want = expectedSpans(orders[static_cast<size_t>(k)], recompute);
        QVERIFY2(got == want, ("stage " + std::to_string(k) + ", step " + std::to_string(t) +
                               ": spans out of the " + schedule.toStdString() + " order")
                                  .c_str());
      }
  }

  /// interleaved: the two chunks of each worker take turns in workerOrders' order (one pass at a
  /// time, never overlapping), and each chunk's own spans follow that order too.
  void interleavedWorkersTakeTurns() {
    constexpr int kSteps = 3, kMicro = 4, kStages = 4, kChunks = 2;
    RecordingObserver obs;
    const RunSummary s =
        train(family("mlp4", {"mode=pipeline", "train.max_steps=3", "pipeline.micro_batches=4",
                              "pipeline.schedule=interleaved", "pipeline.chunks=2"}),
              obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{kSteps});
    const auto orders = schedule::workerOrders("interleaved", kStages, kMicro, kChunks);
    QCOMPARE(orders.size(), size_t{2});
    for (size_t w = 0; w < orders.size(); ++w)
      for (int64_t t = 0; t < kSteps; ++t) {
        std::vector<StepSpan> mine;
        for (const StepSpan& x : obs.spanList)
          if (x.step == t && x.micro >= 0 && !isWait(x) &&
              schedule::workerOf(x.stage, kStages, kChunks) == static_cast<int>(w))
            mine.push_back(x);
        std::stable_sort(mine.begin(), mine.end(),
                         [](const StepSpan& a, const StepSpan& b) { return a.startS < b.startS; });
        std::vector<std::tuple<int, SpanKind, int>> got, want;
        for (const StepSpan& x : mine) got.push_back({x.stage, x.kind, x.micro});
        for (const auto& a : orders[w])
          want.push_back(
              {a.stage, a.op == schedule::Op::F ? SpanKind::Forward : SpanKind::Backward, a.micro});
        QVERIFY2(got == want, ("worker " + std::to_string(w) + ", step " + std::to_string(t) +
                               ": spans out of the interleaved order")
                                  .c_str());
        for (size_t i = 1; i < mine.size(); ++i)
          QVERIFY2(mine[i].startS >= mine[i - 1].endS, "a worker ran two passes at once");
      }
  }

  void pipelineLossesAreBackprops_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("schedule");
    QTest::newRow("mlp gpipe") << "mlp"
                               << "gpipe";
    QTest::newRow("mlp 1f1b") << "mlp"
                              << "1f1b";
    QTest::newRow("vit gpipe") << "vit"
                               << "gpipe";
    QTest::newRow("vit 1f1b") << "vit"
                              << "1f1b";
  }
  /// 100 Adam steps on the same data order: the model's loss matches backprop's.
  void pipelineLossesAreBackprops() {
    QFETCH(QString, kind);
    QFETCH(QString, schedule);
    ExperimentSpec spec =
        family(kind.toStdString(), {"pipeline.schedule=" + schedule.toStdString()});
    RecordingObserver bpObs, plObs;
    spec.mode = Mode::Backprop;
    const RunSummary bp = train(spec, bpObs);
    spec.mode = Mode::Pipeline;
    const RunSummary pl = train(spec, plObs);
    QVERIFY2(bp.status == RunStatus::Completed, bp.error.c_str());
    QVERIFY2(pl.status == RunStatus::Completed, pl.error.c_str());
    QCOMPARE(pl.steps, int64_t{100});
    const auto bpLoss = bpObs.series(series::kLoss, 0);
    const auto plLoss = plObs.series(series::kLoss, 2);  // the model's loss is the last stage's
    QCOMPARE(plLoss.size(), size_t{100});
    QCOMPARE(bpLoss.size(), size_t{100});
    QVERIFY(plObs.series(series::kLoss, 0).empty());  // no aux heads: no loss before the last
    for (size_t t : {size_t{0}, size_t{50}, size_t{99}})
      QVERIFY2(relativeDifference(plLoss[t], bpLoss[t]) <= 1e-4,
               ("step " + std::to_string(t) + ": " + std::to_string(plLoss[t]) + " vs " +
                std::to_string(bpLoss[t]))
                   .c_str());
    QVERIFY(relativeDifference(pl.testAccuracy, bp.testAccuracy) <= 1e-3);
    QCOMPARE(plObs.info.stages.size(), size_t{3});
    QCOMPARE(plObs.info.stages[0].auxHead, std::string("none"));
  }

  void pipelineTimelineTellsForwardFromBackward_data() {
    QTest::addColumn<QString>("schedule");
    QTest::newRow("gpipe") << "gpipe";
    QTest::newRow("1f1b") << "1f1b";
  }
  /// Each micro-batch's forward and backward pass is its own span, in causal order across stages;
  /// GPipe does every forward before any backward, 1F1B starts the first backward earlier.
  void pipelineTimelineTellsForwardFromBackward() {
    QFETCH(QString, schedule);
    constexpr int kSteps = 6, kMicro = 4, kStages = 3;
    ExperimentSpec spec =
        family("mlp", {"mode=pipeline", "train.max_steps=6", "pipeline.micro_batches=4",
                       "pipeline.schedule=" + schedule.toStdString()});
    RecordingObserver obs;
    const RunSummary s = train(spec, obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    // span[stage][step][kind][micro + 1]
    std::map<std::tuple<int, int64_t, SpanKind, int>, StepSpan> at;
    int waits = 0;
    for (const StepSpan& x : obs.spanList) {
      QVERIFY(x.kind != SpanKind::Step);
      // Waits for an input or a gradient and blocked sends are spans of their own, over 50 us.
      if (x.kind == SpanKind::Wait || x.kind == SpanKind::Blocked) {
        QVERIFY(x.endS - x.startS > 50e-6);
        waits += x.kind == SpanKind::Wait;
        continue;
      }
      QVERIFY(x.endS >= x.startS);
      QVERIFY2(at.emplace(std::make_tuple(x.stage, x.step, x.kind, x.micro), x).second,
               "one span per stage, step, kind and micro-batch");
    }
    // Per stage and step: kMicro forwards, kMicro backwards and the update.
    QCOMPARE(at.size(), size_t{kStages * kSteps * (2 * kMicro + 1)});
    QVERIFY(waits > 0);  // the last stage waits for every first micro-batch, at least
    auto span = [&](int k, int64_t t, SpanKind kind, int i) {
      return at.at(std::make_tuple(k, t, kind, i));
    };
    for (int64_t t = 0; t < kSteps; ++t) {
      for (int i = 0; i < kMicro; ++i)
        for (int k = 0; k + 1 < kStages; ++k) {
          QVERIFY(span(k + 1, t, SpanKind::Forward, i).startS >=
                  span(k, t, SpanKind::Forward, i).endS);
          QVERIFY(span(k, t, SpanKind::Backward, i).startS >=
                  span(k + 1, t, SpanKind::Backward, i).endS);
        }
      for (int k = 0; k < kStages; ++k)
        QVERIFY(span(k, t, SpanKind::Backward, -1).startS >=
                span(k, t, SpanKind::Backward, kMicro - 1).endS);
    }
    // Stage 0 (two stages downstream): GPipe's first backward follows its last forward; 1F1B's
    // comes after its third forward (two to fill, then one forward and one backward in turn).
    const double firstBackward = span(0, 2, SpanKind::Backward, 0).startS;
    const double lastForward = span(0, 2, SpanKind::Forward, kMicro - 1).startS;
    if (schedule == "gpipe")
      QVERIFY(firstBackward >= lastForward);
    else
      QVERIFY(firstBackward < lastForward);
  }

  /// Measured bytes: activations and labels forward, the gradients of the activations back.
  void pipelineBytesAreMeasuredBothWays() {
    ExperimentSpec spec = family("mlp", {"mode=pipeline", "train.max_steps=30"});
    RecordingObserver obs;
    const RunSummary s = train(spec, obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const int64_t act = 30 * 16 * 32 * 4, labels = 30 * 16 * 8;
    QCOMPARE(s.stages[0].bytesSent, act + labels);
    QCOMPARE(s.stages[1].bytesSent, act + labels);
    QCOMPARE(s.stages[2].bytesSent, int64_t{0});
    QCOMPARE(s.stages[0].gradBytesSent, int64_t{0});  // nothing above stage 1
    QCOMPARE(s.stages[1].gradBytesSent, act);
    QCOMPARE(s.stages[2].gradBytesSent, act);
    QCOMPARE(s.stages[0].backpropBytes, int64_t{0});  // the prediction is local mode's
    QVERIFY(!obs.series(series::kGradBytesSent, 1).empty());
    // A flush: no stage runs ahead of the one below it (stage 0's upstream is the loader, which
    // prefetches).
    for (int k = 1; k < 3; ++k)
      for (double v : obs.series(series::kStaleness, k)) QCOMPARE(v, 0.0);
  }

  /// 1F1B keeps at most (stages downstream + 1) micro-batches' activations, GPipe all of them.
  void oneFOneBHoldsFewerActivations() {
    RecordingObserver a, b;
    const RunSummary gpipe = train(
        family("mlp", {"mode=pipeline", "pipeline.micro_batches=8", "train.max_steps=10"}), a);
    const RunSummary f1b = train(family("mlp", {"mode=pipeline", "pipeline.micro_batches=8",
                                                "pipeline.schedule=1f1b", "train.max_steps=10"}),
                                 b);
    QVERIFY2(gpipe.status == RunStatus::Completed, gpipe.error.c_str());
    QVERIFY2(f1b.status == RunStatus::Completed, f1b.error.c_str());
    // Stage 0 holds the outputs of its one layer: 8 micro-batches under GPipe, 3 under 1F1B.
    const int64_t perMicro = 2 * 32 * 4;  // 16 / 8 samples x 32 features x 4 bytes
    QCOMPARE(gpipe.stages[0].peakActivationBytes, 8 * perMicro);
    QCOMPARE(f1b.stages[0].peakActivationBytes, 3 * perMicro);
    QVERIFY(f1b.stages[1].peakActivationBytes < gpipe.stages[1].peakActivationBytes);
  }

  /// A known allocation is counted to the byte for the stage whose thread made it, and taken
  /// off that stage when another thread frees it.
  void countingAllocatorAttributesBytes() {
    QVERIFY(memory::install());
    const int first = memory::acquire(2);
    QVERIFY(first >= 0);
    torch::Tensor t;
    std::thread a([&] {
      const memory::ThreadTag tag(first);
      t = torch::empty({1000}, torch::kFloat32);
    });
    a.join();
    QCOMPARE(memory::current(first), int64_t{4000});
    QCOMPARE(memory::current(first + 1), int64_t{0});
    std::thread b([&] {
      const memory::ThreadTag tag(first + 1);
      t = torch::Tensor();  // freed downstream
    });
    b.join();
    QCOMPARE(memory::current(first), int64_t{0});
    QCOMPARE(memory::peak(first), int64_t{4000});
    QCOMPARE(memory::current(first + 1), int64_t{0});
    QCOMPARE(memory::peak(first + 1), int64_t{0});
    // untagged threads are not counted
    torch::Tensor u = torch::empty({500}, torch::kFloat32);
    QCOMPARE(memory::current(first), int64_t{0});
    // a stage's peak: its slot's on the CPU, the device's on CUDA (null without the statistics)
    QCOMPARE(memory::stagePeak(first, "cpu"), int64_t{4000});
    QCOMPARE(memory::stagePeak(-1, "cpu"), int64_t{-1});
    memory::startDeviceWindow("cuda:0");  // no device here: nothing happens, nothing throws
    memory::startDeviceWindow("cuda:bogus");
    if (!memory::cudaStatistics() || !torch::cuda::is_available()) {
      QCOMPARE(memory::stagePeak(first, "cuda:0"), int64_t{-1});
      QCOMPARE(memory::stagePeak(first, "cuda"), int64_t{-1});
    }
    QCOMPARE(memory::stagePeak(first, "cuda:bogus"), int64_t{-1});
    memory::release(first, 2);
  }

  /// Every stage's peak is measured in the summary, labelled apart from the tensor sizes; 1F1B
  /// needs less of it than GPipe.
  void peakMemoryIsMeasuredPerStage() {
    RecordingObserver a, b;
    const RunSummary gpipe = train(
        family("mlp", {"mode=pipeline", "pipeline.micro_batches=8", "train.max_steps=20"}), a);
    const RunSummary f1b = train(family("mlp", {"mode=pipeline", "pipeline.micro_batches=8",
                                                "pipeline.schedule=1f1b", "train.max_steps=20"}),
                                 b);
    for (const auto& st : gpipe.stages) QVERIFY(st.peakMemoryBytes > 0);
    QVERIFY(f1b.stages[0].peakMemoryBytes < gpipe.stages[0].peakMemoryBytes);
    QVERIFY(!a.series(series::kMemoryBytes, 0).empty());
    RecordingObserver c;
    const RunSummary local = train(family("mlp", {"train.max_steps=20"}), c);
    for (const auto& st : local.stages) QVERIFY(st.peakMemoryBytes >= st.peakActivationBytes / 2);
  }

  /// dataset.augment: crops and flips drawn from (seed, step) alone.
  void augmentIsSeededCropAndFlip() {
    const torch::Tensor x = torch::ones({6, 1, 8, 8});
    const torch::Tensor a = augmentBatch(x, 7, 3), b = augmentBatch(x, 7, 3),
                        c = augmentBatch(x, 7, 4);
    QCOMPARE(a.sizes(), x.sizes());
    QVERIFY(torch::equal(a, b));
    QVERIFY(!torch::equal(a, c));
    // a crop of the image zero padded by 1 (8 / 8): at most one row and one column of padding
    for (int64_t i = 0; i < 6; ++i) QVERIFY(a[i].sum().item<double>() >= 7.0 * 7.0);
    // the flip: a left-right ramp comes out rising or falling
    const torch::Tensor ramp = torch::arange(8, torch::kFloat32).repeat({64, 1, 8, 1});
    const torch::Tensor r = augmentBatch(ramp, 1, 0);
    int rising = 0, falling = 0;
    for (int64_t i = 0; i < 64; ++i) {
      const auto row = r[i][0][4];
      (row[6].item<float>() > row[1].item<float>() ? rising : falling)++;
    }
    QVERIFY(rising > 10 && falling > 10);
    // in a run: reproducible, and it changes training; the synthetic set refuses it
    RecordingObserver o1, o2, o3;
    const RunSummary a1 = train(family("vit", {"dataset.augment=true", "train.max_steps=30"}), o1);
    const RunSummary a2 = train(family("vit", {"dataset.augment=true", "train.max_steps=30"}), o2);
    const RunSummary plain = train(family("vit", {"train.max_steps=30"}), o3);
    QVERIFY2(a1.status == RunStatus::Completed, a1.error.c_str());
    QCOMPARE(a2.stages[0].paramChecksum, a1.stages[0].paramChecksum);
    QVERIFY(plain.stages[0].paramChecksum != a1.stages[0].paramChecksum);
    QVERIFY_THROWS_EXCEPTION(SpecError,
                             createRun(family("mlp", {"dataset.augment=true"}), nullptr));
  }

  void lrFactorFollowsTheSchedule() {
    TrainSpec t;
    QCOMPARE(lrFactor(t, 0, 100), 1.0);
    t.warmupSteps = 10;
    QCOMPARE(lrFactor(t, 0, 100), 0.1);
    QCOMPARE(lrFactor(t, 9, 100), 1.0);
    QCOMPARE(lrFactor(t, 50, 100), 1.0);
    t.lrSchedule = "linear";
    QCOMPARE(lrFactor(t, 10, 100), 1.0);
    QVERIFY(std::abs(lrFactor(t, 55, 100) - 0.5) < 1e-12);
    t.lrSchedule = "cosine";
    QVERIFY(std::abs(lrFactor(t, 55, 100) - 0.5) < 1e-12);
    QVERIFY(lrFactor(t, 99, 100) > 0);
    QVERIFY(lrFactor(t, 99, 100) < 0.01);
  }

  /// The schedule reaches the optimizer: SGD without momentum moves the weights by lr x g, so a
  /// run whose rate decays to ~0 ends nearer its start than a constant one.
  void scheduleAndClippingChangeTraining() {
    RecordingObserver o1, o2, o3, o4;
    const RunSummary constant = train(family("mlp", {"mode=backprop"}), o1);
    const RunSummary cosine = train(
        family("mlp", {"mode=backprop", "train.lr_schedule=cosine", "train.warmup_steps=10"}), o2);
    QVERIFY(constant.status == RunStatus::Completed && cosine.status == RunStatus::Completed);
    QVERIFY(constant.stages[0].paramChecksum != cosine.stages[0].paramChecksum);
    const RunSummary clipped = train(family("mlp", {"mode=backprop", "train.clip_norm=0.05"}), o3);
    QVERIFY(clipped.stages[0].paramChecksum != constant.stages[0].paramChecksum);
    // A bound far above every gradient's norm clips nothing: the same run, bit for bit.
    const RunSummary loose = train(family("mlp", {"mode=backprop", "train.clip_norm=1e9"}), o4);
    QCOMPARE(loose.stages[0].paramChecksum, constant.stages[0].paramChecksum);
  }

  /// Pipeline mode clips by the whole model's norm, as backprop does: equal losses.
  void pipelineClipsLikeBackprop() {
    ExperimentSpec spec = family("mlp", {"train.clip_norm=0.05", "train.max_steps=40"});
    RecordingObserver bpObs, plObs;
    spec.mode = Mode::Backprop;
    const RunSummary bp = train(spec, bpObs);
    spec.mode = Mode::Pipeline;
    const RunSummary pl = train(spec, plObs);
    QVERIFY2(pl.status == RunStatus::Completed, pl.error.c_str());
    const auto a = bpObs.series(series::kLoss, 0), b = plObs.series(series::kLoss, 2);
    QCOMPARE(b.size(), a.size());
    QVERIFY2(relativeDifference(b.back(), a.back()) <= 1e-4,
             (std::to_string(b.back()) + " vs " + std::to_string(a.back())).c_str());
    // and clipping did something: unclipped backprop ends elsewhere
    RecordingObserver unclippedObs;
    ExperimentSpec unclipped = spec;
    unclipped.mode = Mode::Backprop;
    unclipped.train.clipNorm = 0;
    train(unclipped, unclippedObs);
    QVERIFY(std::abs(unclippedObs.series(series::kLoss, 0).back() - a.back()) > 1e-6);
  }

  /// local.overlap = 0 is chunked local updates: the key changes nothing.
  void overlapZeroIsChunked() {
    RecordingObserver a, b;
    const RunSummary plain = train(family("mlp", {"train.max_steps=60"}), a);
    const RunSummary zero = train(family("mlp", {"train.max_steps=60", "local.overlap=0"}), b);
    for (size_t k = 0; k < 3; ++k)
      QCOMPARE(zero.stages[k].paramChecksum, plain.stages[k].paramChecksum);
    QCOMPARE(zero.overlapDelay, 0);
    QCOMPARE(zero.stages[1].gradBytesSent, int64_t{0});
  }

  /// With overlap the run is the same bit for bit whatever the timing (a straggler here).
  void overlapIsReproducible() {
    RecordingObserver a, b;
    const RunSummary fast = train(family("mlp", {"train.max_steps=60", "local.overlap=1"}), a);
    const RunSummary slow = train(
        family("mlp", {"train.max_steps=60", "local.overlap=1", "stages=[{},{\"delay_ms\":3},{}]"}),
        b);
    QVERIFY2(fast.status == RunStatus::Completed, fast.error.c_str());
    QVERIFY2(slow.status == RunStatus::Completed, slow.error.c_str());
    for (size_t k = 0; k < 3; ++k) {
      QCOMPARE(slow.stages[k].paramChecksum, fast.stages[k].paramChecksum);
      QCOMPARE(slow.stages[k].finalLoss, fast.stages[k].finalLoss);
    }
    QCOMPARE(fast.overlapLayers, 1);
    QCOMPARE(fast.overlapDelay, 3);  // queue_capacity 2 + 1
    // one gradient tensor per step back across each boundary: 60 x 16 samples x 32 floats
    QCOMPARE(fast.stages[0].gradBytesSent, int64_t{0});
    QCOMPARE(fast.stages[1].gradBytesSent, int64_t{60 * 16 * 32 * 4});
    QCOMPARE(fast.stages[2].gradBytesSent, int64_t{60 * 16 * 32 * 4});
    // and it changes training
    RecordingObserver c;
    const RunSummary chunked = train(family("mlp", {"train.max_steps=60"}), c);
    QVERIFY(chunked.stages[0].paramChecksum != fast.stages[0].paramChecksum);
  }

  /// The first downstream gradient (step 0's, applied at step D) changes exactly the last L
  /// layers of every stage but the last, and nothing else: compared with chunked updates at the
  /// checkpoint right after step D.
  void downstreamLossChangesOnlyItsLayers() {
    // 5 layers (4 hidden + classifier), stages [0,1] [2,3] [4]; D = 2: step 0's gradient lands at
    // step 2.
    const std::vector<std::string> base = {"model.hidden=[32,32,32,32]", "partition.cuts=[2,4]",
                                           "train.queue_capacity=1", "train.max_steps=4",
                                           "checkpoint.interval=3"};
    auto weights = [&](int overlap, const QString& dir) {
      std::vector<std::string> sets = base;
      sets.push_back("local.overlap=" + std::to_string(overlap));
      sets.push_back("checkpoint.dir=" + dir.toStdString());
      RecordingObserver obs;
      const RunSummary s = train(family("mlp", sets), obs);
      if (s.status != RunStatus::Completed) throw std::runtime_error(s.error);
      std::vector<std::vector<torch::Tensor>> perStage;
      for (size_t k = 0; k < 3; ++k)
        perStage.push_back(stageBody((dir + "/step-3").toStdString(), k));
      return perStage;
    };
    QTemporaryDir dir;
    const auto chunked = weights(0, dir.filePath("chunked")),
               overlapped = weights(1, dir.filePath("overlap"));
    // body tensors: a linear layer's weight and bias; stage 0 = layers 0-1, stage 1 = 2-3, stage 2
    // = 4
    auto same = [&](size_t stage, size_t tensor) {
      return torch::equal(chunked[stage][tensor], overlapped[stage][tensor]);
    };
    QVERIFY(same(0, 0) && same(0, 1));    // layer 0: only stage 0's own loss
    QVERIFY(!same(0, 2) && !same(0, 3));  // layer 1: also stage 1's loss
    QVERIFY(same(1, 0) && same(1, 1));    // layer 2
    QVERIFY(!same(1, 2) && !same(1, 3));  // layer 3: also stage 2's loss
    QVERIFY(same(2, 0) && same(2, 1));    // the last stage: nobody after it
  }

  void overlapNeedsTheLayers() {
    QVERIFY_THROWS_EXCEPTION(
        SpecError, createRun(family("mlp", {"local.overlap=2"}), nullptr));  // 1-layer stages
    try {
      createRun(family("mlp", {"local.overlap=2"}), nullptr);
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("local.overlap"));
    }
  }

  /// The probe measures the combined gradient. Over 3 steps with D = 3 no downstream gradient
  /// is applied yet, so both runs have the same weights, bit for bit; only the probe's definition
  /// differs: the upstream stages' cosines change, the last stage's stays 1.
  void probeSeesTheCombinedGradient() {
    RecordingObserver a, b;
    const RunSummary chunked = train(family("mlp", {"train.max_steps=3", "probe.interval=1"}), a);
    const RunSummary overlap =
        train(family("mlp", {"train.max_steps=3", "probe.interval=1", "local.overlap=1"}), b);
    for (size_t k = 0; k < 3; ++k)
      QCOMPARE(overlap.stages[k].paramChecksum, chunked.stages[k].paramChecksum);
    for (int k : {0, 1}) {
      const auto c = a.series(series::kGradCosine, k), o = b.series(series::kGradCosine, k);
      QVERIFY(!o.empty());
      QCOMPARE(o.size(), c.size());
      for (size_t i = 0; i < o.size(); ++i)
        QVERIFY2(std::abs(o[i] - c[i]) > 1e-6, std::to_string(o[i]).c_str());
    }
    for (double c : b.series(series::kGradCosine, 2)) QVERIFY(std::abs(c - 1.0) < 1e-5);
  }

  /// Pipeline runs pause, stop and fail cleanly like any other.
  void pipelineFailureStopsCleanly_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<QString>("debug");
    QTest::newRow("gpipe") << "mlp"
                           << "gpipe"
                           << "debug.fail_at_step=7";
    QTest::newRow("zb-h1") << "mlp"
                           << "zb-h1"
                           << "debug.fail_at_step=7";
    // The failing stage's chunk partner waits for a turn that never comes: the stop wakes it.
    QTest::newRow("interleaved") << "mlp4"
                                 << "interleaved"
                                 << "debug.fail_at_step=7";
    QTest::newRow("interleaved, NaN inside a pass") << "mlp4"
                                                    << "interleaved"
                                                    << "debug.nan_at_step=7";
  }
  void pipelineFailureStopsCleanly() {
    QFETCH(QString, kind);
    QFETCH(QString, schedule);
    QFETCH(QString, debug);
    RecordingObserver obs;
    const RunSummary s =
        train(family(kind.toStdString(),
                     {"mode=pipeline", "debug.stage=1", debug.toStdString(),
                      "pipeline.schedule=" + schedule.toStdString(), "pipeline.micro_batches=4",
                      schedule == "interleaved" ? "pipeline.chunks=2" : "pipeline.chunks=1"}),
              obs);
    QVERIFY(s.status == RunStatus::Failed);
    if (debug.contains("fail_at_step")) {
      QCOMPARE(s.failedStage, 1);
      QVERIFY(s.error.find("injected failure at step 7") != std::string::npos);
    } else {
      QVERIFY2(s.error.find("non-finite loss") != std::string::npos, s.error.c_str());
    }
  }

  void pipelineStopDrainsToACheckpoint_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("schedule");
    QTest::newRow("gpipe") << "mlp"
                           << "gpipe";
    QTest::newRow("interleaved") << "mlp4"
                                 << "interleaved";
  }
  void pipelineStopDrainsToACheckpoint() {
    QFETCH(QString, kind);
    QFETCH(QString, schedule);
    QTemporaryDir dir;
    RecordingObserver obs;
    ExperimentSpec spec = family(
        kind.toStdString(),
        {"mode=pipeline", "train.max_steps=100000", "checkpoint.dir=" + dir.path().toStdString(),
         "pipeline.schedule=" + schedule.toStdString(), "pipeline.micro_batches=4",
         schedule == "interleaved" ? "pipeline.chunks=2" : "pipeline.chunks=1"});
    auto run = createRun(spec, &obs);
    run->start();
    QTest::qWait(400);
    run->requestStop();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Stopped, s.error.c_str());
    QVERIFY(s.steps > 0);
    QVERIFY(std::filesystem::exists(
        dir.filePath(QStringLiteral("step-%1/state.json").arg(s.steps)).toStdString()));
  }
};

QTEST_GUILESS_MAIN(TestMethods)
#include "test_methods.moc"
