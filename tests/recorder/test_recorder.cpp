// The recorder with the fake engine, end to end: what the engine reported is what the store
// holds, for completed, failed, stopped and resumed runs.

#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "../storage/full_disk_vfs.h"
#include "stagewise/engine/fake_engine.h"
#include "stagewise/engine/observer_fanout.h"
#include "stagewise/recorder/recorder.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

using namespace stagewise;

namespace {

/// Keeps a copy of everything a run reports, to compare the store against.
struct Capture : engine::RunObserver {
  engine::RunInfo info;
  std::vector<engine::MetricPoint> points;
  std::vector<engine::StepSpan> spans;
  std::vector<engine::RunEvent> events;
  engine::RunSummary summary;
  void onStart(const engine::RunInfo& i) override { info = i; }
  void onMetrics(const std::vector<engine::MetricPoint>& p) override {
    points.insert(points.end(), p.begin(), p.end());
  }
  void onSpans(const std::vector<engine::StepSpan>& s) override {
    spans.insert(spans.end(), s.begin(), s.end());
  }
  void onEvent(const engine::RunEvent& e) override { events.push_back(e); }
  void onFinish(const engine::RunSummary& s) override { summary = s; }
};

engine::ExperimentSpec spec(const std::string& name = "rec") {
  return engine::parseSpec(R"({"name":")" + name +
                           R"(","dataset":{"kind":"synthetic"},"partition":{"cuts":[2,4]},)"
                           R"("eval":{"interval":20},"probe":{"interval":10}})");
}

// Runs a fake run with the recorder and the capture side by side.
engine::RunSummary runFake(recorder::Recorder& rec, Capture& cap, const engine::FakeScript& script,
                           const engine::ExperimentSpec& s = spec()) {
  engine::ObserverFanout fanout({&cap, &rec});
  auto run = engine::createFakeRun(s, &fanout, script);
  run->start();
  return run->wait();
}

using SeriesMap = std::map<std::tuple<std::string, int, int>, std::vector<engine::MetricPoint>>;

SeriesMap bySeries(const std::vector<engine::MetricPoint>& points) {
  SeriesMap out;
  for (const auto& p : points) out[{p.name, p.stage, p.layer}].push_back(p);
  return out;
}

}  // namespace

class TestRecorder : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() {
    return m_dir.filePath(QString("rec%1.db").arg(++m_count)).toStdString();
  }

 private Q_SLOTS:
  void completedRunIsStoredExactly() {
    storage::RunStore store(freshPath());
    recorder::RecorderOptions options;
    options.tags = {"fake", "e2e"};
    options.notes = "recorded by the test";
    recorder::Recorder rec(store, options);
    QVERIFY(!rec.runId());
    Capture cap;
    const auto summary = runFake(rec, cap, engine::FakeScript{120, 0.0005, -1, 0, 7});
    QCOMPARE(engine::toString(summary.status), std::string("completed"));
    QVERIFY2(rec.error().empty(), rec.error().c_str());
    QVERIFY(rec.runId().has_value());
    const int64_t id = *rec.runId();

    storage::RunReader reader(store);
    const auto run = reader.run(id);
    QVERIFY(run);
    QCOMPARE(storage::toString(run->status), std::string("completed"));
    QCOMPARE(run->name, std::string("rec"));
    QCOMPARE(run->mode, std::string("local"));
    QCOMPARE(run->specJson, cap.info.specJson);
    QCOMPARE(run->modelKind, std::string("mlp"));
    QCOMPARE(run->stageCount, 3);
    QCOMPARE(run->totalSteps, cap.info.totalSteps);
    QCOMPARE(run->batchSize, cap.info.batchSize);
    QCOMPARE(run->torchVersion, cap.info.torchVersion);
    QCOMPARE(run->tags, (std::vector<std::string>{"e2e", "fake"}));
    QCOMPARE(run->notes, options.notes);
    QCOMPARE(run->steps.value_or(-1), summary.steps);
    QCOMPARE(run->samplesPerSec.value_or(-1), summary.samplesPerSec);
    QCOMPARE(run->wallSeconds.value_or(-1), summary.wallSeconds);
    QCOMPARE(run->testAccuracy.value_or(-1), summary.testAccuracy);
    QVERIFY(run->summaryJson.find("\"status\":\"completed\"") != std::string::npos);
    QVERIFY(!store.isLive(id));

    const auto stages = reader.stages(id);
    QCOMPARE(stages.size(), cap.info.stages.size());
    for (size_t k = 0; k < stages.size(); ++k) {
      QCOMPARE(stages[k].firstLayer, cap.info.stages[k].firstLayer);
      QCOMPARE(stages[k].lastLayer, cap.info.stages[k].lastLayer);
      QCOMPARE(stages[k].device, cap.info.stages[k].device);
      QCOMPARE(stages[k].auxHead, cap.info.stages[k].auxHead);
      QCOMPARE(stages[k].params, cap.info.stages[k].params);
      QCOMPARE(stages[k].finalLoss.value_or(-1), summary.stages[k].finalLoss);
      QCOMPARE(stages[k].gradCosine.value_or(-1), summary.stages[k].gradCosine);
    }
    QCOMPARE(reader.layers(id).size(), cap.info.layers.size());

    // Every metric point, per series, in order, bit for bit.
    const SeriesMap expected = bySeries(cap.points);
    QVERIFY(expected.size() > 10);
    for (const auto& [key, points] : expected) {
      const auto& [name, stage, layer] = key;
      const auto got = reader.loadSeries(id, {name, stage, layer});
      QCOMPARE(got.size(), points.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i].step != points[i].step || got[i].timeS != points[i].timeS ||
            got[i].value != points[i].value) {
          QFAIL(
              qPrintable(QString::fromStdString(name + " differs at point " + std::to_string(i))));
        }
      }
    }
    // Spans became step_seconds per stage; nothing else is stored.
    size_t spanPoints = 0;
    for (const auto& s : reader.listSeries(id)) {
      if (s.key.name == "step_seconds") {
        spanPoints += size_t(s.pointCount);
      } else {
        QVERIFY(expected.count({s.key.name, s.key.stage, s.key.layer}));
      }
    }
    QCOMPARE(spanPoints, cap.spans.size());
    const auto events = reader.events(id);
    QCOMPARE(events.size(), cap.events.size());
    QCOMPARE(events.front().kind, std::string("started"));
    QCOMPARE(events.back().kind, std::string("completed"));
  }

  void spansAreStoredAndWaitsAreNotStepSeconds() {
    storage::RunStore store(freshPath());
    recorder::RecorderOptions options;
    options.stageRanks = {0, 1};
    recorder::Recorder rec(store, options);
    engine::RunInfo info;
    info.name = "spans";
    info.specJson = engine::specToJson(spec());
    info.mode = engine::Mode::Pipeline;
    info.stages = {{0, 0, 1, "cpu", "", 1, 10, 0}, {1, 2, 3, "cpu", "classifier", 1, 10, 0}};
    rec.onStart(info);
    using K = engine::SpanKind;
    const std::vector<engine::StepSpan> spans = {
        {0, 0, 0.10, 0.20, K::Forward, 0},   {0, 0, 0.20, 0.25, K::Blocked, 0},
        {1, 0, 0.00, 0.21, K::Wait, 0},      {1, 0, 0.21, 0.30, K::Forward, 0},
        {1, 0, 0.30, 0.40, K::Backward, 0},  {1, 0, 0.40, 0.45, K::Weight, 0},
        {0, 0, 0.45, 0.50, K::Recompute, 0}, {0, 0, 0.50, 0.60, K::Aux, -1},
        {0, 1, 0.60, 0.70, K::Step, -1}};
    rec.onSpans(spans);
    engine::RunSummary summary;
    summary.status = engine::RunStatus::Completed;
    rec.onFinish(summary);
    QVERIFY2(rec.error().empty(), rec.error().c_str());
    storage::RunReader reader(store);
    const int64_t id = *rec.runId();
    const auto stored = reader.spans(id);
    QCOMPARE(stored.size(), spans.size());
    std::multiset<std::string> kinds;
    for (const auto& s : stored) kinds.insert(s.kind);
    QCOMPARE(kinds, (std::multiset<std::string>{"forward", "blocked", "wait", "forward", "backward",
                                                "weight", "recompute", "aux", "step"}));
    QCOMPARE(stored[0].stage, 0);
    QCOMPARE(stored[0].startS, 0.10);
    QCOMPARE(stored[0].micro, 0);
    // Compute spans only: stage 0 has 4 (forward, recompute, aux, step), stage 1 has 3.
    QCOMPARE(reader.loadSeries(id, {"step_seconds", 0, -1}).size(), size_t(4));
    QCOMPARE(reader.loadSeries(id, {"step_seconds", 1, -1}).size(), size_t(3));
    // Each stage's rank, for the trace's process tracks.
    QCOMPARE(reader.loadSeries(id, {"rank", 1, -1}).at(0).value, 1.0);
    QCOMPARE(reader.loadSeries(id, {"rank", 0, -1}).at(0).value, 0.0);
  }

  void validationSeriesAreStoredLikeTheOthers() {
    // A validation split: the fake engine's val_accuracy / val_loss, at its evaluations and at
    // one a caller forced (after 15 steps: step 14), reach the store point for point and the
    // summary JSON as it is.
    storage::RunStore store(freshPath());
    recorder::Recorder rec(store, {});
    Capture cap;
    engine::ExperimentSpec s = spec("val");
    s.dataset.validation = 0.1;
    engine::FakeScript script{60, 0.0002, -1, 0, 3};
    script.evalAtSteps = {15};
    const auto summary = runFake(rec, cap, script, s);
    QVERIFY(std::isfinite(summary.valAccuracy) && std::isfinite(summary.valLoss));
    const int64_t id = *rec.runId();
    storage::RunReader reader(store);
    for (const char* name : {engine::series::kValAccuracy, engine::series::kValLoss}) {
      std::vector<int64_t> steps;
      for (const auto& p : cap.points)
        if (p.name == name) steps.push_back(p.step);
      QCOMPARE(steps, (std::vector<int64_t>{14, 20, 40}));
      const auto got = reader.loadSeries(id, {name, -1, -1});
      QCOMPARE(got.size(), steps.size());
      for (size_t i = 0; i < got.size(); ++i) QCOMPARE(got[i].step, steps[i]);
    }
    const auto run = reader.run(id);
    QVERIFY(run->summaryJson.find("\"val_accuracy\":null") == std::string::npos);
    QVERIFY(run->summaryJson.find("\"val_accuracy\":") != std::string::npos);
    // Without a split the fake emits none, and the summary says null.
    Capture plain;
    recorder::Recorder rec2(store, {});
    const auto off = runFake(rec2, plain, script, spec("plain"));
    QVERIFY(std::isnan(off.valAccuracy));
    for (const auto& p : plain.points) QVERIFY(p.name != engine::series::kValAccuracy);
    QVERIFY(reader.run(*rec2.runId())->summaryJson.find("\"val_accuracy\":null") !=
            std::string::npos);
  }

  void failedRunKeepsItsError() {
    storage::RunStore store(freshPath());
    recorder::Recorder rec(store);
    Capture cap;
    const auto summary = runFake(rec, cap, engine::FakeScript{200, 0.0, 50, 1, 1});
    QCOMPARE(engine::toString(summary.status), std::string("failed"));
    storage::RunReader reader(store);
    const auto run = reader.run(*rec.runId());
    QCOMPARE(storage::toString(run->status), std::string("failed"));
    QCOMPARE(run->error, summary.error);
    QVERIFY(run->error.find("stage 1") != std::string::npos);
    QCOMPARE(run->failedStage.value_or(-1), 1);
    QCOMPARE(reader.events(*rec.runId()).back().kind, std::string("failed"));
  }

  void stoppedRunIsStopped() {
    storage::RunStore store(freshPath());
    recorder::Recorder rec(store);
    Capture cap;
    engine::ObserverFanout fanout({&cap, &rec});
    auto run = engine::createFakeRun(spec(), &fanout, engine::FakeScript{100000, 0.001, -1, 0, 1});
    run->start();
    QTest::qWait(200);
    run->requestStop();
    const auto summary = run->wait();
    QCOMPARE(engine::toString(summary.status), std::string("stopped"));
    storage::RunReader reader(store);
    QCOMPARE(storage::toString(reader.run(*rec.runId())->status), std::string("stopped"));
    QVERIFY(reader.run(*rec.runId())->steps.value_or(0) < 100000);
  }

  void resumedRunContinuesTheSameRecord() {
    const std::string path = freshPath();
    int64_t id = 0;
    size_t firstLoss = 0;
    {
      storage::RunStore store(path);
      recorder::Recorder rec(store);
      Capture cap;
      runFake(rec, cap, engine::FakeScript{80, 0.0, -1, 0, 1});
      id = *rec.runId();
      firstLoss = bySeries(cap.points)[{"loss", 0, -1}].size();
    }
    storage::RunStore store(path);
    recorder::RecorderOptions options;
    options.resumeRunId = id;
    recorder::Recorder rec(store, options);
    Capture cap;
    runFake(rec, cap, engine::FakeScript{50, 0.0, -1, 0, 1});
    QCOMPARE(*rec.runId(), id);
    storage::RunReader reader(store);
    QCOMPARE(reader.countRuns(), int64_t(1));
    QCOMPARE(storage::toString(reader.run(id)->status), std::string("completed"));
    QCOMPARE(reader.run(id)->steps.value_or(0), int64_t(50));
    QCOMPARE(reader.findSeries(id, {"loss", 0, -1})->pointCount, int64_t(firstLoss + 50));
  }

  void storeErrorsNeverReachTheEngine() {
    storage::RunStore store(freshPath());
    recorder::RecorderOptions options;
    options.resumeRunId = 4242;  // no such run
    recorder::Recorder rec(store, options);
    Capture cap;
    const auto summary = runFake(rec, cap, engine::FakeScript{30, 0.0, -1, 0, 1});
    QCOMPARE(engine::toString(summary.status), std::string("completed"));
    QVERIFY(!rec.runId());
    QVERIFY2(rec.error().find("4242") != std::string::npos, rec.error().c_str());
    QCOMPARE(storage::RunReader(store).countRuns(), int64_t(0));
  }

  // The disk fills up mid-run and space comes back: training never notices, the user is told
  // both times (onStoreNotice), and the store ends up with every point the engine reported.
  void aStoreUnwritableAtTheStartDelaysTheRecordButLosesNothing() {
    // The store cannot be written when the run starts (a full disk here; a lock held by another
    // process takes the same path, test_store_locked): the run trains on, its record is created
    // once the store can be written, and every point and event reported meanwhile is in it.
    storage::testing::FullDiskVfs::install();
    storage::StoreOptions storeOptions;
    storeOptions.writer.retryInterval = std::chrono::milliseconds(100);
    storage::RunStore store(freshPath(), storeOptions);
    storage::testing::FullDiskVfs::setFull(true);
    std::mutex mutex;
    std::vector<storage::WriterNotice> notices;
    recorder::RecorderOptions options;
    options.onStoreNotice = [&](const storage::WriterNotice& n) {
      std::lock_guard lock(mutex);
      notices.push_back(n);
    };
    recorder::Recorder rec(store, options);
    // Counts what the run's other observers get while the record waits (read from this thread).
    struct Count : engine::RunObserver {
      std::atomic<size_t> points{0};
      void onMetrics(const std::vector<engine::MetricPoint>& p) override { points += p.size(); }
    } count;
    engine::ObserverFanout fanout({&count, &rec});
    auto run = engine::createFakeRun(spec(), &fanout, engine::FakeScript{600, 0.002, -1, 0, 3});
    run->start();
    QTest::qWait(600);
    QVERIFY(!rec.runId().has_value());  // no record yet...
    QVERIFY(count.points.load() > 50);  // ...and the run trains on, its reports delivered
    storage::testing::FullDiskVfs::setFull(false);
    const auto summary = run->wait();
    QCOMPARE(engine::toString(summary.status), std::string("completed"));
    QVERIFY2(rec.error().empty(), rec.error().c_str());
    QVERIFY(rec.runId().has_value());
    const int64_t id = *rec.runId();
    storage::RunReader reader(store);
    QCOMPARE(toString(reader.run(id)->status), std::string("completed"));
    const auto loss = reader.loadSeries(id, {engine::series::kLoss, 2, -1});
    QCOMPARE(loss.size(), size_t(600));  // every step, the early ones included
    QCOMPARE(loss.front().step, int64_t(0));
    QVERIFY(!reader.events(id).empty());
    std::lock_guard lock(mutex);
    QVERIFY(!notices.empty());
    QCOMPARE(int(notices.front().kind), int(storage::WriterNotice::Kind::Problem));
  }

  void fullDiskMidRunDelaysButLosesNothing() {
    storage::testing::FullDiskVfs::install();
    storage::StoreOptions storeOptions;
    storeOptions.writer.retryInterval = std::chrono::milliseconds(100);
    storage::RunStore store(freshPath(), storeOptions);
    std::mutex mutex;
    std::vector<storage::WriterNotice> notices;
    recorder::RecorderOptions options;
    options.onStoreNotice = [&](const storage::WriterNotice& n) {
      std::lock_guard lock(mutex);
      notices.push_back(n);
    };
    auto noticeCount = [&] {
      std::lock_guard lock(mutex);
      return notices.size();
    };
    recorder::Recorder rec(store, options);
    Capture cap;
    engine::ObserverFanout fanout({&cap, &rec});
    auto run = engine::createFakeRun(spec(), &fanout, engine::FakeScript{1500, 0.002, -1, 0, 3});
    run->start();
    QTRY_VERIFY(rec.runId().has_value());
    QTest::qWait(300);
    storage::testing::FullDiskVfs::setFull(true);
    QTRY_VERIFY_WITH_TIMEOUT(noticeCount() >= 1, 5000);
    QTest::qWait(500);
    QVERIFY(!run->waitFor(std::chrono::milliseconds(0)));  // still training
    storage::testing::FullDiskVfs::setFull(false);
    const auto summary = run->wait();
    QCOMPARE(engine::toString(summary.status), std::string("completed"));
    QVERIFY2(rec.error().empty(), rec.error().c_str());  // made up for: not an error
    {
      std::lock_guard lock(mutex);
      QCOMPARE(notices.size(), size_t(2));
      QCOMPARE(int(notices[0].kind), int(storage::WriterNotice::Kind::Problem));
      QVERIFY2(notices[0].message.find("disk is full") != std::string::npos,
               notices[0].message.c_str());
      QCOMPARE(int(notices[1].kind), int(storage::WriterNotice::Kind::Recovered));
    }
    const int64_t id = *rec.runId();
    storage::RunReader reader(store);
    QCOMPARE(storage::toString(reader.run(id)->status), std::string("completed"));
    for (const auto& [key, points] : bySeries(cap.points)) {
      const auto& [name, stage, layer] = key;
      const auto got = reader.loadSeries(id, {name, stage, layer});
      QCOMPARE(got.size(), points.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i].step != points[i].step || got[i].value != points[i].value)
          QFAIL(
              qPrintable(QString::fromStdString(name + " differs at point " + std::to_string(i))));
      }
    }
    // The engine's events, plus the store's own note that writing was delayed.
    const auto events = reader.events(id);
    QCOMPARE(events.size(), cap.events.size() + 1);
    QCOMPARE(events.back().kind, std::string("completed"));
  }

  // Still full when the run ends: error() says the end is held and retried, not that the
  // recording failed; space returning before the store closes still lands it.
  void fullDiskAtTheEndIsReported() {
    storage::testing::FullDiskVfs::install();
    const std::string path = freshPath();
    int64_t id = 0;
    {
      storage::StoreOptions storeOptions;
      storeOptions.writer.retryInterval = std::chrono::milliseconds(100);
      storage::RunStore store(path, storeOptions);
      recorder::Recorder rec(store);
      Capture cap;
      engine::ObserverFanout fanout({&cap, &rec});
      auto run = engine::createFakeRun(spec(), &fanout, engine::FakeScript{400, 0.002, -1, 0, 3});
      run->start();
      QTRY_VERIFY(rec.runId().has_value());
      storage::testing::FullDiskVfs::setFull(true);
      const auto summary = run->wait();
      QCOMPARE(engine::toString(summary.status), std::string("completed"));
      id = *rec.runId();
      const std::string error = rec.error();
      QVERIFY2(error.find("recording the end of run") != std::string::npos, error.c_str());
      QVERIFY2(error.find("disk is full") != std::string::npos, error.c_str());
      QVERIFY2(error.find("retried") != std::string::npos, error.c_str());
      storage::testing::FullDiskVfs::setFull(false);
    }
    storage::RunStore store(path);
    QCOMPARE(storage::toString(storage::RunReader(store).run(id)->status),
             std::string("completed"));
  }

  void cleanup() { storage::testing::FullDiskVfs::setFull(false); }
};

QTEST_GUILESS_MAIN(TestRecorder)
#include "test_recorder.moc"
