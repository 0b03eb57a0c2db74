// MLP, residual CNN and ViT: the torch modules match their plans, they train stage by stage, the
// last stage's gradient cosine is 1, and batch norm keeps local runs timing-invariant.
#include <QTemporaryDir>
#include <QtTest>

#include "idx_fixture.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/model_plan.h"

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

  void normsMatchTheirPlans() {
    // Linear -> norm -> activation in every hidden layer; the plan counts the norm's scale
    // and shift (2 x width), and the modules hold exactly the planned parameters.
    const ExperimentSpec plain = family("mlp");
    const ModelPlan none = planModel(plain.model, probeInputShape(plain.dataset));
    for (const char* norm : {"layernorm", "batchnorm"}) {
      ExperimentSpec spec = family("mlp", {std::string("model.norm=") + norm});
      ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
      QCOMPARE(plan.layers.size(), none.layers.size());
      for (size_t i = 0; i + 1 < plan.layers.size(); ++i) {
        QCOMPARE(plan.layers[i].params, none.layers[i].params + 2 * 32);
        QVERIFY(plan.layers[i].flops > none.layers[i].flops);
        QVERIFY(plan.layers[i].description.find(norm[0] == 'l' ? "LayerNorm" : "BatchNorm") !=
                std::string::npos);
      }
      QCOMPARE(plan.layers.back().params, none.layers.back().params);  // not the classifier
      auto layers = buildLayers(spec.model, plan, 1);
      torch::Tensor h = torch::randn({5, 1, 8, 8});
      for (size_t i = 0; i < layers.size(); ++i) {
        h = layers[i]->forward(h);
        int64_t params = 0;
        for (auto& p : layers[i]->parameters()) params += p.numel();
        QCOMPARE(params, plan.layers[i].params);
      }
      QCOMPARE(h.size(1), int64_t{3});
      // The norm sits between the Linear and the activation.
      const auto children = layers[1]->children();
      QCOMPARE(children.size(), size_t{3});
      QVERIFY(children[0]->as<torch::nn::Linear>() != nullptr);
      QVERIFY(norm[0] == 'l' ? children[1]->as<torch::nn::LayerNorm>() != nullptr
                             : children[1]->as<torch::nn::BatchNorm1d>() != nullptr);
      QVERIFY(children[2]->as<torch::nn::ReLU>() != nullptr);
    }
  }

  void normsTrainInEveryMode_data() {
    QTest::addColumn<QString>("norm");
    QTest::addColumn<QString>("mode");
    for (const char* norm : {"layernorm", "batchnorm"})
      for (const char* mode : {"local", "backprop", "pipeline"})
        QTest::newRow((std::string(norm) + "-" + mode).c_str()) << norm << mode;
  }
  void normsTrainInEveryMode() {
    QFETCH(QString, norm);
    QFETCH(QString, mode);
    RecordingObserver obs;
    auto run = createRun(family("mlp", {"model.norm=" + norm.toStdString(),
                                        "mode=" + mode.toStdString(), "train.max_steps=60"}),
                         &obs);
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const int last = mode == "backprop" ? 0 : 2;
    const auto loss = obs.series(series::kLoss, last);
    QCOMPARE(loss.size(), size_t{60});
    for (double l : loss) QVERIFY(std::isfinite(l));
    // The fixture's classes light up their own rows: learnt within 60 steps.
    QVERIFY2(s.testAccuracy > 0.9, std::to_string(s.testAccuracy).c_str());
    if (mode == "local")  // batch statistics in the probe too: the last stage's cosine is 1
      for (double c : obs.series(series::kGradCosine, 2))
        QVERIFY2(std::abs(c - 1.0) < 1e-5, std::to_string(c).c_str());
  }

  void batchNormRefusesABatchOfOneRow() {
    // 256 samples in batches of 17: the last batch of the epoch holds 1 row.
    try {
      createRun(family("mlp", {"model.norm=batchnorm", "train.batch_size=17", "train.max_steps=0"}),
                nullptr);
      QFAIL("a batch of one row was accepted for batch norm");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("train.batch_size"));
      QVERIFY2(std::string(e.what()).find("holds 1 of the 256") != std::string::npos, e.what());
    }
    // Layer norm normalises each row on its own: fine.
    auto run = createRun(
        family("mlp", {"model.norm=layernorm", "train.batch_size=17", "train.max_steps=0"}),
        nullptr);
    run->start();
    QVERIFY(run->wait().status == RunStatus::Completed);
  }

  void initIsSeededAndChangesTheWeights_data() { modulesMatchTheirPlans_data(); }
  void initIsSeededAndChangesTheWeights() {
    QFETCH(QString, kind);
    auto weights = [&](const std::string& init, uint64_t seed) {
      ExperimentSpec spec = family(kind.toStdString(), {"model.init=" + init});
      ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
      std::vector<torch::nn::Sequential> all = buildLayers(spec.model, plan, seed);
      all.push_back(buildAuxHead(spec.stageDefaults, plan.layers[0].outShape, 3, seed, init));
      return all;
    };
    auto same = [](const std::vector<torch::nn::Sequential>& a,
                   const std::vector<torch::nn::Sequential>& b) {
      const auto pa = parametersOf(a), pb = parametersOf(b);
      if (pa.size() != pb.size()) return false;
      for (size_t i = 0; i < pa.size(); ++i)
        if (!torch::equal(pa[i], pb[i])) return false;
      return true;
    };
    const auto base = weights("default", 4);
    for (const std::string init : {"kaiming", "xavier"}) {
      const auto a = weights(init, 4);
      QVERIFY(same(a, weights(init, 4)));   // deterministic for the seed
      QVERIFY(!same(a, weights(init, 5)));  // and drawn from it
      QVERIFY(!same(a, base));
      // Every Linear and convolution redrawn, biases zeroed; norms keep their ones and zeros.
      for (const auto& layer : a)
        for (const auto& m : layer->modules(false)) {
          torch::Tensor w, b;
          if (auto* l = m->as<torch::nn::Linear>()) w = l->weight, b = l->bias;
          if (auto* c = m->as<torch::nn::Conv2d>()) w = c->weight, b = c->bias;
          if (!w.defined()) continue;
          if (b.defined()) QVERIFY(torch::equal(b, torch::zeros_like(b)));
          const double fanIn = double(w[0].numel()), fanOut = double(w.size(0)) * w[0][0].numel();
          const double want =
              init == "kaiming" ? std::sqrt(2.0 / fanIn) : std::sqrt(2.0 / (fanIn + fanOut));
          if (w.numel() >= 200) {  // enough draws for the spread to show
            const double sd = w.std().item<double>();
            QVERIFY2(
                std::abs(sd / want - 1) < 0.2,
                qPrintable(QString("%1: std %2, want %3").arg(init.c_str()).arg(sd).arg(want)));
          }
        }
    }
    QVERIFY(same(base, weights("default", 4)));
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
