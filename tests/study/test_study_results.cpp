// A stored study read back: what each point still needs, which specs share a run, the default
// target, and the grouped outcomes with time-to-target from the stored evaluations.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "../storage/store_test_util.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "stagewise/study/driver.h"
#include "stagewise/study/points.h"
#include "stagewise/study/results.h"
#include "stagewise/study/search.h"

using namespace stagewise;
using namespace stagewise::study;
using storage::RunStatus;

namespace {

storage::NewStudy twoByTwo() {
  storage::NewStudy s;
  s.name = "grid";
  s.baseSpecJson = "{}";
  s.keys = {{"train.lr", "[0.001,0.003]"}};
  s.seeds = 2;
  s.runsTotal = 4;
  return s;
}

/// A finished run with test-accuracy evaluations (step, t, accuracy) and a summary.
int64_t storedRun(storage::RunStore& store, RunStatus status,
                  const std::vector<std::tuple<int64_t, double, double>>& evals, double flops,
                  double wall,
                  const std::vector<std::pair<std::string, int64_t>>& checkpoints = {},
                  const std::string& mode = "local") {
  auto& w = store.writer();
  auto run = storage::testing::sampleRun();
  run.mode = mode;
  const int64_t id = w.createRun(run);
  std::vector<storage::PointInput> points;
  for (const auto& [step, t, acc] : evals)
    points.push_back({"test_accuracy", -1, -1, step, t, acc});
  w.appendPoints(id, std::move(points));
  for (const auto& [path, step] : checkpoints) w.addCheckpoint(id, path, step);
  storage::RunFinish f;
  f.status = status;
  f.steps = evals.empty() ? 0 : std::get<0>(evals.back()) + 1;
  f.testAccuracy = evals.empty() ? 0 : std::get<2>(evals.back());
  f.wallSeconds = wall;
  f.samplesPerSec = 1000;
  f.summaryJson = nlohmann::json{{"train_flops", flops}}.dump();
  w.finishRun(id, f);
  w.flush();
  return id;
}

/// A search's trial or tuned run: its validation curve (step, value) at the rungs, its final
/// validation and test accuracy in the summary (a pruned or failed run has no final values).
int64_t storedTrial(storage::RunStore& store, RunStatus status,
                    const std::vector<std::pair<int64_t, double>>& valCurve, double finalVal,
                    double test) {
  auto& w = store.writer();
  const int64_t id = w.createRun(storage::testing::sampleRun());
  std::vector<storage::PointInput> points;
  for (const auto& [step, v] : valCurve) points.push_back({"val_accuracy", -1, -1, step, 0, v});
  w.appendPoints(id, std::move(points));
  storage::RunFinish f;
  f.status = status == RunStatus::Pruned ? RunStatus::Stopped : status;
  f.steps = valCurve.empty() ? 0 : valCurve.back().first + 1;
  nlohmann::json summary = {{"train_flops", 1}};
  if (status == RunStatus::Completed) {
    f.testAccuracy = test;
    summary["val_accuracy"] = finalVal;
    summary["test_accuracy"] = test;
  } else if (status == RunStatus::Pruned) {
    summary["val_accuracy"] = finalVal;  // its evaluation when the stop took effect
  }
  f.summaryJson = summary.dump();
  w.finishRun(id, f);
  w.flush();
  return id;
}

storage::StudyRunRecord link(int point, int64_t run, int64_t seed, const char* values) {
  storage::StudyRunRecord l;
  l.point = point;
  l.runId = run;
  l.seed = seed;
  l.valuesJson = values;
  return l;
}

/// A search with 2 vary points (local, backprop), 3 trials each, pruning and tuning on 2
/// seeds, stored by hand as the driver would store it; `scramble` makes the test accuracies
/// of the trials the opposite of their validation accuracies.
struct SearchFixture {
  QTemporaryDir dir;
  std::unique_ptr<storage::RunStore> store;
  int64_t id = 0;
  StudyPlan plan;
  std::vector<std::vector<std::string>> draws;  // per trial, the searched values
};
std::unique_ptr<SearchFixture> searchStore(bool scramble) {
  auto f = std::make_unique<SearchFixture>();
  f->store = std::make_unique<storage::RunStore>(f->dir.filePath("s.db").toStdString());
  f->plan.keys = {parseVary(R"(mode=["local","backprop"])")};
  f->plan.search.keys = {parseSearchArgument("train.lr=log_uniform:1e-4:1e-2")};
  f->plan.search.trials = 3;
  f->plan.search.sampler = "sobol";
  f->plan.search.prune = PruneSpec{"val_accuracy", 100, 3};
  f->plan.search.tune = TuneSpec{"val_accuracy", 2};
  f->id = f->store->createStudy(newStudyRecord("search", "{}", f->plan, std::nullopt, 0));
  for (int t = 0; t < 3; ++t) f->draws.push_back(drawTrial(f->plan.search, 1, t));
  // local: trial 2 is best on validation (0.80); trial 1 pruned at 100; trial 3 completes
  // worse (0.70). backprop: trial 1 best (0.85), trial 2 failed, trial 3 (0.60).
  struct T {
    RunStatus status;
    double val, test;
  };
  const T local[3] = {{RunStatus::Pruned, 0.3, 0},
                      {RunStatus::Completed, 0.80, 0.79},
                      {RunStatus::Completed, 0.70, 0.69}};
  const T backprop[3] = {{RunStatus::Completed, 0.85, 0.84},
                         {RunStatus::Failed, 0, 0},
                         {RunStatus::Completed, 0.60, 0.59}};
  for (int t = 0; t < 3; ++t)
    for (int v = 0; v < 2; ++v) {
      const T& x = v == 0 ? local[t] : backprop[t];
      const double test = scramble ? 1.0 - x.test : x.test;
      auto curve = x.status == RunStatus::Failed
                       ? std::vector<std::pair<int64_t, double>>{}
                       : std::vector<std::pair<int64_t, double>>{{99, x.val}};
      // The pruned trial went on past its rung before the stop took effect, and diverged: its
      // value is still the one the pruner judged at the rung (0.3), not the later 0.05.
      if (x.status == RunStatus::Pruned) curve.push_back({138, 0.05});
      const int64_t run = storedTrial(*f->store, x.status, curve,
                                      x.status == RunStatus::Pruned ? 0.05 : x.val, test);
      const GridPoint p = trialPoint(f->plan, v, t, f->draws[static_cast<size_t>(t)]);
      f->store->linkStudyRun(f->id, link(p.index, run, p.seed, pointValuesJson(p).c_str()));
      if (x.status == RunStatus::Pruned) f->store->markRunPruned(f->id, run, 100, "pruned");
    }
  return f;
}

}  // namespace

class TestStudyResults : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void resolvesPointsAndNamesTheBadOne() {
    const std::string base =
        R"({"name": "base", "dataset": {"kind": "synthetic"}, "model": {"hidden": [16, 16, 16]},
            "partition": {"cuts": [1, 2]}, "checkpoint": {"dir": "/tmp/ck"}})";
    StudyPlan plan;
    plan.keys = {parseVary("partition.cuts=[[2],[9]]"), parseVary("train.lr=[0.01]")};
    plan.seeds = 2;
    const auto points = expandGrid(plan);
    ShapeCache shapes;
    const ResolvedPoint first = resolvePoint(base, plan, points[1], {"cpu"}, shapes);
    QCOMPARE(first.spec.partition.cuts, std::vector<int>{2});
    QCOMPARE(first.spec.train.lr, 0.01);
    QCOMPARE(first.spec.train.seed, uint64_t(2));
    QCOMPARE(shapes.size(), size_t(1));  // the dataset probed once
    try {
      resolvePoint(base, plan, points[2], {"cpu"}, shapes);
      QFAIL("a cut past the model's last layer resolved");
    } catch (const StudyError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("grid point 3 (partition.cuts=[9], train.lr=0.01, seed 1)") == 0,
               what.c_str());
      QVERIFY2(what.find("partition.cuts") != std::string::npos, what.c_str());
    }
    // A value the spec refuses is named with its point and field.
    plan.keys = {parseVary(R"(mode=["local","pipelined"])")};
    try {
      resolvePoint(base, plan, expandGrid(plan)[2], {"cpu"}, shapes);
      QFAIL("mode pipelined resolved");
    } catch (const StudyError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("grid point 3 (mode=pipelined, seed 1): ") == 0, what.c_str());
      QVERIFY2(what.find("mode") != std::string::npos, what.c_str());
    }

    engine::ExperimentSpec spec = first.spec;
    StudyPlan named;
    named.keys = {parseVary("partition.cuts=[[2],[9]]"), parseVary("train.lr=[0.01]")};
    named.seeds = 2;
    nameStudyRun(spec, "cuts", 12, named, points[1]);
    QCOMPARE(spec.name, std::string("cuts · partition.cuts=[2], train.lr=0.01, seed 2"));
    QCOMPARE(spec.checkpoint.dir, std::string("/tmp/ck/study-12-run-2"));
    QCOMPARE(pointValuesJson(points[1]), std::string("[[2],0.01]"));

    const storage::NewStudy record = newStudyRecord("cuts", base, named, 0.8, points.size());
    QCOMPARE(record.keys.size(), size_t(2));
    QCOMPARE(record.keys[0].valuesJson, std::string("[[2],[9]]"));
    QCOMPARE(record.seeds, 2);
    QCOMPARE(record.runsTotal, 4);
    QCOMPARE(*record.target, 0.8);
    StudyObject object;
    object.keys = named.keys;
    object.seeds = 2;
    QCOMPARE(planOf(object).seeds, 2);
    QCOMPARE(expandGrid(planOf(object)).size(), size_t(4));
  }

  void identityIgnoresWhatTheModeDoesNotRead() {
    const std::string a =
        R"({"name":"a","mode":"backprop","partition":{"cuts":[2]},"stages":[{"threads":1},{}],"train":{"lr":0.1},"checkpoint":{"interval":5}})";
    const std::string b =
        R"({"name":"b","mode":"backprop","partition":{"cuts":[4]},"stages":[{"threads":1},{},{}],"train":{"lr":0.1}})";
    QCOMPARE(specIdentity(a), specIdentity(b));
    const std::string c = R"({"mode":"backprop","stages":[{"threads":2}],"train":{"lr":0.1}})";
    QVERIFY(specIdentity(a) != specIdentity(c));  // the first stage's settings count
    const std::string d = R"({"mode":"local","partition":{"cuts":[2]},"train":{"lr":0.1}})";
    const std::string e = R"({"mode":"local","partition":{"cuts":[4]},"train":{"lr":0.1}})";
    QVERIFY(specIdentity(d) != specIdentity(e));  // local mode trains the cut
    const std::string f =
        R"({"mode":"local","partition":{"cuts":[2]},"pipeline":{"micro_batches":8},"train":{"lr":0.1}})";
    QCOMPARE(specIdentity(d), specIdentity(f));
    const std::string g =
        R"({"mode":"local","partition":{"cuts":[2]},"train":{"lr":0.1},"debug":{"fail_at_step":5}})";
    QVERIFY(specIdentity(d) != specIdentity(g));  // a fault hook changes the run
  }

  void groupsAreEqualButForTheSeed() {
    const std::string a = R"({"name":"a","train":{"lr":0.1,"seed":1}})";
    const std::string b = R"({"name":"b","train":{"lr":0.1,"seed":2}})";
    const std::string c = R"({"name":"c","train":{"lr":0.2,"seed":1}})";
    QCOMPARE(groupIdentity(a), groupIdentity(b));
    QVERIFY(groupIdentity(a) != groupIdentity(c));
    QVERIFY(specIdentity(a) != specIdentity(b));  // the seed makes another run
  }

  void defaultTargetIsTheLowestBestAccuracy() {
    QCOMPARE(defaultTarget({{{0, 0, 0.5}, {1, 0, 0.9}, {2, 0, 0.8}}, {{0, 0, 0.7}}}), 0.7);
    QVERIFY(std::isnan(defaultTarget({})));
  }

  void pendingWorkKeepsCompletedContinuesAndReplaces() {
    QTemporaryDir dir;
    storage::RunStore store(dir.filePath("s.db").toStdString());
    const int64_t id = store.createStudy(twoByTwo());
    const int64_t done = storedRun(store, RunStatus::Completed, {{10, 1, 0.9}}, 1, 1);
    const int64_t stopped = storedRun(store, RunStatus::Stopped, {{5, 1, 0.5}}, 1, 1,
                                      {{"/ck/step-2", 2}, {"/ck/step-4", 4}});
    const int64_t killed = storedRun(store, RunStatus::Interrupted, {}, 0, 0);
    store.linkStudyRun(id, link(0, done, 1, "[0.001]"));
    store.linkStudyRun(id, link(1, stopped, 2, "[0.001]"));
    store.linkStudyRun(id, link(2, killed, 1, "[0.003]"));
    storage::RunReader reader(store);
    const auto work = pendingWork(reader, *reader.study(id));
    QCOMPARE(work.size(), size_t(4));
    QVERIFY(work[0].kind == PointWork::Kind::Done);
    QCOMPARE(work[0].runId, done);
    QVERIFY(work[1].kind == PointWork::Kind::Continue);
    QCOMPARE(work[1].runId, stopped);
    QCOMPARE(work[1].checkpointPath, std::string("/ck/step-4"));  // the newest
    QVERIFY(work[2].kind == PointWork::Kind::Run);
    QCOMPARE(work[2].replaces, std::vector<int64_t>{killed});
    QVERIFY(work[3].kind == PointWork::Kind::Run);
    QVERIFY(work[3].replaces.empty());
    QCOMPARE(work[3].point.seed, int64_t(2));
    QCOMPARE(work[3].point.values, std::vector<std::string>{"0.003"});
  }

  void resultsGroupWithTimeToTarget() {
    QTemporaryDir dir;
    storage::RunStore store(dir.filePath("s.db").toStdString());
    const int64_t id = store.createStudy(twoByTwo());
    // lr 0.001: two seeds; lr 0.003: one completed, one stopped (left out of the group).
    const int64_t a =
        storedRun(store, RunStatus::Completed, {{9, 1.0, 0.5}, {19, 2.0, 0.9}}, 100, 2);
    const int64_t b =
        storedRun(store, RunStatus::Completed, {{9, 1.5, 0.7}, {19, 3.0, 0.8}}, 300, 3);
    const int64_t c =
        storedRun(store, RunStatus::Completed, {{9, 0.5, 0.6}, {19, 1.0, 0.65}}, 50, 1);
    const int64_t d = storedRun(store, RunStatus::Stopped, {{9, 0.5, 0.99}}, 50, 1);
    store.linkStudyRun(id, link(0, a, 1, "[0.001]"));
    store.linkStudyRun(id, link(1, b, 2, "[0.001]"));
    store.linkStudyRun(id, link(2, c, 1, "[0.003]"));
    store.linkStudyRun(id, link(3, d, 2, "[0.003]"));
    storage::RunReader reader(store);

    StudyResults r = loadStudyResults(reader, id, 0.7);
    QCOMPARE(r.rows.size(), size_t(4));
    QCOMPARE(r.outcomes.size(), size_t(3));
    QCOMPARE(r.groups.size(), size_t(2));
    const Group& g = r.groups[0];
    QCOMPARE(g.values, std::vector<std::string>{"0.001"});
    QCOMPARE(g.accuracy.n, 2);
    QCOMPARE(g.accuracy.mean, 0.85);
    QVERIFY(std::abs(g.accuracy.std - std::sqrt(0.005)) < 1e-12);
    QCOMPARE(g.trainFlops.mean, 200.0);
    // run a: 0.5 at 1 s -> 0.9 at 2 s reaches 0.7 halfway (1.5 s); run b is at 0.7 at 1.5 s
    QCOMPARE(g.reached, 2);
    QCOMPARE(g.targetTimeS->mean, 1.5);
    QCOMPARE(r.rows[0].hit->samples, 15.0 * 32);  // halfway between 10 and 20 steps of 32
    // lr 0.003 never reaches 0.7: not reached, not zero
    QCOMPARE(r.groups[1].reached, 0);
    QVERIFY(!r.groups[1].targetTimeS.has_value());
    // the front: 0.003 is faster (1 s) but worse; 0.001 better: both on it
    QVERIFY(r.groups[0].onFront && r.groups[1].onFront);

    const auto shown = nlohmann::json::parse(showJson(r));
    QCOMPARE(shown["target"].get<double>(), 0.7);
    QCOMPARE(shown["groups"][0]["n"].get<int>(), 2);
    QVERIFY(shown["groups"][1]["time_to_target_s"].is_null());
    QVERIFY(shown["groups"][1]["test_accuracy"]["std"].is_null());  // n = 1
    QCOMPARE(shown["groups"][0]["runs"], nlohmann::json::array({a, b}));

    // The default target: the lowest best accuracy of the completed runs (0.65), which all reach.
    StudyResults def = loadStudyResults(reader, id);
    QVERIFY(def.targetIsDefault);
    QCOMPARE(def.target, 0.65);
    for (const auto& gr : def.groups) QCOMPARE(gr.reached, gr.accuracy.n);

    const std::string csv = exportRows(r, "csv");
    QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 5L);
    QVERIFY(csv.find("run_id,study_id,point,seed,train.lr,status,replaced,mode,") == 0);
  }

  void pointsSharingARunAreShownOnce() {
    // Issue 36's walkthrough: a report's throughput study sweeps pipeline.micro_batches; local
    // mode does not read it, so its points at M = 1 and 4 share one run. `study show` listed that
    // run once per M and counted points as runs ("12 of 162" beside the queue's "4 of 104").
    QTemporaryDir dir;
    storage::RunStore store(dir.filePath("s.db").toStdString());
    storage::NewStudy ns;
    ns.name = "sweep";
    ns.baseSpecJson = R"({"mode":"local"})";
    ns.keys = {{"mode", R"(["local","pipeline"])"}, {"pipeline.micro_batches", "[1,4]"}};
    ns.seeds = 1;
    ns.runsTotal = 4;
    const int64_t id = store.createStudy(ns);
    const int64_t local = storedRun(store, RunStatus::Completed, {{19, 2.0, 0.8}}, 100, 2);
    const int64_t m1 =
        storedRun(store, RunStatus::Completed, {{19, 3.0, 0.7}}, 100, 3, {}, "pipeline");
    store.linkStudyRun(id, link(0, local, 1, R"(["local",1])"));
    store.linkStudyRun(id, link(1, local, 1, R"(["local",4])"));
    store.linkStudyRun(id, link(2, m1, 1, R"(["pipeline",1])"));
    storage::RunReader reader(store);
    const StudyResults r = loadStudyResults(reader, id, 0.5);
    QCOMPARE(r.rows.size(), size_t(3));      // every link, as stored (exports keep them)
    QCOMPARE(r.outcomes.size(), size_t(2));  // one per run
    QCOMPARE(r.groups.size(), size_t(2));
    QCOMPARE(r.groups[0].values, (std::vector<std::string>{R"("local")", "null"}));
    QCOMPARE(r.groups[0].accuracy.n, 1);
    QCOMPARE(r.runsCompleted, 2);
    QCOMPARE(r.runsTotal, 3);  // local once, pipeline at M = 1 and 4
    QCOMPARE(r.study.runsTotal, 4);
    // A list counts as `study show` does, from the links alone (the Runs study filter and
    // `study list` said "2 of 4": grid points).
    const RunCounts counts = distinctRunCounts(reader, *reader.study(id));
    QCOMPARE(counts.completed, 2);
    QCOMPARE(counts.total, 3);
    QVERIFY(r.study.runsCompleted != counts.completed || r.study.runsTotal != counts.total);
    const std::string table = showTable(r);
    QVERIFY2(table.find("2 of 3 runs completed (4 grid points") != std::string::npos,
             table.c_str());
    int localRows = 0;
    for (size_t at = table.find("\nlocal"); at != std::string::npos;
         at = table.find("\nlocal", at + 1))
      ++localRows;
    QVERIFY2(localRows == 1, table.c_str());
    QVERIFY2(table.find("\nlocal     -") != std::string::npos, table.c_str());

    // What each mode reads, and the distinct runs of plans.
    QVERIFY(!modeReadsKey("local", "pipeline.micro_batches"));
    QVERIFY(modeReadsKey("pipeline", "pipeline.micro_batches"));
    QVERIFY(!modeReadsKey("backprop", "partition.cuts"));
    QVERIFY(!modeReadsKey("pipeline", "local.overlap"));
    QVERIFY(modeReadsKey("local", "pipelines.x"));  // a section, not a prefix of a word
    StudyPlan plan;
    plan.keys = {{"mode", {R"("local")", R"("pipeline")", R"("backprop")"}},
                 {"partition.cuts", {"[1]", "[1,2]"}},
                 {"pipeline.micro_batches", {"1", "2", "4"}}};
    plan.seeds = 2;
    // local: 2 cuts; pipeline: 2 cuts x 3 M; backprop: 1; all x 2 seeds
    QCOMPARE(distinctRuns(plan, "{}"), (2 + 6 + 1) * 2);
    plan.keys.erase(plan.keys.begin());
    QCOMPARE(distinctRuns(plan, R"({"mode":"local"})"), 2 * 2);
    QCOMPARE(distinctRuns(plan, R"({"mode":"pipeline"})"), 6 * 2);
  }

  void searchWorkDrawsTrialsThenTunesTheBest() {
    auto f = searchStore(/*scramble=*/false);
    storage::RunReader reader(*f->store);
    const auto record = reader.study(f->id);
    QVERIFY(!record->searchJson.empty());
    QCOMPARE(record->runsTotal, 2 * (3 + 2));
    QCOMPARE(record->runsPruned, 1);
    QCOMPARE(planOf(*record).search.trials, 3);
    const SearchState state = searchWork(reader, *record, planOf(*record));
    // Every trial ended (completed, pruned, failed): done, never run again.
    for (const auto& trials : state.trials)
      for (const auto& t : trials) QVERIFY(t.work.kind == PointWork::Kind::Done);
    QVERIFY(state.trials[0][0].status == RunStatus::Pruned);
    QCOMPARE(*state.trials[0][0].prunedAt, int64_t(100));
    QCOMPARE(*state.trials[0][0].value, 0.3);  // at its rung, not when it stopped
    QCOMPARE(*state.best[0], size_t(1));  // local: trial 2
    QCOMPARE(*state.best[1], size_t(0));  // backprop: trial 1
    // The tuned runs are the work left: each point's best values on seeds 2 and 3.
    std::vector<PointWork> left;
    for (const auto& w : state.work)
      if (w.kind != PointWork::Kind::Done) left.push_back(w);
    QCOMPARE(left.size(), size_t(4));
    QVERIFY(left[0].point.tuned);
    QCOMPARE(left[0].point.values[1], f->draws[1][0]);  // local's best lr
    QCOMPARE(left[2].point.values[1], f->draws[0][0]);  // backprop's best lr
    QCOMPARE(left[1].point.seed, int64_t(3));
    QCOMPARE(pendingWork(reader, *record).size(), size_t(10));

    // Tuned runs stored: the results compare the points on test, with a CI.
    for (size_t i = 0; i < left.size(); ++i) {
      const int64_t run = storedTrial(*f->store, RunStatus::Completed, {{99, 0.8}}, 0.8,
                                      0.80 + 0.01 * static_cast<double>(i));
      f->store->linkStudyRun(f->id, link(left[i].point.index, run, left[i].point.seed,
                                         pointValuesJson(left[i].point).c_str()));
    }
    const StudyResults r = loadStudyResults(reader, f->id);
    for (const auto& row : r.rows)
      if (row.run.status == RunStatus::Pruned) QCOMPARE(*row.valAccuracy, 0.3);
    QCOMPARE(r.tuned.size(), size_t(2));
    const TunedResult& local = r.tuned[0];
    QCOMPARE(local.best, f->draws[1]);
    QCOMPARE(*local.bestValue, 0.80);
    QCOMPARE(local.trials, 3);
    QCOMPARE(local.completed, 2);
    QCOMPARE(local.pruned, 1);
    QCOMPARE(local.test.n, 2);
    QVERIFY(std::abs(local.test.mean - 0.805) < 1e-12);
    QVERIFY(local.ci95);
    // mean ± t(0.975, 1) * s / sqrt(2), s = 0.00707...: ± 0.0635
    QVERIFY(std::abs(local.ci95->second - local.ci95->first - 2 * 12.7062 * 0.005) < 1e-3);
    QCOMPARE(r.tuned[1].failed, 1);
    QCOMPARE(local.bestSoFar.size(), size_t(3));
    QVERIFY(std::isnan(local.bestSoFar[0]));  // trial 1 was pruned: nothing completed yet
    QCOMPARE(local.bestSoFar[2], 0.80);
    const auto shown = nlohmann::json::parse(showJson(r));
    QCOMPARE(shown["tuned"].size(), size_t(2));
    QCOMPARE(shown["tuned"][0]["keys"]["mode"], nlohmann::json("local"));
    QCOMPARE(shown["tuned"][0]["best"]["train.lr"], nlohmann::json::parse(f->draws[1][0]));
    QCOMPARE(shown["tuned"][0]["test_accuracy"]["n"].get<int>(), 2);
    QVERIFY(shown["tuned"][0]["test_accuracy"]["ci95"].is_array());
    QCOMPARE(shown["tuned"][0]["pruned"].get<int>(), 1);
    QCOMPARE(shown["tuned"][0]["completed"].get<int>(), 2);
    QCOMPARE(shown["tuned"][0]["trials"].get<int>(), 3);
    QVERIFY(showTable(r).find("test acc (tuned)") != std::string::npos);
    // Nothing left once the tuned runs completed.
    for (const auto& w : pendingWork(reader, *reader.study(f->id)))
      QVERIFY(w.kind == PointWork::Kind::Done);
  }

  void aTrialThePrunerStoppedIsPrunedEvenIfItCompletedFirst() {
    // On a busy machine a short trial can reach its end before the pruner's stop takes effect:
    // the decision at the rung is the record, so it is pruned all the same and never chosen.
    auto f = searchStore(false);
    storage::RunReader reader(*f->store);
    StudyPlan plan = f->plan;  // one trial more: its trial 4 is the one below
    plan.search.trials = 4;
    const int64_t id = f->store->createStudy(newStudyRecord("four", "{}", plan, std::nullopt, 0));
    StudyDriver driver(*f->store, id, {"cpu"});
    AshaPruner pruner(*plan.search.prune, /*higherBetter=*/true);
    pruner.record(100, 0.9);  // an earlier trial's value at the rung
    PruneWatch watch(pruner, *plan.search.prune, {100});
    watch.onMetrics({engine::MetricPoint{"val_accuracy", -1, -1, 99, 1.0, 0.5}});
    QVERIFY(watch.shouldStop());
    // A completed run with a better final value than any other trial of its vary point.
    const int64_t run = storedTrial(*f->store, RunStatus::Completed, {{99, 0.5}}, 0.95, 0.9);
    const GridPoint p = trialPoint(plan, 0, 3, drawTrial(plan.search, 1, 3));
    f->store->linkStudyRun(id, link(p.index, run, p.seed, pointValuesJson(p).c_str()));
    driver.ended(StudyDriver::Job{}, run, engine::RunStatus::Completed, &watch);
    QCOMPARE(toString(reader.run(run)->status), std::string("pruned"));
    bool found = false;
    for (const auto& l : reader.studyRuns(id))
      if (l.runId == run) found = l.prunedAt && *l.prunedAt == 100;
    QVERIFY(found);
    // So it is never the best: local's best stays a completed trial (none here but this one).
    const SearchState state = searchWork(reader, *reader.study(id), plan);
    QVERIFY(!state.best[0].has_value() ||
            state.trials[0][*state.best[0]].work.runId != run);
    // A failed run stays failed, whatever the watch decided.
    const int64_t failed = storedTrial(*f->store, RunStatus::Failed, {}, 0, 0);
    driver.ended(StudyDriver::Job{}, failed, engine::RunStatus::Failed, &watch);
    QCOMPARE(toString(reader.run(failed)->status), std::string("failed"));
  }

  void choosingNeverReadsTestMetrics() {
    // The same search with every trial's test accuracy turned upside down chooses the same.
    auto a = searchStore(false);
    auto b = searchStore(true);
    storage::RunReader ra(*a->store), rb(*b->store);
    const auto sa = searchWork(ra, *ra.study(a->id), a->plan);
    const auto sb = searchWork(rb, *rb.study(b->id), b->plan);
    QCOMPARE(sa.best, sb.best);
    QCOMPARE(sa.work.size(), sb.work.size());
    for (size_t i = 0; i < sa.work.size(); ++i)
      QCOMPARE(sa.work[i].point.values, sb.work[i].point.values);
  }

  void modelSamplerWaitsForTheTrialBefore() {
    QTemporaryDir dir;
    storage::RunStore store(dir.filePath("s.db").toStdString());
    StudyPlan plan;
    plan.search.keys = {parseSearchArgument("train.lr=log_uniform:1e-4:1e-2")};
    plan.search.trials = 4;
    plan.search.sampler = "maxlipo";
    const int64_t id = store.createStudy(newStudyRecord("m", "{}", plan, std::nullopt, 0));
    storage::RunReader reader(store);
    auto work = pendingWork(reader, *reader.study(id));
    QCOMPARE(work.size(), size_t(1));  // trial 2 is drawn from trial 1's result
    const int64_t run = storedTrial(store, RunStatus::Completed, {{9, 0.5}}, 0.5, 0.5);
    store.linkStudyRun(id, link(0, run, 1, pointValuesJson(work[0].point).c_str()));
    work = pendingWork(reader, *reader.study(id));
    QCOMPARE(work.size(), size_t(2));
    QVERIFY(work[0].kind == PointWork::Kind::Done);
    QVERIFY(work[1].point.values != work[0].point.values);
    // Drawn again from the same store: the same point (a resumed study draws the same).
    QCOMPARE(pendingWork(reader, *reader.study(id))[1].point.values, work[1].point.values);
  }
};

QTEST_GUILESS_MAIN(TestStudyResults)
#include "test_study_results.moc"
