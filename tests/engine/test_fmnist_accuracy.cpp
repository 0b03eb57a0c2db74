// slow: the default preset, unchanged, reaches at least 0.80 test accuracy on Fashion-MNIST in
// one epoch.
#include <QtTest>

#include "stagewise/engine/engine.h"

using namespace stagewise::engine;

class TestFmnistAccuracy : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultPresetLearns() {
    ExperimentSpec spec = loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/mlp-fmnist-4stage.json");
    auto run = createRun(spec, nullptr);
    run->start();
    RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    qInfo("test accuracy %.4f after %lld steps, %.0f samples/s, %.1f s", s.testAccuracy,
          static_cast<long long>(s.steps), s.samplesPerSec, s.wallSeconds);
    QVERIFY2(s.testAccuracy >= 0.80, std::to_string(s.testAccuracy).c_str());
    QCOMPARE(s.steps, int64_t{1875});
  }
};

QTEST_GUILESS_MAIN(TestFmnistAccuracy)
#include "test_fmnist_accuracy.moc"
