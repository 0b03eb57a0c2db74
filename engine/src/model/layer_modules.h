#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// LibTorch modules of `model.layers` entries (the families' too: they expand to layer lists).

#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// `residual`: the inner layers' output plus the input, through a projection where the shapes
/// differ (ResNet's 1x1 convolution + batch norm for images, a Linear for features and tokens).
struct ResidualImpl : torch::nn::Module {
  ResidualImpl(torch::nn::Sequential body, torch::nn::Sequential shortcut);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Sequential body{nullptr};
  torch::nn::Sequential shortcut{nullptr};  ///< null: identity
};
TORCH_MODULE(Residual);

/// A `sequential` inside another layer: AnyModule cannot hold nn::Sequential (its forward is a
/// template), so this gives it a plain one.
struct LayerSequenceImpl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(LayerSequence);

/// `token_mean`: [B, N, D] → [B, D].
struct TokenMeanImpl : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x) { return x.mean(1); }
};
TORCH_MODULE(TokenMean);

/// `dropout` with its own generator, seeded from the run's seed and the layer: the masks do not
/// depend on which stage thread draws first, so local runs stay timing-invariant.
struct SeededDropoutImpl : torch::nn::Module {
  SeededDropoutImpl(double p, uint64_t seed);
  torch::Tensor forward(torch::Tensor x);
  double p;
  at::Generator generator;
};
TORCH_MODULE(SeededDropout);

/// Appends the modules of `layer` (input shape `in` per sample) to `into`: a top-level
/// `sequential` adds its inner layers directly, any other type one module. Modules are
/// constructed in list order, inner layers before a residual's projection, so the weight draws
/// follow the layer list. `seed` seeds dropout masks.
void appendLayerModules(torch::nn::Sequential& into, const LayerSpec& layer,
                        const std::vector<int64_t>& in, const std::string& field, uint64_t seed);

}  // namespace stagewise::engine
