#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// LibTorch modules for a model plan: one Sequential per layer, aux heads per stage.

#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {

/// The layers of `plan` (familyLayers(spec, plan.input): every kind goes through this one
/// builder) as modules, initialised deterministically from `seed` (layer i always gets the same
/// weights for a seed, whatever the cut or mode) as `spec.init` says.
std::vector<torch::nn::Sequential> buildLayers(const ModelSpec& spec, const ModelPlan& plan,
                                               uint64_t seed);

/// An aux head for a stage whose output has `inShape` (per sample), initialised as model.init
/// `init` says (default, kaiming or xavier).
torch::nn::Sequential buildAuxHead(const StageSettings& settings,
                                   const std::vector<int64_t>& inShape, int numClasses,
                                   uint64_t seed, const std::string& init = "default");

/// All parameters of a list of modules, in order.
std::vector<torch::Tensor> parametersOf(const std::vector<torch::nn::Sequential>& modules);
/// Parameters, then buffers (batch-norm statistics): everything a copy of the modules needs.
std::vector<torch::Tensor> stateOf(const std::vector<torch::nn::Sequential>& modules);

}  // namespace stagewise::engine
