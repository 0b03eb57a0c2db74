#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The dataset as tensors: inputs standardised with the training set's mean and std (the
// samples trained on; a validation split is held out before): one mean and std over every
// feature, except image_folder's, which are per channel.

#include <functional>
#include <string>

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
};

/// What loading says on the way (image_folder: decoding progress with an ETA, the cache used or
/// why it could not be written); `warning`: a problem that does not stop the run. Called from
/// the loading thread.
using DataNote = std::function<void(const std::string& message, bool warning)>;

/// Loads (or synthesises) the spec's dataset. Throws DatasetError naming the file.
TensorData loadTensorData(const DatasetSpec& spec, uint64_t seed, const DataNote& note = {});

}  // namespace stagewise::engine
