// The recorder with the fake engine, end to end: what the engine reported is what the store
// holds, for completed, failed, stopped and resumed runs.

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>
#include <mutex>

#include "stagewise/engine/fake_engine.h"
#include "stagewise/engine/observer_fanout.h"
#include "stagewise/recorder/recorder.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

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
};

QTEST_GUILESS_MAIN(TestRecorder)
#include "test_recorder.moc"
