// MLP, residual CNN and ViT: the torch modules match their plans, they train stage by stage, the
// last stage's gradient cosine is 1, and batch norm keeps local runs timing-invariant.
#include <QTemporaryDir>
#include <QtTest>

#include "idx_fixture.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"

using namespace stagewise::engine;

namespace {

QTemporaryDir* g_dir = nullptr;

ExperimentSpec family(const std::string& kind, const std::vector<std::string>& extra = {}) {
  std::string model = kind == "cnn"   ? R"({"kind":"cnn","channels":[8,16],"blocks":[1,1]})"
                      : kind == "vit" ? R"({"kind":"vit","patch":4,"dim":16,"depth":2,"heads":2})"
                                      : R"({"kind":"mlp","hidden":[32,32]})";
  std::string json = R"({"dataset":{"kind":"idx","path":")" + g_dir->path().toStdString() + R"("},
     "model":)" + model +
                     R"(,"partition":{"cuts":[1,2]},
     "train":{"batch_size":16,"max_steps":40,"seed":3,"queue_capacity":2},
     "eval":{"interval":0},"probe":{"interval":10}})";
  return parseSpec(applyOverrides(json, extra));
}

}  // namespace

class TestFamilies : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    g_dir = new QTemporaryDir;
    fixture::writeSet(g_dir->path(), 256, 8, 8, /*gz=*/false, 3);
  }
  void cleanupTestCase() { delete g_dir; }

  void modulesMatchTheirPlans_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("mlp") << "mlp";
    QTest::newRow("cnn") << "cnn";
    QTest::newRow("vit") << "vit";
  }
  void modulesMatchTheirPlans() {
    QFETCH(QString, kind);
    ExperimentSpec spec = family(kind.toStdString());
    ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    auto layers = buildLayers(spec.model, plan, 1);
    QCOMPARE(layers.size(), plan.layers.size());
    torch::Tensor h = torch::randn({5, 1, 8, 8});
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i]->forward(h);
      std::vector<int64_t> shape(h.sizes().begin() + 1, h.sizes().end());
      QCOMPARE(shape, plan.layers[i].outShape);
      int64_t params = 0;
      for (auto& p : layers[i]->parameters()) params += p.numel();
      QCOMPARE(params, plan.layers[i].params);
    }
  }

  void familiesTrainLocally_data() { modulesMatchTheirPlans_data(); }
  void familiesTrainLocally() {
    QFETCH(QString, kind);
    const std::string head = kind == "cnn" ? "conv" : kind == "vit" ? "token" : "mlp";
    RecordingObserver obs;
    auto run = createRun(
        family(kind.toStdString(), {"stages=[{\"aux_head\":\"" + head + "\"},{},{}]"}), &obs);
    run->start();
    RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    for (double c : obs.series(series::kGradCosine, 2))
      QVERIFY2(std::abs(c - 1.0) < 1e-5, std::to_string(c).c_str());
    QVERIFY(!obs.series(series::kGradCosine, 0).empty());
    auto loss = obs.series(series::kLoss, 0);
    QCOMPARE(loss.size(), size_t{40});
    QVERIFY(std::isfinite(s.testAccuracy));
    // The estimate's bytes are the bytes the engine measures, for every family: the cut's
    // output tensor and the labels, per batch (40 full batches of 16).
    const ExperimentSpec spec = family(kind.toStdString());
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    const SpeedEstimate est =
        estimateSpeed(makePartition(spec, plan), plan, spec.train.batchSize, 2);
    QCOMPARE(est.boundaryBytes.size(), size_t{2});
    for (size_t k = 0; k < 2; ++k) QCOMPARE(est.boundaryBytes[k] * 40, s.stages[k].bytesSent);
  }

  void auxHeadMustFitTheFamily() {
    ExperimentSpec spec = family("mlp", {"stage_defaults.aux_head=conv"});
    auto problems = validateSpec(spec, 3, {"cpu"});
    QVERIFY(!problems.empty());
    QVERIFY(problems[0].message.find("needs a cnn model") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(family("vit", {"model.patch=3"}), nullptr));
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(family("cnn", {"model.blocks=[1]"}), nullptr));
  }

  void profileTimesEveryLayer() {
    ExperimentSpec spec = family("cnn");
    int calls = 0;
    LayerProfile p = profileLayers(spec, 2, [&](int done, int total) {
      ++calls;
      return done <= total;
    });
    QCOMPARE(p.seconds.size(), size_t{4});
    QCOMPARE(calls, 4);
    for (double s : p.seconds) QVERIFY(s > 0);
    QCOMPARE(balanceCuts(p.seconds, 3).size(), size_t{2});
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             profileLayers(spec, 2, [](int, int) { return false; }));
  }

  void batchNormStaysTimingInvariant() {
    RecordingObserver a, b;
    for (auto* obs : {&a, &b}) {
      auto spec =
          family("cnn", obs == &b ? std::vector<std::string>{"stages=[{\"delay_ms\":3},{},{}]"}
                                  : std::vector<std::string>{});
      auto run = createRun(spec, obs);
      run->start();
      QVERIFY(run->wait().status == RunStatus::Completed);
    }
    for (int k = 0; k < 3; ++k) QCOMPARE(a.series(series::kLoss, k), b.series(series::kLoss, k));
  }
};

QTEST_GUILESS_MAIN(TestFamilies)
#include "test_families.moc"
