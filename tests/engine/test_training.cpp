// The LibTorch engine on small synthetic data: the properties local parallelism rests on.
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "recording_observer.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"

using namespace stagewise::engine;
using namespace std::chrono_literals;

namespace {

ExperimentSpec small(const std::string& extra = "") {
  std::string json = R"({"dataset":{"kind":"synthetic","synthetic_train":2048,"synthetic_test":512,
     "synthetic_features":32,"synthetic_classes":4},
     "model":{"hidden":[64,64,64,64]},"partition":{"cuts":[2,4]},
     "train":{"batch_size":32,"max_steps":120,"seed":5,"queue_capacity":2,"backprop_threads":1},
     "eval":{"interval":0},"probe":{"interval":-1}})";
  ExperimentSpec spec = parseSpec(json);
  if (!extra.empty()) {
    std::vector<std::string> sets;
    size_t start = 0;
    while (start < extra.size()) {
      size_t end = extra.find(' ', start);
      if (end == std::string::npos) end = extra.size();
      sets.push_back(extra.substr(start, end - start));
      start = end + 1;
    }
    spec = parseSpec(applyOverrides(specToJson(spec), sets));
  }
  return spec;
}

/// The names of this process's threads (/proc/self/task/*/comm).
std::set<std::string> threadNames() {
  std::set<std::string> names;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return names;
  while (const dirent* e = readdir(dir)) {
    std::string name;
    if (e->d_name[0] != '.' &&
        std::getline(std::ifstream(std::string("/proc/self/task/") + e->d_name + "/comm"), name))
      names.insert(name);
  }
  closedir(dir);
  return names;
}

RunSummary train(const ExperimentSpec& spec, RecordingObserver& obs) {
  auto run = createRun(spec, &obs);
  run->start();
  return run->wait();
}

}  // namespace

class TestTraining : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void localRunTrainsAndReports() {
    RecordingObserver obs;
    RunSummary s = train(small("probe.interval=40 eval.interval=60"), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{120});
    QCOMPARE(s.stages.size(), size_t{3});
    QCOMPARE(obs.info.stages.size(), size_t{3});
    QVERIFY(obs.finished);
    for (int k = 0; k < 3; ++k) {
      auto loss = obs.series(series::kLoss, k);
      QCOMPARE(loss.size(), size_t{120});
      QVERIFY2(loss.back() < loss.front(), "local loss did not go down");
      const auto& st = s.stages[size_t(k)];
      QCOMPARE(st.steps, int64_t{120});
      QVERIFY(std::abs(st.computeFraction + st.waitFraction + st.blockedFraction - 1.0) < 1e-6);
    }
    QVERIFY(s.testAccuracy > 0.5);  // 4 well separated clusters
    QCOMPARE(s.stages[0].bytesSent, int64_t{120 * 32 * (64 * 4 + 8)});
    QCOMPARE(s.stages[0].backpropBytes, int64_t{120 * 32 * 64 * 4 * 2});
    QCOMPARE(s.stages[2].bytesSent, int64_t{0});
    QVERIFY(obs.series(series::kTestAccuracy, -1).size() >= 2);  // at step 60 and at the end
    QVERIFY(obs.spans >= 3 * 120);
  }

  // The bubble, planned against measured (docs/metrics.md): local stages plan the slowest
  // stage's pace and measure their waits on the queues; pipeline stages plan the schedule from
  // their own pass times and measure the idle between their passes. Both in the summary (and its
  // JSON) and as live series.
  void bubbleIsPlannedAndMeasured() {
    RecordingObserver local;
    const RunSummary l = train(small("train.max_steps=100 stages=[{},{},{\"delay_ms\":4}]"), local);
    QVERIFY2(l.status == RunStatus::Completed, l.error.c_str());
    QCOMPARE(l.stages[2].bubblePlanned, 0.0);  // the slowest stage sets the pace
    QVERIFY(l.stages[0].bubblePlanned > 0.5);  // a fraction of the straggler's 4 ms per step
    QVERIFY(l.stages[0].bubbleMeasured > 0.5);
    QVERIFY(l.stages[2].bubbleMeasured < 0.5);
    QVERIFY(!local.series("bubble_measured", 0).empty());
    QVERIFY(!local.series("bubble_planned", 0).empty());

    RecordingObserver pipe;
    const RunSummary p = train(small("mode=pipeline pipeline.micro_batches=4 train.max_steps=100 "
                                     "stages=[{},{},{\"delay_ms\":4}]"),
                               pipe);
    QVERIFY2(p.status == RunStatus::Completed, p.error.c_str());
    for (const auto& st : p.stages) {
      QVERIFY(st.bubblePlanned >= 0 && st.bubblePlanned < 1);
      QVERIFY(st.bubbleMeasured >= 0 && st.bubbleMeasured < 1);
    }
    // Stage 0 waits for every backward to come back up through the others: planned and measured.
    QVERIFY(p.stages[0].bubblePlanned > 0.2);
    QVERIFY(p.stages[0].bubbleMeasured > 0.2);
    QVERIFY(!pipe.series("bubble_planned", 0).empty());
    const std::string json = summaryToJson(p);
    QVERIFY(json.find("\"bubble_planned\":null") == std::string::npos);
    QVERIFY(json.find("\"bubble_measured\":") != std::string::npos);
  }

  void interleavedBubbleIsTheWorkers() {
    // A worker runs its two chunks on two threads taking turns; it is idle only when neither
    // computes. Measured per chunk, each chunk read about 0.5 (idle while its partner computed)
    // against a plan of about 0.1 per worker (bench_schedules). The measured bubble is the
    // worker's, the same for both its chunks (stages 0 and 2 are worker 0's, 1 and 3 worker 1's).
    RecordingObserver obs;
    const RunSummary p =
        train(small("mode=pipeline pipeline.schedule=\"interleaved\" pipeline.chunks=2 "
                    "pipeline.micro_batches=4 partition.cuts=[1,2,3] train.max_steps=60"),
              obs);
    QVERIFY2(p.status == RunStatus::Completed, p.error.c_str());
    QCOMPARE(p.stages.size(), size_t(4));
    for (const auto& st : p.stages) {
      QVERIFY(st.bubbleMeasured >= 0 && st.bubbleMeasured < 1);
      QVERIFY(st.bubblePlanned >= 0 && st.bubblePlanned < 1);
    }
    QCOMPARE(p.stages[0].bubbleMeasured, p.stages[2].bubbleMeasured);
    QCOMPARE(p.stages[1].bubbleMeasured, p.stages[3].bubbleMeasured);
    QVERIFY(p.stages[0].bubbleMeasured != p.stages[1].bubbleMeasured);
    // A chunk waiting for its worker's turn is waiting, not computing: a worker's chunks
    // together compute at most the whole time (they summed to 1.44 when the turn's wait counted
    // as compute).
    for (int w = 0; w < 2; ++w) {
      const double compute =
          p.stages[size_t(w)].computeFraction + p.stages[size_t(w + 2)].computeFraction;
      QVERIFY2(compute <= 1.0 + 1e-9, std::to_string(compute).c_str());
    }
  }

  void aRunWithinTheWarmUpHasNoThroughput() {
    // 15 steps end inside the 20-step warm-up: samples/s was not measured (NaN, null in the
    // JSON and the store), not 0 (a 0 read as the slowest run in every table and mean).
    RecordingObserver obs;
    RunSummary s = train(small("train.max_steps=15"), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{15});
    QVERIFY2(std::isnan(s.samplesPerSec), std::to_string(s.samplesPerSec).c_str());
    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(summaryToJson(s))).object();
    QVERIFY(json.contains("samples_per_sec") && json["samples_per_sec"].isNull());
    RunSummary longer = train(small("train.max_steps=40"), obs);
    QVERIFY2(longer.samplesPerSec > 0, std::to_string(longer.samplesPerSec).c_str());
  }

  void lastStageCosineIsOne() {
    RecordingObserver obs;
    RunSummary s = train(small("probe.interval=30"), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    auto last = obs.series(series::kGradCosine, 2);
    QVERIFY(last.size() >= 4);
    // The last stage's local loss is the model's: the same gradient, to rounding.
    for (double c : last) QVERIFY2(std::abs(c - 1.0) < 1e-6, std::to_string(c).c_str());
    auto first = obs.series(series::kGradCosine, 0);
    QVERIFY(first.size() >= 4);
    // Stage 0's aux head and the rest of the network both separate the 4 clusters: their
    // gradients agree in direction (a sign or stage mix-up makes this fail), but an upstream
    // stage's local gradient is not the true one at any probe. The exact values of a known
    // construction (1 where the local loss is the model's, the closed form otherwise) are
    // checked in test_snapshots.
    for (double c : first) {
      QVERIFY2(c > 0.05, std::to_string(c).c_str());
      QVERIFY2(c < 1.0 - 1e-4, std::to_string(c).c_str());
    }
    QVERIFY(!obs.series(series::kGradCosine, 0, 0).empty());  // per layer too
  }

  void validationIsMeasuredBesideTheTestSet() {
    // A quarter of the 2048 samples held out: one epoch is 1536 / 32 = 48 steps in every mode,
    // and every evaluation measures the validation split too.
    for (const char* mode : {"local", "backprop", "pipeline"}) {
      RecordingObserver obs;
      const RunSummary s = train(
          small(std::string("train.max_steps=0 dataset.validation=0.25 eval.interval=16 mode=") +
                mode),
          obs);
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      QCOMPARE(obs.info.totalSteps, int64_t{48});
      QCOMPARE(s.steps, int64_t{48});
      QVERIFY2(s.valAccuracy > 0.5, mode);  // the clusters' true labels
      QVERIFY(std::isfinite(s.valLoss) && s.valLoss > 0);
      const auto val = obs.series(series::kValAccuracy, -1);
      QCOMPARE(val.size(), obs.series(series::kTestAccuracy, -1).size());
      QCOMPARE(val.size(), size_t{3});  // after 16 and 32 steps, and at the end
      QCOMPARE(val.back(), s.valAccuracy);
      QCOMPARE(obs.series(series::kValLoss, -1).size(), size_t{3});
      const std::string json = summaryToJson(s);
      QVERIFY(json.find("\"val_accuracy\":null") == std::string::npos);
      QVERIFY(json.find("\"val_loss\":null") == std::string::npos);
    }
    // Off: no series, null in the summary.
    RecordingObserver obs;
    const RunSummary s = train(small(), obs);
    QVERIFY(std::isnan(s.valAccuracy) && std::isnan(s.valLoss));
    QVERIFY(obs.series(series::kValAccuracy, -1).empty());
    QVERIFY(obs.series(series::kValLoss, -1).empty());
    const std::string json = summaryToJson(s);
    QVERIFY(json.find("\"val_accuracy\":null") != std::string::npos);
    QVERIFY(json.find("\"val_loss\":null") != std::string::npos);
  }

  void validationKeepsTheTrueLabels() {
    // Random training labels cannot be learnt; the held-out samples keep their own, so a
    // model that memorises noise stays at chance on them as on the test set (4 classes).
    RecordingObserver obs;
    const RunSummary s =
        train(small("dataset.validation=0.2 dataset.random_labels=true mode=backprop"), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QVERIFY2(s.valAccuracy < 0.45, std::to_string(s.valAccuracy).c_str());
    // With real labels the same split is learnt.
    RecordingObserver real;
    const RunSummary r = train(small("dataset.validation=0.2 mode=backprop"), real);
    QVERIFY2(r.valAccuracy > 0.8, std::to_string(r.valAccuracy).c_str());
  }

  void evalAtStepsAreAlwaysMeasured() {
    // No interval, a budget nothing fits in: only the forced evaluations and the final one.
    // 0 and 500 lie outside the run; 120, its end, is the final evaluation.
    RecordingObserver obs;
    RunOptions options;
    options.evalAtSteps = {30, 90, 0, 120, 500};
    const ExperimentSpec spec =
        small("dataset.validation=0.25 eval.interval=0 measure.budget=0.000001");
    auto run = createRun(spec, &obs, options);
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    auto stepsOf = [&](const char* name) {
      std::vector<int64_t> steps;
      std::lock_guard lock(obs.mutex);
      for (const auto& p : obs.points)
        if (p.name == name) steps.push_back(p.step);
      return steps;
    };
    QCOMPARE(stepsOf(series::kValAccuracy), (std::vector<int64_t>{29, 89, 120}));
    QCOMPARE(stepsOf(series::kTestAccuracy), (std::vector<int64_t>{29, 89, 120}));
    QCOMPARE(s.evalPoints, int64_t{2});
    QCOMPARE(obs.info.specJson, specToJson(spec));  // not part of the spec
  }

  void gradientIsTruncatedAtTheBoundary() {
    // Stage 1 learns ten times slower in run B; with no gradient crossing the boundary stage 0
    // must train exactly as in run A.
    RecordingObserver a, b;
    RunSummary sa = train(small("partition.cuts=[2] stages=[{},{}]"), a);
    RunSummary sb = train(small("partition.cuts=[2] stages=[{},{\"lr_scale\":0.1}]"), b);
    QVERIFY(sa.status == RunStatus::Completed && sb.status == RunStatus::Completed);
    QCOMPARE(a.series(series::kLoss, 0), b.series(series::kLoss, 0));
    QCOMPARE(sa.stages[0].paramChecksum, sb.stages[0].paramChecksum);
    QVERIFY(sa.stages[1].paramChecksum != sb.stages[1].paramChecksum);
  }

  void oneLocalStageEqualsBackprop() {
    RecordingObserver l, b;
    RunSummary sl = train(small("partition.cuts=[]"), l);
    RunSummary sb = train(small("partition.cuts=[] mode=backprop"), b);
    QVERIFY(sl.status == RunStatus::Completed && sb.status == RunStatus::Completed);
    QCOMPARE(sb.stages.size(), size_t{1});
    QCOMPARE(l.series(series::kLoss, 0), b.series(series::kLoss, 0));
    QCOMPARE(sl.stages[0].paramChecksum, sb.stages[0].paramChecksum);
    QCOMPARE(sl.testAccuracy, sb.testAccuracy);
  }

  void localRunIsTimingInvariant() {
    // Different stragglers force different interleavings; the losses must not change.
    RecordingObserver base, slow0, slow2;
    train(small("train.max_steps=60"), base);
    train(small("train.max_steps=60 stages=[{\"delay_ms\":4},{},{}]"), slow0);
    train(small("train.max_steps=60 stages=[{},{},{\"delay_ms\":4}] train.queue_capacity=1"),
          slow2);
    for (int k = 0; k < 3; ++k) {
      auto ref = base.series(series::kLoss, k);
      QCOMPARE(ref.size(), size_t{60});
      QCOMPARE(slow0.series(series::kLoss, k), ref);
      QCOMPARE(slow2.series(series::kLoss, k), ref);
    }
  }

  void stopWithFullQueuesIsPrompt() {
    RecordingObserver obs;
    auto run = createRun(small("train.max_steps=100000 stages=[{},{},{\"delay_ms\":300}]"), &obs);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 1, 10000);
    std::this_thread::sleep_for(400ms);  // queues upstream of the straggler are full now
    auto t0 = std::chrono::steady_clock::now();
    run->requestStop();
    RunSummary s = run->wait();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY2(took < 1.3, std::to_string(took).c_str());
    QVERIFY(s.status == RunStatus::Stopped);
  }

  void pauseHoldsProgress() {
    RecordingObserver obs;
    auto run = createRun(small("train.max_steps=100000"), &obs);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 5, 10000);
    run->pause();
    std::this_thread::sleep_for(200ms);
    const int64_t held = run->progress().step;
    std::this_thread::sleep_for(300ms);
    QVERIFY(run->progress().step <= held + 1);
    QVERIFY(run->state() == RunState::Paused);
    run->resume();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step > held + 5, 10000);
    run->requestStop();
    QVERIFY(run->waitFor(3s));
  }

  void runThreadsAreNamed() {
    // Benchmarks read the kernel's per-thread counts by these names (docs/architecture.md).
    RecordingObserver obs;
    auto run = createRun(small("train.max_steps=100000"), &obs);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 2, 10000);
    const std::set<std::string> names = threadNames();
    run->requestStop();
    QVERIFY(run->waitFor(3s));
    for (const char* want :
         {"sw-run", "sw-loader", "sw-stage-0", "sw-stage-1", "sw-stage-2", "sw-reporter"})
      QVERIFY2(names.count(want) == 1, want);
  }

  void pausedTimeIsNotTrainingTime() {
    // A run paused for a while reports the speed it trains at: paused time is in neither
    // samples/s, nor the throughput series' time axis, nor wall_seconds, nor the ETA.
    RecordingObserver obs;
    auto run = createRun(small("train.max_steps=400 stages=[{},{},{\"delay_ms\":3}]"), &obs);
    const auto t0 = std::chrono::steady_clock::now();
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 60, 20000);
    run->pause();
    std::this_thread::sleep_for(300ms);  // the stages have finished the step in hand
    const Progress before = run->progress();
    std::this_thread::sleep_for(1500ms);
    const Progress during = run->progress();
    QVERIFY2(during.elapsedS - before.elapsedS < 0.05,
             std::to_string(during.elapsedS - before.elapsedS).c_str());
    QVERIFY(during.pausedS >= 1.7);
    // The speed holds while paused (to the clock reads' microseconds).
    QVERIFY2(std::abs(during.samplesPerSec - before.samplesPerSec) < 1e-3 * before.samplesPerSec,
             (std::to_string(before.samplesPerSec) + " -> " + std::to_string(during.samplesPerSec))
                 .c_str());
    QVERIFY(std::abs(during.etaS - before.etaS) < 0.05);  // and so does the ETA
    run->resume();
    RunSummary s = run->wait();
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QVERIFY2(s.pausedSeconds >= 1.7 && s.pausedSeconds < 3.0,
             std::to_string(s.pausedSeconds).c_str());
    QVERIFY2(s.wallSeconds < total - 1.7,
             (std::to_string(s.wallSeconds) + " of " + std::to_string(total)).c_str());
    // samples/s counts training time only: the samples after the warm-up over less than the
    // wall time (it would be far below samples / wall with the pause in it).
    QVERIFY2(s.samplesPerSec > 0.9 * double(s.samples) / s.wallSeconds,
             (std::to_string(s.samplesPerSec) + " vs " +
              std::to_string(double(s.samples) / s.wallSeconds))
                 .c_str());
    // The throughput series never dips after the pause, and its time axis skips the pause.
    std::vector<double> speed;
    double lastT = 0;
    for (const auto& p : obs.points)
      if (p.name == series::kSamplesPerSec && p.value > 0)
        speed.push_back(p.value), lastT = std::max(lastT, p.timeS);
    QVERIFY(speed.size() >= 3);
    QVERIFY2(lastT <= s.wallSeconds + 0.3, std::to_string(lastT).c_str());
    const double peak = *std::max_element(speed.begin(), speed.end());
    QVERIFY2(speed.back() > 0.6 * peak,
             (std::to_string(speed.back()) + " after a peak of " + std::to_string(peak)).c_str());
  }

  void everyProbeOfARunIsMeasured() {
    // Probe every 100 and evaluate every 200 steps on the whole test set: the analysis thread is
    // still busy when the stages end, and what it has queued must still be measured.
    RecordingObserver obs;
    RunSummary s = train(small("train.max_steps=400 probe.interval=100 eval.interval=200 "
                               "dataset.synthetic_test=4096"),
                         obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    std::vector<int64_t> steps;
    for (const auto& p : obs.points)
      if (p.name == series::kGradCosine && p.stage == 0 && p.layer == -1) steps.push_back(p.step);
    std::sort(steps.begin(), steps.end());
    bool skippedSaid = false;
    for (const auto& e : obs.events)
      skippedSaid |= e.kind == EventKind::Warning && e.message.find("skipped") != std::string::npos;
    if (!skippedSaid)
      QCOMPARE(steps, (std::vector<int64_t>{99, 199, 299, 400}));
    else
      QVERIFY(steps.size() >= 2);  // a skip is allowed only when it is said
  }

  void measuringStaysWithinItsBudget() {
    // A probe asked after every step: taken all, it would cost more than training itself.
    RecordingObserver obs;
    RunSummary s = train(small("train.max_steps=3000 probe.interval=1 probe.batch_size=64 "
                               "eval.interval=0 measure.budget=0.05"),
                         obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    // The engine's own accounting; the estimate of the next point is the last one's cost, so
    // noise lets a point in now and then: 30 % over is a failure.
    QVERIFY2(s.measureShare <= 0.05 * 1.3, std::to_string(s.measureShare).c_str());
    // And spent — unless the analysis thread fell behind (a loaded machine) and skipped points,
    // which the summary counts: then less than the budget is all it could spend.
    QVERIFY2(
        s.measureShare >= 0.02 || s.skippedPoints > 0,
        (std::to_string(s.measureShare) + ", skipped " + std::to_string(s.skippedPoints)).c_str());
    QCOMPARE(s.measureBudget, 0.05);
    QVERIFY(s.probePoints >= 9);
    QVERIFY(s.thinnedPoints > 0);
    // Every point asked for: measured, left out by the budget, or skipped while the analysis
    // thread was behind (one probe each: no evaluations here).
    QCOMPARE(s.probePoints + s.thinnedPoints + s.skippedPoints, int64_t{2999});
    std::set<int64_t> probed;
    for (const auto& p : obs.points)
      if (p.name == series::kGradCosine && p.stage == 0 && p.layer == -1) probed.insert(p.step);
    QCOMPARE(int64_t(probed.size()), s.probePoints + 1);  // and the one at the end
    QVERIFY(!obs.series(series::kMeasureShare, -1).empty());

    // No budget: every point asked for.
    RecordingObserver all;
    s = train(small("train.max_steps=200 probe.interval=10 probe.batch_size=64 eval.interval=50 "
                    "measure.budget=0"),
              all);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.probePoints, int64_t{19});
    QCOMPARE(s.evalPoints, int64_t{3});
    QCOMPARE(s.thinnedPoints, int64_t{0});
    QVERIFY(s.measureShare > 0.05);  // what the budget saves
  }

  void randomLabelsAreSeededAndUnlearnable() {
    RecordingObserver a, b, c;
    const ExperimentSpec spec = small("mode=backprop dataset.random_labels=true");
    const RunSummary x = train(spec, a), y = train(spec, b);
    QVERIFY2(x.status == RunStatus::Completed, x.error.c_str());
    QCOMPARE(x.stages[0].paramChecksum, y.stages[0].paramChecksum);          // the same labels
    QVERIFY2(x.testAccuracy < 0.4, std::to_string(x.testAccuracy).c_str());  // 4 classes
    const RunSummary real = train(small("mode=backprop"), c);
    QVERIFY2(real.testAccuracy > 0.6, std::to_string(real.testAccuracy).c_str());
    QVERIFY(x.stages[0].paramChecksum != real.stages[0].paramChecksum);
  }

  void failingStageEndsTheRunCleanly() {
    RecordingObserver obs;
    auto t0 = std::chrono::steady_clock::now();
    RunSummary s = train(small("train.max_steps=100000 debug.fail_at_step=20 debug.stage=1"), obs);
    QVERIFY(std::chrono::steady_clock::now() - t0 < 20s);
    QVERIFY(s.status == RunStatus::Failed);
    QCOMPARE(s.failedStage, 1);
    QVERIFY2(s.error.find("stage 1") != std::string::npos &&
                 s.error.find("injected failure") != std::string::npos,
             s.error.c_str());
    QVERIFY(s.stages[1].steps == 20);
    bool failedEvent = false;
    for (auto& e : obs.events) failedEvent |= e.kind == EventKind::Failed && e.stage == 1;
    QVERIFY(failedEvent);
  }

  void nanLossNamesTheStage() {
    RecordingObserver obs;
    RunSummary s = train(small("train.max_steps=100000 debug.nan_at_step=10 debug.stage=2"), obs);
    QVERIFY(s.status == RunStatus::Failed);
    QCOMPARE(s.failedStage, 2);
    QVERIFY2(s.error.find("stage 2") != std::string::npos &&
                 s.error.find("non-finite loss") != std::string::npos,
             s.error.c_str());
  }

  void badInputIsRefusedBeforeStart() {
    RecordingObserver obs;
    try {
      createRun(small("stages=[{},{\"device\":\"cuda:7\"},{}]"), &obs);
      QFAIL("a missing device was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("stages[1].device"));
    }
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(small("partition.cuts=[3,3]"), &obs));
    QVERIFY_THROWS_EXCEPTION(DatasetError,
                             createRun(small("dataset.kind=idx dataset.path=/nonexistent"), &obs));
  }

  void engineInfoListsCpu() {
    EngineInfo info = engineInfo();
    QVERIFY(!info.devices.empty());
    QCOMPARE(info.devices.front(), std::string("cpu"));
    QVERIFY(!info.torchVersion.empty());
    QVERIFY(info.hardwareCores >= 1);
  }
};

QTEST_GUILESS_MAIN(TestTraining)
#include "test_training.moc"
