#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// Gradient similarity and test evaluation on a copy of the network. Runs on the analysis thread
// (or after the stage threads joined); never touches the modules that train.

#include <vector>

#include "runtime/run_context.h"

namespace stagewise::engine {

/// Cosine of the local vs the true end-to-end gradient per stage, and per layer.
struct ProbeResult {
  std::vector<double> stage;               ///< per stage: all body parameters concatenated
  std::vector<std::vector<double>> layer;  ///< per stage, per body layer
};

/// `stages` are copies (same architecture as the run's). `x`, `y`: the probe batch. With
/// `overlap` L > 0 a stage's local gradient is the combined one its update uses: its own loss's
/// plus, on its last L layers, the next stage's loss's (both at the snapshot's weights).
ProbeResult gradientCosine(std::vector<StageModules>& stages, const std::vector<bool>& isLast,
                           const torch::Tensor& x, const torch::Tensor& y, int overlap = 0);
/// The same cosines computed the plain way: an end-to-end forward and backward for the true
/// gradient, then every stage again on its detached input for the local one. gradientCosine does
/// that with overlap and shares one forward pass without; the tests hold the two equal.
ProbeResult gradientCosineTwoPass(std::vector<StageModules>& stages,
                                  const std::vector<bool>& isLast, const torch::Tensor& x,
                                  const torch::Tensor& y, int overlap = 0);

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
};

/// Test loss and accuracy of the composed network (all stages' bodies, the final classifier):
/// per prediction, so per token (nats) and next-token accuracy for text.
EvalResult evaluate(std::vector<StageModules>& stages, const torch::Tensor& x,
                    const torch::Tensor& y, int64_t chunk = 256);

/// Copies `params` into the modules' parameters (same order as bodyParams()/auxParams()).
void loadParams(StageModules& modules, const std::vector<torch::Tensor>& body,
                const std::vector<torch::Tensor>& aux);

}  // namespace stagewise::engine
