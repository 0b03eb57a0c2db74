// The study views' data for a search: the parallel-coordinates axes (log for log_uniform,
// categories for choice) and each trial's place on them, pruned trials marked, the newest
// record of a trial run again; each key's importance (binned one-way ANOVA eta squared within
// vary points); and the spread shown around a mean (std, standard error, 95 % CI, min-max).
#include <QtTest>
#include <cmath>

#include "stagewise/study/search_views.h"

using namespace stagewise;
using namespace stagewise::study;
using storage::RunStatus;

namespace {

/// A search over train.lr (log_uniform 1e-4..1e-1) and train.batch_size (choice 32, 128) for two
/// modes, 3 trials each.
StudyPlan plan() {
  StudyPlan p;
  p.keys = {{"mode", {"\"local\"", "\"backprop\""}}};
  p.search.keys = {{"train.lr", parseDistribution(R"({"log_uniform": [0.0001, 0.1]})", "lr")},
                   {"train.batch_size", parseDistribution(R"({"choice": [32, 128]})", "b")}};
  p.search.trials = 3;
  p.search.prune = PruneSpec{};
  return p;
}

StudyRunRow row(int point, int64_t id, const std::string& mode, const std::string& lr,
                const std::string& batch, RunStatus status, double val, bool replaced = false) {
  StudyRunRow r;
  r.link.point = point;
  r.link.runId = id;
  r.link.replaced = replaced;
  if (status == RunStatus::Pruned) r.link.prunedAt = 100;
  r.run.id = id;
  r.run.status = status;
  r.values = {"\"" + mode + "\"", lr, batch};
  r.valAccuracy = val;
  return r;
}

}  // namespace

class TestSearchViews : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parallelCoordinatesData() {
    StudyResults res;
    res.plan = plan();
    // Trial t of vary point v is point t * 2 + v.
    res.rows = {row(0, 1, "local", "0.001", "32", RunStatus::Completed, 0.80),
                row(1, 2, "backprop", "0.01", "128", RunStatus::Completed, 0.70),
                row(2, 3, "local", "0.0001", "128", RunStatus::Pruned, 0.40),
                row(2, 9, "local", "0.0001", "128", RunStatus::Completed, 0.50),  // run again
                row(3, 4, "backprop", "0.1", "32", RunStatus::Failed, 0.1),
                row(6, 5, "local", "0.001", "32", RunStatus::Completed, 0.9)};  // a tuned run
    res.rows[2].link.replaced = true;
    TunedResult t0, t1;
    t0.bestSoFar = {0.8, 0.8};
    t1.bestSoFar = {0.7, 0.7};
    res.tuned = {t0, t1};
    const SearchViews v = searchViews(res);
    QCOMPARE(v.metric, std::string("val_accuracy"));
    QVERIFY(v.higherBetter);
    QCOMPARE(v.axes.size(), size_t(3));  // two keys and the metric
    QCOMPARE(v.axes[0].key, std::string("train.lr"));
    QVERIFY(v.axes[0].log && !v.axes[0].categorical);
    QVERIFY(v.axes[1].categorical);
    QCOMPARE(v.axes[1].labels.size(), size_t(2));
    QCOMPARE(v.axes[2].key, std::string("val_accuracy"));
    // The metric axis spans the trials' values (pruned included, the failed one has none).
    QCOMPARE(v.axes[2].low, 0.5);
    QCOMPARE(v.axes[2].high, 0.8);
    QCOMPARE(v.varyLabels, (std::vector<std::string>{"mode=local", "mode=backprop"}));
    // Trials only (not the tuned run), the newest record of point 2, in trial order.
    QCOMPARE(v.trials.size(), size_t(4));
    QCOMPARE(v.trials[0].runId, int64_t(1));
    QCOMPARE(v.trials[1].runId, int64_t(2));
    QCOMPARE(v.trials[2].runId, int64_t(9));
    QCOMPARE(v.trials[2].trial, 1);
    QCOMPARE(v.trials[2].varyPoint, 0);
    QVERIFY(v.trials[2].completed && !v.trials[2].pruned);
    QVERIFY(std::isnan(v.trials[3].metric));  // failed: no value
    // Log axis: 1e-3 sits at a third of the way from 1e-4 to 1e-1; the choice 128 at its index.
    QVERIFY(std::abs(v.axes[0].position(v.trials[0].coords[0]) - 1.0 / 3) < 1e-12);
    QCOMPARE(v.trials[1].coords[1], 1.0);
    QCOMPARE(v.axes[1].position(v.trials[1].coords[1]), 1.0);
    // The lines: lr, batch size and the metric's place (0.8 is the top of 0.5..0.8).
    const auto line = parallelLine(v, v.trials[0]);
    QCOMPARE(line.size(), size_t(3));
    QVERIFY(std::abs(line[0] - 1.0 / 3) < 1e-12);
    QCOMPARE(line[1], 0.0);
    QCOMPARE(line[2], 1.0);
    QVERIFY(std::abs(parallelLine(v, v.trials[2])[2]) < 1e-12);
    QVERIFY(std::isnan(parallelLine(v, v.trials[3])[2]));
    QCOMPARE(v.bestSoFar.size(), size_t(2));
    QCOMPARE(v.importance.size(), size_t(2));
  }

  void prunedTrialsAreMarked() {
    StudyResults res;
    res.plan = plan();
    res.rows = {row(0, 1, "local", "0.001", "32", RunStatus::Pruned, 0.3)};
    const SearchViews v = searchViews(res);
    QCOMPARE(v.trials.size(), size_t(1));
    QVERIFY(v.trials[0].pruned && !v.trials[0].completed);
    QCOMPARE(v.trials[0].prunedAt.value_or(0), int64_t(100));
    QCOMPARE(v.trials[0].metric, 0.3);
  }

  void etaSquaredIsTheShareBetweenGroups() {
    // Two groups, means 1 and 3 about 2, deviations of 1 within: SS_between 4, SS_total 8.
    const std::vector<int> g = {0, 0, 1, 1};
    const std::vector<double> y = {0, 2, 2, 4};
    QVERIFY(std::abs(etaSquared(g, y) - 4.0 / 8.0) < 1e-12);
    QVERIFY(std::isnan(etaSquared({0, 1}, {1, 1})));        // no variance
    QCOMPARE(etaSquared({0, 0, 1, 1}, {1, 1, 2, 2}), 1.0);  // the key explains all of it
  }

  void importanceLooksWithinVaryPoints() {
    // The metric follows lr on a log scale in both modes, offset by mode: lr explains all of the
    // variance within modes, the batch size (alternating, unrelated) none of it.
    StudyPlan p = plan();
    p.search.trials = 8;
    StudyResults res;
    res.plan = p;
    const char* lrs[] = {"0.0001", "0.1", "0.0001", "0.1", "0.0001", "0.1", "0.0001", "0.1"};
    const char* batch[] = {"32", "32", "128", "128", "32", "32", "128", "128"};
    int64_t id = 1;
    for (int t = 0; t < 8; ++t)
      for (int m = 0; m < 2; ++m) {
        const double high = std::string(lrs[t]) == "0.1" ? 0.1 : 0.0;
        res.rows.push_back(row(t * 2 + m, id++, m ? "backprop" : "local", lrs[t], batch[t],
                               RunStatus::Completed, 0.5 + 0.3 * m + high));
      }
    const SearchViews v = searchViews(res);
    QVERIFY2(std::abs(v.importance[0] - 1.0) < 1e-9, qPrintable(QString::number(v.importance[0])));
    QVERIFY2(std::abs(v.importance[1]) < 1e-9, qPrintable(QString::number(v.importance[1])));
    // Pruned trials do not count: their value is from fewer steps (0.99 at a low lr would make
    // lr explain little).
    res.rows[0].run.status = RunStatus::Pruned;
    res.rows[0].valAccuracy = 0.99;
    const SearchViews w = searchViews(res);
    QVERIFY2(w.importance[0] > 0.95, qPrintable(QString::number(w.importance[0])));
  }

  void binsFollowTheAxisScale() {
    SearchAxis a;
    a.log = true;
    a.low = 1e-4;
    a.high = 1e-0;
    QCOMPARE(binOf(a, 1e-4, 4), 0);
    QCOMPARE(binOf(a, 1.5e-3, 4), 1);  // log10 -2.8: the second quarter of -4..0
    QCOMPARE(binOf(a, 1.0, 4), 3);     // the top end is in the last bin
    a.log = false;
    QCOMPARE(binOf(a, 0.3, 4), 1);
  }

  void spreads() {
    const Stat s = stat({1, 2, 3, 6});
    QCOMPARE(spreadBounds(s, Spread::Std).first, s.mean - s.std);
    QCOMPARE(spreadBounds(s, Spread::Sem).second, s.mean + s.std / 2);
    // Student's t with 3 degrees of freedom: 3.182446.
    const auto ci = spreadBounds(s, Spread::Ci95);
    QVERIFY(std::abs((ci.second - s.mean) / (s.std / 2) - 3.182446) < 1e-5);
    QCOMPARE(spreadBounds(s, Spread::MinMax), std::make_pair(1.0, 6.0));
    const Stat one = stat({0.5});
    QCOMPARE(spreadBounds(one, Spread::Ci95), std::make_pair(0.5, 0.5));
    for (Spread x : {Spread::Std, Spread::Sem, Spread::Ci95, Spread::MinMax})
      QVERIFY(spreadFromId(spreadId(x)) == x);
    QVERIFY(spreadFromId("nonsense") == Spread::Std);
  }
};

QTEST_APPLESS_MAIN(TestSearchViews)
#include "test_search_views.moc"
