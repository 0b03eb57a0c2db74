#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// model.kind "torchscript": each top-level child of the file's module is one layer, wrapped in a
// torch::nn::Module that owns the child's parameters and buffers (the same tensors), so the
// optimisers, checkpoints, snapshots and the probe see them as they see a family's.

#include <cstdint>
#include <vector>

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

/// The layers of a torchscript model (`plan` from planModel): a fresh copy of the file's children
/// each call. With model.reinit the weights are drawn from `seed` per layer (layer i always gets
/// the same ones for a seed), as model.init says; else they are the file's.
std::vector<torch::nn::Sequential> buildTorchScriptLayers(const ModelSpec& spec,
                                                          const ModelPlan& plan, uint64_t seed);

}  // namespace stagewise::engine
