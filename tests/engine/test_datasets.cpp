// Dataset loaders on small generated files, including broken ones.
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <fstream>

#include "stagewise/engine/dataset.h"

using namespace stagewise::engine;

#include "idx_fixture.h"

namespace {

using fixture::idx;
using fixture::write;
using fixture::writeSet;

std::string errorOf(const DatasetSpec& spec) {
  try {
    loadByteDataset(spec);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

class TestDatasets : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void loadsRawAndGzipIdx() {
    for (bool gz : {false, true}) {
      QTemporaryDir dir;
      writeSet(dir.path(), 20, 5, 4, gz);
      DatasetSpec spec;
      spec.kind = "idx";
      spec.path = dir.path().toStdString();
      ByteDataset ds = loadByteDataset(spec);
      QCOMPARE(ds.train.size(), int64_t{20});
      QCOMPARE(ds.test.size(), int64_t{10});
      QCOMPARE(ds.train.sampleShape, (std::vector<int64_t>{1, 5, 4}));
      QCOMPARE(ds.numClasses, 3);  // labels cycle 0..2
      InputShape shape = probeInputShape(spec);
      QCOMPARE(shape.dims, (std::vector<int64_t>{1, 5, 4}));
      QCOMPARE(shape.numClasses, 3);
      spec.limitTrain = 7;
      QCOMPARE(loadByteDataset(spec).train.size(), int64_t{7});
    }
  }

  void truncatedFileNamesFileAndProblem() {
    QTemporaryDir dir;
    writeSet(dir.path(), 20, 5, 4, false);
    auto bytes = idx({20, 5, 4}, 20 * 5 * 4);
    bytes.resize(bytes.size() - 10);
    write(dir.path() + "/train-images-idx3-ubyte", bytes);
    DatasetSpec spec;
    spec.kind = "idx";
    spec.path = dir.path().toStdString();
    const std::string err = errorOf(spec);
    QVERIFY2(err.find("train-images-idx3-ubyte") != std::string::npos, err.c_str());
    QVERIFY2(err.find("truncated") != std::string::npos, err.c_str());
  }

  void truncatedGzipIsReported() {
    QTemporaryDir dir;
    writeSet(dir.path(), 200, 8, 8, true);
    QFile f(dir.path() + "/train-images-idx3-ubyte.gz");
    QVERIFY(f.open(QIODevice::ReadWrite));
    f.resize(f.size() / 2);
    f.close();
    DatasetSpec spec;
    spec.kind = "idx";
    spec.path = dir.path().toStdString();
    const std::string err = errorOf(spec);
    QVERIFY2(err.find("train-images-idx3-ubyte.gz") != std::string::npos, err.c_str());
    QVERIFY2(err.find("truncated") != std::string::npos, err.c_str());
  }

  void malformedHeaders() {
    auto check = [](std::vector<uint8_t> bytes, const char* expected) {
      try {
        parseIdx(bytes.data(), bytes.size(), "x.idx");
        QFAIL("malformed IDX accepted");
      } catch (const DatasetError& e) {
        QVERIFY2(std::string(e.what()).find(expected) != std::string::npos, e.what());
        QVERIFY(std::string(e.what()).rfind("x.idx", 0) == 0);
      }
    };
    check({1, 2, 3}, "too short");
    check({1, 0, 8, 1, 0, 0, 0, 1, 0}, "first two bytes");
    check({0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0}, "0x0D");
    check({0, 0, 8, 9}, "9 dimensions");
    auto extra = idx({4}, 4);
    extra.push_back(1);
    check(extra, "unexpected bytes");
  }

  void countMismatchAndMissingFiles() {
    QTemporaryDir dir;
    writeSet(dir.path(), 20, 5, 4, false);
    write(dir.path() + "/train-labels-idx1-ubyte", idx({19}, 19));
    DatasetSpec spec;
    spec.kind = "idx";
    spec.path = dir.path().toStdString();
    std::string err = errorOf(spec);
    QVERIFY2(err.find("20 images") != std::string::npos && err.find("19 labels") != std::string::npos, err.c_str());
    QFile::remove(dir.path() + "/t10k-labels-idx1-ubyte");
    write(dir.path() + "/train-labels-idx1-ubyte", idx({20}, 20));
    err = errorOf(spec);
    QVERIFY2(err.find("t10k-labels-idx1-ubyte.gz") != std::string::npos, err.c_str());
    spec.path = dir.path().toStdString() + "/nope";
    QVERIFY(errorOf(spec).find("does not exist") != std::string::npos);
  }

  void cifarBinaryBatches() {
    QTemporaryDir dir;
    auto record = [](uint8_t label) {
      std::vector<uint8_t> r(3073, 100);
      r[0] = label;
      return r;
    };
    std::vector<uint8_t> batch;
    for (int i = 0; i < 4; ++i) {
      auto r = record(uint8_t(i % 10));
      batch.insert(batch.end(), r.begin(), r.end());
    }
    for (int i = 1; i <= 5; ++i) write(dir.path() + QString("/data_batch_%1.bin").arg(i), batch);
    write(dir.path() + "/test_batch.bin", batch);
    DatasetSpec spec;
    spec.kind = "cifar10";
    spec.path = dir.path().toStdString();
    ByteDataset ds = loadByteDataset(spec);
    QCOMPARE(ds.train.size(), int64_t{20});
    QCOMPARE(ds.train.sampleShape, (std::vector<int64_t>{3, 32, 32}));
    batch.resize(batch.size() - 5);
    write(dir.path() + "/data_batch_3.bin", batch);
    std::string err = errorOf(spec);
    QVERIFY2(err.find("data_batch_3.bin") != std::string::npos && err.find("3073") != std::string::npos, err.c_str());
    write(dir.path() + "/data_batch_3.bin", record(42));
    err = errorOf(spec);
    QVERIFY2(err.find("label 42") != std::string::npos, err.c_str());
    for (int i = 0; i < 4; ++i) batch.push_back(0);  // whole records again
    batch.resize(4 * 3073);
    write(dir.path() + "/data_batch_3.bin", batch);
    QFile::remove(dir.path() + "/test_batch.bin");
    QVERIFY(errorOf(spec).find("test_batch.bin is missing") != std::string::npos);
  }

  void validationSplitIsFixedAndSized() {
    // round(fraction x n) indices, ascending, distinct, in range; the same on every call (no
    // seed is involved); a larger share holds out a superset.
    for (int64_t n : {1, 7, 100, 60000}) {
      for (double f : {0.0, 0.1, 0.25, 0.5}) {
        const std::vector<int64_t> v = validationIndices(n, f);
        QCOMPARE(int64_t(v.size()), std::llround(f * double(n)));
        QCOMPARE(validationCount(n, f), int64_t(v.size()));
        QVERIFY(std::is_sorted(v.begin(), v.end()));
        QVERIFY(std::adjacent_find(v.begin(), v.end()) == v.end());
        for (int64_t i : v) QVERIFY(i >= 0 && i < n);
        QCOMPARE(validationIndices(n, f), v);
      }
      const auto small = validationIndices(n, 0.1), large = validationIndices(n, 0.5);
      QVERIFY(std::includes(large.begin(), large.end(), small.begin(), small.end()));
    }
    // Spread over the set, not its first samples.
    const auto v = validationIndices(60000, 0.1);
    QVERIFY(v.front() < 100 && v.back() > 59900);
    for (double bad : {-0.1, 0.51, 1.0}) {
      QVERIFY_THROWS_EXCEPTION(SpecError, validationIndices(100, bad));
      ExperimentSpec spec;
      spec.dataset.validation = bad;
      const auto problems = validateSpec(spec, 9, {"cpu"});
      QVERIFY(!problems.empty());
      QCOMPARE(problems.front().field, std::string("dataset.validation"));
    }
  }

  void trainSamplesLeaveTheValidationOut() {
    DatasetSpec spec;
    spec.kind = "synthetic";
    spec.syntheticTrain = 1000;
    QCOMPARE(probeTrainSamples(spec), int64_t{1000});
    spec.validation = 0.25;
    QCOMPARE(probeTrainSamples(spec), int64_t{750});
    spec.limitTrain = 101;  // the share of what is used: round(25.25) = 25
    QCOMPARE(probeTrainSamples(spec), int64_t{76});
    QTemporaryDir dir;
    writeSet(dir.path(), 40, 5, 4, false);
    DatasetSpec idxSpec;
    idxSpec.kind = "idx";
    idxSpec.path = dir.path().toStdString();
    idxSpec.validation = 0.1;
    QCOMPARE(probeTrainSamples(idxSpec), int64_t{36});
  }

  void syntheticIsDeterministic() {
    DatasetSpec spec;
    spec.kind = "synthetic";
    spec.syntheticTrain = 64;
    spec.syntheticTest = 16;
    auto a = makeSyntheticDataset(spec, 3), b = makeSyntheticDataset(spec, 3), c = makeSyntheticDataset(spec, 4);
    QVERIFY(a.train.images == b.train.images);
    QVERIFY(a.train.labels == b.train.labels);
    QVERIFY(a.train.images != c.train.images);
    QCOMPARE(a.train.size(), int64_t{64});
  }
};

QTEST_GUILESS_MAIN(TestDatasets)
#include "test_datasets.moc"
