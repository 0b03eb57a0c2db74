#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The dataset as tensors: inputs standardised with the training set's mean and std (the
// samples trained on; a validation split is held out before).

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

/// Loads (or synthesises) the spec's dataset. Throws DatasetError naming the file.
TensorData loadTensorData(const DatasetSpec& spec, uint64_t seed);

}  // namespace stagewise::engine
