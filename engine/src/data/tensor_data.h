#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The dataset as tensors: inputs standardised with the training set's mean and std (the
// samples trained on; a validation split is held out before): one mean and std over every
// feature, except image_folder's, which are per channel. Text is not standardised: its samples
// are byte token ids.

#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "stagewise/engine/dataset.h"

namespace stagewise::engine {

struct TensorData {
  torch::Tensor trainX;  ///< float [N, sample...]
  torch::Tensor trainY;  ///< int64 [N]
  torch::Tensor testX;
  torch::Tensor testY;
  /// dataset.validation: the held-out training samples (true labels, never augmented);
  /// undefined when it is 0. trainX / trainY are the rest, in their file order.
  torch::Tensor valX;
  torch::Tensor valY;
  InputShape shape;
  /// Text: the training text as token ids (int64 [bytes]); trainX / trainY stay undefined and
  /// training windows are drawn from it (textWindows). testX / testY hold the test windows,
  /// [N, context] int64 each, the labels being the next bytes.
  torch::Tensor trainText;
  /// Text: the order-0 entropy of the test text in bits per byte (guessing each byte from its
  /// frequency alone); NaN for other datasets.
  double testEntropyBits = std::numeric_limits<double>::quiet_NaN();
  /// Training samples per epoch: text has training bytes / context windows.
  int64_t trainCount() const;
};

/// Text: `count` training windows from window `first` on (counted over the whole run, epochs
/// included), each at textWindowOffset(seed, index): inputs [count, T] and labels [count, T],
/// the bytes after the inputs'. A pure function of (seed, first): a resumed run draws the same.
std::pair<torch::Tensor, torch::Tensor> textWindows(const TensorData& data, int context,
                                                    uint64_t seed, int64_t first, int64_t count);

/// Bits per byte of guessing each byte of `text` from its frequency in `text` alone.
double orderZeroEntropyBits(const std::string& text);

/// What loading says on the way (image_folder: decoding progress with an ETA, the cache used or
/// why it could not be written); `warning`: a problem that does not stop the run. Called from
/// the loading thread.
using DataNote = std::function<void(const std::string& message, bool warning)>;

/// Loads (or synthesises) the spec's dataset. Throws DatasetError naming the file.
TensorData loadTensorData(const DatasetSpec& spec, uint64_t seed, const DataNote& note = {});

}  // namespace stagewise::engine
