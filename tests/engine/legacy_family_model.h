#pragma once
// Test-only: the families' module builder as it was before the families became layer lists
// (engine/src/model/torch_model.cpp up to the "one builder" change), kept to prove that each
// family's expansion builds the same network with the same initial weights, bit for bit.
#include <torch/torch.h>

#include "stagewise/engine/model_plan.h"

namespace legacy {

std::vector<torch::nn::Sequential> buildFamilyLayers(const stagewise::engine::ModelSpec& spec,
                                                     const stagewise::engine::ModelPlan& plan,
                                                     uint64_t seed);

}  // namespace legacy
