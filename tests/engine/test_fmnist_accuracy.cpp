// slow: the presets, unchanged, learn Fashion-MNIST in one epoch: the default MLP reaches at least
// 0.80 test accuracy, the residual CNN 0.80 and the ViT 0.75.
#include <QtTest>

#include "stagewise/engine/engine.h"

using namespace stagewise::engine;

class TestFmnistAccuracy : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void presetsLearn_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("minimum");
    QTest::addColumn<int>("steps");
    QTest::newRow("mlp (default)") << "mlp-fmnist-4stage" << 0.80 << 1875;
    QTest::newRow("cnn") << "cnn-fmnist-4stage" << 0.80 << 1875;
    QTest::newRow("vit") << "vit-fmnist-4stage" << 0.75 << 938;
  }
  void presetsLearn() {
    QFETCH(QString, preset);
    QFETCH(double, minimum);
    QFETCH(int, steps);
    ExperimentSpec spec =
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/" + preset.toStdString() + ".json");
    auto run = createRun(spec, nullptr);
    run->start();
    RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    qInfo("%s: test accuracy %.4f after %lld steps, %.0f samples/s, %.1f s", qPrintable(preset), s.testAccuracy,
          static_cast<long long>(s.steps), s.samplesPerSec, s.wallSeconds);
    QVERIFY2(s.testAccuracy >= minimum, std::to_string(s.testAccuracy).c_str());
    QCOMPARE(s.steps, int64_t{steps});
    QVERIFY(std::abs(s.stages.back().gradCosine - 1.0) < 1e-5);
  }
};

QTEST_GUILESS_MAIN(TestFmnistAccuracy)
#include "test_fmnist_accuracy.moc"
