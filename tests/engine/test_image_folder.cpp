// dataset.kind "image_folder" on small PNG/JPEG/BMP files written here: class order, grey and
// RGB, resizing, the cache and its invalidation, and every bad input naming what to fix.
#include <QTemporaryDir>
#include <QtTest>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/image_cache.h"
#include "data/image_folder.h"
#include "image_fixture.h"
#include "stagewise/engine/dataset.h"

using namespace stagewise::engine;
namespace fs = std::filesystem;
using fixture::Rgb;
using fixture::writeImage;

namespace {

const Rgb kBird{30, 30, 200}, kCat{200, 30, 30}, kDog{30, 200, 30};

/// "<prefix><i>.png" (built by appending: GCC 12 warns falsely on "t" + std::to_string(i)).
std::string numbered(const char* prefix, int i) {
  std::string name(prefix);
  name.append(std::to_string(i)).append(".png");
  return name;
}

/// train/ and test/ with three classes, made in an order that is not the sorted one:
/// dog 3+2, bird 2+1, cat 4+2 images, 6x5 pixels, PNG except one JPEG and one BMP in train.
void writeFolder(const fs::path& root) {
  for (int i = 0; i < 3; ++i) writeImage(root / "train/dog" / numbered("d", i), 6, 5, kDog, 3, i);
  for (int i = 0; i < 2; ++i) writeImage(root / "train/bird" / numbered("b", i), 6, 5, kBird, 3, i);
  for (int i = 0; i < 3; ++i) writeImage(root / "train/cat" / numbered("c", i), 6, 5, kCat, 3, i);
  writeImage(root / "train/cat/c3.JPG", 6, 5, kCat);  // extensions match in any case
  std::ofstream(root / "train/dog/notes.txt") << "not an image name: skipped";
  std::ofstream(root / "train/dog/.hidden.png") << "hidden files are skipped";
  writeImage(root / "train/bird/b2.bmp", 6, 5, kBird);
  for (const auto* c : {"dog", "bird", "cat"})
    for (int i = 0; i < 2; ++i)
      writeImage(root / "test" / c / numbered("t", i), 6, 5,
                 std::string(c) == "dog" ? kDog : std::string(c) == "bird" ? kBird : kCat, 3, i);
  fs::remove(root / "test/bird/t1.png");
}

DatasetSpec specFor(const fs::path& root) {
  DatasetSpec spec;
  spec.kind = "image_folder";
  spec.path = root.string();
  return spec;
}

ImageLoadOptions optionsIn(const fs::path& cache) {
  ImageLoadOptions o;
  o.cacheDir = cache.string();
  o.threads = 2;
  return o;
}

std::string errorOf(const DatasetSpec& spec, const fs::path& cache) {
  try {
    loadImageFolder(spec, optionsIn(cache));
  } catch (const DatasetError& e) {
    return e.what();
  }
  return {};
}

/// Pixel (c, y, x) of sample i.
int pixel(const ByteSplit& s, int64_t i, int c, int y, int x) {
  const auto& d = s.sampleShape;
  return s.images[static_cast<size_t>(((i * d[0] + c) * d[1] + y) * d[2] + x)];
}

bool near(int a, int b, int tolerance) { return std::abs(a - b) <= tolerance; }

int cacheFiles(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    (void)e;
    ++n;
  }
  return n;
}

}  // namespace

class TestImageFolder : public QObject {
  Q_OBJECT
  QTemporaryDir m_home;

 private Q_SLOTS:
  void initTestCase() {
    // Nothing of this test is cached under the user's home.
    setenv("STAGEWISE_CACHE", (fs::path(m_home.path().toStdString()) / "cache").c_str(), 1);
  }

  void classesAreSortedAndSamplesInterleaved() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    const ImageFolderListing listing = listImageFolder(root.string());
    QCOMPARE(listing.classes, (std::vector<std::string>{"bird", "cat", "dog"}));
    QCOMPARE(listing.train.size(), size_t{3 + 4 + 3});
    QCOMPARE(listing.test.size(), size_t{5});
    // One of each class in turn while each has files left, files sorted by name.
    std::vector<int64_t> labels;
    for (const auto& f : listing.train) labels.push_back(f.label);
    QCOMPARE(labels, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 1}));
    QVERIFY(listing.train[0].path.ends_with("bird/b0.png"));
    QVERIFY(listing.train[9].path.ends_with("cat/c3.JPG"));

    // Each decoded sample has its class's colour: labels and pixels belong together.
    const ImageLoadResult r = loadImageFolder(specFor(root), optionsIn(root / "cache"));
    QCOMPARE(r.classes, listing.classes);
    QCOMPARE(r.data.numClasses, 3);
    const Rgb colours[3] = {kBird, kCat, kDog};
    for (const ByteSplit* s : {&r.data.train, &r.data.test})
      for (int64_t i = 0; i < s->size(); ++i) {
        const Rgb want = colours[s->labels[static_cast<size_t>(i)]];
        QVERIFY2(near(pixel(*s, i, 0, 3, 3), want.r, 3) && near(pixel(*s, i, 1, 3, 3), want.g, 3) &&
                     near(pixel(*s, i, 2, 3, 3), want.b, 3),
                 qPrintable(QString("sample %1 label %2").arg(i).arg(s->labels[size_t(i)])));
      }
    // The generic entry points agree.
    const InputShape shape = probeInputShape(specFor(root));
    QCOMPARE(shape.dims, (std::vector<int64_t>{3, 6, 5}));
    QCOMPARE(shape.numClasses, 3);
    QCOMPARE(probeTrainSamples(specFor(root)), int64_t{10});
    QCOMPARE(loadByteDataset(specFor(root)).train.labels, r.data.train.labels);
  }

  void greyRgbAndResizeShapes() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    DatasetSpec spec = specFor(root);
    // Empty size: the first training image's (bird/b0.png, 6x5); RGB by default.
    ImageLoadResult r = loadImageFolder(spec, optionsIn(root / "cache"));
    QCOMPARE(r.data.train.sampleShape, (std::vector<int64_t>{3, 6, 5}));
    QCOMPARE(r.data.test.sampleShape, (std::vector<int64_t>{3, 6, 5}));
    QCOMPARE(r.data.train.images.size(), size_t{10 * 3 * 6 * 5});

    spec.channels = 1;
    spec.size = {8, 4};
    r = loadImageFolder(spec, optionsIn(root / "cache"));
    QCOMPARE(r.data.train.sampleShape, (std::vector<int64_t>{1, 8, 4}));
    QCOMPARE(r.data.train.images.size(), size_t{10 * 8 * 4});
    QCOMPARE(probeInputShape(spec).dims, (std::vector<int64_t>{1, 8, 4}));
    // Grey is stb's luma, (77 r + 150 g + 29 b) >> 8, and a solid image stays solid resized.
    const int cat = (77 * kCat.r + 150 * kCat.g + 29 * kCat.b) >> 8;
    for (int64_t i = 0; i < r.data.train.size(); ++i)
      if (r.data.train.labels[size_t(i)] == 1)
        for (int y = 1; y < 8; ++y) QVERIFY(near(pixel(r.data.train, i, 0, y, 2), cat, 4));

    // A grey source image in an RGB set has its grey in every channel.
    writeImage(root / "train/cat/c9.png", 6, 5, {90, 90, 90}, /*channels=*/1);
    spec.channels = 3;
    spec.size = {3, 3};
    r = loadImageFolder(spec, optionsIn(root / "cache"));
    int64_t grey = -1;
    const auto listing = listImageFolder(root.string());
    for (size_t i = 0; i < listing.train.size(); ++i)
      if (listing.train[i].path.ends_with("c9.png")) grey = int64_t(i);
    QVERIFY(grey >= 0);
    for (int c = 0; c < 3; ++c) QVERIFY(near(pixel(r.data.train, grey, c, 1, 1), 90, 2));
  }

  void limitsKeepEveryClass() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    DatasetSpec spec = specFor(root);
    spec.limitTrain = 3;
    spec.limitTest = 4;
    const ImageLoadResult r = loadImageFolder(spec, optionsIn(root / "cache"));
    QCOMPARE(r.data.train.labels, (std::vector<int64_t>{0, 1, 2}));
    QCOMPARE(r.data.test.size(), int64_t{4});
    QCOMPARE(probeTrainSamples(spec), int64_t{3});
    spec.limitTrain = 0;
    spec.validation = 0.2;
    QCOMPARE(probeTrainSamples(spec), int64_t{8});  // 10 less the 2 held out
  }

  void secondLoadComesFromTheCache() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path cache = root / "cache";
    writeFolder(root);
    const DatasetSpec spec = specFor(root);
    const ImageLoadResult first = loadImageFolder(spec, optionsIn(cache));
    QVERIFY(!first.fromCache);
    QCOMPARE(first.decoded, int64_t{15});
    QVERIFY2(first.cacheProblem.empty(), first.cacheProblem.c_str());
    QVERIFY(fs::is_regular_file(first.cacheFile));
    QVERIFY(first.cacheFile.starts_with(cache.string()));
    QCOMPARE(cacheFiles(cache), 1);  // the cache file alone: no temporary left behind

    const ImageLoadResult second = loadImageFolder(spec, optionsIn(cache));
    QVERIFY(second.fromCache);
    QCOMPARE(second.decoded, int64_t{0});
    QCOMPARE(second.cacheFile, first.cacheFile);
    QCOMPARE(second.data.train.images, first.data.train.images);
    QCOMPARE(second.data.train.labels, first.data.train.labels);
    QCOMPARE(second.data.test.images, first.data.test.images);
    QCOMPARE(second.data.train.sampleShape, first.data.train.sampleShape);
    QCOMPARE(second.data.numClasses, first.data.numClasses);

    // Another size or channel count is another cache entry.
    DatasetSpec grey = spec;
    grey.channels = 1;
    QVERIFY(!loadImageFolder(grey, optionsIn(cache)).fromCache);
    QVERIFY(loadImageFolder(grey, optionsIn(cache)).fromCache);
    QVERIFY(loadImageFolder(spec, optionsIn(cache)).fromCache);

    // A changed file (same name and size, new colour and time) is decoded again.
    const fs::path changed = root / "train/bird/b0.png";
    const auto before = fs::last_write_time(changed);
    writeImage(changed, 6, 5, {250, 250, 10});
    fs::last_write_time(changed, before + std::chrono::seconds(5));
    const ImageLoadResult third = loadImageFolder(spec, optionsIn(cache));
    QVERIFY(!third.fromCache);
    QCOMPARE(third.decoded, int64_t{15});
    QVERIFY(third.cacheFile != first.cacheFile);
    QVERIFY(near(pixel(third.data.train, 0, 0, 3, 3), 250, 3));
    QVERIFY(near(pixel(third.data.train, 0, 2, 3, 3), 10, 3));
    // An added file, too.
    writeImage(root / "train/bird/b5.png", 6, 5, kBird);
    const ImageLoadResult fourth = loadImageFolder(spec, optionsIn(cache));
    QVERIFY(!fourth.fromCache);
    QCOMPARE(fourth.data.train.size(), int64_t{11});
  }

  void aDamagedCacheIsDecodedAgain() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    const DatasetSpec spec = specFor(root);
    const ImageLoadResult first = loadImageFolder(spec, optionsIn(root / "cache"));
    // Truncated, then same size with a flipped byte: both refused, decoded and written anew.
    fs::resize_file(first.cacheFile, fs::file_size(first.cacheFile) - 7);
    ImageLoadResult again = loadImageFolder(spec, optionsIn(root / "cache"));
    QVERIFY(!again.fromCache);
    QVERIFY2(again.cacheProblem.find("truncated") != std::string::npos, again.cacheProblem.c_str());
    QCOMPARE(again.data.train.images, first.data.train.images);
    {
      std::fstream f(first.cacheFile, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-3, std::ios::end);
      f.put('\x5A');
    }
    again = loadImageFolder(spec, optionsIn(root / "cache"));
    QVERIFY(!again.fromCache);
    QVERIFY2(again.cacheProblem.find("damaged") != std::string::npos, again.cacheProblem.c_str());
    QVERIFY(loadImageFolder(spec, optionsIn(root / "cache")).fromCache);
  }

  void anUnwritableCacheIsSaidNotFatal() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    std::ofstream(root / "not-a-folder") << "x";  // the cache folder cannot be made under a file
    const ImageLoadResult r = loadImageFolder(specFor(root), optionsIn(root / "not-a-folder/c"));
    QCOMPARE(r.data.train.size(), int64_t{10});
    QVERIFY(r.cacheFile.empty());
    QVERIFY2(r.cacheProblem.find("not-a-folder") != std::string::npos, r.cacheProblem.c_str());
  }

  void decodingReportsProgress() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    ImageLoadOptions o = optionsIn(root / "cache");
    o.threads = 1;
    o.progressIntervalS = 0.01;  // every 10 ms: the slow decode below spans several
    std::vector<ImageLoadProgress> seen;
    o.onProgress = [&](const ImageLoadProgress& p) { seen.push_back(p); };
    // Enough large images that decoding outlasts a few intervals on any machine.
    for (int i = 0; i < 40; ++i) writeImage(root / "train/dog" / numbered("big", i), 400, 400, kDog, 3, i);
    DatasetSpec spec = specFor(root);
    spec.size = {4, 4};
    loadImageFolder(spec, o);
    QVERIFY(!seen.empty());
    for (size_t i = 0; i < seen.size(); ++i) {
      QCOMPARE(seen[i].total, int64_t{55});
      QVERIFY(seen[i].done <= 55 && seen[i].elapsedS > 0);
      if (seen[i].done > 0) QVERIFY(seen[i].etaS >= 0);
      if (i > 0) QVERIFY(seen[i].done >= seen[i - 1].done);
    }
    seen.clear();
    QVERIFY(loadImageFolder(spec, o).fromCache);
    QVERIFY(seen.empty());  // nothing to decode, nothing to report
  }

  void badInputNamesTheFileAndTheFix_data() {
    QTest::addColumn<QString>("breakage");
    QTest::addColumn<QString>("expected");
    QTest::newRow("corrupt image") << "corrupt" << "train/cat/c1.png: cannot decode the image";
    QTest::newRow("truncated jpeg") << "truncated" << "train/cat/c3.JPG: cannot decode the image";
    QTest::newRow("empty class") << "empty class" << "train/cow: an empty class folder";
    QTest::newRow("class only in test") << "test class" << "'fox' only in test/";
    QTest::newRow("class only in train") << "train class" << "'bird' only in train/";
    QTest::newRow("no images at all") << "no images" << "no images at all under train/ and test/";
    QTest::newRow("no train folder") << "no train" << "there is no train/ folder";
    QTest::newRow("no test folder") << "no test" << "there is no test/ folder";
    QTest::newRow("image outside a class") << "loose" << "an image outside a class folder";
    QTest::newRow("one class") << "one class" << "a classifier needs at least two";
    QTest::newRow("missing folder") << "missing" << "dataset folder does not exist";
  }

  void badInputNamesTheFileAndTheFix() {
    QFETCH(QString, breakage);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path cache = fs::path(m_home.path().toStdString()) / "bad-cache";
    writeFolder(root);
    DatasetSpec spec = specFor(root);
    const std::string b = breakage.toStdString();
    if (b == "corrupt") {
      std::ofstream(root / "train/cat/c1.png", std::ios::binary) << "\x89PNG not really";
    } else if (b == "truncated") {
      fs::resize_file(root / "train/cat/c3.JPG", fs::file_size(root / "train/cat/c3.JPG") / 3);
    } else if (b == "empty class") {
      fs::create_directories(root / "train/cow");
      fs::create_directories(root / "test/cow");
      std::ofstream(root / "train/cow/notes.txt") << "no images here";
    } else if (b == "test class") {
      writeImage(root / "test/fox/f.png", 6, 5, kDog);
    } else if (b == "train class") {
      fs::remove_all(root / "test/bird");
    } else if (b == "no images") {
      for (const auto* split : {"train", "test"})
        for (const auto& e : fs::recursive_directory_iterator(root / split))
          if (e.is_regular_file()) fs::remove(e.path());
    } else if (b == "no train") {
      fs::remove_all(root / "train");
    } else if (b == "no test") {
      fs::remove_all(root / "test");
    } else if (b == "loose") {
      writeImage(root / "train/stray.png", 6, 5, kDog);
    } else if (b == "one class") {
      for (const auto* c : {"dog", "cat"}) {
        fs::remove_all(root / "train" / c);
        fs::remove_all(root / "test" / c);
      }
    } else if (b == "missing") {
      spec.path = (root / "nowhere").string();
    }
    const std::string error = errorOf(spec, cache);
    QVERIFY2(error.find(expected.toStdString()) != std::string::npos, error.c_str());
    // The message says what to do (replace, add, move, give, put ...), not only what is wrong.
    QVERIFY2(error.find(';') != std::string::npos || b == "missing", error.c_str());
    // Nothing half-read is kept: no cache was written for a set that failed.
    QCOMPARE(cacheFiles(cache), 0);
    // The cheap probes fail the same way where they can tell (listing problems).
    if (b != "corrupt" && b != "truncated") {
      bool threw = false;
      try {
        probeInputShape(spec);
      } catch (const DatasetError&) {
        threw = true;
      }
      QVERIFY(threw);
    }
  }

  void anUnreadableImageIsNamed() {
    if (::geteuid() == 0) QSKIP("root reads every file");
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFolder(root);
    fs::permissions(root / "train/dog/d1.png", fs::perms::none);
    const std::string error = errorOf(specFor(root), root / "cache");
    QVERIFY2(error.find("train/dog/d1.png: cannot open the file") != std::string::npos,
             error.c_str());
  }

  void specKeysParseValidateAndRoundTrip() {
    ExperimentSpec spec = parseSpec(
        R"({"dataset":{"kind":"image_folder","path":"/data/pets","size":[32,24],"channels":1}})");
    QCOMPARE(spec.dataset.size, (std::vector<int>{32, 24}));
    QCOMPARE(spec.dataset.channels, 1);
    const ExperimentSpec back = parseSpec(specToJson(spec));
    QCOMPARE(back.dataset.size, spec.dataset.size);
    QCOMPARE(back.dataset.channels, 1);
    auto problemAt = [](const ExperimentSpec& s, const std::string& field) {
      for (const auto& p : validateSpec(s, 9, {"cpu"}))
        if (p.field == field) return true;
      return false;
    };
    QVERIFY(!problemAt(spec, "dataset.kind") && !problemAt(spec, "dataset.size") &&
            !problemAt(spec, "dataset.channels"));
    spec.dataset.size = {0, 4};
    QVERIFY(problemAt(spec, "dataset.size"));
    spec.dataset.size = {4, 4, 4};
    QVERIFY(problemAt(spec, "dataset.size"));
    spec.dataset.channels = 2;
    QVERIFY(problemAt(spec, "dataset.channels"));
    spec.dataset.path.clear();
    QVERIFY(problemAt(spec, "dataset.path"));
    // A spec without the keys writes none: older specs stay byte-identical.
    const auto doc = nlohmann::json::parse(specToJson(parseSpec("{}")));
    QVERIFY(!doc.at("dataset").contains("size") && !doc.at("dataset").contains("channels"));
  }
};

QTEST_GUILESS_MAIN(TestImageFolder)
#include "test_image_folder.moc"
