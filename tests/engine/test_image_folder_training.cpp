// An image folder through the LibTorch engine: per-channel normalisation with the training set's
// statistics, dataset.validation, and a few training steps (with augmentation) whose loading
// notes reach the observer, first decoded and then from the cache.
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <filesystem>

#include "data/tensor_data.h"
#include "image_fixture.h"
#include "recording_observer.h"
#include "stagewise/engine/engine.h"

using namespace stagewise::engine;
namespace fs = std::filesystem;

namespace {

/// Three classes of `perClass` training and 2 test images, 8x8; the channels differ in level
/// and spread from image to image, so one mean and std for all channels would not centre each.
void writeFolder(const fs::path& root, int perClass) {
  const char* classes[3] = {"ant", "bee", "cow"};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < perClass + 2; ++i) {
      const int k = c * (perClass + 2) + i;
      const fixture::Rgb colour{static_cast<unsigned char>(10 + 9 * k),
                                static_cast<unsigned char>(120 + 2 * k),
                                static_cast<unsigned char>(250 - 5 * k)};
      std::string name = "img";
      name.append(std::to_string(i)).append(i % 2 ? ".png" : ".jpg");
      fixture::writeImage(root / (i < perClass ? "train" : "test") / classes[c] / name, 8, 8,
                          colour, 3, i);
    }
}

ExperimentSpec imageSpec(const fs::path& root, const std::string& mode) {
  return parseSpec(R"({"dataset":{"kind":"image_folder","path":")" + root.string() +
                   R"(","size":[8,8],"augment":true},
     "model":{"kind":"mlp","hidden":[16,16]},"partition":{"cuts":[1]},"mode":")" + mode + R"(",
     "train":{"batch_size":4,"max_steps":6,"seed":3,"backprop_threads":1},
     "eval":{"interval":0},"probe":{"interval":-1}})");
}

bool sawNote(RecordingObserver& obs, const std::string& text) {
  std::lock_guard lock(obs.mutex);
  for (const auto& e : obs.events)
    if (e.kind == EventKind::Info && e.message.rfind("dataset: ", 0) == 0 &&
        e.message.find(text) != std::string::npos)
      return true;
  return false;
}

}  // namespace

class TestImageFolderTraining : public QObject {
  Q_OBJECT
  QTemporaryDir m_cache;

 private Q_SLOTS:
  void initTestCase() { setenv("STAGEWISE_CACHE", m_cache.path().toUtf8().constData(), 1); }

  void normalisesPerChannelWithTrainingStatistics() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root, 6);
    DatasetSpec spec = imageSpec(root, "local").dataset;
    const TensorData data = loadTensorData(spec, 1);
    QCOMPARE(data.trainX.sizes().vec(), (std::vector<int64_t>{18, 3, 8, 8}));
    QCOMPARE(data.testX.sizes().vec(), (std::vector<int64_t>{6, 3, 8, 8}));
    QCOMPARE(data.shape.dims, (std::vector<int64_t>{3, 8, 8}));
    QCOMPARE(data.shape.numClasses, 3);
    for (int c = 0; c < 3; ++c) {
      const auto channel = data.trainX.select(1, c);
      QVERIFY2(std::abs(channel.mean().item<double>()) < 1e-4, qPrintable(QString::number(c)));
      QVERIFY2(std::abs(channel.std().item<double>() - 1.0) < 1e-4, qPrintable(QString::number(c)));
    }
    // The test set is standardised with the training set's statistics, channel by channel.
    const ByteDataset bytes = loadByteDataset(spec);
    auto raw = [](const ByteSplit& s) {
      std::vector<int64_t> shape = {s.size()};
      shape.insert(shape.end(), s.sampleShape.begin(), s.sampleShape.end());
      return torch::tensor(std::vector<float>(s.images.begin(), s.images.end()))
          .reshape(shape)
          .div(255.0);
    };
    const auto train = raw(bytes.train), test = raw(bytes.test);
    for (int c = 0; c < 3; ++c) {
      const auto mean = train.select(1, c).mean(), std = train.select(1, c).std();
      QVERIFY(torch::allclose(data.testX.select(1, c), (test.select(1, c) - mean) / std, 1e-4,
                              1e-4));
    }
    // dataset.validation holds out a share of the training images, standardised alike.
    spec.validation = 0.25;
    const TensorData held = loadTensorData(spec, 1);
    QCOMPARE(held.valX.size(0), int64_t{5});  // round(0.25 * 18)
    QCOMPARE(held.trainX.size(0), int64_t{13});
    QCOMPARE(held.valY.size(0), int64_t{5});
  }

  void trainsAFewStepsInEveryMode() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root, 4);
    bool first = true;
    for (const std::string mode : {"local", "backprop", "pipeline"}) {
      RecordingObserver obs;
      auto run = createRun(imageSpec(root, mode), &obs);
      run->start();
      const RunSummary s = run->wait();
      QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
      QCOMPARE(s.steps, int64_t{6});
      QVERIFY(std::isfinite(s.testAccuracy));
      for (double v : obs.series(series::kLoss, mode == "backprop" ? 0 : 1))
        QVERIFY(std::isfinite(v));
      // The first run decodes (and caches); the next ones read the cache.
      QVERIFY2(sawNote(obs, first ? "decoded in" : "read from the cache"), mode.c_str());
      first = false;
    }
  }
};

QTEST_GUILESS_MAIN(TestImageFolderTraining)
#include "test_image_folder_training.moc"
