// Model plan, cut validation, balancing and the speed-up estimate.
#include <QtTest>

#include "stagewise/engine/partition.h"

using namespace stagewise::engine;

namespace {
ModelPlan mlp(std::vector<int> hidden) {
  ModelSpec m;
  m.hidden = std::move(hidden);
  return planModel(m, InputShape{{1, 28, 28}, 10});
}
}  // namespace

class TestPartition : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void mlpPlanCounts() {
    ModelPlan p = mlp({512, 256});
    QCOMPARE(p.layers.size(), size_t{3});
    QCOMPARE(p.layers[0].params, int64_t{784 * 512 + 512});
    QCOMPARE(p.layers[1].params, int64_t{512 * 256 + 256});
    QCOMPARE(p.layers[2].params, int64_t{256 * 10 + 10});
    QCOMPARE(p.layers[2].name, std::string("classifier"));
    QCOMPARE(p.layers[1].outShape, std::vector<int64_t>{256});
    QCOMPARE(p.layers[0].activationBytes, int64_t{512 * 4});
    QVERIFY_THROWS_EXCEPTION(SpecError, planModel(ModelSpec{"resnet", {8}, "relu"}, InputShape{{4}, 2}));
  }

  void validCutsAndMessages() {
    QVERIFY(validateCuts({2, 4, 6}, 9).empty());
    QVERIFY(validateCuts({}, 9).empty());
    auto p = validateCuts({0}, 9);
    QCOMPARE(p.size(), size_t{1});
    QCOMPARE(p[0].field, std::string("partition.cuts[0]"));
    p = validateCuts({4, 3}, 9);
    QCOMPARE(p.size(), size_t{1});
    QVERIFY2(p[0].message.find("stage 2 is empty") != std::string::npos, p[0].message.c_str());
  }

  void balanceMinimisesTheSlowestStage() {
    QCOMPARE(balanceCuts({1, 1, 1, 1}, 2), (std::vector<int>{2}));
    QCOMPARE(balanceCuts({4, 1, 1, 1, 1}, 2), (std::vector<int>{1}));
    QCOMPARE(balanceCuts({1, 1, 1, 1, 1, 1}, 3), (std::vector<int>{2, 4}));
    QCOMPARE(balanceCuts({5, 5}, 1), std::vector<int>{});
    // the default MLP: first layer is heavier (784 inputs); FLOP balance keeps it alone-ish
    ModelPlan p = mlp(std::vector<int>(8, 512));
    auto cuts = balanceCuts(flopCosts(p), 4);
    QCOMPARE(cuts.size(), size_t{3});
    QVERIFY(validateCuts(cuts, 9).empty());
    auto costs = flopCosts(p);
    double worst = 0, total = 0;
    std::vector<int> starts = {0, cuts[0], cuts[1], cuts[2], 9};
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int i = starts[k]; i < starts[k + 1]; ++i) s += costs[size_t(i)];
      worst = std::max(worst, s);
      total += s;
    }
    QVERIFY(worst <= total / 4 * 1.35);
  }

  void partitionCarriesSettingsAndCosts() {
    ExperimentSpec spec = parseSpec(R"({"partition":{"cuts":[3]},"stages":[{"aux_head":"mlp","aux_hidden":64},{}]})");
    ModelPlan p = mlp({32, 32, 32, 32});
    PartitionPlan part = makePartition(spec, p);
    QCOMPARE(part.stages.size(), size_t{2});
    QCOMPARE(part.stages[0].lastLayer, 2);
    QCOMPARE(part.stages[1].firstLayer, 3);
    QVERIFY(part.stages[1].isLast);
    QCOMPARE(part.stages[1].auxParams, int64_t{0});
    QCOMPARE(part.stages[0].auxParams, int64_t{32 * 64 + 64 + 64 * 10 + 10});
    QCOMPARE(part.stages[0].outBytes, int64_t{32 * 4});
    ExperimentSpec bal = parseSpec(R"({"partition":{"balance":"flops","stages":2}})");
    QCOMPARE(resolveCuts(bal, p).size(), size_t{1});
    ExperimentSpec bad = parseSpec(R"({"partition":{"cuts":[7]}})");
    QVERIFY_THROWS_EXCEPTION(SpecError, makePartition(bad, p));
  }

  void estimateReflectsCoresAndBalance() {
    ModelPlan p = mlp(std::vector<int>(8, 512));
    ExperimentSpec two = parseSpec(R"({"partition":{"cuts":[4]}})");
    SpeedEstimate e2 = estimateSpeed(makePartition(two, p), p, 32, 2);
    QVERIFY2(e2.speedup > 1.0, std::to_string(e2.speedup).c_str());
    QVERIFY(!e2.coresShared);
    QCOMPARE(e2.boundaryBytes.size(), size_t{1});
    QCOMPARE(e2.boundaryBytes[0], int64_t{(512 * 4 + 8) * 32});
    QCOMPARE(e2.backpropBoundaryBytes[0], int64_t{2 * 512 * 4 * 32 + 8 * 32});
    // four one-thread stages on two cores share them: no better than two stages
    ExperimentSpec four = parseSpec(R"({"partition":{"cuts":[2,4,6]}})");
    SpeedEstimate e4 = estimateSpeed(makePartition(four, p), p, 32, 2);
    QVERIFY(e4.coresShared);
    double work = 0;
    for (double t : e4.stageTime) work += t;
    QVERIFY(e4.localTime >= work / 2 - 1e-6);
    // on one core local parallelism cannot win
    SpeedEstimate e1 = estimateSpeed(makePartition(two, p), p, 32, 1);
    QVERIFY(e1.speedup <= 1.0 + 1e-9);
    // an unbalanced cut predicts less speed-up and lower efficiency
    ExperimentSpec skew = parseSpec(R"({"partition":{"cuts":[8]}})");
    SpeedEstimate es = estimateSpeed(makePartition(skew, p), p, 32, 2);
    QVERIFY(es.speedup < e2.speedup);
    QVERIFY(es.pipelineEfficiency < e2.pipelineEfficiency);
  }
};

QTEST_GUILESS_MAIN(TestPartition)
#include "test_partition.moc"
