#pragma once
// Adam with a fused CPU update (internal: includes LibTorch).
//
// LibTorch 1.13's torch::optim::Adam updates each parameter with about eight tensor operations and
// two temporaries, a pass over memory each. On the default preset (8x512 MLP, batch 32) that was
// 35-40 % of a training step here, and the part that scaled worst when two stages share the
// memory system. FusedAdam keeps Adam's options, its state (AdamParamState: step, exp_avg,
// exp_avg_sq) and therefore its save/load format, and replaces the update of CPU float32
// contiguous parameters by one pass (optim/adam_kernel.cpp), split over the intra-op threads.
// Anything else (CUDA, other dtypes, amsgrad, non-contiguous) takes the same operations as
// torch::optim::Adam. The math is Adam's; the results agree with torch::optim::Adam to rounding
// (tests/engine/test_fused_adam.cpp), not bit for bit.

#include <torch/torch.h>

#include "stagewise/engine/spec.h"

namespace stagewise::engine {

class FusedAdam : public torch::optim::Adam {
 public:
  FusedAdam(std::vector<torch::Tensor> params, torch::optim::AdamOptions options)
      : torch::optim::Adam(std::move(params), std::move(options)) {}

  torch::Tensor step(LossClosure closure = nullptr) override;
};

/// Drops every parameter's gradient instead of zeroing it (set_to_none, PyTorch 2's default): the
/// next backward pass then hands its fresh gradient tensors over instead of adding them into zeroed
/// ones, which saves a memset and an add over every parameter each step. Any optimizer.
void clearGradients(torch::optim::Optimizer& optimizer);

/// The optimizer `train.optimizer` names (FusedAdam or SGD) at `train.lr` x `lrScale`.
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainSpec& t, double lrScale,
                                                       std::vector<torch::Tensor> params);

}  // namespace stagewise::engine
