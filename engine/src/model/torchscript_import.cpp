// An experiment for a TorchScript file: the model, and cuts balanced by the plan's FLOPs.
#include <algorithm>
#include <filesystem>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::engine {

ExperimentSpec importTorchScript(ExperimentSpec spec, const std::string& modelPath) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(modelPath, ec);
  const bool keepWeights = spec.model.kind == "torchscript";  // model.reinit / init given
  ModelSpec model;
  model.kind = "torchscript";
  model.path = ec ? modelPath : path.lexically_normal().string();
  if (keepWeights) model.reinit = spec.model.reinit, model.init = spec.model.init;
  spec.model = model;
  spec.stages.clear();
  if (spec.name.empty()) spec.name = std::filesystem::path(modelPath).stem().string();
  const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
  const int layers = static_cast<int>(plan.layers.size());
  if (spec.partition.balance == "manual" && spec.partition.cuts.empty() && layers > 1) {
    ExperimentSpec balanced = spec;
    balanced.partition.balance = "flops";
    balanced.partition.numStages = std::min(4, layers);
    for (const auto& stage : makePartition(balanced, plan).stages)
      if (stage.firstLayer > 0) spec.partition.cuts.push_back(stage.firstLayer);
  }
  return spec;
}

}  // namespace stagewise::engine
