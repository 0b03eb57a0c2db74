// The snapshot coordinator: a probe or evaluation that every stage offered is measured, even
// when the run ends before the analysis thread has taken it; one that is lost is counted.
#include <torch/torch.h>
#include <QTemporaryDir>
#include <QtTest>

#include "idx_fixture.h"

#include "model/torch_model.h"
#include "probe/probe.h"
#include "runtime/snapshot.h"
#include "stagewise/engine/dataset.h"

using namespace stagewise::engine;

namespace {
std::vector<torch::Tensor> params(float v) {
  return {torch::full({3}, v)};
}
}  // namespace

/// A model cut at `cuts` as the probe sees it: stages of copies, aux heads but on the last.
struct ProbeModel {
  std::vector<StageModules> stages;
  std::vector<bool> isLast;
  torch::Tensor x, y;
};

ProbeModel probeModel(const std::string& json) {
  ExperimentSpec spec = parseSpec(json);
  const InputShape shape = probeInputShape(spec.dataset);
  const ModelPlan plan = planModel(spec.model, shape);
  auto layers = buildLayers(spec.model, plan, 3);
  const PartitionPlan partition = makePartition(spec, plan);
  ProbeModel m;
  for (const auto& st : partition.stages) {
    StageModules s;
    for (int i = st.firstLayer; i <= st.lastLayer; ++i) s.layers.push_back(layers[size_t(i)]);
    if (!st.isLast)
      s.aux = buildAuxHead(st.settings, plan.layers[size_t(st.lastLayer)].outShape,
                           shape.numClasses, 11 + uint64_t(st.index));
    m.stages.push_back(s);
    m.isLast.push_back(st.isLast);
  }
  std::vector<int64_t> dims = {48};
  dims.insert(dims.end(), shape.dims.begin(), shape.dims.end());
  torch::manual_seed(7);
  m.x = torch::randn(dims);
  m.y = torch::randint(shape.numClasses, {48}, torch::kInt64);
  return m;
}

/// Stage 0: Linear 6→5 + ReLU with a linear aux head; stage 1: the classifier Linear 5→3. The
/// head is a copy of the classifier, or drawn on its own.
struct TwoStages {
  torch::nn::Linear first{nullptr}, classifier{nullptr}, head{nullptr};
  std::vector<StageModules> stages{2};
  torch::Tensor x, y;

  explicit TwoStages(bool headCopiesClassifier) {
    torch::manual_seed(21);
    first = torch::nn::Linear(6, 5);
    classifier = torch::nn::Linear(5, 3);
    head = torch::nn::Linear(5, 3);
    if (headCopiesClassifier) {
      torch::NoGradGuard noGrad;
      head->weight.copy_(classifier->weight);
      head->bias.copy_(classifier->bias);
    }
    stages[0].layers = {torch::nn::Sequential(first, torch::nn::ReLU())};
    stages[0].aux = torch::nn::Sequential(head);
    stages[1].layers = {torch::nn::Sequential(classifier)};
    x = torch::randn({16, 6});
    y = torch::randint(3, {16}, torch::kInt64);
  }

  /// d(mean cross-entropy of h W^T + b)/d(stage 0's weight and bias), in float64: the loss's
  /// gradient at the logits is (softmax - one-hot) / B, carried back through W and the ReLU.
  std::vector<torch::Tensor> stage0Gradient(const torch::nn::Linear& top) const {
    const auto d = torch::kFloat64;
    const torch::Tensor xd = x.to(d), w0 = first->weight.detach().to(d),
                        b0 = first->bias.detach().to(d);
    const torch::Tensor pre = xd.matmul(w0.t()) + b0, h = pre.clamp_min(0);
    const torch::Tensor z = h.matmul(top->weight.detach().to(d).t()) + top->bias.detach().to(d);
    const torch::Tensor gz = (z.softmax(1) - torch::one_hot(y, 3).to(d)) / x.size(0);
    const torch::Tensor gpre = gz.matmul(top->weight.detach().to(d)) * (pre > 0).to(d);
    return {gpre.t().matmul(xd), gpre.sum(0)};
  }

  double expectedCosine() const {
    const auto local = stage0Gradient(head), truth = stage0Gradient(classifier);
    double dot = 0, nl = 0, nt = 0;
    for (size_t i = 0; i < 2; ++i) {
      dot += (local[i] * truth[i]).sum().item<double>();
      nl += (local[i] * local[i]).sum().item<double>();
      nt += (truth[i] * truth[i]).sum().item<double>();
    }
    return dot / std::sqrt(nl * nt);
  }
};

class TestSnapshots : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void oneForwardPassGivesTheTwoPassCosines_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("mlp") << QString(R"({"dataset":{"kind":"synthetic","synthetic_features":20},
        "model":{"hidden":[24,24,24,24,24]},"partition":{"cuts":[2,4]}})");
    // Batch norm and residual blocks: the same values, the same order of operations.
    static QTemporaryDir dir;
    fixture::writeSet(dir.path(), 64, 12, 12, false);
    QTest::newRow("cnn") << QString(R"({"dataset":{"kind":"idx","path":"%1"},
        "model":{"kind":"cnn","channels":[4,8],"blocks":[1,1]},"partition":{"cuts":[1,2]}})")
                                .arg(dir.path());
  }
  void oneForwardPassGivesTheTwoPassCosines() {
    QFETCH(QString, spec);
    ProbeModel m = probeModel(spec.toStdString());
    const ProbeResult a = gradientCosine(m.stages, m.isLast, m.x, m.y);
    const ProbeResult b = gradientCosineTwoPass(m.stages, m.isLast, m.x, m.y);
    QCOMPARE(a.stage.size(), m.stages.size());
    for (size_t k = 0; k < a.stage.size(); ++k) {
      QVERIFY2(
          std::abs(a.stage[k] - b.stage[k]) < 1e-9,
          qPrintable(QString("stage %1: %2 against %3").arg(k).arg(a.stage[k]).arg(b.stage[k])));
      QCOMPARE(a.layer[k].size(), b.layer[k].size());
      for (size_t l = 0; l < a.layer[k].size(); ++l)
        QVERIFY(std::abs(a.layer[k][l] - b.layer[k][l]) < 1e-9);
    }
    QCOMPARE(a.stage.back(), 1.0);
    QVERIFY(a.stage.front() < 0.999);  // a real comparison, not two ones
  }

  void cosineIsOneWhereTheLocalLossIsTheModels() {
    // Two stages: Linear 6→5 + ReLU, then the classifier Linear 5→3. When stage 0's aux head is
    // a copy of the classifier, its local loss is the model's loss: its local gradient is the
    // true one and the cosine is 1 (to rounding). Both ways of computing it must say so.
    TwoStages m(/*headCopiesClassifier=*/true);
    const ProbeResult a = gradientCosine(m.stages, {false, true}, m.x, m.y);
    const ProbeResult b = gradientCosineTwoPass(m.stages, {false, true}, m.x, m.y);
    for (const ProbeResult& r : {a, b}) {
      QVERIFY2(std::abs(r.stage[0] - 1.0) < 1e-6, qPrintable(QString::number(r.stage[0], 'g', 12)));
      QVERIFY(std::abs(r.layer[0][0] - 1.0) < 1e-6);
      QVERIFY(std::abs(r.stage[1] - 1.0) < 1e-6);
    }
  }

  void cosineIsTheGradientsFormula() {
    // Another head: the cosine is below 1, and it is the value the gradients' closed form gives
    // (computed here in float64 without autograd): a probe that mixed up the stages, the heads
    // or the gradients' order would miss it.
    TwoStages m(/*headCopiesClassifier=*/false);
    const double expected = m.expectedCosine();
    QVERIFY2(expected < 0.99 && expected > -0.99, qPrintable(QString::number(expected)));
    const ProbeResult a = gradientCosine(m.stages, {false, true}, m.x, m.y);
    const ProbeResult b = gradientCosineTwoPass(m.stages, {false, true}, m.x, m.y);
    for (const ProbeResult& r : {a, b})
      QVERIFY2(std::abs(r.stage[0] - expected) < 1e-5,
               qPrintable(QString("%1 against %2").arg(r.stage[0], 0, 'g', 10).arg(expected)));
  }

  void completeSnapshotsSurviveANormalClose() {
    // Two stages, probe every 100 steps of 400, nothing taken yet when the stages end.
    MeasureBudget budget(/*budget=*/0, /*totalSteps=*/400, /*probeInterval=*/100,
                         /*evalInterval=*/200, /*minPoints=*/10);
    SnapshotCoordinator c(2, budget);
    for (int64_t step : {99, 199, 299}) {
      QVERIFY(c.wanted(step));
      // The last stage to offer finishes the step last: its time is the snapshot's.
      c.offer(1, step, params(3), {}, step + 0.5);
      c.offer(0, step, params(1), params(2), step + 0.25);
    }
    c.close(/*drop=*/false);
    std::vector<int64_t> got;
    while (auto s = c.next()) {
      got.push_back(s->step);
      QCOMPARE(s->timeS, s->step + 0.5);
      QCOMPARE(s->body.size(), size_t{2});
      QCOMPARE(s->eval, s->step == 199);
    }
    QCOMPARE(got, (std::vector<int64_t>{99, 199, 299}));
    QCOMPARE(c.discarded(), int64_t{0});
    QCOMPARE(c.dropped(), int64_t{0});
  }

  void aStopDiscardsAndCounts() {
    MeasureBudget budget(0, 400, 100, 0, 10);
    SnapshotCoordinator c(2, budget);
    c.offer(0, 99, params(1), params(2));
    c.offer(1, 99, params(3), {});
    c.offer(0, 199, params(1), params(2));  // stage 1 never gets there
    c.close(/*drop=*/true);
    QVERIFY(!c.next().has_value());
    QCOMPARE(c.discarded(), int64_t{2});
  }

  void anIncompleteSnapshotAtTheEndIsCounted() {
    MeasureBudget budget(0, 400, 100, 0, 10);
    SnapshotCoordinator c(2, budget);
    c.offer(0, 299, params(1), params(2));
    c.close(/*drop=*/false);
    QVERIFY(!c.next().has_value());
    QCOMPARE(c.discarded(), int64_t{1});
  }

  void skipsWhenBehindAreCounted() {
    // A probe asked after every step; the kept ones are 99, 199, ...
    MeasureBudget budget(0.5, 1000, 1, 0, 10);
    SnapshotCoordinator c(1, budget);
    c.offer(0, 99, params(1), {});  // kept: taken before its cost is known
    budget.charge(99, 1e-4, 0);     // as the analysis thread would
    for (int64_t step = 100; step < 106; ++step) c.offer(0, step, params(1), {});
    QCOMPARE(c.dropped(), int64_t{4});  // three wait, the other optional ones are skipped
    c.offer(0, 199, params(1), {});     // kept: it waits however far behind
    QCOMPARE(c.dropped(), int64_t{4});
    c.close(false);
    std::vector<int64_t> steps;
    while (auto s = c.next()) steps.push_back(s->step);
    QCOMPARE(steps, (std::vector<int64_t>{99, 100, 101, 199}));
  }

  void forcedEvaluationsAreNeverSkipped() {
    // A probe asked after every step, none taken by the analysis thread: 64 wait (the bound
    // even kept points have), the rest are skipped; evaluations forced after steps 150 and 151
    // wait however far behind it is.
    MeasureBudget budget(0, 1000, 1, 0, 10, {150, 151});
    SnapshotCoordinator c(1, budget);
    for (int64_t step = 0; step < 150; ++step) c.offer(0, step, params(1), {});
    QCOMPARE(c.dropped(), int64_t{150 - 64});
    c.offer(0, 150, params(1), {});
    c.offer(0, 151, params(1), {});
    QCOMPARE(c.dropped(), int64_t{150 - 64});
    c.close(false);
    std::vector<int64_t> evals;
    while (auto s = c.next())
      if (s->eval) evals.push_back(s->step);
    QCOMPARE(evals, (std::vector<int64_t>{150, 151}));
  }

  void withoutABudgetEveryPointWaits() {
    MeasureBudget budget(0, 100, 1, 0, 10);
    SnapshotCoordinator c(1, budget);
    for (int64_t step = 0; step < 6; ++step) c.offer(0, step, params(1), {});
    QCOMPARE(c.dropped(), int64_t{0});
    c.close(false);
    int n = 0;
    while (c.next()) ++n;
    QCOMPARE(n, 6);
  }
};

QTEST_GUILESS_MAIN(TestSnapshots)
#include "test_snapshots.moc"
