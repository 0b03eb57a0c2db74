// Language models (issue 34): the text dataset as tensors, the gpt family (causal, cuttable at
// every block, one local stage equals backprop), the lm aux head, sequence labels through every
// mode, the text metrics and a checkpoint resume.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <numbers>

#include "data/tensor_data.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/text_corpus.h"

using namespace stagewise::engine;

namespace {

QTemporaryDir* g_dir = nullptr;

std::string corpusPath() {
  return g_dir->path().toStdString() + "/corpus.txt";
}

/// About 24 KB of repetitive English: learnable in a few dozen steps.
void writeCorpus(const std::string& path) {
  const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"};
  std::ofstream out(path, std::ios::binary);
  uint64_t x = 7;
  for (int line = 0; line < 800; ++line) {
    for (int w = 0; w < 6; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      out << words[(x >> 33) % 10] << (w == 5 ? ".\n" : " ");
    }
  }
}

std::string gptJson(const std::string& extra = "") {
  return R"({"dataset":{"kind":"text","path":")" + corpusPath() +
         R"(","context":16},
     "model":{"kind":"gpt","dim":16,"depth":2,"heads":2,"mlp_ratio":2},
     "partition":{"cuts":[1,2]},"stage_defaults":{"aux_head":"lm"},
     "train":{"batch_size":8,"max_steps":60,"seed":5,"queue_capacity":2,"lr":0.003},
     "eval":{"interval":0,"max_samples":64},"probe":{"interval":20})" +
         extra + "}";
}

ExperimentSpec gpt(const std::vector<std::string>& overrides = {}, const std::string& extra = "") {
  return parseSpec(applyOverrides(gptJson(extra), overrides));
}

RunSummary train(const ExperimentSpec& s, RecordingObserver& obs, const RunOptions& options = {}) {
  auto run = createRun(s, &obs, options);
  run->start();
  return run->wait();
}

double mean(const std::vector<double>& v, size_t from, size_t to) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += v[i];
  return sum / static_cast<double>(to - from);
}

/// The composed network's logits for token ids `x` [B, T].
torch::Tensor logitsOf(std::vector<torch::nn::Sequential>& layers, torch::Tensor x) {
  for (auto& l : layers) x = l->forward(x);
  return x;
}

}  // namespace

class TestGpt : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    g_dir = new QTemporaryDir;
    writeCorpus(corpusPath());
  }
  void cleanupTestCase() { delete g_dir; }

  void textTensorsAreWindowsOfTheText() {
    const ExperimentSpec spec = gpt();
    std::vector<std::string> notes;
    const TensorData data = loadTensorData(spec.dataset, spec.train.seed,
                                           [&](const std::string& m, bool) { notes.push_back(m); });
    const TextCorpus corpus = readTextCorpus(corpusPath());
    const auto bytes = static_cast<int64_t>(corpus.text.size());
    const int64_t begin = textTestBegin(bytes, 0.1, 16, "t");
    QCOMPARE(data.trainText.size(0), begin);
    QVERIFY(data.shape.sequence);
    QCOMPARE(data.shape.dims, (std::vector<int64_t>{16}));
    QCOMPARE(data.shape.numClasses, 256);
    QCOMPARE(data.trainCount(), textWindowsPerEpoch(begin, 16));
    // The test windows: [N, T] ids, the labels the next bytes, from the test text at 0, T, 2T..
    const auto offsets = textTestOffsets(bytes - begin, 16);
    QCOMPARE(data.testX.sizes().vec(), (std::vector<int64_t>{int64_t(offsets.size()), 16}));
    QCOMPARE(data.testY.sizes().vec(), data.testX.sizes().vec());
    QCOMPARE(data.testX.scalar_type(), torch::kInt64);
    for (int64_t i : {int64_t{0}, int64_t(offsets.size()) - 1})
      for (int64_t t = 0; t < 16; ++t) {
        const auto at = static_cast<size_t>(begin + offsets[size_t(i)] + t);
        QCOMPARE(data.testX[i][t].item<int64_t>(), int64_t(uint8_t(corpus.text[at])));
        QCOMPARE(data.testY[i][t].item<int64_t>(), int64_t(uint8_t(corpus.text[at + 1])));
      }
    // Training windows: deterministic for (seed, index), labels shifted by one, different seeds
    // draw different windows.
    auto [x1, y1] = textWindows(data, 16, 5, 40, 8);
    auto [x2, y2] = textWindows(data, 16, 5, 40, 8);
    auto [x3, y3] = textWindows(data, 16, 6, 40, 8);
    QVERIFY(torch::equal(x1, x2) && torch::equal(y1, y2));
    QVERIFY(!torch::equal(x1, x3));
    QVERIFY(torch::equal(x1.slice(1, 1, 16), y1.slice(1, 0, 15)));
    const int64_t start = textWindowOffset(5, 41, begin, 16);
    QCOMPARE(x1[1][0].item<int64_t>(), int64_t(uint8_t(corpus.text[size_t(start)])));
    QCOMPARE(y1[1][15].item<int64_t>(), int64_t(uint8_t(corpus.text[size_t(start + 16)])));
    // The reader reports the test text's order-0 entropy, as computed from its frequencies.
    const double h = orderZeroEntropyBits(corpus.text.substr(size_t(begin)));
    QVERIFY(h > 2 && h < 5);
    QCOMPARE(data.testEntropyBits, h);
    bool said = false;
    for (const auto& n : notes) said = said || n.find("order-0 entropy") != std::string::npos;
    QVERIFY(said);
    QCOMPARE(orderZeroEntropyBits("aaaa"), 0.0);
    QCOMPARE(orderZeroEntropyBits("abab"), 1.0);
  }

  void limitTrainCapsTheTrainingText() {
    // dataset.limit_train N: the first N x context + 1 training bytes, so N windows per epoch,
    // every one drawn from that prefix; the estimate's count agrees; 0 keeps the whole text.
    const ExperimentSpec spec = gpt({"dataset.limit_train=10"});
    const TensorData data = loadTensorData(spec.dataset, spec.train.seed, {});
    QCOMPARE(data.trainText.size(0), int64_t{10 * 16 + 1});
    QCOMPARE(data.trainCount(), int64_t{10});
    QCOMPARE(probeTrainSamples(spec.dataset), int64_t{10});
    const TensorData whole = loadTensorData(gpt().dataset, spec.train.seed, {});
    QVERIFY(torch::equal(data.trainText, whole.trainText.slice(0, 0, 10 * 16 + 1)));
    QVERIFY(whole.trainCount() > 100);
    QCOMPARE(probeTrainSamples(gpt().dataset), whole.trainCount());
    for (int64_t i = 0; i < 200; ++i)
      QVERIFY(textWindowOffset(5, i, data.trainText.size(0), 16) + 16 < data.trainText.size(0));
    // The test text is the same either way.
    QVERIFY(torch::equal(data.testX, whole.testX));
    // A limit above the text's windows keeps it all.
    QCOMPARE(loadTensorData(gpt({"dataset.limit_train=100000"}).dataset, 5, {}).trainText.size(0),
             whole.trainText.size(0));
  }

  void badTextStartsNothing() {
    const std::string empty = g_dir->path().toStdString() + "/empty.txt";
    std::ofstream(empty).close();
    ExperimentSpec spec = gpt();
    spec.dataset.path = empty;
    try {
      createRun(spec, nullptr);
      QFAIL("an empty text file started a run");
    } catch (const DatasetError& e) {
      QVERIFY2(std::string(e.what()).find(empty) != std::string::npos, e.what());
    }
    spec = gpt({"dataset.context=4000"});
    QVERIFY_THROWS_EXCEPTION(DatasetError, createRun(spec, nullptr));
  }

  void textSpecRoundTripsAndIsChecked_data() {
    QTest::addColumn<QString>("overrides");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("says");
    QTest::newRow("context") << "dataset.context=0"
                             << "dataset.context"
                             << "between 1 and 4096";
    QTest::newRow("test_fraction") << "dataset.test_fraction=1"
                                   << "dataset.test_fraction"
                                   << "between 0 and 1";
    QTest::newRow("mlp on text") << "model.kind=mlp stage_defaults.aux_head=linear"
                                 << "model.kind"
                                 << "needs a gpt model";
    QTest::newRow("augment") << "dataset.augment=true"
                             << "dataset.augment"
                             << "not available";
    QTest::newRow("heads") << "model.heads=3"
                           << "model.heads"
                           << "must divide model.dim";
  }
  void textSpecRoundTripsAndIsChecked() {
    QFETCH(QString, overrides);
    QFETCH(QString, field);
    QFETCH(QString, says);
    const ExperimentSpec spec = gpt({"dataset.context=24", "dataset.test_fraction=0.2"});
    const ExperimentSpec again = parseSpec(specToJson(spec));
    QCOMPARE(again.dataset.context, 24);
    QCOMPARE(again.dataset.testFraction, 0.2);
    QCOMPARE(specToJson(again), specToJson(spec));
    std::vector<std::string> o;
    for (const auto& part : overrides.split(' ', Qt::SkipEmptyParts))
      o.push_back(part.toStdString());
    const ExperimentSpec bad = gpt(o);
    std::vector<Problem> problems = validateSpec(bad, 4, {"cpu"});
    if (field == "model.heads") {  // the family's own checks, when the plan is made
      try {
        planModel(bad.model, probeInputShape(bad.dataset));
        QFAIL("3 heads of a width of 16 were planned");
      } catch (const SpecError& e) {
        problems.push_back({e.field(), e.message()});
      }
    }
    if (field == "model.kind") {  // the plan says it too, before validation runs
      try {
        createRun(bad, nullptr);
        QFAIL("an mlp started on text");
      } catch (const SpecError& e) {
        QCOMPARE(e.field(), std::string("model.kind"));
        QVERIFY2(e.message().find(says.toStdString()) != std::string::npos, e.what());
      }
    }
    QVERIFY(!problems.empty());
    QCOMPARE(QString::fromStdString(problems[0].field), field);
    QVERIFY2(problems[0].message.find(says.toStdString()) != std::string::npos,
             problems[0].message.c_str());
  }

  void planMatchesTheModules() {
    const ExperimentSpec spec = gpt();
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    QCOMPARE(plan.layers.size(), size_t{4});  // token_embed, block1, block2, lm_head
    QCOMPARE(plan.layers[0].name, std::string("token_embed"));
    QCOMPARE(plan.layers[1].outShape, (std::vector<int64_t>{16, 16}));  // [context × dim]
    QCOMPARE(plan.layers[3].outShape, (std::vector<int64_t>{16, 256}));
    auto layers = buildLayers(spec.model, plan, 1);
    torch::Tensor h = torch::randint(256, {3, 16}, torch::kInt64);
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i]->forward(h);
      QCOMPARE(std::vector<int64_t>(h.sizes().begin() + 1, h.sizes().end()),
               plan.layers[i].outShape);
      int64_t params = 0;
      for (auto& p : layers[i]->parameters()) params += p.numel();
      QCOMPARE(params, plan.layers[i].params);
    }
    // Attention's FLOPs are counted: doubling the context more than doubles a block's.
    ExperimentSpec longer = gpt({"dataset.context=32"});
    const ModelPlan p2 = planModel(longer.model, probeInputShape(longer.dataset));
    QVERIFY(p2.layers[1].flops > 2 * plan.layers[1].flops);
    const int64_t t = 16, d = 16;
    QVERIFY(plan.layers[1].flops >= 2 * 2 * t * t * d);
  }

  void gptAsLayersIsTheSameNetwork() {
    // The Design's "Edit as layers": the family written out as its list, through the JSON.
    const ExperimentSpec spec = gpt({"train.max_steps=10"});
    ExperimentSpec layers = spec;
    layers.model.kind = "layers";
    layers.model.layers = familyLayers(spec.model, probeInputShape(spec.dataset));
    layers = parseSpec(specToJson(layers));
    QCOMPARE(layers.model.layers[1].type, std::string("causal_block"));
    RecordingObserver a, b;
    const RunSummary sa = train(spec, a), sb = train(layers, b);
    QVERIFY2(sb.status == RunStatus::Completed, sb.error.c_str());
    for (int k = 0; k < 3; ++k) {
      QCOMPARE(b.series(series::kLoss, k), a.series(series::kLoss, k));
      QCOMPARE(sb.stages[size_t(k)].paramChecksum, sa.stages[size_t(k)].paramChecksum);
    }
  }

  void changingATokenNeverChangesEarlierLogits() {
    const ExperimentSpec spec = gpt();
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    auto layers = buildLayers(spec.model, plan, 2);
    torch::NoGradGuard noGrad;
    const torch::Tensor x = torch::randint(256, {2, 16}, torch::kInt64);
    const torch::Tensor base = logitsOf(layers, x);
    for (int64_t t : {0, 5, 15}) {
      torch::Tensor changed = x.clone();
      changed.index_put_({torch::indexing::Slice(), t},
                         (x.index({torch::indexing::Slice(), t}) + 1) % 256);
      const torch::Tensor out = logitsOf(layers, changed);
      QVERIFY(torch::equal(out.slice(1, 0, t), base.slice(1, 0, t)));
      QVERIFY(!torch::allclose(out.slice(1, t, t + 1), base.slice(1, t, t + 1)));
    }
  }

  void cuttableAtEveryBlock() {
    // Every layer its own stage, each but the last with an lm head.
    RecordingObserver obs;
    RunSummary s = train(gpt({"partition.cuts=[1,2,3]", "train.max_steps=20"}), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.stages.size(), size_t{4});
    for (int k = 0; k < 4; ++k) QCOMPARE(obs.series(series::kLoss, k).size(), size_t{20});
    for (double c : obs.series(series::kGradCosine, 3))
      QVERIFY2(std::abs(c - 1.0) < 1e-5, std::to_string(c).c_str());
    // The estimate's bytes are those the engine sends: [context × dim] floats and T labels.
    const ExperimentSpec spec = gpt({"partition.cuts=[1,2,3]"});
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    const SpeedEstimate est = estimateSpeed(makePartition(spec, plan), plan, 8, 2);
    for (size_t k = 0; k < 3; ++k) QCOMPARE(est.boundaryBytes[k] * 20, s.stages[k].bytesSent);
  }

  void profilesTimeTheGpt() {
    // The profiler feeds token ids to the first layer and [B, T] labels to the heads.
    const ExperimentSpec spec = gpt();
    const LayerProfile layers = profileLayers(spec, 1);
    QCOMPARE(layers.seconds.size(), size_t{4});
    for (double s : layers.seconds) QVERIFY(s > 0);
    const MethodProfile methods = profileMethods(spec, 1);
    QCOMPARE(methods.localStep.size(), size_t{3});
    QVERIFY(methods.backpropStep > 0);
  }

  void oneLocalStageEqualsBackprop() {
    RecordingObserver l, b;
    RunSummary sl = train(gpt({"partition.cuts=[]", "train.max_steps=20"}), l);
    // One intra-op thread in both, so the reductions add in the same order.
    RunSummary sb = train(gpt({"partition.cuts=[]", "train.max_steps=20", "mode=backprop",
                               "train.backprop_threads=1"}),
                          b);
    QVERIFY2(sl.status == RunStatus::Completed, sl.error.c_str());
    QVERIFY2(sb.status == RunStatus::Completed, sb.error.c_str());
    QCOMPARE(l.series(series::kLoss, 0), b.series(series::kLoss, 0));
    QCOMPARE(sl.stages[0].paramChecksum, sb.stages[0].paramChecksum);
    QCOMPARE(sl.testLoss, sb.testLoss);
  }

  void lmHeadFitsOnlyTheGpt() {
    ExperimentSpec mlp = parseSpec(
        R"({"dataset":{"kind":"synthetic"},"model":{"kind":"mlp","hidden":[8,8]},
            "partition":{"cuts":[1]},"stage_defaults":{"aux_head":"lm"}})");
    auto problems = validateSpec(mlp, 3, {"cpu"});
    QVERIFY(!problems.empty());
    QCOMPARE(problems[0].field, std::string("stage_defaults.aux_head"));
    QVERIFY2(problems[0].message.find("mlp") != std::string::npos, problems[0].message.c_str());
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(mlp, nullptr));
    // The gpt refuses the image heads in local mode.
    ExperimentSpec conv = gpt({"stage_defaults.aux_head=conv"});
    problems = validateSpec(conv, 4, {"cpu"});
    QVERIFY(!problems.empty());
    QVERIFY2(problems[0].message.find("use lm") != std::string::npos, problems[0].message.c_str());
    QVERIFY_THROWS_EXCEPTION(SpecError, createRun(conv, nullptr));
  }

  void everyModeTrains_data() {
    QTest::addColumn<QString>("overrides");
    QTest::newRow("local") << "";
    QTest::newRow("local.overlap") << "local.overlap=1";
    QTest::newRow("backprop") << "mode=backprop";
    QTest::newRow("gpipe") << "mode=pipeline pipeline.micro_batches=2";
    QTest::newRow("1f1b") << "mode=pipeline pipeline.micro_batches=4 pipeline.schedule=1f1b";
    QTest::newRow("zb-h1") << "mode=pipeline pipeline.micro_batches=4 pipeline.schedule=zb-h1";
    QTest::newRow("zb-h1 recompute") << "mode=pipeline pipeline.micro_batches=4 "
                                        "pipeline.schedule=zb-h1 pipeline.recompute=true";
  }
  void everyModeTrains() {
    QFETCH(QString, overrides);
    std::vector<std::string> o = {"train.max_steps=80"};
    for (const auto& part : overrides.split(' ', Qt::SkipEmptyParts))
      o.push_back(part.toStdString());
    RecordingObserver obs;
    RunSummary s = train(gpt(o), obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const int last = static_cast<int>(s.stages.size()) - 1;
    const auto loss = obs.series(series::kLoss, last);
    QCOMPARE(loss.size(), size_t{80});
    for (double v : loss) QVERIFY(std::isfinite(v));
    // From about ln 256 = 5.5 nats per byte; the corpus has a small alphabet.
    QVERIFY2(
        mean(loss, 70, 80) < mean(loss, 0, 10) - 1.0,
        (std::to_string(mean(loss, 0, 10)) + " -> " + std::to_string(mean(loss, 70, 80))).c_str());
    QVERIFY(std::isfinite(s.testLoss));
    QVERIFY(s.testAccuracy > 0.1 && s.testAccuracy <= 1);  // next-byte accuracy
    QCOMPARE(s.testPerplexity, std::exp(s.testLoss));
    QCOMPARE(s.testBitsPerByte, s.testLoss / std::numbers::ln2);
    const std::string json = summaryToJson(s);
    QVERIFY(json.find("\"test_bits_per_byte\"") != std::string::npos);
    QVERIFY(json.find("\"test_perplexity\"") != std::string::npos);
  }

  void resumeTrainsAsAnUninterruptedRun() {
    QTemporaryDir dir;
    const std::string checkpoint =
        ",\"checkpoint\":{\"interval\":20,\"dir\":\"" + dir.path().toStdString() + "\"}";
    RecordingObserver full;
    RunSummary s = train(gpt({"train.max_steps=40"}, checkpoint), full);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const CheckpointInfo info = readCheckpointInfo(dir.path().toStdString() + "/step-20");
    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    for (int k = 0; k < 3; ++k) {
      const auto whole = full.series(series::kLoss, k);
      QCOMPARE(resumed.series(series::kLoss, k),
               std::vector<double>(whole.begin() + 20, whole.end()));
      QCOMPARE(r.stages[size_t(k)].paramChecksum, s.stages[size_t(k)].paramChecksum);
    }
  }
};

QTEST_GUILESS_MAIN(TestGpt)
#include "test_gpt.moc"
