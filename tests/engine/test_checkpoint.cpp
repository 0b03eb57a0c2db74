// Checkpoints: a run stopped and resumed trains exactly as an uninterrupted one.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "recording_observer.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"

using namespace stagewise::engine;
using namespace std::chrono_literals;

namespace {

ExperimentSpec spec(const std::string& dir, const std::vector<std::string>& extra = {}) {
  std::string json = R"({"dataset":{"kind":"synthetic","synthetic_train":300,"synthetic_test":100},
     "model":{"hidden":[32,32,32]},"partition":{"cuts":[1,2]},
     "train":{"batch_size":16,"max_steps":80,"seed":9,"queue_capacity":2},
     "eval":{"interval":0},"probe":{"interval":-1},
     "checkpoint":{"interval":30,"dir":")" +
                     dir + R"("}})";
  return parseSpec(applyOverrides(json, extra));
}

RunSummary train(const ExperimentSpec& s, RecordingObserver& obs, const RunOptions& options = {}) {
  auto run = createRun(s, &obs, options);
  run->start();
  return run->wait();
}

std::vector<double> concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void periodicCheckpointResumesExactly() {
    QTemporaryDir dir;
    RecordingObserver full;
    RunSummary s = train(spec(dir.path().toStdString()), full);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    int checkpoints = 0;
    for (auto& e : full.events) checkpoints += e.kind == EventKind::Checkpoint;
    QCOMPARE(checkpoints, 2);  // steps 30 and 60 (80 is the end)
    CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-30");
    QCOMPARE(info.step, int64_t{30});
    QCOMPARE(info.stages, 3);

    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    QCOMPARE(r.steps, int64_t{80});
    for (int k = 0; k < 3; ++k) {
      auto whole = full.series(series::kLoss, k);
      auto tail = resumed.series(series::kLoss, k);
      QCOMPARE(tail.size(), size_t{50});
      QCOMPARE(tail, std::vector<double>(whole.begin() + 30, whole.end()));
      QCOMPARE(r.stages[size_t(k)].paramChecksum, s.stages[size_t(k)].paramChecksum);
    }
    // the newest step-N is found from the checkpoint dir itself
    QCOMPARE(readCheckpointInfo(dir.path().toStdString()).step, int64_t{60});
  }

  void cumulativeCountersContinueAcrossResume() {
    // Issue 36 §1.2: bytes sent (and pipeline's gradient bytes, local's would-be backprop
    // bytes) continue from the checkpoint: no point after the resume drops below the count at
    // the checkpoint, and the resumed run's summary counts the whole run, as the uninterrupted
    // run's does.
    for (const std::string mode : {"local", "pipeline"}) {
      QTemporaryDir dir;
      RecordingObserver full;
      const ExperimentSpec s0 = spec(dir.path().toStdString(), {"mode=" + mode});
      RunSummary s = train(s0, full);
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-30");
      RecordingObserver resumed;
      RunOptions options;
      options.resumeFrom = info.path;
      RunSummary r = train(info.spec, resumed, options);
      QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
      for (int k = 0; k < 3; ++k) {
        const auto& whole = s.stages[size_t(k)];
        const auto& tail = r.stages[size_t(k)];
        QVERIFY(whole.bytesSent > 0 || k == 2);
        QCOMPARE(tail.bytesSent, whole.bytesSent);
        QCOMPARE(tail.gradBytesSent, whole.gradBytesSent);
        QCOMPARE(tail.backpropBytes, whole.backpropBytes);
        // What stage k had sent after its 30 steps: the uninterrupted run's count at step 29
        // or later bounds it from above, the resumed run's first point from below.
        std::lock_guard lock(resumed.mutex);
        for (const auto& p : resumed.points) {
          if (p.stage != k) continue;
          if (p.name != series::kBytesSent && p.name != series::kGradBytesSent &&
              p.name != series::kBackpropBytes)
            continue;
          const double perStep = p.name == series::kBytesSent ? double(whole.bytesSent) / 80
                                 : p.name == series::kGradBytesSent
                                     ? double(whole.gradBytesSent) / 80
                                     : double(whole.backpropBytes) / 80;
          // At step p.step (0-based) the stage has finished p.step + 1 steps.
          QVERIFY2(p.value >= perStep * (p.step + 1) * 0.9,
                   qPrintable(QStringLiteral("%1 %2 stage %3 step %4: %5")
                                  .arg(QString::fromStdString(mode), QString::fromStdString(p.name))
                                  .arg(k)
                                  .arg(p.step)
                                  .arg(p.value)));
        }
      }
    }
  }

  void peaksContinueAcrossResume() {
    // Issue 36's walkthrough: the Memory panel's "peak" fell at a resume. A peak is the whole
    // run's: the checkpoint records each stage's, and no point or summary of the resumed run
    // reports less.
    QTemporaryDir dir;
    RecordingObserver full;
    RunSummary s = train(spec(dir.path().toStdString()), full);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-30");
    std::ifstream in(info.path + "/state.json");
    const nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
    QVERIFY(state.is_object() && state["counters"].size() == 3);
    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    for (int k = 0; k < 3; ++k) {
      const auto& c = state["counters"][size_t(k)];
      QVERIFY2(c.contains("peak_memory_bytes") && c.contains("peak_activation_bytes"),
               qPrintable(QString::fromStdString(c.dump())));
      const int64_t memory = c["peak_memory_bytes"].get<int64_t>();
      const int64_t activations = c["peak_activation_bytes"].get<int64_t>();
      QVERIFY(memory > 0 && activations > 0);
      QVERIFY(r.stages[size_t(k)].peakMemoryBytes >= memory);
      QVERIFY(r.stages[size_t(k)].peakActivationBytes >= activations);
      std::lock_guard lock(resumed.mutex);
      int seen = 0;
      for (const auto& p : resumed.points) {
        if (p.stage != k) continue;
        if (p.name == series::kMemoryBytes) {
          QVERIFY2(p.value >= double(memory), qPrintable(QStringLiteral("stage %1 step %2: %3 < %4")
                                                             .arg(k)
                                                             .arg(p.step)
                                                             .arg(p.value)
                                                             .arg(memory)));
          ++seen;
        }
        if (p.name == series::kActivationBytes) QVERIFY(p.value >= double(activations));
      }
      QVERIFY(seen > 0);
    }
  }

  void throughputAndStageFiguresContinueAcrossResume() {
    // Issue 36 §1.2: a run stopped at 60 and resumed to 160 reports the whole run's samples/s
    // (samples over training time) and per-stage steps, not the resumed part's. The first part
    // is slow (stage 0 sleeps 10 ms a step), the resumed part fast: the resumed part's own
    // rate is several times the whole run's.
    for (const std::string mode : {"local", "pipeline"}) {
      QTemporaryDir dir;
      RecordingObserver first;
      ExperimentSpec s0 = spec(dir.path().toStdString(),
                               {"mode=" + mode, "train.max_steps=100", "checkpoint.interval=60"});
      s0.stages.resize(3);
      s0.stages[0].delayMs = 10;
      RunSummary a = train(s0, first);
      QVERIFY2(a.status == RunStatus::Completed, a.error.c_str());
      const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-60");
      {
        std::ifstream in(info.path + "/state.json");
        const nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
        QVERIFY(state.value("measured_samples", int64_t{0}) > 0);
        QVERIFY(state.value("measured_s", 0.0) > 0);
        for (const auto& c : state["counters"])
          QCOMPARE(c.value("steps", int64_t{-1}), int64_t{60});
      }
      ExperimentSpec s1 = info.spec;
      s1.stages.clear();  // the resumed part runs at full speed
      s1.train.maxSteps = 160;
      RecordingObserver resumed;
      RunOptions options;
      options.resumeFrom = info.path;
      RunSummary r = train(s1, resumed, options);
      QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
      QCOMPARE(r.steps, int64_t{160});
      for (const auto& st : r.stages) QCOMPARE(st.steps, int64_t{160});
      const auto label = [&](double value, double reference) {
        return qPrintable(QStringLiteral("%1: samples/s %2 against samples/wall %3")
                              .arg(QString::fromStdString(mode))
                              .arg(value)
                              .arg(reference));
      };
      const double perWall = double(r.samples) / r.wallSeconds;
      QVERIFY2(std::abs(r.samplesPerSec / perWall - 1) < 0.4, label(r.samplesPerSec, perWall));
      // The live figure continues too: no jump to the resumed part's rate at the resume.
      std::lock_guard lock(resumed.mutex);
      int seen = 0;
      for (const auto& p : resumed.points) {
        if (p.name != series::kSamplesPerSec || p.timeS <= 0) continue;
        const double sofar = double(p.step) * 16 / p.timeS;
        QVERIFY2(p.value > 0.5 * sofar && p.value < 1.5 * sofar, label(p.value, sofar));
        ++seen;
      }
      QVERIFY(seen > 0);
    }
  }

  void oldCheckpointSaysFiguresCoverTheResumedPart() {
    // A checkpoint written before the whole-run totals: the resumed run says its figures
    // cover the resumed part, and invents nothing.
    QTemporaryDir dir;
    RecordingObserver first;
    RunSummary a = train(spec(dir.path().toStdString()), first);
    QVERIFY2(a.status == RunStatus::Completed, a.error.c_str());
    const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-30");
    nlohmann::json state;
    {
      std::ifstream in(info.path + "/state.json");
      state = nlohmann::json::parse(in);
    }
    state.erase("measured_samples");
    state.erase("measured_s");
    for (auto& c : state["counters"]) c.erase("steps");
    {
      std::ofstream out(info.path + "/state.json");
      out << state.dump(2);
    }
    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    for (const auto& st : r.stages) QCOMPARE(st.steps, int64_t{50});
    bool said = false;
    for (const auto& e : resumed.events)
      said = said || (e.kind == EventKind::Warning &&
                      e.message.find("cover the resumed part only") != std::string::npos);
    QVERIFY(said);
  }

  void resumesWithAValidationSplit() {
    // The split depends on the dataset alone: a resumed run trains on the same samples (the
    // same losses) and measures the same validation samples, with nothing saved for it.
    QTemporaryDir dir;
    RecordingObserver full;
    const ExperimentSpec s0 = spec(dir.path().toStdString(), {"dataset.validation=0.2"});
    RunSummary s = train(s0, full);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QVERIFY(std::isfinite(s.valAccuracy));
    const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-30");
    QCOMPARE(info.spec.dataset.validation, 0.2);
    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    for (int k = 0; k < 3; ++k) {
      auto whole = full.series(series::kLoss, k);
      QCOMPARE(resumed.series(series::kLoss, k),
               std::vector<double>(whole.begin() + 30, whole.end()));
    }
    QCOMPARE(r.valAccuracy, s.valAccuracy);
    QCOMPARE(r.valLoss, s.valLoss);
    QCOMPARE(r.testAccuracy, s.testAccuracy);
  }

  void aFailedCheckpointIsAWarningAndLeavesNoPartialFolder() {
    // The checkpoint at step 30 fails after its stage files are written (as a full disk would):
    // a warning says so, training goes on to the end, step-60 is written, and no step-30 or
    // step-30.partial folder is left to look like a checkpoint.
    QTemporaryDir dir;
    RecordingObserver obs;
    RunSummary s = train(spec(dir.path().toStdString(), {"debug.fail_checkpoint=30"}), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{80});
    bool warned = false;
    int checkpoints = 0;
    for (auto& e : obs.events) {
      warned |= e.kind == EventKind::Warning &&
                e.message.find("checkpoint at step 30 failed") != std::string::npos;
      checkpoints += e.kind == EventKind::Checkpoint;
    }
    QVERIFY(warned);
    QCOMPARE(checkpoints, 1);
    QVERIFY(!QDir(dir.filePath("step-30")).exists());
    QVERIFY(!QDir(dir.filePath("step-30.partial")).exists());
    QVERIFY(QDir(dir.filePath("step-60")).exists());
    QCOMPARE(readCheckpointInfo(dir.path().toStdString()).step, int64_t{60});
    // The hook is in the canonical JSON only when set.
    QVERIFY(specToJson(spec(dir.path().toStdString())).find("fail_checkpoint") ==
            std::string::npos);
    QCOMPARE(parseSpec(specToJson(spec(dir.path().toStdString(), {"debug.fail_checkpoint=30"})))
                 .debug.failCheckpoint,
             int64_t{30});
  }

  void stopDrainsAndCheckpoints() {
    QTemporaryDir ref, dir;
    RecordingObserver full;
    train(spec(ref.path().toStdString(), {"checkpoint.interval=0"}), full);

    RecordingObserver first;
    auto run = createRun(spec(dir.path().toStdString(),
                              {"checkpoint.interval=0", "stages=[{},{},{\"delay_ms\":5}]"}),
                         &first);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step >= 10, 20000);
    run->requestStop();
    QVERIFY(run->waitFor(6s));
    RunSummary stopped = run->wait();
    QVERIFY(stopped.status == RunStatus::Stopped);
    QVERIFY(stopped.steps < 80);
    CheckpointInfo info = readCheckpointInfo(dir.path().toStdString());
    QCOMPARE(info.step, stopped.steps);

    RecordingObserver second;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary done = train(info.spec, second, options);
    QVERIFY(done.status == RunStatus::Completed);
    for (int k = 0; k < 3; ++k)
      QCOMPARE(concat(first.series(series::kLoss, k), second.series(series::kLoss, k)),
               full.series(series::kLoss, k));
  }

  void badCheckpointsAreRefused() {
    QTemporaryDir dir;
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, readCheckpointInfo(dir.path().toStdString()));
    RecordingObserver obs;
    train(spec(dir.path().toStdString(), {"train.max_steps=40"}), obs);
    const std::string step30 = dir.path().toStdString() + "/step-30";
    RunOptions options;
    options.resumeFrom = step30;
    // Another partition of the same model resumes the checkpoint's own (issue 35: a checkpoint
    // taken after a live re-partition holds its cuts, and resuming rebuilds them).
    {
      RecordingObserver resumed;
      const RunSummary s =
          train(spec(dir.path().toStdString(), {"partition.cuts=[1]", "train.max_steps=40"}),
                resumed, options);
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      QCOMPARE(s.stages.size(), size_t{3});
    }
    // Another model cannot take this checkpoint.
    try {
      createRun(spec(dir.path().toStdString(), {"model.hidden=[16,16,16]"}), nullptr, options);
      QFAIL("a checkpoint of another model was loaded");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find("another shape") != std::string::npos, e.what());
    }
    QFile::remove(QString::fromStdString(step30 + "/stage-1.pt"));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, readCheckpointInfo(step30));
  }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
