// The measurement budget's schedule (docs/metrics.md, "The measurement budget"): which probes
// and evaluations a run takes, against simulated costs. Torch-free: the sanitizer builds run it.
#include <QtTest>

#include "runtime/measure_budget.h"

using namespace stagewise::engine;

namespace {

/// Walks a run of `steps` steps in which training costs `trainPerStep` CPU seconds a step and
/// each probe and evaluation the given costs; returns the final share and the steps measured.
struct Walk {
  double share = 0;
  std::vector<int64_t> probes, evals;
};

Walk walk(MeasureBudget& b, int64_t steps, double trainPerStep, double probeCost, double evalCost) {
  Walk w;
  for (int64_t s = 0; s < steps; ++s) {
    const double training = (static_cast<double>(s) + 1) * trainPerStep;
    const int kinds = b.decide(s, training);
    if (kinds & MeasureBudget::kProbe) w.probes.push_back(s);
    if (kinds & MeasureBudget::kEval) w.evals.push_back(s);
    if (kinds)
      b.charge(s, kinds & MeasureBudget::kProbe ? probeCost : 0,
               kinds & MeasureBudget::kEval ? evalCost : 0);
  }
  w.share = b.share(static_cast<double>(steps) * trainPerStep);
  return w;
}

}  // namespace

class TestMeasureBudget : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void candidatesFollowTheIntervalsButNeverTheLastStep() {
    MeasureBudget b(0.05, 1000, 100, 250, 10);
    QCOMPARE(b.candidates(99), int(MeasureBudget::kProbe));
    QCOMPARE(b.candidates(249), int(MeasureBudget::kEval));
    QCOMPARE(b.candidates(499), MeasureBudget::kProbe | MeasureBudget::kEval);
    QCOMPARE(b.candidates(100), 0);
    QCOMPARE(b.candidates(999), 0);  // the end is measured after training
    MeasureBudget none(0.05, 1000, -1, 0, 10);
    for (int64_t s = 0; s < 1000; ++s) QCOMPARE(none.candidates(s), 0);
  }

  void keptPointsSpreadOverTheRun() {
    // 1875 steps (one epoch of the default preset), a probe asked every 100: 18 points, of
    // which the 9 nearest to tenths of the run are kept.
    MeasureBudget b(0.05, 1875, 100, 150, 10);
    std::vector<int64_t> kept;
    for (int64_t s = 0; s < 1875; ++s)
      if (b.kept(MeasureBudget::kProbe, s)) kept.push_back(s);
    QCOMPARE(kept, (std::vector<int64_t>{199, 399, 599, 799, 899, 1099, 1299, 1499, 1699}));
    // Fewer points asked than kept: all of them.
    MeasureBudget few(0.05, 1875, 500, 0, 10);
    int n = 0;
    for (int64_t s = 0; s < 1875; ++s) n += few.kept(MeasureBudget::kProbe, s);
    QCOMPARE(n, 3);
  }

  void noBudgetTakesEveryPoint() {
    MeasureBudget b(0, 1000, 10, 50, 10);
    const Walk w = walk(b, 1000, 0.01, 1.0, 1.0);  // costly points, all taken anyway
    QCOMPARE(w.probes.size(), size_t{99});
    QCOMPARE(w.evals.size(), size_t{19});
    QCOMPARE(b.counts().thinnedProbes, int64_t{0});
  }

  void theShareStaysWithinTheBudget() {
    // 10,000 steps of 10 ms; a probe asked every 10 steps costs 20 ms (20 % if all were
    // taken), an evaluation every 100 steps 50 ms.
    MeasureBudget b(0.05, 10000, 10, 100, 10);
    const Walk w = walk(b, 10000, 0.01, 0.02, 0.05);
    QVERIFY2(w.share <= 0.05 + 1e-9, qPrintable(QString::number(w.share)));
    QVERIFY2(w.share >= 0.04, qPrintable(QString::number(w.share)));  // and is used
    QVERIFY(w.probes.size() >= 9);
    QVERIFY(w.evals.size() >= 9);
    QVERIFY(w.probes.size() < 999);
    const auto c = b.counts();
    QCOMPARE(c.probes, int64_t(w.probes.size()));
    QCOMPARE(c.probes + c.thinnedProbes, int64_t{999});
    QCOMPARE(c.evals + c.thinnedEvals, int64_t{99});
    // Every kept point was measured.
    for (int64_t s = 0; s < 10000; ++s)
      if (b.kept(MeasureBudget::kProbe, s))
        QVERIFY(std::find(w.probes.begin(), w.probes.end(), s) != w.probes.end());
  }

  void keptPointsAreMeasuredEvenOverBudget() {
    // Each probe costs as much as 100 training steps: the 9 kept ones alone are 9 % of a
    // 1000-step run; nothing else is taken.
    MeasureBudget b(0.05, 1000, 10, 0, 10);
    const Walk w = walk(b, 1000, 0.01, 1.0, 0);
    QCOMPARE(w.probes.size(), size_t{9});
    QVERIFY(w.share > 0.05);
  }

  void forcedEvaluationsAreAlwaysTaken() {
    // RunOptions::evalAtSteps {30, 90, 1000, 5000} as steps {29, 89, 999, 4999}: with no
    // interval and a budget nothing else could afford, exactly 29 and 89 are measured (999 is
    // the last step, measured at the end; 4999 lies past it).
    MeasureBudget b(1e-9, 1000, 0, 0, 10, {29, 89, 999, 4999});
    QCOMPARE(b.candidates(29), int(MeasureBudget::kEval));
    QCOMPARE(b.candidates(30), 0);
    QCOMPARE(b.candidates(999), 0);
    QVERIFY(b.forced(89));
    QVERIFY(!b.forced(999));
    QVERIFY(b.kept(MeasureBudget::kEval, 29));
    QVERIFY(!b.kept(MeasureBudget::kProbe, 29));
    const Walk w = walk(b, 1000, 0.001, 0, 10.0);  // each evaluation costs 10,000 steps
    QCOMPARE(w.evals, (std::vector<int64_t>{29, 89}));
    QVERIFY(w.probes.empty());
    // Beside an interval: the interval's points as before, the forced ones on top.
    MeasureBudget both(0, 1000, 0, 100, 10, {30});
    const Walk v = walk(both, 1000, 0.001, 0, 0.001);
    QCOMPARE(v.evals, (std::vector<int64_t>{30, 99, 199, 299, 399, 499, 599, 699, 799, 899}));
  }

  void releasedPointsGiveTheirReservationBack() {
    MeasureBudget b(0.05, 1000, 10, 0, 10);
    QVERIFY(b.decide(99, 1.0) != 0);  // kept (the first tenth), cost unknown: nothing reserved
    b.charge(99, 0.05, 0);
    QCOMPARE(b.spentS(), 0.05);
    QVERIFY(b.decide(109, 20.0) != 0);  // 0.05 + 0.05 <= 0.05 * (20 + 0.1)
    QCOMPARE(b.spentS(), 0.1);          // reserved at the last cost
    b.release(109);
    QCOMPARE(b.spentS(), 0.05);
    QCOMPARE(b.chargedS(), 0.05);
  }
};

QTEST_GUILESS_MAIN(TestMeasureBudget)
#include "test_measure_budget.moc"
