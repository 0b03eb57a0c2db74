// model.kind "torchscript": models defined and saved in C++ (no Python), planned, qualified,
// trained in every mode, checkpointed and resumed, refused when they are not a sequence of their
// children or not TorchScript at all, and written back with their trained weights.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>

#include "data/tensor_data.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "script_models.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/torchscript.h"

using namespace stagewise::engine;

namespace {

const InputShape kShape{{16}, 4};

std::string saved(const QTemporaryDir& dir, const std::string& name, torch::jit::Module m) {
  const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
  m.save(path);
  return path;
}

ExperimentSpec spec(const std::string& model, const std::vector<std::string>& extra = {}) {
  const std::string json = R"({"name":"ts","dataset":{"kind":"synthetic","synthetic_train":512,
     "synthetic_test":128,"synthetic_features":16,"synthetic_classes":4},
     "model":{"kind":"torchscript","path":")" +
                           model + R"("},"partition":{"cuts":[2,4]},
     "train":{"batch_size":16,"max_steps":40,"seed":5,"backprop_threads":1},
     "eval":{"interval":0},"probe":{"interval":20}})";
  return parseSpec(applyOverrides(json, extra));
}

RunSummary train(const ExperimentSpec& s, RecordingObserver& obs, const RunOptions& o = {}) {
  auto run = createRun(s, &obs, o);
  run->start();
  return run->wait();
}

ModelSpec modelAt(const std::string& path, bool reinit = false) {
  ModelSpec m;
  m.kind = "torchscript";
  m.path = path;
  m.reinit = reinit;
  return m;
}

QString refusal(const ModelSpec& m, const InputShape& shape = kShape) {
  try {
    planModel(m, shape);
  } catch (const SpecError& e) {
    if (e.field() != "model.path") return "wrong field " + QString::fromStdString(e.field());
    return QString::fromStdString(e.message());
  }
  return {};
}

std::vector<torch::Tensor> stateOfModule(const torch::jit::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& c : m.named_children())
    for (const auto& p : c.value.parameters()) out.push_back(p);
  return out;
}

}  // namespace

class TestTorchScript : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void specRoundTripsAndValidatesThePath() {
    const ExperimentSpec s = spec("/nowhere/model.pt", {"model.reinit=true"});
    QCOMPARE(s.model.kind, std::string("torchscript"));
    QCOMPARE(s.model.path, std::string("/nowhere/model.pt"));
    QVERIFY(s.model.reinit);
    const ExperimentSpec back = parseSpec(specToJson(s));
    QCOMPARE(back.model.path, s.model.path);
    QCOMPARE(back.model.reinit, true);
    // Other models do not write the keys: their canonical JSON is unchanged.
    QVERIFY(specToJson(ExperimentSpec{}).find("reinit") == std::string::npos);
    auto problems = validateSpec(s, 6, {"cpu"});
    QVERIFY(!problems.empty());
    QCOMPARE(problems.front().field, std::string("model.path"));
    QVERIFY2(problems.front().message.find("/nowhere/model.pt") != std::string::npos,
             problems.front().message.c_str());
    try {
      parseSpec(R"({"model":{"kind":"torchscript","reinit":"yes"}})");
      QFAIL("a string reinit was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("model.reinit"));
    }
  }

  void plansTheChildrenInOrder() {
    QTemporaryDir dir;
    const std::string path = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    const ModelPlan plan = planModel(modelAt(path), kShape);
    QCOMPARE(plan.layers.size(), size_t{6});
    const std::vector<std::string> names = {"fc1", "act1", "fc2", "norm", "act2", "fc3"};
    const std::vector<int64_t> params = {16 * 48 + 48, 0, 48 * 48 + 48, 2 * 48, 0, 48 * 4 + 4};
    for (size_t i = 0; i < names.size(); ++i) {
      QCOMPARE(plan.layers[i].name, names[i]);
      QCOMPARE(plan.layers[i].params, params[i]);
    }
    QCOMPARE(plan.layers[0].outShape, std::vector<int64_t>{48});
    QCOMPARE(plan.layers[5].outShape, std::vector<int64_t>{4});
    // The estimate: a Linear's multiply-adds, plus one per output element.
    QCOMPARE(plan.layers[0].flops, int64_t{2 * 16 * 48 + 48});
    QCOMPARE(plan.layers[1].flops, int64_t{48});
    QVERIFY(plan.layers[0].description.find("Fc1") != std::string::npos);
    // The digest is the file's bytes'.
    QCOMPARE(torchScriptSha256(path).size(), size_t{64});
    // Another dataset shape: the first child cannot take it, and says so.
    const QString wrong = refusal(modelAt(path), InputShape{{20}, 4});
    QVERIFY2(wrong.contains("child 'fc1'") && wrong.contains("[20]") &&
                 wrong.contains("cannot be multiplied"),
             qPrintable(wrong));
    // Another class count: the last child's width is named.
    const QString classes = refusal(modelAt(path), InputShape{{16}, 10});
    QVERIFY2(classes.contains("'fc3'") && classes.contains("10 classes"), qPrintable(classes));
  }

  void layersCarryTheFileWeightsOrSeededOnes() {
    QTemporaryDir dir;
    const auto net = script_models::sequential(16, 4, 1);
    const std::string path = saved(dir, "net.pt", net);
    const ModelPlan plan = planModel(modelAt(path), kShape);
    const auto file = stateOfModule(torch::jit::load(path));
    auto a = buildLayers(modelAt(path), plan, 7), b = buildLayers(modelAt(path), plan, 7);
    auto pa = parametersOf(a), pb = parametersOf(b);
    QCOMPARE(pa.size(), file.size());
    for (size_t i = 0; i < pa.size(); ++i) {
      QVERIFY(torch::equal(pa[i], file[i]));
      QVERIFY(pa[i].data_ptr() != pb[i].data_ptr());  // every build is its own copy
      QVERIFY(pa[i].requires_grad() && pa[i].is_leaf());
    }
    QCOMPARE(stateOf(a).size(), pa.size() + 2);  // the norm's running statistics
    // reinit: drawn from the seed, the same for a seed, other for another.
    auto r1 = parametersOf(buildLayers(modelAt(path, true), plan, 7));
    auto r2 = parametersOf(buildLayers(modelAt(path, true), plan, 7));
    auto r3 = parametersOf(buildLayers(modelAt(path, true), plan, 8));
    QVERIFY(!torch::equal(r1[0], file[0]));
    QVERIFY(torch::equal(r1[0], r2[0]) && torch::equal(r1[4], r2[4]));
    QVERIFY(!torch::equal(r1[0], r3[0]));
    // The layers in order give the file's forward (eval mode: batch norm on its statistics).
    auto x = torch::randn({5, 16});
    torch::jit::Module loaded = torch::jit::load(path);
    loaded.eval();
    torch::Tensor y = x;
    for (auto& l : a) {
      l->eval();
      y = l->forward(y);
    }
    QVERIFY(torch::allclose(y, loaded.forward({x}).toTensor(), 1e-5, 1e-6));
  }

  void trainsInEveryMode_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("local") << "local";
    QTest::newRow("pipeline") << "pipeline";
    QTest::newRow("backprop") << "backprop";
  }
  void trainsInEveryMode() {
    QFETCH(QString, mode);
    QTemporaryDir dir;
    const std::string path = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    RecordingObserver obs;
    const RunSummary s =
        train(spec(path, {"mode=" + mode.toStdString(),
                          "checkpoint.dir=" + dir.filePath("ckpt").toStdString()}),
              obs);
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    QCOMPARE(s.steps, int64_t{40});
    QVERIFY(std::isfinite(s.testLoss) && s.testAccuracy > 0.4);  // 4 classes: chance is 0.25
    const size_t stages = mode == "backprop" ? 1 : 3;
    QCOMPARE(obs.info.stages.size(), stages);
    QCOMPARE(obs.info.layers.size(), size_t{6});
    // The run records which file it trained.
    bool recorded = false;
    for (const auto& e : obs.events)
      recorded = recorded || (e.kind == EventKind::Started &&
                              e.message.find("model file " + path + " sha256 " +
                                             torchScriptSha256(path)) != std::string::npos);
    QVERIFY2(recorded, obs.events.empty() ? "no events" : obs.events.front().message.c_str());
    // ...and keeps its trained weights at the last step (for export-model).
    QCOMPARE(readCheckpointInfo(dir.filePath("ckpt").toStdString()).step, int64_t{40});
    // Local mode trains every stage, each with its aux head.
    if (mode == "local")
      for (const auto& st : s.stages) QVERIFY(std::isfinite(st.finalLoss));
  }

  void checkpointResumesExactly() {
    QTemporaryDir dir;
    const std::string path = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    const std::string ckpt = dir.filePath("ckpt").toStdString();
    const ExperimentSpec s = spec(path, {"mode=backprop", "checkpoint.interval=20",
                                         "checkpoint.dir=" + ckpt, "probe.interval=-1"});
    RecordingObserver full;
    const RunSummary whole = train(s, full);
    QVERIFY2(whole.status == RunStatus::Completed, whole.error.c_str());
    const CheckpointInfo info = readCheckpointInfo(ckpt + "/step-20");
    RecordingObserver resumed;
    RunOptions options;
    options.resumeFrom = info.path;
    const RunSummary r = train(info.spec, resumed, options);
    QVERIFY2(r.status == RunStatus::Completed, r.error.c_str());
    const auto a = full.series(series::kLoss, 0), b = resumed.series(series::kLoss, 0);
    QCOMPARE(b.size(), size_t{20});
    QCOMPARE(b, std::vector<double>(a.begin() + 20, a.end()));
    QCOMPARE(r.stages[0].paramChecksum, whole.stages[0].paramChecksum);
  }

  void nonSequentialForwardIsRefusedNamingTheChild() {
    QTemporaryDir dir;
    const std::string path = saved(dir, "skip.pt", script_models::skip(16, 4));
    const QString message = refusal(modelAt(path));
    QVERIFY2(message.contains("does not reproduce its forward"), qPrintable(message));
    QVERIFY2(message.contains("child 2 'fc2'"), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    // A run is refused the same way, before anything trains.
    RecordingObserver obs;
    try {
      createRun(spec(path, {"partition.cuts=[1]"}), &obs);
      QFAIL("a non-sequential model was accepted");
    } catch (const SpecError& e) {
      QVERIFY2(QString::fromStdString(e.message()).contains("'fc2'"), e.what());
    }
  }

  void corruptOrForeignFilesAreOneClearLine() {
    QTemporaryDir dir;
    const std::string good = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    std::string bytes;
    {
      std::ifstream in(good, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::vector<std::pair<std::string, std::string>> files = {
        {"garbage.pt", "this is not a model\n\x01\x02"},
        {"empty.pt", ""},
        {"half.pt", bytes.substr(0, bytes.size() / 2)},
        {"flipped.pt", [&] {
           std::string b = bytes;
           for (size_t i = 100; i < b.size(); i += 97) b[i] = char(b[i] ^ 0x5a);
           return b;
         }()},
    };
    for (const auto& [name, content] : files) {
      const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
      std::ofstream(path, std::ios::binary) << content;
      const QString message = refusal(modelAt(path));
      QVERIFY2(!message.isEmpty(), name.c_str());
      QVERIFY2(!message.contains('\n'), qPrintable(message));
      QVERIFY2(message.contains(QString::fromStdString(path)), qPrintable(message));
      try {
        planTorchScriptBytes(content, kShape);
        QFAIL("corrupt bytes were accepted");
      } catch (const SpecError&) {
      }
    }
    // A folder is not a file.
    QVERIFY(!refusal(modelAt(dir.path().toStdString())).isEmpty());
  }

  void exportWritesTheTrainedNetworkBack_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("local, 3 stages") << "local";
    QTest::newRow("backprop") << "backprop";
  }
  void exportWritesTheTrainedNetworkBack() {
    QFETCH(QString, mode);
    QTemporaryDir dir;
    const std::string path = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    const std::string ckpt = dir.filePath("ckpt").toStdString();
    const ExperimentSpec s =
        spec(path, {"mode=" + mode.toStdString(), "checkpoint.dir=" + ckpt, "probe.interval=-1"});
    RecordingObserver obs;
    const RunSummary summary = train(s, obs);
    QVERIFY2(summary.status == RunStatus::Completed, summary.error.c_str());
    const std::string out = dir.filePath("trained.pt").toStdString();
    exportTorchScript(ckpt, out);
    torch::jit::Module trained = torch::jit::load(out);
    trained.eval();
    // The trained network's outputs: its test accuracy and loss are the run's final ones.
    const TensorData data = loadTensorData(s.dataset, s.train.seed);
    torch::NoGradGuard noGrad;
    const torch::Tensor logits = trained.forward({data.testX}).toTensor();
    const double accuracy = logits.argmax(1).eq(data.testY).to(torch::kDouble).mean().item<double>();
    const double loss = torch::nn::functional::cross_entropy(logits, data.testY).item<double>();
    QVERIFY2(std::abs(accuracy - summary.testAccuracy) <= 1.0 / 128 + 1e-9,
             qPrintable(QString("%1 vs %2").arg(accuracy).arg(summary.testAccuracy)));
    QVERIFY2(std::abs(loss - summary.testLoss) < 1e-4,
             qPrintable(QString("%1 vs %2").arg(loss).arg(summary.testLoss)));
    // ...and not the file's starting weights.
    const auto before = stateOfModule(torch::jit::load(path)), after = stateOfModule(trained);
    QCOMPARE(after.size(), before.size());
    QVERIFY(!torch::equal(after[0], before[0]));
    // A trained file plans like the original: it can be imported again.
    QCOMPARE(planModel(modelAt(out), kShape).layers.size(), size_t{6});
  }

  void cliImportsTrainsAndExports() {
    QTemporaryDir dir;
    const std::string path = saved(dir, "net.pt", script_models::sequential(16, 4, 1));
    const QString spec = dir.filePath("net.stagewise.json"), db = dir.filePath("runs.db");
    const QString out = dir.filePath("trained.pt");
    struct Result {
      int code;
      QString out, err;
    };
    auto cli = [&](const QStringList& args) {
      QProcess p;
      p.start(STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli", args);
      if (!p.waitForFinished(300000)) p.kill(), p.waitForFinished();
      return Result{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                    QString::fromUtf8(p.readAllStandardOutput()),
                    QString::fromUtf8(p.readAllStandardError())};
    };
    const Result imported =
        cli({"import", QString::fromStdString(path), "--out", spec, "--set",
             "dataset.kind=synthetic", "--set", "dataset.synthetic_features=16", "--set",
             "train.max_steps=30", "--set", "eval.interval=0", "--set",
             "checkpoint.dir=" + dir.filePath("ckpt")});
    QVERIFY2(imported.code == 0, qPrintable(imported.err));
    QVERIFY2(imported.out.contains("6 layers") && imported.out.contains("sha256"),
             qPrintable(imported.out));
    const ExperimentSpec s = loadSpec(spec.toStdString());
    QCOMPARE(s.model.kind, std::string("torchscript"));
    QCOMPARE(s.model.path, path);
    QCOMPARE(s.name, std::string("net"));
    QCOMPARE(s.partition.cuts.size(), size_t{3});  // 4 stages balanced by FLOPs
    const Result trained = cli({"train", "--config", spec, "--db", db, "--quiet"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err + trained.out));
    const Result exported = cli({"runs", "export-model", "1", "--out", out, "--db", db});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    torch::jit::Module back = torch::jit::load(out.toStdString());
    QCOMPARE(back.forward({torch::randn({3, 16})}).toTensor().sizes().vec(),
             (std::vector<int64_t>{3, 4}));
    QVERIFY(!torch::equal(stateOfModule(back)[0], stateOfModule(torch::jit::load(path))[0]));
    // Not a model: one line, exit 2; a family run has no network to export.
    const QString junk = dir.filePath("junk.pt");
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write("PK\x03\x04 not a zip") > 0);
    f.close();
    const Result bad = cli({"import", junk, "--out", dir.filePath("junk.json")});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.trimmed().count('\n') == 0 && bad.err.contains("model.path"),
             qPrintable(bad.err));
    QVERIFY(!QFile::exists(dir.filePath("junk.json")));
  }
};

QTEST_GUILESS_MAIN(TestTorchScript)
#include "test_torchscript.moc"
