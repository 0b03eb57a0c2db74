// The replication report: each finding's verdict rule on stored runs made for the test (cases
// that reproduce, that do not, and that are inconclusive), the suite's studies and runs, reuse
// of stored runs, and the documents (report.json's fields; report.html well-formed, with every
// plot inline and nothing referenced outside itself).
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <map>
#include <numeric>
#include <set>

#include "report_fixture.h"
#include "stagewise/report/collect.h"
#include "stagewise/report/findings.h"
#include "stagewise/report/report.h"
#include "stagewise/report/session.h"
#include "stagewise/report/suite.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

using namespace stagewise;
using namespace stagewise::report;
using report_fixture::FakeRun;
using report_fixture::storeRun;

Q_DECLARE_METATYPE(stagewise::report::Verdict)

namespace {

/// A store in a temporary folder, and the stored runs read back as the findings read them.
struct Store {
  QTemporaryDir dir;
  storage::RunStore store{(dir.path() + "/runs.db").toStdString()};
  study::ShapeCache shapes;
  std::vector<RunData> read(const std::vector<FakeRun>& runs) {
    std::vector<int64_t> ids;
    for (const auto& r : runs) ids.push_back(storeRun(store, r));
    storage::RunReader reader(store);
    std::vector<RunData> out;
    for (int64_t id : ids) out.push_back(collectRun(reader, id, shapes));
    return out;
  }
};

/// Per-layer and per-stage cosines over 300 steps, probes every 50: layer l's value is
/// `base[l]` (layers 0..5; the last stage's 6..8 at 1), plus `jitter` for the seed.
FakeRun cosineRun(const std::vector<double>& base, double jitter, int64_t seed) {
  FakeRun r;
  r.seed = seed;
  for (int64_t step = 49; step < 300; step += 50) {
    for (int l = 0; l < 9; ++l) {
      const int stage = l < 2 ? 0 : l < 4 ? 1 : l < 6 ? 2 : 3;
      const double v = stage == 3 ? 1.0 : base[size_t(l)] + jitter;
      r.cosines.push_back({stage, l, step, v});
    }
    for (int k = 0; k < 4; ++k) {
      const double v =
          k == 3 ? 1.0 : 0.5 * (base[size_t(2 * k)] + base[size_t(2 * k + 1)]) + jitter;
      r.cosines.push_back({k, -1, step, v});
    }
  }
  return r;
}

/// Evaluations at 10 points of a run of `wall` seconds rising to `final`.
std::vector<FakeRun::Eval> rising(double final, double wall, int64_t steps = 300) {
  std::vector<FakeRun::Eval> e;
  for (int i = 1; i <= 10; ++i)
    e.push_back({wall * i / 10, steps * i / 10 - 1, final * (0.5 + 0.05 * i)});
  return e;
}

FakeRun accuracyRun(const std::string& mode, double acc, double wall, int64_t seed) {
  FakeRun r;
  r.mode = mode;
  r.seed = seed;
  r.testAccuracy = acc;
  r.wall = wall;
  r.evals = rising(acc, wall);
  return r;
}

}  // namespace

class TestReport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gradientSimilarity_data() {
    QTest::addColumn<std::vector<double>>("base");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("falls toward the input")
        << std::vector<double>{0.3, 0.4, 0.5, 0.6, 0.7, 0.8} << Verdict::Reproduced;
    // The last stage's layers are at 1: were they counted, this would rank high.
    QTest::newRow("rises toward the input")
        << std::vector<double>{0.8, 0.7, 0.6, 0.5, 0.4, 0.3} << Verdict::NotReproduced;
    QTest::newRow("partly") << std::vector<double>{0.5, 0.3, 0.7, 0.4, 0.8, 0.6}
                            << Verdict::Inconclusive;
  }
  void gradientSimilarity() {
    QFETCH(std::vector<double>, base);
    QFETCH(Verdict, verdict);
    Store s;
    const auto runs = s.read({cosineRun(base, 0.0, 1), cosineRun(base, 0.01, 2)});
    const Finding f = judgeGradientSimilarity(runs);
    QCOMPARE(f.id, std::string("gradient_similarity"));
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(f.runs.size(), size_t{2});
    QCOMPARE(f.plots.size(), size_t{1});
    QCOMPARE(f.plots[0].series.size(), size_t{6});  // layers outside the last stage
  }

  void gradientSimilarityNeedsLayers() {
    Store s;
    FakeRun r = cosineRun({0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 0, 1);
    r.cosines.clear();  // no probes
    const Finding f = judgeGradientSimilarity(s.read({r}));
    QVERIFY(f.verdict == Verdict::Inconclusive);
  }

  void communication_data() {
    QTest::addColumn<double>("gradShare");  // gradient bytes per activation byte
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("half") << 1.0 << Verdict::Reproduced;
    QTest::newRow("no saving") << 0.2 << Verdict::NotReproduced;
    QTest::newRow("between") << 0.6 << Verdict::Inconclusive;
  }
  void communication() {
    QFETCH(double, gradShare);
    QFETCH(Verdict, verdict);
    Store s;
    const int64_t samples = 300 * 32, act = 2048;
    FakeRun local, pipe;
    local.bytesSent = {act * samples, act * samples, (act + 8) * samples, 0};
    pipe.mode = "pipeline";
    pipe.bytesSent = {(act + 8) * samples, (act + 8) * samples, (act + 8) * samples, 0};
    const auto grad = static_cast<int64_t>(gradShare * act) * samples;
    pipe.gradBytesSent = {0, grad, grad, grad};
    const auto l = s.read({local}), p = s.read({pipe});
    const Finding f = judgeCommunication(l, p);
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(f.paperValue.value_or(0), 0.5);
    const auto ours = nlohmann::json::parse(f.oursJson);
    QCOMPARE(ours["local_bytes_per_sample"].size(), size_t{3});
    QCOMPARE(ours["local_bytes_per_sample"][0].get<double>(), double(act));
  }

  void memory_data() {
    QTest::addColumn<double>("ratio");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("lower") << 0.7 << Verdict::Reproduced;
    QTest::newRow("higher") << 1.2 << Verdict::NotReproduced;
    QTest::newRow("equal") << 1.0 << Verdict::Inconclusive;
    QTest::newRow("not counted") << -1.0 << Verdict::Inconclusive;
  }
  void memory() {
    QFETCH(double, ratio);
    QFETCH(Verdict, verdict);
    Store s;
    FakeRun local, pipe, bp;
    pipe.mode = "pipeline";
    bp.mode = "backprop";
    pipe.peakMemory = {1000000, 900000, 800000, 700000};
    const int64_t lp = ratio < 0 ? -1 : static_cast<int64_t>(1000000 * ratio);
    local.peakMemory = {lp, lp < 0 ? -1 : lp / 2, lp < 0 ? -1 : lp / 2, lp < 0 ? -1 : lp / 2};
    bp.peakMemory = {3000000};
    const Finding f = judgeMemory(s.read({local}), s.read({pipe}), s.read({bp}));
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(f.runs.size(), size_t{3});
  }

  void throughput_data() {
    QTest::addColumn<double>("local2");
    QTest::addColumn<int>("cores");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("faster") << 1500.0 << 2 << Verdict::Reproduced;
    QTest::newRow("slower") << 900.0 << 2 << Verdict::NotReproduced;
    QTest::newRow("a little faster") << 1100.0 << 2 << Verdict::Inconclusive;
    QTest::newRow("one core") << 1500.0 << 1 << Verdict::Inconclusive;
  }
  void throughput() {
    QFETCH(double, local2);
    QFETCH(int, cores);
    QFETCH(Verdict, verdict);
    Store s;
    std::vector<FakeRun> runs;
    const std::vector<std::vector<int>> cuts = {{}, {4}, {3, 6}, {2, 4, 6}};
    for (int round = 1; round <= 2; ++round) {
      FakeRun bp;
      bp.mode = "backprop";
      bp.samplesPerSec = 800;
      bp.seed = round;
      runs.push_back(bp);
      for (size_t k = 0; k < cuts.size(); ++k) {
        FakeRun l;
        l.cuts = cuts[k];
        l.seed = round;
        l.samplesPerSec = k == 1 ? local2 + round : 700 + 100.0 * double(k);
        runs.push_back(l);
        if (k == 0) continue;
        FakeRun p = l;
        p.mode = "pipeline";
        p.samplesPerSec = 1000 + round;
        runs.push_back(p);
      }
    }
    const Finding f = judgeThroughput(s.read(runs), cores);
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    const auto ours = nlohmann::json::parse(f.oursJson);
    QCOMPARE(ours["cores"].get<int>(), cores);
    QCOMPARE(ours["samples_per_sec"]["local"].size(), size_t{4});  // 1..4 stages
    QCOMPARE(f.plots.at(0).markers, std::vector<double>{double(cores)});
  }

  void accuracy_data() {
    QTest::addColumn<std::vector<double>>("local");
    QTest::addColumn<std::vector<double>>("backprop");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("close") << std::vector<double>{0.850, 0.851, 0.849}
                           << std::vector<double>{0.855, 0.856, 0.854} << Verdict::Reproduced;
    QTest::newRow("far behind") << std::vector<double>{0.75, 0.751, 0.749}
                                << std::vector<double>{0.855, 0.856, 0.854}
                                << Verdict::NotReproduced;
    QTest::newRow("noisy") << std::vector<double>{0.80, 0.86, 0.76}
                           << std::vector<double>{0.855, 0.856, 0.854} << Verdict::Inconclusive;
    QTest::newRow("one seed") << std::vector<double>{0.85} << std::vector<double>{0.85}
                              << Verdict::Inconclusive;
  }
  void accuracy() {
    QFETCH(std::vector<double>, local);
    QFETCH(std::vector<double>, backprop);
    QFETCH(Verdict, verdict);
    Store s;
    std::vector<FakeRun> l, b;
    for (size_t i = 0; i < local.size(); ++i)
      l.push_back(accuracyRun("local", local[i], 10, int64_t(i) + 1));
    for (size_t i = 0; i < backprop.size(); ++i)
      b.push_back(accuracyRun("backprop", backprop[i], 10, int64_t(i) + 1));
    const Finding f = judgeAccuracy(s.read(l), s.read(b));
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(f.plots.size(), size_t{2});  // against samples and against time
    const auto ours = nlohmann::json::parse(f.oursJson);
    QVERIFY(std::abs(ours["equal_epochs"]["local_mean"].get<double>() -
                     std::accumulate(local.begin(), local.end(), 0.0) / double(local.size())) <
            1e-12);
  }

  void equalTimeReadsTheCurves() {
    // Local ends at 8 s, backprop at 16 s: at 8 s backprop is halfway up its curve.
    Store s;
    const auto l = s.read({accuracyRun("local", 0.80, 8, 1), accuracyRun("local", 0.80, 8, 2)});
    const auto b =
        s.read({accuracyRun("backprop", 0.90, 16, 1), accuracyRun("backprop", 0.90, 16, 2)});
    const Finding f = judgeAccuracy(l, b);
    const auto eq = nlohmann::json::parse(f.oursJson)["equal_time"];
    QCOMPARE(eq["time_s"].get<double>(), 8.0);
    QVERIFY(std::abs(eq["backprop_mean"].get<double>() - 0.90 * 0.75) < 1e-9);  // at i = 5
    QVERIFY(std::abs(eq["local_mean"].get<double>() - 0.80) < 1e-9);
  }

  void overlap_data() {
    QTest::addColumn<double>("overlapCosine");
    QTest::addColumn<double>("spread");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("higher") << 0.8 << 0.005 << Verdict::Reproduced;
    QTest::newRow("lower") << 0.6 << 0.005 << Verdict::NotReproduced;
    QTest::newRow("within noise") << 0.705 << 0.05 << Verdict::Inconclusive;
  }
  void overlap() {
    QFETCH(double, overlapCosine);
    QFETCH(double, spread);
    QFETCH(Verdict, verdict);
    Store s;
    std::vector<FakeRun> chunked, over;
    for (int seed = 1; seed <= 3; ++seed) {
      const double j = (seed - 2) * spread;
      FakeRun c = cosineRun(std::vector<double>(6, 0.7), j, seed);
      c.testAccuracy = 0.85;
      FakeRun o = cosineRun(std::vector<double>(6, overlapCosine), -j, seed);
      o.overlap = 1;
      o.testAccuracy = 0.85;
      chunked.push_back(c);
      over.push_back(o);
    }
    const Finding f = judgeOverlap(s.read(chunked), s.read(over));
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
  }

  void front_data() {
    QTest::addColumn<int>("localStep");  // the step at which local reaches the target
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("fewer sequential steps") << 120 << Verdict::Reproduced;
    QTest::newRow("many more steps") << 299 << Verdict::NotReproduced;
  }
  void front() {
    QFETCH(int, localStep);
    QFETCH(Verdict, verdict);
    Store s;
    // Backprop reaches 0.8 at step 49; the 4-stage local run at `localStep`. Its slowest stage
    // does about a third of the model's work a step.
    auto run = [](const std::string& mode, int64_t hit) {
      FakeRun r;
      r.mode = mode;
      for (int64_t step = 9; step < 300; step += 10)
        r.evals.push_back({double(step), step, step >= hit ? 0.8 : 0.5});
      r.testAccuracy = 0.8;
      return r;
    };
    const auto runs = s.read({run("backprop", 49), run("local", localStep)});
    QVERIFY(runs[1].slowestStageFlopsPerSample < 0.6 * runs[0].slowestStageFlopsPerSample);
    const Finding f = judgeFront(runs);
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(f.plots.size(), size_t{2});
  }

  void frontWithoutALocalGroupIsInconclusive() {
    Store s;
    FakeRun bp;
    bp.mode = "backprop";
    bp.evals = rising(0.8, 10);
    const Finding f = judgeFront(s.read({bp}));
    QVERIFY(f.verdict == Verdict::Inconclusive);
  }

  void randomLabels_data() {
    QTest::addColumn<double>("backprop");
    QTest::addColumn<double>("local");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("backprop memorises") << 0.9 << 0.3 << Verdict::Reproduced;
    QTest::newRow("both memorise") << 0.9 << 0.88 << Verdict::NotReproduced;
    QTest::newRow("neither fits yet") << 0.3 << 0.25 << Verdict::Inconclusive;
  }
  void randomLabels() {
    QFETCH(double, backprop);
    QFETCH(double, local);
    QFETCH(Verdict, verdict);
    Store s;
    FakeRun b, l;
    b.mode = "backprop";
    b.randomLabels = l.randomLabels = true;
    b.finalAccuracy = {backprop};
    l.finalAccuracy = {0.3, 0.3, 0.3, local};
    for (int64_t step = 0; step < 300; step += 10)
      b.headAccuracy.push_back({step, backprop * step / 300}),
          l.headAccuracy.push_back({step, local});
    const Finding f = judgeRandomLabels(s.read({l}), s.read({b}));
    QVERIFY2(f.verdict == verdict, (f.oursText + " / " + f.why).c_str());
    QCOMPARE(nlohmann::json::parse(f.oursJson)["chance"].get<double>(), 0.25);  // 4 classes
  }

  void suiteHasOneStudyPerFindingAndSharesRuns() {
    const std::string base = report_fixture::specJsonOf(FakeRun{});
    study::ShapeCache shapes;
    SuiteOptions options;
    options.quick = true;
    options.cores = 2;
    const Suite suite = planSuite(base, options, shapes);
    std::set<std::string> findings;
    for (const auto& st : suite.studies) findings.insert(st.finding);
    std::set<std::string> expected(kFindingIds.begin(), kFindingIds.end());
    expected.insert(kSearchStudy);
    QCOMPARE(findings, expected);
    // issue 32 §5: every learning finding has a tuned twin, planned after the search; the search
    // is the same for each method, on a validation split the findings' runs do not hold out.
    int tunedStudies = 0;
    for (const auto& st : suite.studies) {
      if (!st.tuned) continue;
      ++tunedStudies;
      QVERIFY(st.finding != kSearchStudy && !st.fresh);
    }
    QCOMPARE(tunedStudies, 5);
    const SuiteStudy* search = nullptr;
    for (const auto& st : suite.studies)
      if (st.finding == kSearchStudy) search = &st;
    QVERIFY(search && search->plan.isSearch());
    QCOMPARE(search->plan.search.trials, 6);
    QCOMPARE(search->plan.search.keys.size(), size_t{1});
    QCOMPARE(search->plan.search.keys[0].key, std::string("train.lr"));
    QVERIFY(search->plan.search.prune.has_value());
    QCOMPARE(search->plan.search.choosingMetric(), std::string("val_accuracy"));
    QCOMPARE(engine::parseSpec(search->baseSpecJson).dataset.validation, 0.1);
    for (const auto& st : suite.studies)
      if (st.finding != kSearchStudy) QCOMPARE(engine::parseSpec(st.baseSpecJson).dataset.validation, 0.0);
    QCOMPARE(suite.baseStages, 4);
    QCOMPARE(suite.seeds, 2);
    const auto jobs = planJobs(suite, {"cpu"}, shapes);
    // Throughput first, round after round; nothing trained twice.
    bool learning = false;
    int round = 0;
    std::set<std::string> identities;
    for (const auto& j : jobs) {
      if (!j.fresh) learning = true;
      QVERIFY2(!(learning && j.fresh), "a throughput run after the learning runs");
      if (j.fresh) {
        QVERIFY(j.round >= round);
        round = j.round;
      }
      QVERIFY2(identities.insert(j.identity).second, j.label.c_str());
    }
    // The local runs of gradient similarity are those of overlap 0 (the accuracy study's runs
    // have no probes, as backprop has none); communication and memory read the throughput runs
    // at the base's cut.
    auto studyOf = [&](const std::string& id) {
      for (size_t i = 0; i < suite.studies.size(); ++i)
        if (suite.studies[i].finding == id) return i;
      return size_t(-1);
    };
    int shared = 0, measuredTwice = 0;
    for (const auto& j : jobs) {
      std::set<size_t> studies;
      for (const auto& l : j.links) studies.insert(l.study);
      shared += studies.count(studyOf("gradient_similarity")) && studies.count(studyOf("overlap"));
      if (studies.count(studyOf("accuracy"))) QCOMPARE(j.spec.probe.interval, int64_t{-1});
      measuredTwice += studies.count(studyOf("throughput_vs_stages")) &&
                       studies.count(studyOf("communication")) && studies.count(studyOf("memory"));
      if (studies.count(studyOf("random_labels")))
        QVERIFY(j.spec.dataset.randomLabels);
      else
        QVERIFY(!j.spec.dataset.randomLabels);
    }
    QCOMPARE(shared, 2);         // one local run per seed
    // The search's trials: 6 per method, the same rates for each, no tuned run yet.
    std::map<std::string, std::vector<double>> trialRates;
    for (const auto& j : jobs) {
      for (const auto& l : j.links) QVERIFY(!suite.studies[l.study].tuned);
      if (j.trial) trialRates[engine::toString(j.spec.mode)].push_back(j.spec.train.lr);
      if (j.trial) QCOMPARE(j.spec.dataset.validation, 0.1);
    }
    QCOMPARE(trialRates["local"].size(), size_t{6});
    QCOMPARE(trialRates["local"], trialRates["backprop"]);
    for (double lr : trialRates["local"]) QVERIFY(lr >= 1e-5 && lr <= 1e-2);
    QCOMPARE(measuredTwice, 4);  // local and pipeline at the base cut, once per round
    // Quick mode says what it changed.
    QVERIFY(!suite.adaptations.empty());
  }

  void sessionReusesStoredRunsButMeasuresThroughputAnew() {
    Store s;
    const std::string base = report_fixture::specJsonOf(FakeRun{});
    SuiteOptions options;
    options.quick = true;
    const Suite suite = planSuite(base, options, s.shapes);
    const auto jobs = planJobs(suite, {"cpu"}, s.shapes);
    // A completed run of exactly one learning job's spec and one throughput job's spec.
    const SuiteJob* learningJob = nullptr;
    const SuiteJob* freshJob = nullptr;
    for (const auto& j : jobs) (j.fresh ? freshJob : learningJob) = &j;
    for (const SuiteJob* j : {learningJob, freshJob}) {
      storage::NewRun run;
      run.name = "earlier";
      run.mode = engine::toString(j->spec.mode);
      engine::ExperimentSpec spec = j->spec;
      spec.name = "an earlier run";  // the name does not make it another run
      run.specJson = engine::specToJson(spec);
      const int64_t id = s.store.writer().createRun(run);
      storage::RunFinish f;
      f.summaryJson = "{}";
      s.store.writer().finishRun(id, f);
    }
    s.store.writer().flush();
    ReportSession session(s.store, suite, jobs, "report test", true);
    const auto left = session.begin();
    QCOMPARE(session.reused(), size_t{1});
    QCOMPARE(left.size(), jobs.size() - 1);
    QCOMPARE(session.studyIds().size(), suite.studies.size());
    // The reused run is linked to every study point it makes.
    storage::RunReader reader(s.store);
    size_t links = 0;
    for (int64_t id : session.studyIds()) links += reader.studyRuns(id).size();
    QCOMPARE(links, learningJob->links.size());
    session.finish(false);
    const ReportDoc doc = session.build(describeMachine(2, "OpenBLAS", "1.13", {"cpu"}), 1.0);
    QCOMPARE(doc.findings.size(), kFindingIds.size());
    for (size_t i = 0; i < kFindingIds.size(); ++i) QCOMPARE(doc.findings[i].id, kFindingIds[i]);
  }

  // issue 32 §5: the search chooses each method's rate on validation alone (a scrambled test
  // accuracy and a pruned trial's better rung value change nothing), the tuned runs train at
  // those rates, the shared-lr runs at the base's, and the documents carry both.
  void tunedRunsUseEachMethodsRateChosenOnValidation() {
    Store s;
    const std::string base = report_fixture::specJsonOf(FakeRun{});
    SuiteOptions options;
    options.quick = true;
    const Suite suite = planSuite(base, options, s.shapes);
    const auto jobs = planJobs(suite, {"cpu"}, s.shapes);
    ReportSession session(s.store, suite, jobs, "report test", true);
    const auto left = session.begin();
    size_t searchStudy = 0;
    for (size_t i = 0; i < suite.studies.size(); ++i)
      if (suite.studies[i].finding == kSearchStudy) searchStudy = i;
    // Validation peaks at a different rate for each method; the test accuracy is its mirror, so
    // choosing on it would pick the worst rate. The last trial of each method is pruned with a
    // value above every completed one: never chosen.
    auto val = [](const std::string& mode, double lr) {
      const double peak = mode == "local" ? -3.5 : -4.0;
      return 0.9 - 0.1 * std::abs(std::log10(lr) - peak);
    };
    std::map<std::string, double> expected, bestVal;
    std::map<std::string, int> seen;
    int trials = 0;
    const auto rungs = study::rungSteps(*suite.studies[searchStudy].plan.search.prune,
                                        engine::parseSpec(suite.studies[searchStudy].baseSpecJson)
                                            .train.maxSteps);
    QVERIFY(!rungs.empty());
    const int64_t rung = rungs.front();
    for (size_t i : left) {
      const SuiteJob& j = session.jobs()[i];
      if (!j.trial) continue;
      ++trials;
      const std::string mode = engine::toString(j.spec.mode);
      const bool prune = ++seen[mode] == 6;
      const double v = prune ? 0.99 : val(mode, j.spec.train.lr);
      storage::NewRun run;
      run.name = session.runName(i);
      run.mode = mode;
      run.specJson = engine::specToJson(j.spec);
      run.batchSize = j.spec.train.batchSize;
      run.totalSteps = j.spec.train.maxSteps;
      const int64_t id = s.store.writer().createRun(run);
      storage::RunFinish f;
      f.status = prune ? storage::RunStatus::Stopped : storage::RunStatus::Completed;
      f.steps = prune ? rung : j.spec.train.maxSteps;
      f.testAccuracy = 1 - v;
      f.summaryJson = nlohmann::json({{"val_accuracy", v}, {"test_accuracy", 1 - v}}).dump();
      s.store.writer().finishRun(id, f);
      s.store.writer().flush();
      session.linkRun(i, id);
      if (prune)
        s.store.markRunPruned(session.studyIds()[searchStudy], id, rung, "pruned at the rung");
      session.runEnded(i, !prune);
      if (!prune && (!bestVal.count(mode) || v > bestVal[mode]))
        bestVal[mode] = v, expected[mode] = j.spec.train.lr;
    }
    QCOMPARE(trials, 12);
    const auto tuned = session.planTuned({"cpu"});
    QVERIFY(!tuned.empty());
    QCOMPARE(session.chosenRates(), expected);
    QVERIFY(expected["local"] != expected["backprop"]);
    // Every tuned run trains at its method's chosen rate and makes points of tuned studies only;
    // every shared-lr run at the base's rate.
    std::set<std::string> tunedFindings;
    for (size_t i : tuned) {
      const SuiteJob& j = session.jobs()[i];
      QCOMPARE(j.spec.train.lr, expected.at(engine::toString(j.spec.mode)));
      for (const auto& l : j.links) {
        QVERIFY(suite.studies[l.study].tuned);
        tunedFindings.insert(suite.studies[l.study].finding);
      }
    }
    QCOMPARE(tunedFindings.size(), size_t{5});
    for (const auto& j : session.jobs())
      if (!j.trial && !j.fresh && j.links.size() && !suite.studies[j.links[0].study].tuned)
        QCOMPARE(j.spec.train.lr, 1e-3);
    QVERIFY(session.planTuned({"cpu"}).empty());  // once

    session.finish(false);
    const ReportDoc doc = session.build(describeMachine(2, "OpenBLAS", "1.13", {"cpu"}), 1.0);
    QVERIFY(doc.search.has_value());
    const auto json = nlohmann::json::parse(reportJson(doc));
    const auto& search = json["search"];
    QCOMPARE(search["metric"].get<std::string>(), std::string("val_accuracy"));
    QCOMPARE(search["methods"].size(), size_t{2});
    for (const auto& m : search["methods"]) {
      const std::string mode = m["mode"];
      QCOMPARE(m["trials"].size(), size_t{6});
      QCOMPARE(m["chosen"]["train.lr"].get<double>(), expected[mode]);
      QCOMPARE(m["trials"][5]["status"].get<std::string>(), std::string("pruned"));
      QCOMPARE(m["trials"][5]["pruned_at"].get<int64_t>(), rung);
      QCOMPARE(m["best_so_far"].back().get<double>(), bestVal[mode]);
    }
    int learning = 0;
    for (const auto& f : json["findings"]) {
      const std::string id = f["id"];
      const bool isLearning = id == "accuracy" || id == "gradient_similarity" || id == "overlap" ||
                              id == "compute_time_front" || id == "random_labels";
      QCOMPARE(f.contains("tuned"), isLearning);
      QCOMPARE(f.contains("shared_lr"), isLearning);
      if (!isLearning) continue;
      ++learning;
      for (const auto& [mode, settings] : f["tuned"]["settings"].items()) {
        QCOMPARE(settings["train.lr"].get<double>(), expected[mode]);
        QCOMPARE(settings["val_accuracy"].get<double>(), bestVal[mode]);
      }
      for (const auto& [mode, settings] : f["shared_lr"]["settings"].items())
        QCOMPARE(settings["train.lr"].get<double>(), 1e-3);
      QVERIFY(f["tuned"]["study_id"] != f["shared_lr"]["study_id"]);
      QCOMPARE(f["study_id"], f["tuned"]["study_id"]);
    }
    QCOMPARE(learning, 5);
    // The CLI table has the shared-lr column; the page the search section, well-formed.
    const std::string table = verdictTable(doc);
    QVERIFY(table.find("shared lr") != std::string::npos);
    QVERIFY(table.find("lr search: local") != std::string::npos);
    const QString html = QString::fromStdString(reportHtml(doc));
    QXmlStreamReader xml(html);
    while (!xml.atEnd()) xml.readNext();
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(html.contains("id=\"lr_search\""));
    QVERIFY(html.indexOf("id=\"lr_search\"") < html.indexOf("<h2>Findings</h2>"));
    QVERIFY(html.contains("class=\"sharedlr\">shared lr</span>"));

    // A second report reuses every trial, the pruned ones staying pruned.
    ReportSession again(s.store, suite, jobs, "report test 2", true);
    again.begin();
    QCOMPARE(again.reused(), size_t{12});
    storage::RunReader reader(s.store);
    int pruned = 0;
    for (const auto& l : reader.studyRuns(again.studyIds()[searchStudy]))
      pruned += l.prunedAt.has_value() && *l.prunedAt == rung;
    QCOMPARE(pruned, 2);
    QVERIFY(again.planTuned({"cpu"}).size() == tuned.size());
    QCOMPARE(again.chosenRates(), expected);
  }

  void documentsAreWhatTheyClaim() {
    // Every finding judged from runs that reproduce it, so that every plot has data.
    Store s;
    ReportDoc doc;
    doc.quick = true;
    doc.createdAt = "2026-12-02T17:00:00Z";
    doc.machine = describeMachine(2, "OpenBLAS 0.3.21", "1.13.1", {"cpu"});
    doc.baseSpecJson = report_fixture::specJsonOf(FakeRun{});
    doc.adaptations = {"quick: 600 steps <instead> of 1875 & more"};
    const auto cos = s.read({cosineRun({0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 0, 1),
                             cosineRun({0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 0.01, 2)});
    doc.findings.push_back(judgeGradientSimilarity(cos));
    FakeRun l, p;
    l.bytesSent = {1000, 1000, 1000, 0};
    p.mode = "pipeline";
    p.bytesSent = l.bytesSent;
    p.gradBytesSent = {0, 1000, 1000, 1000};
    doc.findings.push_back(judgeCommunication(s.read({l}), s.read({p})));
    doc.findings.push_back(judgeAccuracy(s.read({accuracyRun("local", 0.8, 10, 1)}),
                                         s.read({accuracyRun("backprop", 0.81, 12, 1)})));
    doc.studyIds["accuracy"] = 7;
    doc.specs.push_back({"accuracy: mode=local, seed 1", doc.baseSpecJson, {1}});
    doc.storePath = "/tmp/runs.db";

    const auto json = nlohmann::json::parse(reportJson(doc));
    QCOMPARE(json["version"].get<int>(), 1);
    QCOMPARE(json["quick"].get<bool>(), true);
    QCOMPARE(json["machine"]["cores"].get<int>(), 2);
    QCOMPARE(json["machine"]["blas"].get<std::string>(), std::string("OpenBLAS 0.3.21"));
    for (const auto& f : json["findings"]) {
      for (const char* key :
           {"id", "claim", "paper_value", "ours", "rule", "verdict", "why", "runs"})
        QVERIFY2(f.contains(key), key);
      const std::string v = f["verdict"];
      QVERIFY(v == "reproduced" || v == "not_reproduced" || v == "inconclusive");
      QVERIFY(f["ours"].is_object());
      QVERIFY(!f["runs"].empty());
    }
    QCOMPARE(json["findings"][2]["study_id"].get<int>(), 7);
    QCOMPARE(json["findings"][1]["paper_value"].get<double>(), 0.5);

    const QString html = QString::fromStdString(reportHtml(doc));
    // Well-formed: an XML parser reads it to the end.
    QXmlStreamReader xml(html);
    int svgs = 0;
    QStringList outside;
    while (!xml.atEnd()) {
      xml.readNext();
      if (!xml.isStartElement()) continue;
      const QString name = xml.name().toString();
      if (name == "svg") ++svgs;
      for (const QString bad : {"script", "link", "iframe", "object", "embed", "img"})
        if (name == bad) outside << name;
      for (const auto& a : xml.attributes()) {
        const QString n = a.qualifiedName().toString(), v = a.value().toString();
        if ((n == "href" || n == "src" || n == "xlink:href" || n == "srcset") && !v.startsWith('#'))
          outside << n + "=" + v;
        if (v.contains("url(") && !v.contains("url(#")) outside << n + "=" + v;
      }
    }
    QVERIFY2(!xml.hasError(),
             qPrintable(xml.errorString() + " at line " + QString::number(xml.lineNumber())));
    QVERIFY2(outside.isEmpty(), qPrintable(outside.join(", ")));
    QVERIFY(!html.contains("@import"));
    size_t plots = 0;
    for (const auto& f : doc.findings) plots += f.plots.size();
    QCOMPARE(svgs, int(plots));
    // Text is escaped, and the report says it is quick, and on what machine.
    QVERIFY(html.contains("&lt;instead&gt; of 1875 &amp; more"));
    QVERIFY(html.contains("Quick report"));
    QVERIFY(html.contains("OpenBLAS 0.3.21"));
  }
};

QTEST_GUILESS_MAIN(TestReport)
#include "test_report.moc"
