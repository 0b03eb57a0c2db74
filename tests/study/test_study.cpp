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
};

QTEST_GUILESS_MAIN(TestStudy)
#include "test_study.moc"
