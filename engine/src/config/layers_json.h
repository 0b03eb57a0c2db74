#pragma once
// `model.layers` in JSON: strict reading (each type takes its own keys; errors name the field,
// "model.layers.3.kernel") and writing (only the fields that differ from their defaults).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::engine::detail {

/// Reads a list of layers at `path` ("model.layers"). Throws SpecError.
std::vector<LayerSpec> readLayers(const nlohmann::json& list, const std::string& path);
/// The canonical JSON of `layers` (round-trips through readLayers).
nlohmann::json layersToJson(const std::vector<LayerSpec>& layers);

}  // namespace stagewise::engine::detail
