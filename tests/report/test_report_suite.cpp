// The replication report's suite and documents: its studies and runs (schedules swept where the
// stage count allows, tuned rates), reuse of stored runs, and the documents (report.json's
// fields; report.html well-formed, with every plot inline and nothing referenced outside itself).
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "report_fixture.h"
#include "stagewise/report/collect.h"
#include "stagewise/report/findings.h"
#include "stagewise/report/plot.h"
#include "stagewise/report/report.h"
#include "stagewise/report/session.h"
#include "stagewise/report/suite.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

#include "report_cases.h"

using namespace stagewise;
using namespace stagewise::report;
using namespace report_cases;

class TestReportSuite : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void suiteOnTextSkipsTheSearchAndRandomLabels() {
    QTemporaryDir dir;
    const QString path = dir.path() + "/corpus.txt";
    {
      QFile file(path);
      QVERIFY(file.open(QIODevice::WriteOnly));
      for (int i = 0; i < 2000; ++i)
        file.write(QByteArray("The quick brown fox jumps over the lazy dog. ") +
                   QByteArray::number(i) + "\n");
    }
    nlohmann::json base = nlohmann::json::parse(report_fixture::specJsonOf([] {
      FakeRun r;
      r.text = true;
      return r;
    }()));
    base["dataset"]["path"] = path.toStdString();
    study::ShapeCache shapes;
    SuiteOptions options;
    options.quick = true;
    const Suite suite = planSuite(base.dump(), options, shapes);
    std::set<std::string> findings;
    for (const auto& st : suite.studies) {
      findings.insert(st.finding);
      QVERIFY(!st.tuned && !st.plan.isSearch());
      QVERIFY(st.baseSpecJson.find("random_labels") == std::string::npos);
      QVERIFY(st.baseSpecJson.find("validation") == std::string::npos ||
              nlohmann::json::parse(st.baseSpecJson)["dataset"].value("validation", 0.0) == 0.0);
    }
    std::set<std::string> expected(kFindingIds.begin(), kFindingIds.end());
    expected.erase("random_labels");
    QCOMPARE(findings, expected);
    bool said = false;
    for (const auto& a : suite.adaptations)
      said = said || a.find("bits per byte") != std::string::npos;
    QVERIFY(said);
    // Every run it plans is one the engine accepts on text.
    QVERIFY(!planJobs(suite, {"cpu"}, shapes).empty());
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
      if (st.finding != kSearchStudy)
        QCOMPARE(engine::parseSpec(st.baseSpecJson).dataset.validation, 0.0);
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
    QCOMPARE(shared, 2);  // one local run per seed
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
    // The pipeline's M is swept (1, K, 2K) in the throughput rounds; memory also measures
    // 2K micro-batches and twice the stages; communication reads M = K.
    std::set<std::pair<int, int>> pipelineThroughput, pipelineMemory;
    std::set<size_t> localMemoryStages;
    for (const auto& j : jobs) {
      std::set<size_t> studies;
      for (const auto& l : j.links) studies.insert(l.study);
      const int k = int(j.spec.partition.cuts.size()) + 1;
      if (j.spec.mode == engine::Mode::Pipeline) {
        if (studies.count(studyOf("throughput_vs_stages")))
          pipelineThroughput.insert({k, j.spec.pipeline.microBatches});
        if (studies.count(studyOf("memory")))
          pipelineMemory.insert({k, j.spec.pipeline.microBatches});
        if (studies.count(studyOf("communication"))) QCOMPARE(j.spec.pipeline.microBatches, 4);
      }
      if (j.spec.mode == engine::Mode::Local && studies.count(studyOf("memory")))
        localMemoryStages.insert(size_t(k));
    }
    for (int k : {1, 2, 3, 4})
      for (int m : {1, 4, 8}) QVERIFY(pipelineThroughput.count({k, m}));
    QCOMPARE(pipelineThroughput.size(), size_t{12});
    // issue 37: the throughput rounds also measure 1f1b and zb-h1 at 2..4 stages and interleaved
    // (2 chunks on 2 workers) at 4, quick mode at M = K alone; memory_recompute's study measures
    // local against GPipe with and without recomputation at 2 and 4 stages and M = 4 and 8, in
    // one round. In all the quick report measures 18 runs more than before (60 fresh runs).
    std::set<std::tuple<std::string, int, int, int>> schedules;  // schedule, chunks, stages, M
    std::set<std::tuple<int, int, bool>> recomputed;             // stages, M, recompute
    std::set<int> recomputeLocal, recomputeRounds;
    std::set<std::string> parts;
    int freshJobs = 0;
    for (const auto& st : suite.studies) parts.insert(st.part);
    for (const auto& j : jobs) {
      freshJobs += j.fresh;
      const int k = int(j.spec.partition.cuts.size()) + 1;
      const auto& pl = j.spec.pipeline;
      for (const auto& l : j.links) {
        const SuiteStudy& st = suite.studies[l.study];
        if (st.finding == "throughput_vs_stages" && j.spec.mode == engine::Mode::Pipeline)
          schedules.insert({pl.schedule, pl.chunks, k, pl.microBatches});
        if (st.finding == "memory_recompute") {
          QVERIFY(st.part.empty() && st.fresh);
          QCOMPARE(pl.schedule, std::string("gpipe"));
          if (j.spec.mode == engine::Mode::Pipeline) {
            recomputed.insert({k, pl.microBatches, pl.recompute});
            recomputeRounds.insert(j.round);
          } else {
            recomputeLocal.insert(k);
          }
        }
      }
      if (j.spec.mode == engine::Mode::Pipeline && pl.schedule == "gpipe") QCOMPARE(pl.chunks, 1);
    }
    QCOMPARE(parts, (std::set<std::string>{"", "schedules", "interleaved"}));
    std::set<std::tuple<std::string, int, int, int>> expectedSchedules;
    for (int k : {1, 2, 3, 4})
      for (int m : {1, 4, 8}) expectedSchedules.insert({"gpipe", 1, k, m});
    for (int k : {2, 3, 4})
      for (const std::string schedule : {"1f1b", "zb-h1"})
        expectedSchedules.insert({schedule, 1, k, 4});
    expectedSchedules.insert({"interleaved", 2, 4, 4});
    QCOMPARE(schedules, expectedSchedules);
    QCOMPARE(recomputed, (std::set<std::tuple<int, int, bool>>{{2, 4, false},
                                                               {2, 4, true},
                                                               {2, 8, false},
                                                               {2, 8, true},
                                                               {4, 4, false},
                                                               {4, 4, true},
                                                               {4, 8, false},
                                                               {4, 8, true}}));
    QCOMPARE(recomputeLocal, (std::set<int>{2, 4}));
    QCOMPARE(recomputeRounds, (std::set<int>{1}));
    QCOMPARE(freshJobs, 60);
    bool skipped = false;
    for (const auto& a : suite.adaptations)
      skipped = skipped || a.find(
                               "interleaved (2 model chunks per worker) at 4 stages; skipped "
                               "at 2, 3 stages") != std::string::npos;
    QVERIFY(skipped);
    QCOMPARE(pipelineMemory,
             (std::set<std::pair<int, int>>{{4, 1}, {4, 4}, {4, 8}, {8, 1}, {8, 4}, {8, 8}}));
    QCOMPARE(localMemoryStages, (std::set<size_t>{4, 8}));
    // Quick mode says what it changed, and every length it used (issue 36 §1.7): the steps of
    // the learning runs and of the throughput runs, as the jobs have them.
    QVERIFY(!suite.adaptations.empty());
    std::set<int64_t> learnSteps, speedSteps;
    for (const auto& j : jobs)  // the front and random labels count epochs (max_steps 0)
      if (j.spec.train.maxSteps > 0)
        (j.fresh ? speedSteps : learnSteps).insert(j.spec.train.maxSteps);
    QCOMPARE(learnSteps.size(), size_t{1});
    QCOMPARE(speedSteps.size(), size_t{1});
    QString lengths;
    for (const auto& a : suite.adaptations)
      if (a.rfind("lengths:", 0) == 0) lengths = QString::fromStdString(a);
    QVERIFY2(
        lengths.contains(QStringLiteral("learning runs %1 steps").arg(*learnSteps.begin())) &&
            lengths.contains(
                QStringLiteral("throughput and memory runs %1 steps").arg(*speedSteps.begin())) &&
            lengths.contains(QStringLiteral("batch ")) &&
            lengths.contains(QStringLiteral("from the base's")),
        qPrintable(lengths));
  }

  // issue 37: a full report sweeps the other schedules at M = K and 2K and measures
  // recomputation in every round; a base whose stage counts do not allow interleaved (2 chunks
  // on 2 or more workers) runs none and says so.
  void suiteSweepsSchedulesWhereTheStageCountAllows_data() {
    QTest::addColumn<bool>("quick");
    QTest::addColumn<std::vector<int>>("cuts");
    QTest::addColumn<int>("interleavedRuns");  // per round
    QTest::addColumn<QString>("adapted");
    QTest::newRow("full, 4 stages") << false << std::vector<int>{2, 4, 6} << 2
                                    << "interleaved (2 model chunks per worker) at 4 stages; "
                                       "skipped at 2, 3 stages";
    QTest::newRow("quick, 3 stages") << true << std::vector<int>{3, 6} << 0
                                     << "interleaved (2 model chunks per worker) not measured; "
                                        "skipped at 2, 3 stages";
  }
  void suiteSweepsSchedulesWhereTheStageCountAllows() {
    QFETCH(bool, quick);
    QFETCH(std::vector<int>, cuts);
    QFETCH(int, interleavedRuns);
    QFETCH(QString, adapted);
    FakeRun base;
    base.cuts = cuts;
    study::ShapeCache shapes;
    SuiteOptions options;
    options.quick = quick;
    const Suite suite = planSuite(report_fixture::specJsonOf(base), options, shapes);
    const int stages = int(cuts.size()) + 1;
    const auto jobs = planJobs(suite, {"cpu"}, shapes);
    std::map<std::string, std::set<std::pair<int, int>>> bySchedule;  // (stages, M)
    std::map<std::string, int> runs;
    std::set<int> recomputeRounds;
    for (const auto& j : jobs) {
      if (j.spec.mode != engine::Mode::Pipeline) continue;
      const int k = int(j.spec.partition.cuts.size()) + 1;
      for (const auto& l : j.links)
        if (suite.studies[l.study].finding == "throughput_vs_stages") {
          bySchedule[j.spec.pipeline.schedule].insert({k, j.spec.pipeline.microBatches});
          ++runs[j.spec.pipeline.schedule];
          break;
        }
      if (j.spec.pipeline.recompute) recomputeRounds.insert(j.round);
    }
    std::set<std::pair<int, int>> others;
    for (int k = 2; k <= stages; ++k)
      for (int m : quick ? std::vector<int>{stages} : std::vector<int>{stages, 2 * stages})
        others.insert({k, m});
    QCOMPARE(bySchedule["1f1b"], others);
    QCOMPARE(bySchedule["zb-h1"], others);
    QCOMPARE(runs["interleaved"], interleavedRuns * suite.rounds);
    QCOMPARE(recomputeRounds.size(), size_t(quick ? 1 : suite.rounds));
    bool said = false;
    for (const auto& a : suite.adaptations)
      said = said || QString::fromStdString(a).startsWith(adapted);
    QVERIFY(said);
    std::set<std::string> parts;
    for (const auto& st : suite.studies) parts.insert(st.part);
    QCOMPARE(parts.count("interleaved"), size_t(interleavedRuns > 0));
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

  // issue 37: the suite's throughput and memory runs judged from the store: the throughput
  // against the fastest schedule of every study of the finding, memory's verdict at the base's
  // stages (the recomputation runs' 2-stage ones do not move it), recomputation judged from its
  // own study at 4 stages and M = 8, and the findings' studies in report.json are their own, not
  // a part's.
  void suiteJudgesSchedulesAndRecomputationFromTheStore() {
    Store s;
    const std::string base = report_fixture::specJsonOf(FakeRun{});
    SuiteOptions options;
    options.quick = true;
    const Suite suite = planSuite(base, options, s.shapes);
    const auto jobs = planJobs(suite, {"cpu"}, s.shapes);
    ReportSession session(s.store, suite, jobs, "report test", true);
    for (size_t i : session.begin()) {
      const SuiteJob& j = session.jobs()[i];
      if (!j.fresh) continue;
      const auto& pl = j.spec.pipeline;
      const bool piped = j.spec.mode == engine::Mode::Pipeline;
      const int k =
          j.spec.mode == engine::Mode::Backprop ? 1 : int(j.spec.partition.cuts.size()) + 1;
      // zb-h1 the fastest pipeline; recomputation halves the pipeline's peak; local's peak is
      // 0.8x GPipe's at 4 stages and 0.5x at 2.
      const double speed = !piped                         ? 2000
                           : pl.schedule == "zb-h1"       ? 1500
                           : pl.schedule == "interleaved" ? 1400
                                                          : 1000 + pl.microBatches;
      const int64_t peak = !piped ? (k == 2 ? 500000 : 800000) : (pl.recompute ? 500000 : 1000000);
      storage::NewRun run;
      run.name = session.runName(i);
      run.mode = engine::toString(j.spec.mode);
      run.specJson = engine::specToJson(j.spec);
      run.batchSize = j.spec.train.batchSize;
      const int64_t id = s.store.writer().createRun(run);
      nlohmann::json stages = nlohmann::json::array();
      for (int st = 0; st < k; ++st)
        stages.push_back({{"index", st},
                          {"steps", 100},
                          {"peak_memory_bytes", peak},
                          {"bubble_measured", piped ? 0.3 : 0.1},
                          {"bubble_planned", piped ? 0.2 : 0.05}});
      storage::RunFinish f;
      f.steps = 100;
      f.samplesPerSec = speed;
      f.summaryJson = nlohmann::json{{"stages", stages}}.dump();
      s.store.writer().finishRun(id, f);
      s.store.writer().flush();
      session.linkRun(i, id);
      session.runEnded(i, true);
    }
    session.finish(false);
    const ReportDoc doc = session.build(describeMachine(2, "OpenBLAS", "1.13", {"cpu"}), 1.0);
    const Finding* throughput = nullptr;
    const Finding* memory = nullptr;
    const Finding* recompute = nullptr;
    for (const auto& f : doc.findings) {
      if (f.id == "throughput_vs_stages") throughput = &f;
      if (f.id == "memory") memory = &f;
      if (f.id == "memory_recompute") recompute = &f;
    }
    QVERIFY(throughput && memory && recompute);
    const auto t = nlohmann::json::parse(throughput->oursJson);
    QCOMPARE(t["pipeline_schedule"].get<std::string>(), std::string("zb-h1"));
    QCOMPARE(t["k_star"].get<int>(), 2);
    QCOMPARE(t["speedup_over_pipeline"].get<double>(), 2000.0 / 1500);
    std::set<std::pair<int, std::string>> methods;
    for (const auto& row : t["by_schedule"]) {
      methods.insert({row["stages"].get<int>(), row["method"].get<std::string>()});
      if (row["method"] != "local") QCOMPARE(row["bubble_measured"].get<double>(), 0.3);
    }
    QVERIFY(methods.count({4, "interleaved"}) && methods.count({3, "1f1b"}) &&
            methods.count({2, "zb-h1"}) && methods.count({1, "gpipe"}));
    QVERIFY(!methods.count({2, "interleaved"}));
    const auto m = nlohmann::json::parse(memory->oursJson);
    QCOMPARE(m["stages"].get<int>(), 4);
    QCOMPARE(m["ratio_local_pipeline"].get<double>(), 0.8);
    QVERIFY(!m.contains("recompute") && memory->tables.empty());
    // Recomputation halves the pipeline's peak; at 4 stages local holds 0.8 / 0.5 of it.
    const auto r = nlohmann::json::parse(recompute->oursJson);
    QCOMPARE(r["by_setting"].size(), size_t{4});  // 2 and 4 stages, M = 4 and 8
    for (const auto& row : r["by_setting"]) {
      const double local = row["stages"] == 2 ? 500000 : 800000;
      QCOMPARE(row["ratio"].get<double>(), local / 1000000);
      QCOMPARE(row["ratio_recompute"].get<double>(), local / 500000);
    }
    QCOMPARE(r["stages"].get<int>(), 4);
    QCOMPARE(r["micro_batches"].get<int>(), 8);
    QVERIFY(recompute->verdict == Verdict::NotReproduced);  // q_rec = 1.6
    QCOMPARE(recompute->runs.size(), size_t{10});  // local at 2 and 4 stages, 8 pipeline runs
    // report.json's study of a finding is its own study.
    storage::RunReader reader(s.store);
    for (const char* id : {"throughput_vs_stages", "memory", "memory_recompute"}) {
      const auto study = reader.study(doc.studyIds.at(id));
      QVERIFY(study);
      QCOMPARE(study->name, std::string("report test: ") + id);
    }
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
    const auto rungs =
        study::rungSteps(*suite.studies[searchStudy].plan.search.prune,
                         engine::parseSpec(suite.studies[searchStudy].baseSpecJson).train.maxSteps);
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
    FakeRun rb, rl;
    rb.mode = "backprop";
    rb.randomLabels = rl.randomLabels = true;
    rb.finalAccuracy = {0.9};
    rl.finalAccuracy = {0.3, 0.3, 0.3, 0.3};
    for (int64_t step = 0; step < 300; step += 10)
      rb.headAccuracy.push_back({step, 0.9}), rl.headAccuracy.push_back({step, 0.3});
    doc.findings.push_back(judgeRandomLabels(s.read({rl}), s.read({rb})));
    QVERIFY(doc.findings[3].verdict == Verdict::Reproduced);
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
      for (const char* key : {"kind", "paper_finding", "reason", "carried_by", "convergence",
                              "settings", "decide_steps"})
        QVERIFY2(f.contains(key), key);
      const std::string v = f["verdict"];
      QVERIFY(v == "reproduced" || v == "not_reproduced" || v == "inconclusive" ||
              v == "holds_by_construction");
      QVERIFY(f["ours"].is_object());
      QVERIFY(!f["runs"].empty());
      QCOMPARE(f["kind"].get<std::string>(),
               std::string(f["id"] == "random_labels" ? "extra" : "paper"));
    }
    QCOMPARE(json["findings"][2]["study_id"].get<int>(), 7);
    QCOMPARE(json["findings"][1]["paper_value"].get<double>(), 0.5);
    QCOMPARE(json["findings"][1]["verdict"].get<std::string>(),
             std::string("holds_by_construction"));
    QCOMPARE(json["findings"][0]["paper_finding"].get<int>(), 5);
    QCOMPARE(json["findings"][1]["paper_finding"].get<int>(), 3);
    QCOMPARE(json["findings"][2]["paper_finding"].get<int>(), 1);
    // The summary counts only the paper's findings, and never one that holds by construction:
    // gradient similarity reproduced, accuracy inconclusive (one seed), communication by
    // construction; random labels (reproduced) an extra check.
    const auto& sum = json["summary"];
    QCOMPARE(sum["paper"].get<int>(), 3);
    QCOMPARE(sum["reproduced"].get<int>(), 1);
    QCOMPARE(sum["inconclusive"].get<int>(), 1);
    QCOMPARE(sum["holds_by_construction"].get<int>(), 1);
    QCOMPARE(sum["extra"].get<int>(), 1);
    QCOMPARE(json["paper_findings"].size(), size_t{6});
    QCOMPARE(json["paper_findings"][2]["tested_by"], nlohmann::json::array({"communication"}));
    QVERIFY(json["paper_findings"][5]["tested_by"].empty());  // no memory_recompute here
    // The CLI's table says the same.
    const std::string table = verdictTable(doc);
    QVERIFY2(table.find("holds by construction") != std::string::npos, table.c_str());
    QVERIFY2(table.find("random_labels          extra") != std::string::npos, table.c_str());
    QVERIFY2(table.find("communication          paper 3") != std::string::npos, table.c_str());
    QVERIFY2(table.find("1 of 3 findings that test the paper reproduced") != std::string::npos,
             table.c_str());

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
    QVERIFY(html.contains("class=\"verdict holds_by_construction\">holds by construction<"));
    QVERIFY(html.contains("An extra check, not a claim of the paper"));
    QVERIFY(html.contains("Tests the paper's finding 3"));
    QVERIFY(html.contains("1 of 3 findings that test the paper reproduced"));
    QVERIFY(html.contains("OpenBLAS 0.3.21"));
  }

  // Issue 36: the report's memory chart read "1e+07, 2e+07 … bytes" where the workbench says
  // MiB. A byte axis is drawn in IEC units (the data stay bytes); other axes are left alone.
  void byteAxesAreDrawnInIecUnits() {
    Plot plot;
    plot.title = "Peak memory per stage";
    plot.yLabel = "bytes";
    plot.categories = {"stage 1", "stage 2"};
    plot.series.push_back(
        {"local", {0, 1}, {12.5 * 1048576, 30.0 * 1048576}, {}, {}, PlotSeries::Style::Bars, 0});
    // PLplot's svg driver writes each character as an entity ("&#x4d;&#x69;&#x42;").
    const auto drawn = [](const std::string& text) {
      std::string out;
      for (unsigned char c : text) {
        char entity[12];
        std::snprintf(entity, sizeof entity, "&#x%x;", c);
        out += entity;
      }
      return out;
    };
    const std::string svg = renderSvg(plot);
    QVERIFY2(svg.find(drawn("MiB")) != std::string::npos, "no MiB on the axis");
    QVERIFY2(svg.find(drawn("e+0")) == std::string::npos, "ticks in powers of ten");
    QVERIFY2(svg.find(drawn("30")) != std::string::npos, "no tick at 30 MiB");
    QCOMPARE(plot.series[0].y[1], 30.0 * 1048576);  // the caller's data untouched
    Plot accuracy = plot;
    accuracy.yLabel = "test accuracy";
    accuracy.series[0].y = {0.5, 0.8};
    QVERIFY(renderSvg(accuracy).find(drawn("MiB")) == std::string::npos);
  }

  // issue 37: the paper's finding 6 is tested, by memory_recompute, in every document.
  void recomputationTestsThePapersSixthFinding() {
    Store s;
    ReportDoc doc;
    doc.baseSpecJson = report_fixture::specJsonOf(FakeRun{});
    doc.findings.push_back(
        judgeMemoryRecompute(s.read(recomputeRuns(800000, 1000000, 1600000, false))));
    QVERIFY(doc.findings[0].verdict == Verdict::Reproduced);
    const auto json = nlohmann::json::parse(reportJson(doc));
    QCOMPARE(json["paper_findings"][5]["n"].get<int>(), 6);
    QCOMPARE(json["paper_findings"][5]["tested_by"], nlohmann::json::array({"memory_recompute"}));
    for (size_t n = 0; n < 5; ++n) QVERIFY(json["paper_findings"][n]["tested_by"].empty());
    const auto& f = json["findings"][0];
    QCOMPARE(f["id"].get<std::string>(), std::string("memory_recompute"));
    QCOMPARE(f["kind"].get<std::string>(), std::string("paper"));
    QCOMPARE(f["paper_finding"].get<int>(), 6);
    QCOMPARE(f["tables"][0]["rows"].size(), size_t{3});
    QCOMPARE(json["summary"]["reproduced"].get<int>(), 1);
    const std::string table = verdictTable(doc);
    QVERIFY2(table.find("memory_recompute       paper 6  reproduced") != std::string::npos,
             table.c_str());
    const std::string html = reportHtml(doc);
    QVERIFY2(html.find("tested by memory_recompute") != std::string::npos, html.c_str());
    QVERIFY(html.find("not tested by this report") != std::string::npos);  // 1..5 here
  }
};

QTEST_GUILESS_MAIN(TestReportSuite)
#include "test_report_suite.moc"
