#pragma once
// Models that only LibTorch can plan (model.kind "torchscript"). The core stays torch-free: the
// engine installs the planner when it is linked (torchscript_model.cpp), and planModel asks it.

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine::detail {

using TorchScriptPlanner = void (*)(const ModelSpec& model, ModelPlan& plan);

/// Installed once by the engine; a program without LibTorch has none.
void setTorchScriptPlanner(TorchScriptPlanner planner);

/// Fills `plan` from model.path. Throws SpecError (model.path) when the file cannot be planned,
/// and when this program has no LibTorch engine to read it.
void planTorchScript(const ModelSpec& model, ModelPlan& plan);

}  // namespace stagewise::engine::detail
