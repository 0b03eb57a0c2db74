// model.kind "layers": shape inference, errors that name the layer, the JSON round trip, the
// families as layer lists (bit for bit the networks the old family builder made), and a layer
// list trained in every mode.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

#include "idx_fixture.h"
#include "legacy_family_model.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/model_plan_prefix.h"
#include "stagewise/engine/partition.h"

using namespace stagewise::engine;

namespace {

QTemporaryDir* g_dir = nullptr;

const InputShape kFmnist{{1, 28, 28}, 10};

// The issue's example: conv, batch norm, a residual, pooling, flatten, a small MLP head.
const char* kExample = R"([
  {"type": "conv2d", "out": 32, "kernel": 3, "padding": 1}, {"type": "batchnorm2d"}, {"type": "relu"},
  {"type": "residual", "layers": [{"type": "conv2d", "out": 32, "kernel": 3, "padding": 1}, {"type": "relu"}]},
  {"type": "maxpool2d", "kernel": 2}, {"type": "flatten"},
  {"type": "linear", "out": 128}, {"type": "relu"}, {"type": "dropout", "p": 0.1},
  {"type": "linear", "out": 10}])";

ModelSpec layersModel(const std::string& layersJson) {
  return parseSpec(R"({"model":{"kind":"layers","layers":)" + layersJson + "}}").model;
}

/// Every entry's module gives the planned output shape and holds the planned parameters.
void checkModulesMatchPlan(const ModelSpec& model, const InputShape& input) {
  const ModelPlan plan = planModel(model, input);
  auto layers = buildLayers(model, plan, 1);
  QCOMPARE(layers.size(), plan.layers.size());
  std::vector<int64_t> batch = {3};
  batch.insert(batch.end(), input.dims.begin(), input.dims.end());
  torch::Tensor h = torch::randn(batch);
  for (size_t i = 0; i < layers.size(); ++i) {
    h = layers[i]->forward(h);
    const std::vector<int64_t> shape(h.sizes().begin() + 1, h.sizes().end());
    QCOMPARE(shape, plan.layers[i].outShape);
    int64_t params = 0;
    for (auto& p : layers[i]->parameters()) params += p.numel();
    QCOMPARE(params, plan.layers[i].params);
  }
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A few Adam steps on one fixed batch: the losses, and the state afterwards.
std::vector<torch::Tensor> train(std::vector<torch::nn::Sequential>& layers, int steps) {
  torch::manual_seed(99);
  const torch::Tensor x = torch::randn({8, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {8});
  torch::optim::Adam adam(parametersOf(layers), torch::optim::AdamOptions(1e-3));
  std::vector<torch::Tensor> losses;
  for (int s = 0; s < steps; ++s) {
    torch::Tensor h = x;
    for (auto& l : layers) h = l->forward(h);
    torch::Tensor loss = torch::nn::functional::cross_entropy(h, y);
    adam.zero_grad();
    loss.backward();
    adam.step();
    losses.push_back(loss.detach().clone());
  }
  return losses;
}

bool sameTensors(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].sizes().equals(b[i].sizes()) || !torch::equal(a[i], b[i])) return false;
  return true;
}

ExperimentSpec smallRun(const std::string& mode, const std::vector<std::string>& extra = {}) {
  const std::string json = R"({"dataset":{"kind":"idx","path":")" + g_dir->path().toStdString() +
                           R"("},
     "model":{"kind":"layers","layers":[
       {"type":"conv2d","out":4,"kernel":3,"padding":1},{"type":"batchnorm2d"},{"type":"relu"},
       {"type":"residual","layers":[{"type":"conv2d","out":8,"kernel":3,"padding":1,"stride":2},{"type":"relu"}]},
       {"type":"maxpool2d","kernel":2},{"type":"flatten"},
       {"type":"sequential","name":"head","layers":[{"type":"linear","out":16},{"type":"relu"},{"type":"dropout","p":0.1}]},
       {"type":"linear","out":3,"name":"classifier"}]},
     "partition":{"cuts":[3,5]},
     "stages":[{"aux_head":"conv"},{"aux_head":"mlp"},{}],
     "mode":")" + mode + R"(",
     "train":{"batch_size":16,"max_steps":12,"seed":3,"queue_capacity":2},
     "eval":{"interval":0},"probe":{"interval":6}})";
  return parseSpec(applyOverrides(json, extra));
}

}  // namespace

class TestLayers : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    at::set_num_threads(1);
    g_dir = new QTemporaryDir;
    fixture::writeSet(g_dir->path(), 256, 8, 8, /*gz=*/false, 3);
  }
  void cleanupTestCase() { delete g_dir; }

  void shapesAreInferred() {
    const ModelSpec model = layersModel(kExample);
    const ModelPlan plan = planModel(model, kFmnist);
    const std::vector<std::vector<int64_t>> shapes = {
        {32, 28, 28}, {32, 28, 28}, {32, 28, 28}, {32, 28, 28}, {32, 14, 14},
        {6272},       {128},        {128},        {128},        {10}};
    const std::vector<std::string> names = {"conv1", "bn1",     "relu1", "res1", "maxpool1",
                                            "flatten1", "fc1", "relu2", "dropout1", "fc2"};
    QCOMPARE(plan.layers.size(), shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      QCOMPARE(plan.layers[i].outShape, shapes[i]);
      QCOMPARE(plan.layers[i].name, names[i]);
    }
    QCOMPARE(plan.layers[0].params, int64_t{32 * 9 + 32});
    QCOMPARE(plan.layers[0].description, std::string("Conv3x3 1→32"));
    QCOMPARE(plan.layers[3].params, int64_t{32 * 32 * 9 + 32});  // same shape: no projection
    QCOMPARE(plan.layers[6].params, int64_t{6272 * 128 + 128});
    QCOMPARE(plan.layers[6].flops, int64_t{2 * 6272 * 128 + 128});
    QCOMPARE(plan.layers[8].description, std::string("Dropout 0.1"));
    checkModulesMatchPlan(model, kFmnist);
  }

  void everyTypeBuildsItsPlannedShape_data() {
    QTest::addColumn<QString>("layers");
    QTest::newRow("convs and pools") << R"([
      {"type":"conv2d","out":8,"kernel":3,"stride":2,"padding":1,"groups":1,"bias":false},
      {"type":"conv2d","out":16,"kernel":3,"padding":1,"groups":4},{"type":"batchnorm2d"},{"type":"silu"},
      {"type":"avgpool2d","kernel":3,"stride":1,"padding":1},{"type":"maxpool2d","kernel":2,"stride":2},
      {"type":"adaptive_avgpool2d","output_size":[2,3]},{"type":"flatten"},
      {"type":"linear","out":20,"bias":false},{"type":"batchnorm1d"},{"type":"gelu"},
      {"type":"layernorm"},{"type":"tanh"},{"type":"linear","out":10}])";
    QTest::newRow("residual projections") << R"([
      {"type":"residual","layers":[{"type":"conv2d","out":6,"kernel":3,"stride":2,"padding":1}]},
      {"type":"residual","layers":[{"type":"conv2d","out":6,"kernel":3,"stride":3}]},
      {"type":"flatten"},
      {"type":"residual","layers":[{"type":"linear","out":32},{"type":"relu"}]},
      {"type":"sequential","layers":[{"type":"sequential","layers":[{"type":"linear","out":16}]},{"type":"relu"}]},
      {"type":"residual","layers":[{"type":"linear","out":16}]},
      {"type":"linear","out":10}])";
    QTest::newRow("tokens") << R"([
      {"type":"patch_embed","patch":7,"dim":24},
      {"type":"transformer_block","heads":3,"mlp_ratio":2},
      {"type":"residual","layers":[{"type":"layernorm"},{"type":"linear","out":12}]},
      {"type":"transformer_block","heads":2,"dim":12},
      {"type":"token_mean"},{"type":"linear","out":10}])";
  }
  void everyTypeBuildsItsPlannedShape() {
    QFETCH(QString, layers);
    checkModulesMatchPlan(layersModel(layers.toStdString()), kFmnist);
  }

  void errorsNameTheLayer_data() {
    QTest::addColumn<QString>("layers");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QStringList>("says");
    QTest::newRow("linear on an image")
        << R"([{"type":"conv2d","out":8,"kernel":3},{"type":"linear","out":10}])"
        << "model.layers.1" << QStringList{"linear", "[8, 26, 26]", "5408", "flatten"};
    QTest::newRow("batchnorm2d on features")
        << R"([{"type":"flatten"},{"type":"batchnorm2d"},{"type":"linear","out":10}])"
        << "model.layers.1" << QStringList{"batchnorm2d", "[C, H, W]", "[784]"};
    QTest::newRow("last layer not the classes")
        << R"([{"type":"flatten"},{"type":"linear","out":64}])"
        << "model.layers.1" << QStringList{"linear", "[64]", "10 classes", "\"out\": 10"};
    QTest::newRow("last layer not flat")
        << R"([{"type":"conv2d","out":10,"kernel":28}])"
        << "model.layers.0" << QStringList{"conv2d", "[10, 1, 1]", "flatten"};
    QTest::newRow("residual that cannot be added")
        << R"([{"type":"residual","layers":[{"type":"flatten"}]},{"type":"linear","out":10}])"
        << "model.layers.0" << QStringList{"residual", "[1, 28, 28]", "[784]"};
    QTest::newRow("kernel larger than the image")
        << R"([{"type":"conv2d","out":4,"kernel":40},{"type":"flatten"},{"type":"linear","out":10}])"
        << "model.layers.0" << QStringList{"conv2d", "kernel 40", "[1, 28, 28]"};
    QTest::newRow("groups")
        << R"([{"type":"conv2d","out":6,"kernel":3,"groups":4},{"type":"flatten"},{"type":"linear","out":10}])"
        << "model.layers.0.groups" << QStringList{"conv2d", "4", "6"};
    QTest::newRow("inner layer")
        << R"([{"type":"sequential","layers":[{"type":"flatten"},{"type":"maxpool2d","kernel":2}]},{"type":"linear","out":10}])"
        << "model.layers.0.layers.1" << QStringList{"maxpool2d", "[784]"};
    QTest::newRow("transformer block on an image")
        << R"([{"type":"transformer_block","heads":1},{"type":"flatten"},{"type":"linear","out":10}])"
        << "model.layers.0" << QStringList{"transformer_block", "[N, D]", "[1, 28, 28]"};
    QTest::newRow("heads")
        << R"([{"type":"patch_embed","patch":7,"dim":10},{"type":"transformer_block","heads":3},{"type":"token_mean"},{"type":"linear","out":10}])"
        << "model.layers.1.heads" << QStringList{"transformer_block", "3", "10"};
    QTest::newRow("patch")
        << R"([{"type":"patch_embed","patch":5,"dim":8},{"type":"token_mean"},{"type":"linear","out":10}])"
        << "model.layers.0.patch" << QStringList{"patch_embed", "28x28"};
    QTest::newRow("dropout p")
        << R"([{"type":"flatten"},{"type":"dropout","p":1.5},{"type":"linear","out":10}])"
        << "model.layers.1.p" << QStringList{"dropout"};
    QTest::newRow("no out")
        << R"([{"type":"flatten"},{"type":"linear"}])" << "model.layers.1.out"
        << QStringList{"linear", "out"};
    QTest::newRow("empty") << "[]" << "model.layers" << QStringList{"at least one layer"};
    QTest::newRow("empty residual")
        << R"([{"type":"residual","layers":[]},{"type":"flatten"},{"type":"linear","out":10}])"
        << "model.layers.0.layers" << QStringList{"residual", "inner layer"};
  }
  void errorsNameTheLayer() {
    QFETCH(QString, layers);
    QFETCH(QString, field);
    QFETCH(QStringList, says);
    const ModelSpec model = layersModel(layers.toStdString());
    try {
      planModel(model, kFmnist);
      QFAIL("the plan was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(QString::fromStdString(e.field()), field);
      for (const QString& s : says)
        QVERIFY2(std::string(e.what()).find(s.toStdString()) != std::string::npos, e.what());
      // planModelPrefix (the designer's) stops at the same layer with the same message and
      // keeps the layers before it; a last layer that does not give the classes keeps them all.
      PlanError error;
      const ModelPlan prefix = planModelPrefix(model, kFmnist, error);
      QCOMPARE(QString::fromStdString(error.field), field);
      QCOMPARE(error.message, e.message());
      const QRegularExpressionMatch m =
          QRegularExpression(QStringLiteral(R"(^model\.layers\.(\d+))")).match(field);
      const int bad = m.hasMatch() ? m.captured(1).toInt() : -1;
      QCOMPARE(error.layer, bad);
      const QLatin1String tag(QTest::currentDataTag());
      const bool whole = tag == QLatin1String("last layer not the classes") ||
                         tag == QLatin1String("last layer not flat");
      QCOMPARE(int(prefix.layers.size()), whole ? bad + 1 : std::max(bad, 0));
    }
  }

  void jsonRoundTrips() {
    const ExperimentSpec spec = parseSpec(R"({"model":{"kind":"layers","layers":)" +
                                          std::string(kExample) + "}}");
    QCOMPARE(spec.model.layers.size(), size_t{10});
    QCOMPARE(spec.model.layers[3].layers.size(), size_t{2});
    QCOMPARE(spec.model.layers[8].p, 0.1);
    const std::string json = specToJson(spec);
    QCOMPARE(specToJson(parseSpec(json)), json);
    // Only the fields that differ from their defaults are written.
    const auto doc = parseSpec(json).model.layers;
    QCOMPARE(doc.size(), size_t{10});
    QVERIFY(json.find("\"groups\"") == std::string::npos);
    QVERIFY(json.find("\"bias\"") == std::string::npos);
    QVERIFY(json.find("\"output_size\"") == std::string::npos);
    QVERIFY(json.find("\"padding\": 1") != std::string::npos);
    // Every field of every type survives.
    ExperimentSpec all = parseSpec(R"({"model":{"kind":"layers","layers":[
      {"type":"conv2d","name":"c","out":8,"kernel":5,"stride":2,"padding":2,"groups":2,"bias":false},
      {"type":"adaptive_avgpool2d","output_size":3},{"type":"dropout","p":0.25},
      {"type":"patch_embed","patch":4,"dim":16},
      {"type":"transformer_block","dim":16,"heads":4,"mlp_ratio":3},
      {"type":"sequential","layers":[]}]}})");
    QCOMPARE(all.model.layers[1].outputSize, (std::vector<int64_t>{3, 3}));
    const ExperimentSpec back = parseSpec(specToJson(all));
    QCOMPARE(specToJson(back), specToJson(all));
    const LayerSpec& c = back.model.layers[0];
    QCOMPARE(c.name, std::string("c"));
    QCOMPARE(c.stride, 2);
    QCOMPARE(c.groups, 2);
    QCOMPARE(c.bias, false);
    QCOMPARE(back.model.layers[4].mlpRatio, 3);
    QVERIFY(back.model.layers[5].layers.empty());
    // A family writes no layers.
    QVERIFY(specToJson(parseSpec("{}")).find("\"layers\"") == std::string::npos);
  }

  void jsonErrorsNameTheField_data() {
    QTest::addColumn<QString>("layers");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown key") << R"([{"type":"conv2d","kernal":3}])"
                                 << "model.layers.0.kernal" << "model.layers.0.kernel";
    QTest::newRow("another type's key") << R"([{"type":"relu"},{"type":"linear","out":3,"kernel":3}])"
                                        << "model.layers.1.kernel" << "a linear layer has no kernel";
    QTest::newRow("wrong type") << R"([{"type":"linear","out":"ten"}])" << "model.layers.0.out"
                                << "expected a whole number";
    QTest::newRow("bias") << R"([{"type":"linear","out":3,"bias":1}])" << "model.layers.0.bias"
                          << "true or false";
    QTest::newRow("p") << R"([{"type":"dropout","p":"half"}])" << "model.layers.0.p"
                       << "expected a number";
    QTest::newRow("unknown type") << R"([{"type":"conv3d"}])" << "model.layers.0.type"
                                  << "unknown layer type 'conv3d'";
    QTest::newRow("no type") << R"([{"out":3}])" << "model.layers.0.type" << "needs a type";
    QTest::newRow("not a list") << R"({"type":"relu"})" << "model.layers" << "list of layers";
    QTest::newRow("not an object") << R"([3])" << "model.layers.0" << "expected an object";
    QTest::newRow("nested") << R"([{"type":"residual","layers":[{"type":"linear","out":[1]}]}])"
                            << "model.layers.0.layers.0.out" << "expected a whole number";
    QTest::newRow("output size") << R"([{"type":"adaptive_avgpool2d","output_size":[1.5,2]}])"
                                 << "model.layers.0.output_size[0]" << "whole number";
  }
  void jsonErrorsNameTheField() {
    QFETCH(QString, layers);
    QFETCH(QString, field);
    QFETCH(QString, says);
    try {
      layersModel(layers.toStdString());
      QFAIL("the spec was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(QString::fromStdString(e.field()), field);
      QVERIFY2(std::string(e.what()).find(says.toStdString()) != std::string::npos, e.what());
    }
  }

  void familiesAreTheirLayerLists_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QStringList>("overrides");
    QTest::newRow("mlp") << "mlp-fmnist-4stage" << QStringList{};
    QTest::newRow("mlp layernorm") << "mlp-fmnist-4stage" << QStringList{"model.norm=layernorm"};
    QTest::newRow("mlp batchnorm") << "mlp-fmnist-4stage" << QStringList{"model.norm=batchnorm"};
    QTest::newRow("mlp gelu") << "mlp-fmnist-4stage" << QStringList{"model.activation=gelu"};
    QTest::newRow("mlp tanh") << "mlp-fmnist-4stage" << QStringList{"model.activation=tanh"};
    QTest::newRow("mlp tanh xavier")
        << "mlp-fmnist-4stage" << QStringList{"model.activation=tanh", "model.init=xavier"};
    QTest::newRow("mlp default init") << "mlp-fmnist-4stage" << QStringList{"model.init=default"};
    QTest::newRow("cnn") << "cnn-fmnist-4stage" << QStringList{};
    QTest::newRow("cnn kaiming") << "cnn-fmnist-4stage" << QStringList{"model.init=kaiming"};
    QTest::newRow("vit") << "vit-fmnist-4stage" << QStringList{};
    QTest::newRow("vit xavier") << "vit-fmnist-4stage" << QStringList{"model.init=xavier"};
  }
  void familiesAreTheirLayerLists() {
    QFETCH(QString, preset);
    QFETCH(QStringList, overrides);
    std::vector<std::string> extra;
    for (const auto& o : overrides) extra.push_back(o.toStdString());
    const std::string text = readText(std::string(STAGEWISE_SOURCE_DIR) +
                                      "/resources/experiments/" + preset.toStdString() + ".json");
    const ExperimentSpec spec = parseSpec(applyOverrides(text, extra));
    const ModelPlan plan = planModel(spec.model, kFmnist);
    // The same family written out as a layer list ("Edit as layers").
    ModelSpec asLayers = spec.model;
    asLayers.kind = "layers";
    asLayers.layers = familyLayers(spec.model, kFmnist);
    ExperimentSpec written;
    written.model = asLayers;
    asLayers = parseSpec(specToJson(written)).model;  // through JSON, as a saved file is
    const ModelPlan layersPlan = planModel(asLayers, kFmnist);
    QCOMPARE(layersPlan.layers.size(), plan.layers.size());
    for (size_t i = 0; i < plan.layers.size(); ++i) {
      QCOMPARE(layersPlan.layers[i].name, plan.layers[i].name);
      QCOMPARE(layersPlan.layers[i].outShape, plan.layers[i].outShape);
      QCOMPARE(layersPlan.layers[i].params, plan.layers[i].params);
      QCOMPARE(layersPlan.layers[i].flops, plan.layers[i].flops);
    }
    const uint64_t seed = spec.train.seed + 6;
    auto old = legacy::buildFamilyLayers(spec.model, plan, seed);
    auto now = buildLayers(spec.model, plan, seed);
    auto edited = buildLayers(asLayers, layersPlan, seed);
    QVERIFY(!stateOf(old).empty());
    QVERIFY(sameTensors(stateOf(old), stateOf(now)));
    QVERIFY(sameTensors(stateOf(old), stateOf(edited)));
    // And they train alike: the same losses, bit for bit, and the same weights after.
    const auto lossOld = train(old, 3), lossNow = train(now, 3), lossEdited = train(edited, 3);
    QVERIFY(sameTensors(lossOld, lossNow));
    QVERIFY(sameTensors(lossOld, lossEdited));
    QVERIFY(sameTensors(stateOf(old), stateOf(now)));
    QVERIFY(sameTensors(stateOf(old), stateOf(edited)));
    QVERIFY(lossOld.back().item<float>() != lossOld.front().item<float>());  // it did train
  }

  void trainsInEveryMode_data() {
    QTest::addColumn<QString>("mode");
    for (const char* mode : {"local", "pipeline", "backprop"}) QTest::newRow(mode) << mode;
  }
  void trainsInEveryMode() {
    QFETCH(QString, mode);
    RecordingObserver obs;
    auto run = createRun(smallRun(mode.toStdString()), &obs);
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const int last = mode == "backprop" ? 0 : 2;
    const auto loss = obs.series(series::kLoss, last);
    QCOMPARE(loss.size(), size_t{12});
    for (double l : loss) QVERIFY(std::isfinite(l));
    QVERIFY(std::isfinite(s.testAccuracy));
    if (mode == "local") QVERIFY(!obs.series(series::kLoss, 0).empty());
  }

  void aStageWithoutParametersIsProbed() {
    // Layers 4..5 (a pool and a flatten) as a stage of their own: nothing to train there, but
    // the probe still measures the others (it asked autograd for no gradients before, and failed).
    RecordingObserver obs;
    auto run = createRun(smallRun("local", {"partition.cuts=[4,6]", "stages=[{},{},{}]"}), &obs);
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const auto last = obs.series(series::kGradCosine, 2);
    QVERIFY(!last.empty());
    for (double c : last) QVERIFY2(std::abs(c - 1.0) < 1e-5, std::to_string(c).c_str());
    QVERIFY(!obs.series(series::kGradCosine, 0).empty());
  }

  void dropoutMasksAreSeeded() {
    // Two local runs of a layer list with dropout give the same losses: the masks come from the
    // seed, not from whichever stage thread draws first.
    auto losses = [&] {
      RecordingObserver obs;
      auto run = createRun(smallRun("local", {"train.max_steps=8"}), &obs);
      run->start();
      run->wait();
      return std::vector<std::vector<double>>{obs.series(series::kLoss, 0),
                                              obs.series(series::kLoss, 1),
                                              obs.series(series::kLoss, 2)};
    };
    QCOMPARE(losses(), losses());
  }

  void auxHeadsFollowTheBoundaryShape() {
    const ExperimentSpec ok = smallRun("local");
    const ModelPlan plan = planModel(ok.model, probeInputShape(ok.dataset));
    QVERIFY(validateSpec(ok, int(plan.layers.size()), {"cpu"}).empty());
    const PartitionPlan part = makePartition(ok, plan);
    QCOMPARE(part.stages[0].auxParams, auxHeadCost("conv", 0, {4, 8, 8}, 3).params);
    // A conv head where the boundary is flat: refused, naming the stage and the shape.
    const ExperimentSpec flat = smallRun("local", {"partition.cuts=[3,6]",
                                                   "stages=[{},{\"aux_head\":\"conv\"},{}]"});
    try {
      makePartition(flat, planModel(flat.model, probeInputShape(flat.dataset)));
      QFAIL("a conv head on a flat boundary was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("stages[1].aux_head"));
      QVERIFY2(std::string(e.what()).find("[32]") != std::string::npos, e.what());
    }
    // Token heads on token boundaries.
    ExperimentSpec tokens = parseSpec(applyOverrides(
        R"({"model":{"kind":"layers","layers":[{"type":"patch_embed","patch":7,"dim":8},
            {"type":"transformer_block","heads":2},{"type":"token_mean"},{"type":"linear","out":10}]},
            "partition":{"cuts":[1]},"stages":[{"aux_head":"token"},{}]})",
        {}));
    QVERIFY(validateSpec(tokens, 4, {"cpu"}).empty());
    const PartitionPlan tp = makePartition(tokens, planModel(tokens.model, kFmnist));
    QCOMPARE(tp.stages[0].auxParams, auxHeadCost("token", 0, {16, 8}, 10).params);
  }
};

QTEST_GUILESS_MAIN(TestLayers)
#include "test_layers.moc"
