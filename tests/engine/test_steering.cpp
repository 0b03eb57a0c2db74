// Steering a running run (issue 35): a live re-partition moves the layers with their weights and
// optimizer state, trains on exactly as a run resumed from a checkpoint cut the new way, and the
// same history of changes replays to the same losses; refused requests say why and the run goes
// on.
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <map>
#include <tuple>

#include "recording_observer.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/fake_engine.h"

// LibTorch after Qt: it uses "slots" and "signals" as names (QT_NO_KEYWORDS).
#include <torch/torch.h>

using namespace stagewise::engine;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kAt = 20;  // the step of the re-partition

// Five layers (four hidden and the classifier) in three stages: [0] [1 2] [3 4].
ExperimentSpec spec(const std::string& checkpointDir = {},
                    const std::vector<std::string>& extra = {}) {
  std::string json = R"({"dataset":{"kind":"synthetic","synthetic_train":300,"synthetic_test":100},
     "model":{"hidden":[24,24,24,24]},"partition":{"cuts":[1,3]},
     "train":{"batch_size":16,"max_steps":60,"seed":9,"queue_capacity":2},
     "eval":{"interval":0},"probe":{"interval":-1})";
  if (!checkpointDir.empty())
    json += R"(,"checkpoint":{"interval":20,"dir":")" + checkpointDir + R"("})";
  json += "}";
  return parseSpec(applyOverrides(json, extra));
}

RunChange change(int64_t step, const std::string& key, const std::string& value) {
  RunChange c;
  c.step = step, c.key = key, c.value = value;
  return c;
}

RunSummary train(const ExperimentSpec& s, RecordingObserver& obs, const RunOptions& options = {},
                 std::vector<RunChange>* applied = nullptr) {
  auto run = createRun(s, &obs, options);
  run->start();
  RunSummary summary = run->wait();
  if (applied) *applied = run->changes();
  return summary;
}

/// Stage k's losses by step, from step `from` on.
std::map<int64_t, double> lossesFrom(RecordingObserver& obs, int k, int64_t from) {
  std::lock_guard lock(obs.mutex);
  std::map<int64_t, double> out;
  for (const auto& p : obs.points)
    if (p.name == series::kLoss && p.stage == k && p.step >= from) out[p.step] = p.value;
  return out;
}

bool hasEvent(RecordingObserver& obs, const std::string& text) {
  std::lock_guard lock(obs.mutex);
  for (const auto& e : obs.events)
    if (e.message.find(text) != std::string::npos) return true;
  return false;
}

/// One stage of a checkpoint: its body tensors (parameters, in layer order) and, per body and
/// aux parameter, Adam's state (step, exp_avg, exp_avg_sq), read through torch::optim::Adam's
/// own loading.
struct StageFile {
  std::vector<torch::Tensor> body, aux;
  std::vector<int64_t> steps;
  std::vector<torch::Tensor> expAvg, expAvgSq;  ///< undefined: no state yet
};

StageFile readStage(const std::string& folder, int k) {
  StageFile f;
  torch::serialize::InputArchive archive;
  archive.load_from(folder + "/stage-" + std::to_string(k) + ".pt");
  for (int i = 0;; ++i) {
    torch::Tensor t;
    if (!archive.try_read("body." + std::to_string(i), t)) break;
    f.body.push_back(t);
  }
  for (int i = 0;; ++i) {
    torch::Tensor t;
    if (!archive.try_read("aux." + std::to_string(i), t)) break;
    f.aux.push_back(t);
  }
  std::vector<torch::Tensor> params;
  for (const auto& t : f.body) params.push_back(torch::zeros_like(t).requires_grad_(true));
  for (const auto& t : f.aux) params.push_back(torch::zeros_like(t).requires_grad_(true));
  torch::optim::Adam adam(params, torch::optim::AdamOptions(1e-3));
  torch::serialize::InputArchive optimizer;
  archive.read("optimizer", optimizer);
  adam.load(optimizer);
  for (const auto& p : params) {
    auto found = adam.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
    if (found == adam.state().end()) {
      f.steps.push_back(0), f.expAvg.emplace_back(), f.expAvgSq.emplace_back();
      continue;
    }
    auto& s = static_cast<torch::optim::AdamParamState&>(*found->second);
    f.steps.push_back(s.step()), f.expAvg.push_back(s.exp_avg()),
        f.expAvgSq.push_back(s.exp_avg_sq());
  }
  return f;
}

/// Every layer's tensors with their Adam state, in layer order, over the checkpoint's stages.
struct LayerTensor {
  torch::Tensor value, expAvg, expAvgSq;
  int64_t step = 0;
};
std::vector<LayerTensor> bodyInLayerOrder(const std::string& folder, int stages) {
  std::vector<LayerTensor> out;
  for (int k = 0; k < stages; ++k) {
    StageFile f = readStage(folder, k);
    for (size_t i = 0; i < f.body.size(); ++i)
      out.push_back({f.body[i], f.expAvg[i], f.expAvgSq[i], f.steps[i]});
  }
  return out;
}

}  // namespace

class TestSteering : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parsesChanges() {
    RunChange c = parseRunChange("500:partition.cuts=[4, 6]");
    QCOMPARE(c.step, int64_t{500});
    QCOMPARE(QString::fromStdString(c.key), QStringLiteral("partition.cuts"));
    QCOMPARE(QString::fromStdString(c.value), QStringLiteral("[4,6]"));
    c = parseRunChange("20:stages.1.lr_scale=0.5");
    QCOMPARE(QString::fromStdString(c.value), QStringLiteral("0.5"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseRunChange("20:stages.1.threads=0"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseRunChange("20:stages.1.device=cuda"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseRunChange("partition.cuts=[4]"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseRunChange("5:partition.cuts=4"));
    // The events' text reads back as the change (what --replay does with a stored run).
    auto e = changeFromEvent(
        "repartition at step 20: partition.cuts=[2,3] (was [1,3]); pause 0.012000 s (drain ...");
    QVERIFY(e.has_value());
    QCOMPARE(e->step, int64_t{20});
    QCOMPARE(QString::fromStdString(e->value), QStringLiteral("[2,3]"));
    QCOMPARE(e->pauseS, 0.012);
    QVERIFY(!changeFromEvent("resumed from x at step 3").has_value());
  }

  // Moving the cuts at step 20 keeps every layer's tensors and Adam state (moments and step
  // count), layer by layer, against the same run checkpointed at step 20 without the move; the
  // boundary that stayed keeps its head and its state, the new one starts fresh. The checkpoint
  // after the change holds the new cuts.
  void movingACutKeepsWeightsAndOptimizerState() {
    QTemporaryDir moved, still;
    RecordingObserver a, b;
    RunOptions options;
    options.changes = {change(kAt, "partition.cuts", "[2,3]")};
    std::vector<RunChange> applied;
    RunSummary sa = train(spec(moved.path().toStdString()), a, options, &applied);
    QVERIFY2(sa.status == RunStatus::Completed, sa.error.c_str());
    RunSummary sb = train(spec(still.path().toStdString()), b);
    QVERIFY2(sb.status == RunStatus::Completed, sb.error.c_str());

    QCOMPARE(applied.size(), size_t{1});
    QCOMPARE(applied[0].step, kAt);
    QVERIFY(applied[0].pauseS > 0);
    QVERIFY(hasEvent(a, "repartition at step 20: partition.cuts=[2,3] (was [1,3])"));
    QVERIFY(hasEvent(a, "new aux heads at cuts [2], kept at cuts [3]"));
    QVERIFY(hasEvent(a, "3 stage(s): S1: layers 1-2, S2: layers 3-3, S3: layers 4-5"));
    // The summary describes the partition at the end.
    QCOMPARE(sa.stages.size(), size_t{3});
    QCOMPARE(sa.stages[0].lastLayer, 1);
    QCOMPARE(sa.stages[1].firstLayer, 2);
    QCOMPARE(sa.stages[1].lastLayer, 2);

    const std::string at = "/step-" + std::to_string(kAt);
    const CheckpointInfo info = readCheckpointInfo(moved.path().toStdString() + at);
    QCOMPARE(info.step, kAt);
    QCOMPARE(info.stages, 3);
    QCOMPARE(info.spec.partition.cuts, (std::vector<int>{2, 3}));

    const auto after = bodyInLayerOrder(moved.path().toStdString() + at, 3);
    const auto before = bodyInLayerOrder(still.path().toStdString() + at, 3);
    QCOMPARE(after.size(), size_t{10});  // five layers, a weight and a bias each
    QCOMPARE(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      QVERIFY2(torch::equal(after[i].value, before[i].value), qPrintable(QString::number(i)));
      QCOMPARE(after[i].step, kAt);
      QCOMPARE(after[i].step, before[i].step);
      QVERIFY(after[i].expAvg.defined() && before[i].expAvg.defined());
      QVERIFY2(torch::equal(after[i].expAvg, before[i].expAvg), qPrintable(QString::number(i)));
      QVERIFY2(torch::equal(after[i].expAvgSq, before[i].expAvgSq), qPrintable(QString::number(i)));
    }
    // The head at cut 3 (after layer 2) was stage 1's and is stage 1's still, with its state;
    // the head at cut 2 is new: no optimizer state yet at step 20.
    const StageFile kept = readStage(still.path().toStdString() + at, 1);
    const StageFile keptAfter = readStage(moved.path().toStdString() + at, 1);
    QCOMPARE(keptAfter.aux.size(), kept.aux.size());
    const size_t nb = kept.body.size(), nba = keptAfter.body.size();
    for (size_t i = 0; i < kept.aux.size(); ++i) {
      QVERIFY(torch::equal(keptAfter.aux[i], kept.aux[i]));
      QCOMPARE(keptAfter.steps[nba + i], kept.steps[nb + i]);
      QVERIFY(torch::equal(keptAfter.expAvg[nba + i], kept.expAvg[nb + i]));
    }
    const StageFile fresh = readStage(moved.path().toStdString() + at, 0);
    QVERIFY(!fresh.aux.empty());
    for (size_t i = 0; i < fresh.aux.size(); ++i) QCOMPARE(fresh.steps[fresh.body.size() + i], int64_t{0});

    // From step 20 on, the losses are those of a run resumed from the unmoved checkpoint at
    // step 20 and cut the new way there, bit for bit; and of a run resumed from the moved
    // checkpoint with the original spec (the checkpoint's cuts are rebuilt).
    RecordingObserver c, d;
    RunOptions resumeAndCut;
    resumeAndCut.resumeFrom = still.path().toStdString() + at;
    resumeAndCut.changes = options.changes;
    RunSummary sc = train(spec(), c, resumeAndCut);
    QVERIFY2(sc.status == RunStatus::Completed, sc.error.c_str());
    RunOptions resumeMoved;
    resumeMoved.resumeFrom = moved.path().toStdString() + at;
    RunSummary sd = train(spec(), d, resumeMoved);
    QVERIFY2(sd.status == RunStatus::Completed, sd.error.c_str());
    for (int k = 0; k < 3; ++k) {
      const auto live = lossesFrom(a, k, kAt);
      QCOMPARE(live.size(), size_t{40});
      QCOMPARE(lossesFrom(c, k, kAt), live);
      QCOMPARE(lossesFrom(d, k, kAt), live);
    }
    // Before the change, the moved run is the unmoved one.
    for (int k = 0; k < 3; ++k) {
      auto x = lossesFrom(a, k, 0), y = lossesFrom(b, k, 0);
      for (int64_t s = 0; s < kAt; ++s) QCOMPARE(x[s], y[s]);
    }
  }

  // Two runs with the same seed and the same history (joins, splits, stage settings) train the
  // same, and a history taken live replays to the same losses.
  void sameHistorySameLosses() {
    RunOptions options;
    options.changes = {change(15, "partition.cuts", "[2]"), change(25, "stages.0.lr_scale", "0.5"),
                       change(30, "stages.1.delay_ms", "1"), change(40, "partition.cuts", "[1,2,4]"),
                       change(45, "stages.3.threads", "1")};
    RecordingObserver a, b;
    std::vector<RunChange> ha, hb;
    RunSummary sa = train(spec(), a, options, &ha);
    RunSummary sb = train(spec(), b, options, &hb);
    QVERIFY2(sa.status == RunStatus::Completed, sa.error.c_str());
    QCOMPARE(sa.stages.size(), size_t{4});
    QCOMPARE(ha.size(), size_t{5});
    QCOMPARE(hb.size(), size_t{5});
    for (size_t i = 0; i < ha.size(); ++i) {
      QCOMPARE(ha[i].step, options.changes[i].step);
      QCOMPARE(ha[i].key, options.changes[i].key);
      QCOMPARE(ha[i].value, options.changes[i].value);
    }
    for (int k = 0; k < 4; ++k) {
      QVERIFY(!lossesFrom(a, k, 40).empty());
      QCOMPARE(lossesFrom(a, k, 0), lossesFrom(b, k, 0));
    }
    // The lr_scale change made a difference from step 25 on (the stage exists and learned slower).
    RecordingObserver plain;
    RunOptions noLr = options;
    noLr.changes.erase(noLr.changes.begin() + 1);
    train(spec(), plain, noLr);
    QCOMPARE(lossesFrom(plain, 0, 0).at(25), lossesFrom(a, 0, 0).at(25));
    QVERIFY(lossesFrom(plain, 0, 0).at(26) != lossesFrom(a, 0, 0).at(26));
  }

  // The probes and evaluations asked for before a cut are measured on the weights and the
  // layout of their own step, by that segment's analysis thread, while the next segment already
  // trains (the cut does not wait for them): every point is there once, the same as in a run
  // without the cut up to its step, and the per-layer points name the layers of their layout.
  void measurementsAcrossACutKeepTheirLayout() {
    const std::vector<std::string> measured = {"eval.interval=4", "probe.interval=4",
                                               "measure.budget=0", "eval.max_samples=100"};
    RunOptions cut;
    cut.changes = {change(kAt, "partition.cuts", "[2]")};
    RecordingObserver a, b;
    RunSummary sa = train(spec({}, measured), a, cut);
    RunSummary sb = train(spec({}, measured), b);
    QVERIFY2(sa.status == RunStatus::Completed, sa.error.c_str());
    QVERIFY2(sb.status == RunStatus::Completed, sb.error.c_str());
    QCOMPARE(sa.skippedPoints, int64_t{0});
    auto points = [](RecordingObserver& obs, const char* name) {
      std::lock_guard lock(obs.mutex);
      std::map<std::tuple<int64_t, int, int>, std::vector<double>> out;
      for (const auto& p : obs.points)
        if (p.name == name) out[{p.step, p.stage, p.layer}].push_back(p.value);
      return out;
    };
    const auto accA = points(a, series::kTestAccuracy), accB = points(b, series::kTestAccuracy);
    const auto cosA = points(a, series::kGradCosine), cosB = points(b, series::kGradCosine);
    int before = 0, after = 0;
    for (const auto& [key, values] : accA) {
      QCOMPARE(values.size(), size_t{1});  // measured once
      if (std::get<0>(key) > kAt) continue;
      ++before;
      QVERIFY(accB.count(key));
      QCOMPARE(values, accB.at(key));  // on the weights of its own step
    }
    QVERIFY(before >= 4);
    for (const auto& [key, values] : cosA) {
      const auto [step, stage, layer] = key;
      QCOMPARE(values.size(), size_t{1});
      if (step <= kAt) {
        // Three stages [0] [1 2] [3 4] before the cut, as in the run without it.
        QVERIFY2(cosB.count(key), qPrintable(QString("step %1 stage %2 layer %3").arg(step).arg(stage).arg(layer)));
        QCOMPARE(values, cosB.at(key));
      } else {
        // Two stages [0 1] [2 3 4] after it: stage 1's layers are 2..4.
        ++after;
        QVERIFY(stage < 2);
        if (stage == 1 && layer >= 0) QVERIFY(layer >= 2 && layer <= 4);
        if (stage == 0 && layer >= 0) QVERIFY(layer <= 1);
      }
    }
    QVERIFY(after > 0);
  }

  void liveChangesReplay() {
    RecordingObserver a;
    auto run = createRun(spec({}, {"train.max_steps=400"}), &a);
    run->start();
    while (run->progress().step < 30 && !run->waitFor(2ms)) {
    }
    QVERIFY(run->state() == RunState::Running);
    // Asked while paused: the loader waits before its next step, so the request stays pending
    // (a second one is refused) and applies at the first step boundary once the run goes on.
    run->pause();
    ChangeResult r = run->repartition({2, 4});
    QVERIFY2(r.accepted, r.reason.c_str());
    r = run->repartition({1});
    QVERIFY(!r.accepted);
    QVERIFY2(r.reason.find("under way") != std::string::npos, r.reason.c_str());
    r = run->changeStage(1, "lr_scale", 2.0);
    QVERIFY2(r.accepted, r.reason.c_str());
    run->resume();
    while (run->progress().step < 150 && !run->waitFor(2ms)) {
    }
    r = run->repartition({3});
    QVERIFY2(r.accepted || run->state() == RunState::Finished, r.reason.c_str());
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const auto history = run->changes();
    // The stage change may come first: stage 1 applies it after the step it was in when the
    // request came, before the pipeline has drained for the move.
    QVERIFY(history.size() >= 2);
    auto move = std::find_if(history.begin(), history.end(),
                             [](const RunChange& c) { return c.key == "partition.cuts"; });
    QVERIFY(move != history.end());
    QCOMPARE(move->value, std::string("[2,4]"));
    QVERIFY(move->step >= 30);
    QVERIFY(std::any_of(history.begin(), history.end(), [](const RunChange& c) {
      return c.key == "stages.1.lr_scale" && c.value == "2";
    }));
    QVERIFY(hasEvent(a, "change at step"));

    RecordingObserver b;
    RunOptions replay;
    replay.changes = history;
    std::vector<RunChange> again;
    const RunSummary sb = train(spec({}, {"train.max_steps=400"}), b, replay, &again);
    QVERIFY2(sb.status == RunStatus::Completed, sb.error.c_str());
    QCOMPARE(again.size(), history.size());
    QCOMPARE(sb.stages.size(), s.stages.size());
    for (int k = 0; k < static_cast<int>(s.stages.size()); ++k)
      QCOMPARE(lossesFrom(b, k, 0), lossesFrom(a, k, 0));
  }

  void refusedRequestsSayWhyAndTheRunGoesOn() {
    struct Case {
      std::vector<std::string> sets;
      std::string why;
    };
    for (const Case& c : {Case{{"mode=backprop"}, "backprop mode"},
                          Case{{"mode=pipeline"}, "pipeline mode"},
                          Case{{"local.overlap=1"}, "local.overlap"}}) {
      RecordingObserver obs;
      auto run = createRun(spec({}, c.sets), &obs);
      run->start();
      run->pause();  // before the clock starts: held at step 0, so the run is surely alive
      const ChangeResult r = run->repartition({2});
      run->resume();
      QVERIFY(!r.accepted);
      QVERIFY2(r.reason.find(c.why) != std::string::npos, r.reason.c_str());
      const RunSummary s = run->wait();
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      QCOMPARE(s.steps, int64_t{60});
      QVERIFY(hasEvent(obs, "refused: " + r.reason));
      // Scheduled, the same is refused before the run starts.
      RunOptions options;
      options.changes = {change(10, "partition.cuts", "[2]")};
      try {
        createRun(spec({}, c.sets), nullptr, options);
        QFAIL("a scheduled re-partition was accepted");
      } catch (const SpecError& e) {
        QCOMPARE(QString::fromStdString(e.field()), QStringLiteral("change"));
        QVERIFY2(std::string(e.what()).find(c.why) != std::string::npos, e.what());
      }
    }
    RecordingObserver obs;
    auto run = createRun(spec({}, {"train.max_steps=200"}), &obs);
    run->start();
    run->pause();
    ChangeResult r = run->repartition({9});
    QVERIFY(!r.accepted);
    QVERIFY2(r.reason.find("9") != std::string::npos, r.reason.c_str());
    r = run->repartition({3, 2});
    QVERIFY(!r.accepted);
    r = run->repartition({1, 3});
    QVERIFY(!r.accepted);
    QVERIFY2(r.reason.find("already cut at [1,3]") != std::string::npos, r.reason.c_str());
    r = run->changeStage(5, "delay_ms", 3);
    QVERIFY(!r.accepted);
    QVERIFY2(r.reason.find("3 stage(s) now") != std::string::npos, r.reason.c_str());
    r = run->changeStage(0, "device", 1);
    QVERIFY(!r.accepted);
    r = run->changeStage(0, "threads", 0);
    QVERIFY(!r.accepted);
    r = run->pauseStage(1, true);
    QVERIFY2(r.accepted, r.reason.c_str());
    r = run->repartition({2});
    QVERIFY(!r.accepted);
    QVERIFY2(r.reason.find("S2 is paused") != std::string::npos, r.reason.c_str());
    QVERIFY(run->pauseStage(1, false).accepted);
    run->resume();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{200});
    QVERIFY(run->changes().empty());
    QVERIFY(!run->repartition({2}).accepted);  // finished
    RunOptions bad;
    bad.changes = {change(10, "partition.cuts", "[9]")};
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(spec(), nullptr, bad));
    // A stage that does not exist at the change's step: refused then, and the run goes on.
    RecordingObserver late;
    RunOptions missing;
    missing.changes = {change(10, "partition.cuts", "[2]"), change(20, "stages.2.delay_ms", "1")};
    const RunSummary sl = train(spec(), late, missing);
    QVERIFY2(sl.status == RunStatus::Completed, sl.error.c_str());
    QVERIFY(hasEvent(late, "stages.2.delay_ms=1 refused: the run has 2 stage(s) then"));
  }

  // The fake engine (the workbench's tests) takes the same request and reports it alike.
  void fakeEngineRepartitions() {
    RecordingObserver obs;
    FakeScript script;
    script.steps = 100;
    script.stepSeconds = 0.001;
    auto run = createFakeRun(spec(), &obs, script);
    run->start();
    run->pause();
    QVERIFY(!run->repartition({9}).accepted);
    const ChangeResult r = run->repartition({2});
    QVERIFY2(r.accepted, r.reason.c_str());
    QVERIFY(!run->repartition({3}).accepted);  // one at a time
    run->resume();
    const RunSummary s = run->wait();
    QCOMPARE(s.stages.size(), size_t{2});
    QCOMPARE(s.stages[1].firstLayer, 2);
    QCOMPARE(run->changes().size(), size_t{1});
    QVERIFY(hasEvent(obs, "partition.cuts=[2] (was [1,3])"));
    const auto parsed = changeFromEvent([&] {
      std::lock_guard lock(obs.mutex);
      for (const auto& e : obs.events)
        if (e.message.rfind("repartition at step", 0) == 0) return e.message;
      return std::string();
    }());
    QVERIFY(parsed.has_value());
    QCOMPARE(parsed->value, std::string("[2]"));
  }
};

QTEST_GUILESS_MAIN(TestSteering)
#include "test_steering.moc"
