// Studies' pure parts: --vary parsing, grid expansion (Cartesian order, seeds, sampling, bad
// input), grouping (n, mean, sample std against numbers computed here), time-to-target
// interpolation including "not reached", and the front's dominance on hand-made points.
#include <QtTest>

#include <cmath>
#include <set>

#include "stagewise/study/study.h"

using namespace stagewise::study;

class TestStudy : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parsesVary() {
    const VariedKey v = parseVary("partition.cuts=[[4],[2,4,6]]");
    QCOMPARE(v.key, std::string("partition.cuts"));
    QCOMPARE(v.values, (std::vector<std::string>{"[4]", "[2,4,6]"}));
    QCOMPARE(parseVary(R"(mode=["local","backprop"])").values[1], std::string(R"("backprop")"));
    auto message = [](const std::string& a) {
      try {
        parseVary(a);
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY(message("train.lr=0.001").find("not a JSON list") != std::string::npos);
    QVERIFY(message("train.lr=0.001").find("train.lr") != std::string::npos);
    QVERIFY(message("=[1]").find("KEY=JSON_LIST") != std::string::npos);
    QVERIFY(message("train.lr").find("KEY=JSON_LIST") != std::string::npos);
    QVERIFY(message("train.lr=[]").find("empty") != std::string::npos);
    QVERIFY(message("train.lr=[1,").find("not a JSON list") != std::string::npos);
  }

  void studyObjectRoundTripsInOrder() {
    const std::string text =
        R"({"vary": {"train.lr": [0.001, 0.0003], "mode": ["local", "backprop"]},
            "seeds": 3, "sample": 2, "sample_seed": 7, "name": "lr x mode", "target": 0.85})";
    const StudyObject s = parseStudyObject(text);
    QCOMPARE(s.keys.size(), size_t(2));
    QCOMPARE(s.keys[0].key, std::string("train.lr"));  // the text's order, not sorted
    QCOMPARE(s.keys[1].values[1], std::string(R"("backprop")"));
    QCOMPARE(*s.seeds, 3);
    QCOMPARE(*s.sample, 2);
    QCOMPARE(*s.sampleSeed, int64_t(7));
    QCOMPARE(*s.name, std::string("lr x mode"));
    QCOMPARE(*s.target, 0.85);
    QVERIFY(!s.empty());
    const StudyObject back = parseStudyObject(studyObjectJson(s));
    QCOMPARE(studyObjectJson(back), studyObjectJson(s));
    QCOMPARE(back.keys[0].key, std::string("train.lr"));
    QVERIFY(parseStudyObject(R"({"seeds": 1})").empty());
    QVERIFY(!parseStudyObject(R"({"seeds": 2})").empty());
    // Unset fields stay out of the JSON.
    QCOMPARE(studyObjectJson(parseStudyObject(R"({"vary": {"train.lr": [1]}})")),
             std::string(R"({"vary":{"train.lr":[1]}})"));
    // Of an experiment file: none, or its object.
    QVERIFY(!studyObjectOf(R"({"name": "x"})"));
    QVERIFY(!studyObjectOf("not json"));
    QCOMPARE(*studyObjectOf(R"({"name": "x", "study": {"seeds": 4}})")->seeds, 4);
    const std::string with = withStudyObject(R"({"name": "x", "study": {"seeds": 9}})", s);
    QCOMPARE(studyObjectJson(*studyObjectOf(with)), studyObjectJson(s));
    QVERIFY(with.find("\n  \"study\": {") != std::string::npos);
    QVERIFY(with.find("\"name\": \"x\"") != std::string::npos);
  }

  void studyObjectErrorsNameTheKey() {
    auto message = [](const std::string& text) {
      try {
        parseStudyObject(text);
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QCOMPARE(message("[1]"), std::string("study: expected an object"));
    QVERIFY(message(R"({"vary": [1]})").find("study.vary: expected an object") == 0);
    QVERIFY(message(R"({"vary": {"train.lr": []}})").find("study.vary.train.lr: expected a") == 0);
    QVERIFY(message(R"({"vary": {"train.lr": 0.1}})").find("study.vary.train.lr") == 0);
    QVERIFY(message(R"({"seeds": 0})").find("study.seeds: expected a whole number >= 1") == 0);
    QVERIFY(message(R"({"seeds": 1.5})").find("study.seeds") == 0);
    QVERIFY(message(R"({"target": 1.5})").find("study.target: expected a test accuracy") == 0);
    QVERIFY(message(R"({"name": 3})").find("study.name: expected a string") == 0);
    QVERIFY(message(R"({"seed": 3})").find("study.seed: unknown key") == 0);
    QVERIFY_THROWS_EXCEPTION(StudyError, studyObjectOf(R"({"study": {"seeds": -1}})"));
  }

  void valueAtReadsDottedKeys() {
    const std::string spec = R"({"mode": "local", "train": {"lr": 0.001, "seed": 7},
                                 "partition": {"cuts": [2, 4]}})";
    QCOMPARE(*valueAt(spec, "train.lr"), std::string("0.001"));
    QCOMPARE(*valueAt(spec, "mode"), std::string(R"("local")"));
    QCOMPARE(*valueAt(spec, "partition.cuts"), std::string("[2,4]"));
    QVERIFY(!valueAt(spec, "train.nope"));
    QVERIFY(!valueAt(spec, "train.lr.x"));
    QVERIFY(!valueAt(spec, ""));
    QVERIFY(!valueAt("not json", "mode"));
  }

  void expandsTheGridInOrder() {
    StudyPlan plan;
    plan.keys = {parseVary("partition.cuts=[[4],[2,4,6]]"), parseVary("train.lr=[0.001,0.0003]")};
    plan.seeds = 3;
    const auto runs = expandGrid(plan);
    QCOMPARE(runs.size(), size_t{12});  // the issue's example: 2 x 2 x 3 seeds
    // First key slowest, seeds innermost.
    QCOMPARE(runs[0].values, (std::vector<std::string>{"[4]", "0.001"}));
    QCOMPARE(runs[0].seed, int64_t{1});
    QCOMPARE(runs[2].seed, int64_t{3});
    QCOMPARE(runs[3].values, (std::vector<std::string>{"[4]", "0.0003"}));
    QCOMPARE(runs[6].values, (std::vector<std::string>{"[2,4,6]", "0.001"}));
    QCOMPARE(runs[11].index, 11);
    QCOMPARE(pointSets(plan, runs[4]),
             (std::vector<std::string>{"partition.cuts=[4]", "train.lr=0.0003", "train.seed=2"}));
    QCOMPARE(describePoint(plan, runs[4]),
             std::string("partition.cuts=[4], train.lr=0.0003, seed 2"));
    StudyPlan modes;
    modes.keys = {parseVary(R"(mode=["local","backprop"])")};
    QCOMPARE(describePoint(modes, expandGrid(modes)[1]), std::string("mode=backprop, seed 1"));
    // A varied seed replaces --seeds.
    StudyPlan seeded;
    seeded.keys = {parseVary("train.seed=[5,6]")};
    seeded.seeds = 3;
    const auto s = expandGrid(seeded);
    QCOMPARE(s.size(), size_t{2});
    QCOMPARE(pointSets(seeded, s[1]), (std::vector<std::string>{"train.seed=6"}));
  }

  void samplesDistinctPointsReproducibly() {
    StudyPlan plan;
    plan.keys = {parseVary("train.lr=[1,2,3,4,5]"), parseVary("train.batch_size=[8,16,32,64]")};
    plan.sample = 6;
    plan.seeds = 2;
    plan.sampleSeed = 7;
    const auto a = expandGrid(plan), b = expandGrid(plan);
    QCOMPARE(a.size(), size_t{12});
    std::set<std::vector<std::string>> points;
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(a[i].values, b[i].values);  // seeded: the same draw every time
      points.insert(a[i].values);
    }
    QCOMPARE(points.size(), size_t{6});  // without replacement
    plan.sampleSeed = 8;
    const auto c = expandGrid(plan);
    bool differs = false;
    for (size_t i = 0; i < c.size(); ++i) differs = differs || c[i].values != a[i].values;
    QVERIFY(differs);
    plan.sample = 100;  // more than the grid: the whole grid
    QCOMPARE(expandGrid(plan).size(), size_t{40});
  }

  void rejectsBadPlans() {
    StudyPlan twice;
    twice.keys = {parseVary("train.lr=[1]"), parseVary("train.lr=[2]")};
    QVERIFY_THROWS_EXCEPTION(StudyError, expandGrid(twice));
    StudyPlan noSeeds;
    noSeeds.keys = {parseVary("train.lr=[1]")};
    noSeeds.seeds = 0;
    QVERIFY_THROWS_EXCEPTION(StudyError, expandGrid(noSeeds));
    StudyPlan none;  // no keys: one point, the base, per seed
    none.seeds = 2;
    QCOMPARE(expandGrid(none).size(), size_t{2});
  }

  void groupsBySeedWithMeanAndSampleStd() {
    std::vector<RunOutcome> runs;
    auto add = [&](std::string cut, int64_t seed, double acc, double wall,
                   std::optional<double> hit) {
      RunOutcome r;
      r.values = {cut};
      r.seed = seed;
      r.mode = "local";
      r.testAccuracy = acc;
      r.wallS = wall;
      r.samplesPerSec = 1000 / wall;
      r.targetTimeS = hit;
      runs.push_back(r);
    };
    add("[4]", 1, 0.80, 10, 6.0);
    add("[2]", 1, 0.70, 20, std::nullopt);
    add("[4]", 2, 0.84, 12, 8.0);
    add("[4]", 3, 0.83, 11, std::nullopt);
    add("[2]", 2, 0.72, 22, std::nullopt);
    const auto groups = groupRuns(runs);
    QCOMPARE(groups.size(), size_t{2});
    QCOMPARE(groups[0].values, std::vector<std::string>{"[4]"});  // order of first appearance
    QCOMPARE(groups[0].accuracy.n, 3);
    const double mean = (0.80 + 0.84 + 0.83) / 3;
    const double sd = std::sqrt(
        (std::pow(0.80 - mean, 2) + std::pow(0.84 - mean, 2) + std::pow(0.83 - mean, 2)) / 2);
    QVERIFY(std::abs(groups[0].accuracy.mean - mean) < 1e-12);
    QVERIFY(std::abs(groups[0].accuracy.std - sd) < 1e-12);
    QVERIFY(std::abs(groups[0].wallS.mean - 11) < 1e-12);
    QCOMPARE(groups[0].reached, 2);
    QVERIFY(groups[0].targetTimeS && std::abs(groups[0].targetTimeS->mean - 7) < 1e-12);
    QCOMPARE(groups[1].reached, 0);
    QVERIFY(!groups[1].targetTimeS);  // "not reached" is not a zero
    // [4] is faster and more accurate: it alone is on the front.
    QVERIFY(groups[0].onFront);
    QVERIFY(!groups[1].onFront);
    QCOMPARE(stat({5.0}).std, 0.0);
  }

  void interpolatesTimeToTarget() {
    const std::vector<EvalPoint> evals = {{10, 1000, 0.5}, {20, 2000, 0.7}, {30, 3000, 0.9}};
    auto hit = timeToTarget(evals, 0.8);
    QVERIFY(hit);
    QVERIFY(std::abs(hit->timeS - 25) < 1e-9);
    QVERIFY(std::abs(hit->samples - 2500) < 1e-9);
    hit = timeToTarget(evals, 0.7);  // reached exactly at an evaluation
    QVERIFY(hit && std::abs(hit->timeS - 20) < 1e-9);
    hit = timeToTarget(evals, 0.4);  // the first evaluation already reaches it
    QVERIFY(hit && hit->timeS == 10);
    QVERIFY(!timeToTarget(evals, 0.95));
    QVERIFY(!timeToTarget({}, 0.1));
    // A dip does not count twice: the first crossing.
    hit = timeToTarget({{1, 1, 0.1}, {2, 2, 0.9}, {3, 3, 0.2}, {4, 4, 0.95}}, 0.5);
    QVERIFY(hit && std::abs(hit->timeS - 1.5) < 1e-9);
  }

  void frontKeepsTheNonDominated() {
    // (cost, quality): b dominates d; e equals a (neither dominates); c is cheapest.
    const auto front = paretoFront({{10, 0.8}, {20, 0.9}, {5, 0.5}, {25, 0.85}, {10, 0.8}});
    QCOMPARE(front, (std::vector<bool>{true, true, true, false, true}));
    QCOMPARE(paretoFront({{1, 1}, {1, 0.5}}), (std::vector<bool>{true, false}));  // same cost
    QCOMPARE(paretoFront({}), std::vector<bool>{});
  }

  // ---- searches (issue 32)

  void distributionsStayInTheirBounds() {
    const Distribution lr = parseDistribution(R"({"log_uniform": [1e-5, 0.1]})", "f");
    const Distribution u = parseDistribution(R"({"uniform": [-1, 3]})", "f");
    const Distribution n = parseDistribution(R"({"int": [2, 5]})", "f");
    const Distribution c = parseDistribution(R"({"choice": [32, 128, "x"]})", "f");
    std::set<int64_t> ints;
    std::set<std::string> choices;
    for (int i = 0; i <= 1000; ++i) {
      const double q = i / 1000.0;  // 1.0 included: clamped below 1
      const double a = std::stod(lr.valueAt(q));
      QVERIFY2(a >= 1e-5 && a <= 0.1, lr.valueAt(q).c_str());
      const double b = std::stod(u.valueAt(q));
      QVERIFY(b >= -1 && b <= 3);
      const int64_t k = std::stoll(n.valueAt(q));
      QVERIFY(k >= 2 && k <= 5);
      ints.insert(k);
      choices.insert(c.valueAt(q));
    }
    QCOMPARE(ints, (std::set<int64_t>{2, 3, 4, 5}));  // inclusive, every one reached
    QCOMPARE(choices, (std::set<std::string>{"32", "128", "\"x\""}));
    // log_uniform spreads evenly in log: the middle quantile is the geometric mean.
    QVERIFY(std::abs(std::log10(std::stod(lr.valueAt(0.5))) + 3) < 1e-9);
    QCOMPARE(lr.valueAt(0), std::string("1e-05"));
    // Bad bounds are refused, naming the field.
    auto message = [](const std::string& text) {
      try {
        parseDistribution(text, "study.search.train.lr");
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY(message(R"({"log_uniform": [0, 1]})").find("positive") != std::string::npos);
    QVERIFY(message(R"({"uniform": [2, 1]})").find("below") != std::string::npos);
    QVERIFY(message(R"({"int": [1.5, 3]})").find("whole") != std::string::npos);
    QVERIFY(message(R"({"choice": []})").find("non-empty") != std::string::npos);
    QVERIFY(message(R"({"normal": [0, 1]})").find("unknown distribution") != std::string::npos);
    QVERIFY(message(R"({"uniform": [0, 1]})") == "no error");
    QVERIFY(message(R"({"int": [3, 1]})").find("study.search.train.lr") == 0);
  }

  void parsesSearchArguments() {
    SearchedKey k = parseSearchArgument("train.lr=log_uniform:1e-5:1e-1");
    QCOMPARE(k.key, std::string("train.lr"));
    QVERIFY(k.dist.kind == Distribution::Kind::LogUniform);
    QCOMPARE(k.dist.low, 1e-5);
    QCOMPARE(k.dist.high, 0.1);
    QCOMPARE(k.dist.text(), std::string("log_uniform:1e-05:0.1"));
    k = parseSearchArgument("train.batch_size=choice:[32,128]");
    QCOMPARE(k.dist.choices, (std::vector<std::string>{"32", "128"}));
    k = parseSearchArgument("model.depth=int:2:6");
    QVERIFY(k.dist.kind == Distribution::Kind::Int);
    // The text and the JSON forms read back the same distribution.
    QCOMPARE(parseDistribution(k.dist.json(), "f").text(), k.dist.text());
    auto message = [](const std::string& a) {
      try {
        parseSearchArgument(a);
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY(message("train.lr").find("KEY=DIST") != std::string::npos);
    QVERIFY(message("train.lr=gauss:1:2").find("unknown distribution") != std::string::npos);
    QVERIFY(message("train.lr=uniform:1").find("LOW:HIGH") != std::string::npos);
    QVERIFY(message("train.lr=uniform:a:2").find("'a' is not a number") != std::string::npos);
    QVERIFY(message("train.lr=choice:32").find("JSON list") != std::string::npos);
  }

  void samplersAreDeterministicForASeed() {
    SearchSpec s;
    s.keys = {parseSearchArgument("train.lr=log_uniform:1e-5:1e-1"),
              parseSearchArgument("train.batch_size=choice:[32,64,128]")};
    for (const char* sampler : {"random", "sobol", "maxlipo"}) {
      s.sampler = sampler;
      std::vector<TrialResult> earlier;
      std::vector<std::vector<std::string>> first;
      for (int t = 0; t < 6; ++t) {
        const auto values = drawTrial(s, 7, t, earlier);
        QCOMPARE(values.size(), size_t(2));
        QCOMPARE(drawTrial(s, 7, t, earlier), values);  // the same draw again
        first.push_back(values);
        // A made-up result: better with a lower lr, so maxlipo has something to follow.
        earlier.push_back({values, -std::log10(std::stod(values[0]))});
      }
      // Another seed draws other points.
      std::vector<TrialResult> none;
      bool differs = false;
      for (int t = 0; t < 6 && !differs; ++t) {
        std::vector<TrialResult> before(earlier.begin(), earlier.begin() + t);
        differs = drawTrial(s, 8, t, before) != first[static_cast<size_t>(t)];
      }
      QVERIFY2(differs, sampler);
      // random and sobol draws do not depend on what came before.
      if (std::string(sampler) != "maxlipo") QCOMPARE(drawTrial(s, 7, 4, none), first[4]);
    }
  }

  void sobolStratifiesEachCoordinate() {
    for (uint64_t seed : {1ull, 2ull, 99ull}) {
      for (int k = 1; k <= 6; ++k) {
        const int n = 1 << k;
        for (size_t dims : {size_t(1), size_t(3)}) {
          std::vector<std::vector<int>> cells(dims, std::vector<int>(static_cast<size_t>(n), 0));
          for (int t = 0; t < n; ++t) {
            const auto u = unitPoint("sobol", dims, seed, t);
            for (size_t d = 0; d < dims; ++d) {
              QVERIFY(u[d] >= 0 && u[d] < 1);
              ++cells[d][static_cast<size_t>(u[d] * n)];
            }
          }
          for (size_t d = 0; d < dims; ++d)
            for (int c : cells[d]) QCOMPARE(c, 1);  // the first 2^k points: one per cell
        }
      }
    }
    // Scrambled: another seed moves the points, the origin included.
    QVERIFY(unitPoint("sobol", 2, 1, 0) != unitPoint("sobol", 2, 2, 0));
    QVERIFY(unitPoint("sobol", 2, 1, 0)[0] != 0);
    // Random points are not stratified in general (16 draws in 16 cells rarely fill them).
    int filled = 0;
    std::set<int> seen;
    for (int t = 0; t < 16; ++t)
      seen.insert(static_cast<int>(unitPoint("random", 1, 3, t)[0] * 16));
    filled = static_cast<int>(seen.size());
    QVERIFY(filled < 16);
  }

  void rungsAreMinStepsTimesReductionPowers() {
    PruneSpec p;
    p.minSteps = 100;
    p.reduction = 3;
    QCOMPARE(rungSteps(p, 1875), (std::vector<int64_t>{100, 300, 900}));
    QCOMPARE(rungSteps(p, 900), (std::vector<int64_t>{100, 300}));  // the end is no rung
    QCOMPARE(rungSteps(p, 100), std::vector<int64_t>{});
    p.minSteps = 10;
    p.reduction = 2;
    QCOMPARE(rungSteps(p, 100), (std::vector<int64_t>{10, 20, 40, 80}));
  }

  void ashaStopsTheRightTrialsAtTheRightRungs() {
    // Scripted curves of val_accuracy at the rungs 100 and 300 for 6 trials run in turn, as the
    // fake engine would report them. Reduction 3: the best max(1, n / 3) of the n trials that
    // reached a rung go on.
    PruneSpec spec;
    spec.minSteps = 100;
    spec.reduction = 3;
    AshaPruner pruner(spec, /*higherBetter=*/true);
    struct Trial {
      double at100, at300;
    };
    const std::vector<Trial> trials = {{0.50, 0.60}, {0.40, 0.0}, {0.55, 0.58},
                                       {0.52, 0.70}, {0.30, 0.0}, {0.60, 0.59}};
    std::vector<std::string> outcome;
    for (const auto& t : trials) {
      auto d = pruner.decide(100, t.at100);
      if (!d.keep) {
        outcome.push_back("pruned@100");
        continue;
      }
      d = pruner.decide(300, t.at300);
      outcome.push_back(d.keep ? "completed" : "pruned@300");
    }
    // Trial 1 is first at both rungs: never waits, never pruned. Trial 2 (0.40 < 0.50, n = 2,
    // best 1 goes on): pruned at 100. Trial 3 (0.55, best of 3): on; at 300 (0.58 < 0.60, n = 2):
    // pruned. Trial 4 (0.52 ranks 2nd of 4, best 1): pruned at 100. Trial 5 (0.30, 5th of 5):
    // pruned. Trial 6 (0.60 best of 6, best 2 go on): on; at 300 0.59 ranks 2nd of 3, best 1:
    // pruned.
    QCOMPARE(outcome, (std::vector<std::string>{"completed", "pruned@100", "pruned@300",
                                                "pruned@100", "pruned@100", "pruned@300"}));
    // Lower is better for a loss.
    AshaPruner losses(spec, higherIsBetter("val_loss"));
    QVERIFY(losses.decide(100, 1.0).keep);
    QVERIFY(!losses.decide(100, 2.0).keep);
    QVERIFY(losses.decide(100, 0.5).keep);
    // A NaN (a diverged trial) is worse than any number.
    AshaPruner nan(spec, true);
    QVERIFY(nan.decide(100, 0.1).keep);
    QVERIFY(!nan.decide(100, std::nan("")).keep);
  }

  void onlyValidationMetricsChoose() {
    QVERIFY(higherIsBetter("val_accuracy"));
    QVERIFY(!higherIsBetter("val_loss"));
    QVERIFY(!higherIsBetter("val_bits_per_byte"));
    requireValidationMetric("val_accuracy", "f");
    for (const char* m : {"test_accuracy", "accuracy", "val_", "loss"}) {
      try {
        requireValidationMetric(m, "study.tune.metric");
        QFAIL(m);
      } catch (const StudyError& e) {
        QVERIFY(std::string(e.what()).find("study.tune.metric") == 0);
      }
    }
  }

  void searchObjectRoundTrips() {
    const std::string text = R"({
      "vary": {"mode": ["local", "backprop"]},
      "search": {"train.lr": {"log_uniform": [1e-5, 1e-1]},
                 "train.batch_size": {"choice": [32, 128]}},
      "trials": 12, "sampler": "sobol",
      "prune": {"metric": "val_accuracy", "min_steps": 100, "reduction": 3},
      "tune": {"metric": "val_accuracy", "seeds": 3}})";
    const StudyObject s = parseStudyObject(text);
    QCOMPARE(s.search.keys.size(), size_t(2));
    QCOMPARE(s.search.keys[0].key, std::string("train.lr"));  // in the text's order
    QCOMPARE(s.search.trials, 12);
    QCOMPARE(s.search.sampler, std::string("sobol"));
    QVERIFY(s.search.prune && s.search.prune->minSteps == 100 && s.search.prune->reduction == 3);
    QVERIFY(s.search.tune && s.search.tune->seeds == 3);
    QCOMPARE(studyObjectJson(parseStudyObject(studyObjectJson(s))), studyObjectJson(s));
    // Defaults: 8 trials, random, prune/tune's defaults.
    const StudyObject d = parseStudyObject(
        R"({"search": {"train.lr": {"uniform": [0.1, 0.2]}}, "prune": {}, "tune": {}})");
    QCOMPARE(d.search.trials, kDefaultTrials);
    QCOMPARE(d.search.sampler, std::string("random"));
    QCOMPARE(d.search.prune->metric, std::string("val_accuracy"));
    QCOMPARE(d.search.tune->seeds, 3);
    auto message = [](const std::string& t) {
      try {
        parseStudyObject(t);
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY(message(R"({"trials": 4})").find("study.trials: belongs to a search") == 0);
    QVERIFY(message(R"({"search": {"train.lr": {"uniform": [0, 1]}}, "sampler": "grid"})")
                .find("study.sampler") == 0);
    QVERIFY(message(R"({"search": {"train.lr": {"uniform": [0, 1]}},
                        "tune": {"metric": "test_accuracy"}})")
                .find("study.tune.metric") == 0);
    QVERIFY(message(R"({"search": {"train.lr": {"uniform": [0, 1]}}, "prune": {"reduction": 1}})")
                .find("study.prune.reduction") == 0);
  }

  void searchPlansItsPointsInOrder() {
    StudyPlan plan;
    plan.keys = {parseVary(R"(mode=["local","backprop"])")};
    plan.search.keys = {parseSearchArgument("train.lr=log_uniform:1e-4:1e-2")};
    plan.search.trials = 3;
    plan.search.tune = TuneSpec{};
    plan.search.tune->seeds = 2;
    checkSearch(plan);
    QCOMPARE(searchPointCount(plan), 2 * (3 + 2));
    QCOMPARE(pointKeys(plan), (std::vector<std::string>{"mode", "train.lr"}));
    // Trial t of each vary point before trial t + 1; the tuned runs after every trial.
    const GridPoint t = trialPoint(plan, 1, 2, {"0.001"});
    QCOMPARE(t.index, 2 * 2 + 1);
    QCOMPARE(t.values, (std::vector<std::string>{"\"backprop\"", "0.001"}));
    QCOMPARE(t.seed, int64_t(1));
    const GridPoint tuned = tunedPoint(plan, 1, 1, {"0.001"});
    QCOMPARE(tuned.index, 3 * 2 + 1 * 2 + 1);
    QCOMPARE(tuned.seed, int64_t(3));  // fresh: the trials ran on seed 1
    QCOMPARE(pointSets(plan, tuned),
             (std::vector<std::string>{"mode=\"backprop\"", "train.lr=0.001", "train.seed=3"}));
    QCOMPARE(describePoint(plan, t), std::string("trial 3: mode=backprop, train.lr=0.001, seed 1"));
    // Refused: seeds (tune has them), a searched mode, a key both varied and searched.
    auto message = [](StudyPlan p) {
      try {
        checkSearch(p);
      } catch (const StudyError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    StudyPlan bad = plan;
    bad.seeds = 3;
    QVERIFY(message(bad).find("study.seeds") == 0);
    bad = plan;
    bad.search.keys.push_back(parseSearchArgument("mode=choice:[\"local\"]"));
    QVERIFY(message(bad).find("study.search.mode") == 0);
    bad = plan;
    bad.keys.push_back(parseVary("train.lr=[0.1]"));
    QVERIFY(message(bad).find("also varied") != std::string::npos);
    // The check points: each vary point with each key at its bounds.
    QCOMPARE(searchCheckPoints(plan).size(), size_t(2 * 2));
  }

  void studentTQuantiles() {
    QVERIFY(std::abs(tQuantile975(1) - 12.706) < 1e-3);
    QVERIFY(std::abs(tQuantile975(2) - 4.303) < 1e-3);
    QVERIFY(std::abs(tQuantile975(30) - 2.042) < 1e-3);
    const Stat s = stat({1, 2, 3});
    QCOMPARE(s.min, 1.0);
    QCOMPARE(s.max, 3.0);
    QVERIFY(std::abs(s.sem() - 1 / std::sqrt(3.0)) < 1e-12);
  }
};

QTEST_GUILESS_MAIN(TestStudy)
#include "test_study.moc"
