#pragma once
// Layer lists of each model family (torch-free; model_plan.cpp dispatches on model.kind).

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine::detail {

void planMlp(const ModelSpec& model, ModelPlan& plan);
void planCnn(const ModelSpec& model, ModelPlan& plan);
void planVit(const ModelSpec& model, ModelPlan& plan);

/// Output side of a 3x3 convolution with padding 1 and the given stride.
inline int64_t convOut(int64_t size, int stride) { return (size - 1) / stride + 1; }

}  // namespace stagewise::engine::detail
