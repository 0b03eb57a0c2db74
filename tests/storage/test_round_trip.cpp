// Every field written through the writer reads back unchanged.

#include <unistd.h>

#include <QTest>
#include <cmath>
#include <limits>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

class TestRoundTrip : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() { return m_dir.filePath(QString("r%1.db").arg(++m_count)).toStdString(); }

 private Q_SLOTS:
  void runFieldsRoundTrip() {
    RunStore store(freshPath());
    NewRun in = sampleRun("naïve \"quoted\" run, with comma");
    in.mode = "backprop";
    in.stages.push_back({2, 9, 9, "cuda:0", "mlp", 3, 77, 5, {}, {}, {}, {}, {}});
    in.stages.push_back({3, 10, 10, "cpu", "linear", 1, 1, 1, {}, {}, {}, {}, {}});
    in.layers.push_back({2, "conv1", "Conv 3x3", {16, 28, 28}, 160, 225792, 50176});
    in.tags = {"zeta", "alpha"};
    in.notes = "line one\nline two — ünïcode";
    const TimestampMs before = nowMs();
    const int64_t id = store.writer().createRun(in);
    QVERIFY(id > 0);

    RunReader reader(store);
    const auto r = reader.run(id);
    QVERIFY(r);
    QCOMPARE(r->id, id);
    QCOMPARE(r->name, in.name);
    QCOMPARE(toString(r->status), toString(RunStatus::Running));
    QCOMPARE(r->mode, std::string("backprop"));
    QCOMPARE(r->specJson, in.specJson);
    QVERIFY(r->summaryJson.empty());
    QCOMPARE(r->modelKind, std::string("mlp"));
    QCOMPARE(r->stageCount, 4);
    QCOMPARE(r->devices, (std::vector<std::string>{"cpu", "cuda:0"}));
    QCOMPARE(r->totalSteps, int64_t(1000));
    QCOMPARE(r->batchSize, 32);
    QCOMPARE(r->blas, std::string("openblas"));
    QCOMPARE(r->torchVersion, std::string("2.1.0"));
    QCOMPARE(r->tags, (std::vector<std::string>{"alpha", "zeta"}));
    QCOMPARE(r->notes, in.notes);
    QVERIFY(r->createdAtMs >= before && r->createdAtMs <= nowMs());
    QVERIFY(!r->finishedAtMs);
    QCOMPARE(r->writer.pid, int64_t(getpid()));
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    QCOMPARE(r->writer.host, std::string(host));
    QVERIFY(r->writer.startedAtMs > 0 && r->writer.heartbeatAtMs >= r->createdAtMs);
    QVERIFY(!r->steps && !r->testAccuracy && !r->failedStage);

    const auto stages = reader.stages(id);
    QCOMPARE(stages.size(), in.stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
      QCOMPARE(stages[i].index, in.stages[i].index);
      QCOMPARE(stages[i].firstLayer, in.stages[i].firstLayer);
      QCOMPARE(stages[i].lastLayer, in.stages[i].lastLayer);
      QCOMPARE(stages[i].device, in.stages[i].device);
      QCOMPARE(stages[i].auxHead, in.stages[i].auxHead);
      QCOMPARE(stages[i].threads, in.stages[i].threads);
      QCOMPARE(stages[i].params, in.stages[i].params);
      QCOMPARE(stages[i].auxParams, in.stages[i].auxParams);
      QVERIFY(!stages[i].finalLoss);
    }
    const auto layers = reader.layers(id);
    QCOMPARE(layers.size(), in.layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
      QCOMPARE(layers[i].index, in.layers[i].index);
      QCOMPARE(layers[i].name, in.layers[i].name);
      QCOMPARE(layers[i].description, in.layers[i].description);
      QCOMPARE(layers[i].outShape, in.layers[i].outShape);
      QCOMPARE(layers[i].params, in.layers[i].params);
      QCOMPARE(layers[i].flops, in.layers[i].flops);
      QCOMPARE(layers[i].activationBytes, in.layers[i].activationBytes);
    }
  }

  void finishFieldsRoundTrip() {
    RunStore store(freshPath());
    const int64_t id = store.writer().createRun(sampleRun());
    RunFinish f;
    f.status = RunStatus::Failed;
    f.summaryJson = R"({"status":"failed","steps":123})";
    f.steps = 123;
    f.testAccuracy = 0.25;
    f.testLoss = 2.5;
    f.samplesPerSec = 4096.5;
    f.wallSeconds = 12.75;
    f.cpuUtilization = 0.5;
    f.pipelineEfficiency = 0.125;
    f.error = "stage 1 (fc5): loss is NaN";
    f.failedStage = 1;
    StageRecord s0;
    s0.index = 0;
    s0.steps = 130;
    s0.finalLoss = 0.75;
    s0.finalAccuracy = 0.5;
    s0.computeFraction = 0.875;
    s0.gradCosine = 0.25;
    StageRecord s1;
    s1.index = 1;
    s1.steps = 123;
    f.stages = {s0, s1};
    store.writer().finishRun(id, f);
    store.writer().flush();

    RunReader reader(store);
    const auto r = reader.run(id);
    QCOMPARE(toString(r->status), toString(RunStatus::Failed));
    QCOMPARE(r->summaryJson, f.summaryJson);
    QCOMPARE(r->steps, f.steps);
    QCOMPARE(r->testAccuracy, f.testAccuracy);
    QCOMPARE(r->testLoss, f.testLoss);
    QCOMPARE(r->samplesPerSec, f.samplesPerSec);
    QCOMPARE(r->wallSeconds, f.wallSeconds);
    QCOMPARE(r->cpuUtilization, f.cpuUtilization);
    QCOMPARE(r->pipelineEfficiency, f.pipelineEfficiency);
    QCOMPARE(r->error, f.error);
    QCOMPARE(r->failedStage, f.failedStage);
    QVERIFY(r->finishedAtMs && *r->finishedAtMs >= r->createdAtMs);
    const auto stages = reader.stages(id);
    QCOMPARE(stages[0].steps, s0.steps);
    QCOMPARE(stages[0].finalLoss, s0.finalLoss);
    QCOMPARE(stages[0].finalAccuracy, s0.finalAccuracy);
    QCOMPARE(stages[0].computeFraction, s0.computeFraction);
    QCOMPARE(stages[0].gradCosine, s0.gradCosine);
    QCOMPARE(stages[1].steps, s1.steps);
    QVERIFY(!stages[1].finalLoss);
    QVERIFY(!store.isLive(id));
  }

  void everyFinalStatus() {
    RunStore store(freshPath());
    RunReader reader(store);
    for (RunStatus status :
         {RunStatus::Completed, RunStatus::Stopped, RunStatus::Failed, RunStatus::Interrupted}) {
      const int64_t id = store.writer().createRun(sampleRun(toString(status)));
      QVERIFY(store.isLive(id));
      RunFinish f;
      f.status = status;
      store.writer().finishRun(id, f);
      store.writer().flush();
      QCOMPARE(toString(reader.run(id)->status), toString(status));
      QVERIFY(!store.isLive(id));
    }
    RunFinish stillRunning;
    stillRunning.status = RunStatus::Running;
    QVERIFY_THROWS_EXCEPTION(StoreError, store.writer().finishRun(1, stillRunning));
  }

  void pointsRoundTripExactly() {
    RunStore store(freshPath());
    const int64_t id = store.writer().createRun(sampleRun());
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> values = {
        0.0,  -0.0, 1e-308,    5e-324,      1.7976931348623157e308,
        -inf, inf,  0.1 + 0.2, -123456.789, std::numeric_limits<double>::quiet_NaN(),
        42.0};
    std::vector<PointInput> in;
    for (size_t i = 0; i < values.size(); ++i) {
      in.push_back({"loss", 1, -1, int64_t(i) * 7 + 3, 0.001 * double(i) + 1e-9, values[i]});
    }
    in.push_back({"grad_cosine", 0, 2, 100, 1.5, 0.5});
    in.push_back({"samples_per_sec", -1, -1, 1LL << 40, 99.5, 1000.0});
    store.writer().appendPoints(id, in);
    store.writer().flush();

    RunReader reader(store);
    const auto loss = reader.loadSeries(id, {"loss", 1, -1});
    QCOMPARE(loss.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      QCOMPARE(loss[i].step, in[i].step);
      QCOMPARE(loss[i].timeS, in[i].timeS);
      if (std::isnan(values[i])) {
        QVERIFY(std::isnan(loss[i].value));
      } else {
        // Exact, not QCOMPARE's fuzzy compare. (SQLite keeps -0.0 as 0.0, which compares equal.)
        QVERIFY2(loss[i].value == values[i], qPrintable(QString::number(values[i], 'g', 17)));
      }
    }
    const auto series = reader.listSeries(id);
    QCOMPARE(series.size(), size_t(3));
    QCOMPARE(series[0].key, (SeriesKey{"grad_cosine", 0, 2}));
    QCOMPARE(series[1].key, (SeriesKey{"loss", 1, -1}));
    QCOMPARE(series[1].pointCount, int64_t(values.size()));
    QCOMPARE(series[1].firstStep, int64_t(3));
    QCOMPARE(series[1].lastStep, int64_t(3 + 7 * (values.size() - 1)));
    QCOMPARE(series[1].firstTimeS, in.front().timeS);
    QCOMPARE(series[2].key, (SeriesKey{"samples_per_sec", -1, -1}));
    QCOMPARE(reader.loadSeries(id, {"samples_per_sec", -1, -1}).front().step, int64_t(1LL << 40));
    QVERIFY(reader.loadSeries(id, {"loss", 0, -1}).empty());  // other stage: no such series
  }

  void eventsAndCheckpointsRoundTrip() {
    RunStore store(freshPath());
    const int64_t id = store.writer().createRun(sampleRun());
    store.writer().appendEvent(id, {"started", 0.0, -1, ""});
    store.writer().appendEvent(id, {"warning", 1.5, 2, "stage 2 is slow: \"fc4\" waits 80%"});
    store.writer().addCheckpoint(id, "/tmp/ckpt/step-100.pt", 100);
    store.writer().addCheckpoint(id, "/tmp/ckpt/step-200.pt", 200);
    store.writer().flush();
    RunReader reader(store);
    const auto events = reader.events(id);
    QCOMPARE(events.size(), size_t(2));
    QCOMPARE(events[1].kind, std::string("warning"));
    QCOMPARE(events[1].timeS, 1.5);
    QCOMPARE(events[1].stage, 2);
    QCOMPARE(events[1].message, std::string("stage 2 is slow: \"fc4\" waits 80%"));
    QVERIFY(events[1].wallMs > 0);
    const auto ckpts = reader.checkpoints(id);
    QCOMPARE(ckpts.size(), size_t(2));
    QCOMPARE(ckpts[0].path, std::string("/tmp/ckpt/step-100.pt"));
    QCOMPARE(ckpts[1].step, int64_t(200));
    QVERIFY(ckpts[1].createdAtMs > 0);
  }

  void editsRoundTrip() {
    RunStore store(freshPath());
    const int64_t id = store.writer().createRun(sampleRun());
    store.renameRun(id, "renamed");
    store.setNotes(id, "a note");
    store.addTags(id, {" fast ", "", "cpu"});
    store.addTags(id, {"cpu"});
    RunReader reader(store);
    QCOMPARE(reader.run(id)->name, std::string("renamed"));
    QCOMPARE(reader.run(id)->notes, std::string("a note"));
    QCOMPARE(reader.run(id)->tags, (std::vector<std::string>{"cpu", "fast"}));
    store.removeTags(id, {"cpu"});
    QCOMPARE(reader.run(id)->tags, (std::vector<std::string>{"fast"}));
    store.setTags(id, {"x", "y"});
    QCOMPARE(reader.run(id)->tags, (std::vector<std::string>{"x", "y"}));
    QCOMPARE(reader.allTags(), (std::vector<std::string>{"x", "y"}));
    QVERIFY_THROWS_EXCEPTION(StoreError, store.setNotes(id + 100, "nobody"));
    QVERIFY_THROWS_EXCEPTION(StoreError, store.addTags(id + 100, {"t"}));
  }
};

QTEST_GUILESS_MAIN(TestRoundTrip)
#include "test_round_trip.moc"
