#pragma once
// Dataset files, read without LibTorch (these parsers are fuzzed).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// A file that is missing, truncated or malformed; the message names the file and the problem.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An IDX array (MNIST format): dims and raw bytes (unsigned byte data only).
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

/// Parses IDX bytes (already decompressed). `what` names the source in error messages.
IdxArray parseIdx(const uint8_t* bytes, size_t size, const std::string& what);
/// Parses IDX bytes that may be gzip-compressed (by content, not by name).
IdxArray parseIdxMaybeGzip(const uint8_t* bytes, size_t size, const std::string& what);
/// Reads an IDX file, raw or gzip-compressed (by content, not by name).
IdxArray readIdxFile(const std::string& path);

/// A split held as bytes: images [n, sampleShape...] as uint8, labels [n].
struct ByteSplit {
  std::vector<int64_t> sampleShape;
  std::vector<uint8_t> images;
  std::vector<int64_t> labels;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

/// Parses CIFAR-10 binary records (1 label byte + 3x32x32 pixels each), appending to `split`
/// up to `limit` samples in all (0: no limit). `what` names the source in errors.
void parseCifar(const uint8_t* bytes, size_t size, const std::string& what, int64_t limit,
                ByteSplit& split);

/// A whole dataset in memory, before conversion to tensors.
struct ByteDataset {
  std::string name;
  ByteSplit train;
  ByteSplit test;
  int numClasses = 0;
};

/// The folder the Debian package dataset-fashion-mnist installs.
std::string defaultFashionMnistPath();

/// Finds `base` or `base.gz` in `folder`; throws DatasetError naming both if neither exists.
std::string findIdxFile(const std::string& folder, const std::string& base);

/// Loads a dataset spec's files (not synthetic). Throws DatasetError.
ByteDataset loadByteDataset(const DatasetSpec& spec);

/// Reads only what is needed for the input shape and class count (headers; labels for classes).
InputShape probeInputShape(const DatasetSpec& spec);

/// The training samples a run of the spec sees per epoch (the file's count, or
/// `limit_train` when smaller, less the `validation` share held out), read from the labels'
/// header. Throws DatasetError.
int64_t probeTrainSamples(const DatasetSpec& spec);

/// dataset.validation: how many of `trainSamples` samples are held out, round(fraction * n).
/// Throws SpecError naming dataset.validation for a fraction outside [0, 0.5].
int64_t validationCount(int64_t trainSamples, double fraction);
/// The held-out samples' indices among the first `trainSamples`, ascending: the first
/// validationCount() of a fixed permutation of 0..n-1 (Fisher-Yates driven by SplitMix64 from a
/// constant), so the split depends on n and the fraction alone, never on the seed, and a larger
/// fraction holds out a superset. Throws SpecError as validationCount.
std::vector<int64_t> validationIndices(int64_t trainSamples, double fraction);

/// A deterministic synthetic dataset of Gaussian clusters as floats (features in [0,255]).
ByteDataset makeSyntheticDataset(const DatasetSpec& spec, uint64_t seed);

}  // namespace stagewise::engine
