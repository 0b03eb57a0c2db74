#include "data/tensor_data.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>

#include "data/image_folder.h"
#include "stagewise/engine/text_corpus.h"

namespace stagewise::engine {

namespace {

std::string minutes(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "--:--";
  const long t = std::lround(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld", t / 60, t % 60);
  return buf;
}

/// image_folder through the cache, saying the progress and the cache's use in `note`.
ByteDataset loadImages(const DatasetSpec& spec, const DataNote& note) {
  ImageLoadOptions options;
  if (note)
    options.onProgress = [&note](const ImageLoadProgress& p) {
      char line[160];
      std::snprintf(
          line, sizeof line, "dataset: decoding images %lld/%lld (%.0f %%), %s elapsed, ETA %s",
          static_cast<long long>(p.done), static_cast<long long>(p.total),
          100.0 * static_cast<double>(p.done) / static_cast<double>(std::max<int64_t>(1, p.total)),
          minutes(p.elapsedS).c_str(), minutes(p.etaS).c_str());
      note(line, false);
    };
  ImageLoadResult r = loadImageFolder(spec, options);
  if (note) {
    const int64_t n = r.data.train.size() + r.data.test.size();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f s", r.seconds);
    if (r.fromCache)
      note("dataset: " + std::to_string(n) + " images of " + std::to_string(r.classes.size()) +
               " classes read from the cache " + r.cacheFile + " in " + secs,
           false);
    else
      note("dataset: " + std::to_string(n) + " images of " + std::to_string(r.classes.size()) +
               " classes decoded in " + secs +
               (r.cacheFile.empty() ? std::string() : ", cached in " + r.cacheFile),
           false);
    if (!r.cacheProblem.empty())
      note("dataset: " + r.cacheProblem +
               (r.fromCache || !r.cacheFile.empty()
                    ? std::string()
                    : " (the decoded images are not cached: the next run decodes them again; "
                      "STAGEWISE_CACHE sets the cache folder)"),
           true);
  }
  return std::move(r.data);
}

/// dataset.kind text: the training text kept whole (windows are drawn from it as training goes),
/// the test text cut into windows now.
TensorData loadText(const DatasetSpec& spec, const DataNote& note) {
  const TextCorpus corpus = readTextCorpus(spec.path);
  const std::string what = spec.path.empty() ? defaultTextCorpusPath() : spec.path;
  const int64_t bytes = static_cast<int64_t>(corpus.text.size());
  const int64_t testBegin = textTestBegin(bytes, spec.testFraction, spec.context, what);
  auto tokens = torch::from_blob(const_cast<char*>(corpus.text.data()), {bytes}, torch::kUInt8)
                    .to(torch::kInt64);
  TensorData data;
  const int64_t trainBytes = textTrainBytes(testBegin, spec.limitTrain, spec.context);
  data.trainText = tokens.slice(0, 0, trainBytes).clone();
  const torch::Tensor test = tokens.slice(0, testBegin, bytes);
  std::vector<int64_t> offsets = textTestOffsets(bytes - testBegin, spec.context);
  if (spec.limitTest > 0 && static_cast<int64_t>(offsets.size()) > spec.limitTest)
    offsets.resize(static_cast<size_t>(spec.limitTest));
  const auto n = static_cast<int64_t>(offsets.size());
  const auto starts = torch::tensor(offsets, torch::kInt64).unsqueeze(1);
  const auto windows =
      test.index_select(0, (starts + torch::arange(spec.context + 1, torch::kInt64)).flatten())
          .view({n, spec.context + 1});
  data.testX = windows.slice(1, 0, spec.context).contiguous();
  data.testY = windows.slice(1, 1, spec.context + 1).contiguous();
  data.testEntropyBits = orderZeroEntropyBits(corpus.text.substr(static_cast<size_t>(testBegin)));
  data.shape.dims = {spec.context};
  data.shape.numClasses = 256;
  data.shape.sequence = true;
  if (note) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "dataset: %lld bytes of text from %zu file%s: %lld for training (%lld windows "
                  "of %d per epoch), %lld for testing (%lld windows); the test text's order-0 "
                  "entropy is %.3f bits per byte",
                  static_cast<long long>(bytes), corpus.files.size(),
                  corpus.files.size() == 1 ? "" : "s", static_cast<long long>(trainBytes),
                  static_cast<long long>(textWindowsPerEpoch(trainBytes, spec.context)),
                  spec.context, static_cast<long long>(bytes - testBegin),
                  static_cast<long long>(n), data.testEntropyBits);
    note(line, false);
    if (!corpus.skipped.empty()) {  // the fortunes folder skips 86: name a few
      constexpr size_t kNamed = 4;
      std::string skipped;
      for (size_t i = 0; i < std::min(kNamed, corpus.skipped.size()); ++i)
        skipped += (skipped.empty() ? "" : ", ") + corpus.skipped[i];
      if (corpus.skipped.size() > kNamed)
        skipped += " and " + std::to_string(corpus.skipped.size() - kNamed) + " more";
      note("dataset: skipped " + std::to_string(corpus.skipped.size()) + " file" +
               (corpus.skipped.size() == 1 ? "" : "s") + ": " + skipped,
           false);
    }
  }
  return data;
}

}  // namespace

int64_t TensorData::trainCount() const {
  if (trainText.defined())
    return textWindowsPerEpoch(trainText.size(0), static_cast<int>(shape.dims.at(0)));
  return trainX.size(0);
}

std::pair<torch::Tensor, torch::Tensor> textWindows(const TensorData& data, int context,
                                                    uint64_t seed, int64_t first, int64_t count) {
  const int64_t bytes = data.trainText.size(0);
  std::vector<int64_t> starts(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    starts[static_cast<size_t>(i)] = textWindowOffset(seed, first + i, bytes, context);
  const auto index =
      torch::tensor(starts, torch::kInt64).unsqueeze(1) + torch::arange(context + 1, torch::kInt64);
  const auto windows = data.trainText.index_select(0, index.flatten()).view({count, context + 1});
  return {windows.slice(1, 0, context).contiguous(), windows.slice(1, 1, context + 1).contiguous()};
}

double orderZeroEntropyBits(const std::string& text) {
  if (text.empty()) return 0;
  std::array<int64_t, 256> counts{};
  for (unsigned char c : text) ++counts[c];
  double bits = 0;
  const double n = static_cast<double>(text.size());
  for (int64_t c : counts)
    if (c > 0) bits -= static_cast<double>(c) / n * std::log2(static_cast<double>(c) / n);
  return bits;
}

static torch::Tensor toTensor(const ByteSplit& split) {
  std::vector<int64_t> shape = {split.size()};
  shape.insert(shape.end(), split.sampleShape.begin(), split.sampleShape.end());
  auto bytes = torch::from_blob(const_cast<uint8_t*>(split.images.data()), shape, torch::kUInt8);
  return bytes.to(torch::kFloat32).div_(255.0f);
}

static torch::Tensor labels(const ByteSplit& split) {
  return torch::from_blob(const_cast<int64_t*>(split.labels.data()), {split.size()}, torch::kInt64)
      .clone();
}

TensorData loadTensorData(const DatasetSpec& spec, uint64_t seed, const DataNote& note) {
  if (spec.kind == "text") return loadText(spec, note);
  ByteDataset bytes = spec.kind == "synthetic"      ? makeSyntheticDataset(spec, seed)
                      : spec.kind == "image_folder" ? loadImages(spec, note)
                                                    : loadByteDataset(spec);
  if (bytes.train.size() == 0) throw DatasetError(spec.kind + ": the training set is empty");
  if (bytes.test.size() == 0) throw DatasetError(spec.kind + ": the test set is empty");
  TensorData data;
  data.trainX = toTensor(bytes.train);
  data.testX = toTensor(bytes.test);
  data.trainY = labels(bytes.train);
  // The validation split, from the training samples with their true labels, before random
  // labels are drawn for the rest (so they stay those of a run without validation when it is 0).
  if (const std::vector<int64_t> held = validationIndices(bytes.train.size(), spec.validation);
      !held.empty()) {
    if (static_cast<int64_t>(held.size()) >= bytes.train.size())
      throw DatasetError(spec.kind + ": dataset.validation holds out every training sample");
    auto valIndex = torch::from_blob(const_cast<int64_t*>(held.data()),
                                     {static_cast<int64_t>(held.size())}, torch::kInt64);
    auto keep = torch::ones({bytes.train.size()}, torch::kBool);
    keep.index_fill_(0, valIndex, false);
    auto trainIndex = keep.nonzero().flatten();
    data.valX = data.trainX.index_select(0, valIndex);
    data.valY = data.trainY.index_select(0, valIndex);
    data.trainX = data.trainX.index_select(0, trainIndex);
    data.trainY = data.trainY.index_select(0, trainIndex);
  } else if (spec.validation > 0) {
    throw DatasetError(spec.kind + ": dataset.validation " + std::to_string(spec.validation) +
                       " of " + std::to_string(bytes.train.size()) +
                       " training samples holds out none; raise it or set it to 0");
  }
  if (spec.randomLabels) {
    // Drawn once per run from the seed alone, so every method of a seed sees the same labels.
    std::mt19937_64 rng(seed ^ 0x5EED1ABE15ull);
    std::uniform_int_distribution<int64_t> draw(0, bytes.numClasses - 1);
    auto* y = data.trainY.data_ptr<int64_t>();
    for (int64_t i = 0; i < data.trainY.size(0); ++i) y[i] = draw(rng);
  }
  data.testY = labels(bytes.test);
  if (spec.kind == "image_folder") {
    // Per channel, as torchvision's Normalize: [1, C, 1, 1] over samples and pixels.
    const auto mean = data.trainX.mean({0, 2, 3}, /*keepdim=*/true);
    const auto std =
        data.trainX.std({0, 2, 3}, /*unbiased=*/true, /*keepdim=*/true).clamp_min(1e-6);
    data.trainX.sub_(mean).div_(std);
    data.testX.sub_(mean).div_(std);
    if (data.valX.defined()) data.valX.sub_(mean).div_(std);
  } else {
    const float mean = data.trainX.mean().item<float>();
    const float std = std::max(1e-6f, data.trainX.std().item<float>());
    data.trainX.sub_(mean).div_(std);
    data.testX.sub_(mean).div_(std);
    if (data.valX.defined()) data.valX.sub_(mean).div_(std);
  }
  data.shape.dims = bytes.train.sampleShape;
  data.shape.numClasses = bytes.numClasses;
  return data;
}

}  // namespace stagewise::engine
