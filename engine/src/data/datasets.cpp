#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "data/file_bytes.h"
#include "data/image_folder.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/text_corpus.h"

namespace stagewise::engine {

namespace fs = std::filesystem;

std::string defaultFashionMnistPath() {
  if (const char* env = std::getenv("STAGEWISE_FASHION_MNIST")) return env;
  return "/usr/share/datasets/fashion-mnist";
}

std::string findIdxFile(const std::string& folder, const std::string& base) {
  fs::path raw = fs::path(folder) / base;
  fs::path gz = fs::path(folder) / (base + ".gz");
  std::error_code ec;
  if (fs::is_regular_file(raw, ec)) return raw.string();
  if (fs::is_regular_file(gz, ec)) return gz.string();
  if (folder.empty())
    throw DatasetError("no dataset folder is set: choose the folder holding " + base);
  if (!fs::is_directory(folder, ec)) throw DatasetError(folder + ": dataset folder does not exist");
  throw DatasetError(folder + ": neither " + base + " nor " + base + ".gz is there");
}

namespace {

std::string folderFor(const DatasetSpec& spec) {
  if (spec.kind == "fashion-mnist") {
    if (!spec.path.empty()) return spec.path;
    std::string p = defaultFashionMnistPath();
    std::error_code ec;
    if (!fs::is_directory(p, ec))
      throw DatasetError(p +
                         ": Fashion-MNIST is not installed; run scripts/deps.sh (package "
                         "dataset-fashion-mnist) or set dataset.path");
    return p;
  }
  return spec.path;
}

ByteSplit loadIdxSplit(const std::string& folder, const std::string& prefix, int64_t limit) {
  std::string imagesPath = findIdxFile(folder, prefix + "-images-idx3-ubyte");
  std::string labelsPath = findIdxFile(folder, prefix + "-labels-idx1-ubyte");
  IdxArray images = readIdxFile(imagesPath);
  IdxArray labels = readIdxFile(labelsPath);
  if (labels.dims.size() != 1)
    throw DatasetError(labelsPath + ": labels must be a 1-dimensional IDX array, found " +
                       std::to_string(labels.dims.size()) + " dimensions");
  if (images.dims.size() < 2)
    throw DatasetError(imagesPath + ": images need at least 2 dimensions (count, features)");
  if (images.dims[0] != labels.dims[0])
    throw DatasetError(imagesPath + " holds " + std::to_string(images.dims[0]) + " images but " +
                       labelsPath + " holds " + std::to_string(labels.dims[0]) + " labels");
  ByteSplit split;
  split.sampleShape.assign(images.dims.begin() + 1, images.dims.end());
  if (split.sampleShape.size() == 2) split.sampleShape.insert(split.sampleShape.begin(), 1);
  int64_t n = images.dims[0];
  if (limit > 0) n = std::min(n, limit);
  int64_t per = 1;
  for (auto d : split.sampleShape) per *= d;
  split.images.assign(images.data.begin(), images.data.begin() + n * per);
  split.labels.assign(labels.data.begin(), labels.data.begin() + n);
  return split;
}

constexpr int64_t kCifarRecord = 1 + 3 * 32 * 32;

ByteSplit loadCifarFiles(const std::vector<std::string>& paths, int64_t limit) {
  ByteSplit split;
  split.sampleShape = {3, 32, 32};
  for (const auto& path : paths) {
    std::vector<uint8_t> bytes = readFileBytes(path);
    parseCifar(bytes.data(), bytes.size(), path, limit, split);
  }
  return split;
}

std::string cifarFile(const std::string& folder, const std::string& name) {
  fs::path p = fs::path(folder) / name;
  std::error_code ec;
  if (folder.empty()) throw DatasetError("no dataset folder is set: choose the CIFAR-10 folder");
  if (!fs::is_directory(folder, ec)) throw DatasetError(folder + ": dataset folder does not exist");
  if (!fs::is_regular_file(p, ec))
    throw DatasetError(folder + ": CIFAR-10 file " + name + " is missing");
  return p.string();
}

int classesOf(const ByteSplit& a, const ByteSplit& b) {
  int64_t maxLabel = 0;
  for (auto l : a.labels) maxLabel = std::max(maxLabel, l);
  for (auto l : b.labels) maxLabel = std::max(maxLabel, l);
  return static_cast<int>(std::max<int64_t>(2, maxLabel + 1));
}

}  // namespace

void parseCifar(const uint8_t* bytes, size_t size, const std::string& what, int64_t limit,
                ByteSplit& split) {
  if (size == 0 || size % kCifarRecord != 0)
    throw DatasetError(what + ": size " + std::to_string(size) +
                       " is not a multiple of the CIFAR-10 record size 3073 (truncated?)");
  split.sampleShape = {3, 32, 32};
  for (size_t off = 0; off < size; off += kCifarRecord) {
    if (limit > 0 && split.size() >= limit) return;
    if (bytes[off] > 9)
      throw DatasetError(what + ": label " + std::to_string(bytes[off]) + " in record " +
                         std::to_string(off / kCifarRecord) + " is not a CIFAR-10 class (0-9)");
    split.labels.push_back(bytes[off]);
    split.images.insert(split.images.end(), bytes + off + 1, bytes + off + kCifarRecord);
  }
}

ByteDataset loadByteDataset(const DatasetSpec& spec) {
  ByteDataset ds;
  ds.name = spec.kind;
  if (spec.kind == "fashion-mnist" || spec.kind == "idx") {
    std::string folder = folderFor(spec);
    ds.train = loadIdxSplit(folder, "train", spec.limitTrain);
    ds.test = loadIdxSplit(folder, "t10k", spec.limitTest);
    if (ds.train.sampleShape != ds.test.sampleShape)
      throw DatasetError(folder + ": training and test images have different shapes");
  } else if (spec.kind == "cifar10") {
    std::vector<std::string> train;
    for (int i = 1; i <= 5; ++i)
      train.push_back(cifarFile(spec.path, "data_batch_" + std::to_string(i) + ".bin"));
    ds.train = loadCifarFiles(train, spec.limitTrain);
    ds.test = loadCifarFiles({cifarFile(spec.path, "test_batch.bin")}, spec.limitTest);
  } else if (spec.kind == "image_folder") {
    return loadImageFolder(spec).data;
  } else {
    throw DatasetError("dataset.kind '" + spec.kind + "' has no files to load");
  }
  ds.numClasses = classesOf(ds.train, ds.test);
  return ds;
}

static std::vector<uint8_t> readPrefix(const std::string& path, size_t n) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads raw files as they are, too
  if (!f) throw DatasetError(path + ": cannot open the file");
  std::vector<uint8_t> buf(n);
  int got = gzread(f, buf.data(), static_cast<unsigned>(n));
  gzclose(f);
  if (got < 0) throw DatasetError(path + ": corrupt gzip data");
  buf.resize(static_cast<size_t>(got));
  return buf;
}

InputShape probeInputShape(const DatasetSpec& spec) {
  InputShape shape;
  if (spec.kind == "text") {  // byte tokens: the shape needs no file
    shape.dims = {spec.context};
    shape.numClasses = 256;
    shape.sequence = true;
    return shape;
  }
  if (spec.kind == "synthetic") {
    shape.dims = {spec.syntheticFeatures};
    shape.numClasses = spec.syntheticClasses;
    return shape;
  }
  if (spec.kind == "cifar10") {
    cifarFile(spec.path, "test_batch.bin");
    shape.dims = {3, 32, 32};
    shape.numClasses = 10;
    return shape;
  }
  if (spec.kind == "image_folder") {  // the listing and the first image's header
    const ImageFolderListing listing = listImageFolder(spec.path);
    shape.dims = imageFolderSampleShape(spec, listing);
    shape.numClasses = static_cast<int>(listing.classes.size());
    return shape;
  }
  std::string folder = folderFor(spec);
  std::string imagesPath = findIdxFile(folder, "train-images-idx3-ubyte");
  std::vector<uint8_t> head = readPrefix(imagesPath, 4 + 4 * 4);
  if (head.size() < 4 || head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] < 2 ||
      head[3] > 4 || head.size() < 4 + 4 * static_cast<size_t>(head[3]))
    throw DatasetError(imagesPath + ": not an IDX image file of unsigned bytes");
  for (int i = 1; i < head[3]; ++i) {
    const uint8_t* p = head.data() + 4 + 4 * i;
    shape.dims.push_back((int64_t{p[0]} << 24) | (int64_t{p[1]} << 16) | (int64_t{p[2]} << 8) |
                         p[3]);
  }
  if (shape.dims.size() == 2) shape.dims.insert(shape.dims.begin(), 1);
  IdxArray labels = readIdxFile(findIdxFile(folder, "train-labels-idx1-ubyte"));
  int maxLabel = 1;
  for (auto l : labels.data) maxLabel = std::max<int>(maxLabel, l);
  shape.numClasses = maxLabel + 1;
  return shape;
}

int64_t probeTrainSamples(const DatasetSpec& spec) {
  int64_t n = 0;
  if (spec.kind == "synthetic") {
    n = spec.syntheticTrain;
  } else if (spec.kind == "cifar10") {
    cifarFile(spec.path, "data_batch_1.bin");
    n = 50000;
  } else if (spec.kind == "image_folder") {
    n = imageFolderTrainCount(spec);
  } else if (spec.kind == "text") {  // an epoch: training bytes / context windows
    const TextCorpus corpus = readTextCorpus(spec.path);
    const int64_t bytes = static_cast<int64_t>(corpus.text.size());
    const int64_t testBegin =
        textTestBegin(bytes, spec.testFraction, spec.context, corpus.files.front());
    return textWindowsPerEpoch(textTrainBytes(testBegin, spec.limitTrain, spec.context),
                               spec.context);
  } else {
    const std::string labelsPath = findIdxFile(folderFor(spec), "train-labels-idx1-ubyte");
    const std::vector<uint8_t> head = readPrefix(labelsPath, 8);
    if (head.size() < 8 || head[2] != 0x08 || head[3] != 1)
      throw DatasetError(labelsPath + ": not an IDX label file of unsigned bytes");
    n = (int64_t{head[4]} << 24) | (int64_t{head[5]} << 16) | (int64_t{head[6]} << 8) | head[7];
  }
  if (spec.limitTrain > 0) n = std::min(n, spec.limitTrain);
  return n - validationCount(n, spec.validation);
}

int64_t validationCount(int64_t trainSamples, double fraction) {
  if (!(fraction >= 0 && fraction <= 0.5))
    throw SpecError("dataset.validation",
                    "must be the share of the training samples held out for validation, "
                    "between 0 and 0.5 (0.1: 10 %; 0: none)");
  return std::llround(fraction * static_cast<double>(std::max<int64_t>(0, trainSamples)));
}

std::vector<int64_t> validationIndices(int64_t trainSamples, double fraction) {
  const int64_t count = validationCount(trainSamples, fraction);
  if (count == 0) return {};
  // SplitMix64 (portable, unlike std::shuffle's use of a distribution) from a fixed constant.
  uint64_t state = 0x56A11DA7105EEDull;
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<int64_t> order(static_cast<size_t>(trainSamples));
  for (int64_t i = 0; i < trainSamples; ++i) order[static_cast<size_t>(i)] = i;
  // Fisher-Yates from the front: position i takes a random one of i..n-1, so only the first
  // `count` positions need drawing.
  for (int64_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<int64_t>(next() % static_cast<uint64_t>(trainSamples - i));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  order.resize(static_cast<size_t>(count));
  std::sort(order.begin(), order.end());
  return order;
}

ByteDataset makeSyntheticDataset(const DatasetSpec& spec, uint64_t seed) {
  ByteDataset ds;
  ds.name = "synthetic";
  ds.numClasses = spec.syntheticClasses;
  const int f = spec.syntheticFeatures;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 17);
  std::uniform_real_distribution<double> centre(50.0, 205.0);
  std::normal_distribution<double> noise(0.0, 35.0);
  std::vector<std::vector<double>> centres(static_cast<size_t>(spec.syntheticClasses));
  for (auto& c : centres) {
    c.resize(static_cast<size_t>(f));
    for (auto& v : c) v = centre(rng);
  }
  auto fill = [&](ByteSplit& split, int64_t n) {
    split.sampleShape = {f};
    split.images.resize(static_cast<size_t>(n * f));
    split.labels.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t label = static_cast<int64_t>(rng() % static_cast<uint64_t>(spec.syntheticClasses));
      split.labels[static_cast<size_t>(i)] = label;
      for (int j = 0; j < f; ++j) {
        double v = centres[static_cast<size_t>(label)][static_cast<size_t>(j)] + noise(rng);
        split.images[static_cast<size_t>(i * f + j)] =
            static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  };
  fill(ds.train,
       spec.limitTrain > 0 ? std::min(spec.limitTrain, spec.syntheticTrain) : spec.syntheticTrain);
  fill(ds.test,
       spec.limitTest > 0 ? std::min(spec.limitTest, spec.syntheticTest) : spec.syntheticTest);
  return ds;
}

}  // namespace stagewise::engine
