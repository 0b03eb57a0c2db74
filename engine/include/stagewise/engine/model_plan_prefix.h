#pragma once
// The model planned up to its first bad layer (issue 33): the designer draws the layers that plan
// and marks the one that does not, instead of an empty canvas.

#include <string>

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

/// Where planModelPrefix stopped: the first part of the model that cannot be planned.
struct PlanError {
  /// The bad entry of the layer list (its index in familyLayers / `model.layers`); -1 when the
  /// model as a whole is bad (a family's fields, an unreadable TorchScript file, no layers).
  int layer = -1;
  std::string field;    ///< "model.layers.5.kernel"
  std::string message;  ///< as SpecError::message()
  bool empty() const { return field.empty() && message.empty(); }
};

/// As planModel, but a bad layer ends the plan instead of throwing: the layers before the first
/// bad one are planned, and `error` names it (the designer draws the valid prefix and marks the
/// bad layer). When every layer plans but the last one's output does not fit the dataset, all
/// layers are in the plan and `error.layer` is the last one. `error` stays empty when the whole
/// model is valid; the plan is then planModel's.
ModelPlan planModelPrefix(const ModelSpec& model, const InputShape& input, PlanError& error);

}  // namespace stagewise::engine
